"""The compiled exact solver's oracle (``connect4_solve`` of ``treelab._speedups``): Connect Four's.

The solver (bitboards, negamax with alpha-beta on Pons' score, only moves that
do not lose at once, moves ordered by the winning cells they create and centre
first, a transposition table of bounds shared by mirror images, null-window
searches at the root) lives in ``treelab/_solver.c``, part of the optional
extension built with the package when a C compiler is present (it serves the
oracle also under ``TREELAB_PURE_PYTHON=1``, which only switches the search's
hot paths). Without it the oracle refuses in one line: a pure-Python search of
early positions would take hours.

A move's value is the negation of the solved child position's value; a move
that wins at once is worth ``1`` (its score ``(43 - discs) // 2``), one that
fills the board without a winner ``0``. Solved positions are remembered for
the life of the oracle, and in an :class:`~treelab.store.oraclecache.OracleCache`
when one is given.

Judging one move (:meth:`SolverOracle.is_optimal`) needs much less than every
move's value: the chosen child is solved, and then one null-window search of
the position (``connect4_exceeds``) proves that no other move does better, or
stops at the first that does. What a judgement learns about a position (its
value, or a bound on it) is remembered too (cache kinds ``"weak"``,
``"weak-lower"``, ``"weak-upper"``), so judging another move of the same
position costs one null-window search of that move's child.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from types import ModuleType

from ..errors import BudgetError, UnsupportedGameError
from ..games import State
from ..store.oraclecache import OracleCache

__all__ = ["SolverOracle", "compiled_solver"]

_CELLS = 42  # the cells of the 7x6 board the solver knows


def compiled_solver() -> _SolverFunctions:
    """The compiled solver module, or a one-line :class:`UnsupportedGameError` saying how to get it."""
    try:
        from .. import _speedups  # type: ignore[attr-defined]

        _speedups.connect4_solve  # noqa: B018  # a stale build without the solver
    except (ImportError, AttributeError) as exc:
        raise UnsupportedGameError(
            f"the Connect Four oracle needs treelab's compiled solver, which is not built ({exc}): "
            "install a C compiler and reinstall treelab (pip install -e .)"
        ) from None
    return _SolverFunctions(_speedups)


class _SolverFunctions:
    """The solver's functions of the compiled module under short names (``solve``, ``nodes``, ``reset``)."""

    def __init__(self, module: ModuleType) -> None:
        self.solve = module.connect4_solve
        self.exceeds = module.connect4_exceeds
        self.nodes = module.connect4_solve_nodes
        self.reset = module.connect4_solve_reset
        self.slots = module.connect4_solve_slots


class SolverOracle:
    """Each legal move's value for the player making it (an :data:`~treelab.oracle.Oracle`).

    The position reaches the solver as the game's bitboards (``Game.playout_board``: the discs of the
    player to move, every disc, the number of discs).

    Args:
        game: the game's name (the key of the cache).
        cache: keep solved positions in this file too.
        score: Pons' score (positive: a win, larger the sooner) instead of 1/0/-1.
        max_nodes: give up (:class:`BudgetError`) after this many positions for one child.
    """

    def __init__(self, game: str, cache: OracleCache | None = None, score: bool = False,
                 max_nodes: int | None = None) -> None:
        self.solver = compiled_solver()
        self.game = game
        self.cache = cache
        self.kind = "score" if score else "weak"
        if max_nodes is not None and max_nodes < 1:
            raise BudgetError(f"max_nodes {max_nodes!r} must be a positive number of positions (None: no limit)")
        self.max_nodes = max_nodes or 0
        self.memo: dict[tuple[str, Hashable], int] = {}

    def _known(self, kind: str, key: Hashable) -> int | None:
        found = self.memo.get((kind, key))
        if found is None and self.cache is not None:
            found = self.cache.get(self.game, kind, key)
            if found is not None:
                self.memo[kind, key] = found
        return found

    def _keep(self, kind: str, key: Hashable, value: int) -> None:
        self.memo[kind, key] = value
        if self.cache is not None:
            self.cache.put(self.game, kind, key, value)

    def _search(self, function: Callable[..., int], state: State, **options: int) -> int:
        try:
            cur, mask, ply = state.game.playout_board(state)
            return int(function(cur, mask, ply, max_nodes=self.max_nodes, **options))
        except RuntimeError as exc:
            raise BudgetError(f"{exc} (max_nodes={self.max_nodes}): raise max_nodes or solve a later position")\
                from None

    def value(self, state: State) -> int:
        """The value of a non-terminal ``state`` for its player to move."""
        if self.kind == "weak":
            return self.weak(state)
        key = state.key()
        found = self._known(self.kind, key)
        if found is None:
            found = self._search(self.solver.solve, state, weak=False)
            self._keep(self.kind, key, found)
        return found

    def bounds(self, state: State) -> tuple[int, int]:
        """What is known of the weak value of a non-terminal ``state`` without searching: ``(lowest, highest)``."""
        key = state.key()
        exact = self._known("weak", key)
        if exact is not None:
            return exact, exact
        low, high = self._known("weak-lower", key), self._known("weak-upper", key)
        return -1 if low is None else low, 1 if high is None else high

    def _learn(self, state: State, low: int, high: int) -> None:
        """Keep ``low <= value <= high`` (narrowing what is known) for a non-terminal ``state``."""
        known_low, known_high = self.bounds(state)
        low, high = max(low, known_low), min(high, known_high)
        key = state.key()
        if low == high and known_low != known_high:
            self._keep("weak", key, low)
        elif low > known_low:
            self._keep("weak-lower", key, low)
        elif high < known_high:
            self._keep("weak-upper", key, high)

    def weak(self, state: State) -> int:
        """The weak value (1, 0, -1) of a non-terminal ``state`` for its player to move."""
        low, high = self.bounds(state)
        if low != high:
            low = high = self._search(self.solver.solve, state, weak=True)
            self._learn(state, low, high)
        return low

    def exceeds(self, state: State, value: int) -> bool:
        """Whether the weak value of a non-terminal ``state`` is above ``value`` (-1 or 0): one null-window search."""
        low, high = self.bounds(state)
        if low > value or high <= value:
            return low > value
        above = bool(self._search(self.solver.exceeds, state, value=value))
        self._learn(state, value + 1 if above else low, high if above else value)
        return above

    def is_optimal(self, state: State, move: int) -> bool:
        """Whether ``move`` keeps the game-theoretic value of the non-terminal ``state`` (win or draw or loss).

        The child is solved, then one null-window search of ``state`` proves that no move does better
        (or stops at the first that does). When the position's value is already known, one null-window
        search of the child suffices.
        """
        child = state.play(move)
        if child.winner is not None:
            return True
        low, high = self.bounds(state)
        if high == -1:
            return True  # every move loses
        if child.is_terminal:  # the board is full: a draw
            mine = 0
        elif low == high:  # the move keeps the value when the child is no better than its negation
            return not self.exceeds(child, -low)
        else:
            mine = -self.weak(child)
        self._learn(state, mine, 1)
        if mine < low:
            return False
        return mine == 1 or not self.exceeds(state, mine)

    def __call__(self, state: State) -> dict[int, int]:
        values = {}
        for move in state.legal_moves():
            child = state.play(move)
            if child.winner is not None:
                values[move] = 1 if self.kind == "weak" else (_CELLS + 1 - state.game.playout_board(state)[2]) // 2
            elif child.is_terminal:
                values[move] = 0
            else:
                values[move] = -self.value(child)
        return values
