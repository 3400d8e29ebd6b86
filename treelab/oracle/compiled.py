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
"""

from __future__ import annotations

from collections.abc import Hashable
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
        self.memo: dict[Hashable, int] = {}

    def value(self, state: State) -> int:
        """The value of a non-terminal ``state`` for its player to move."""
        key = state.key()
        found = self.memo.get(key)
        if found is None and self.cache is not None:
            found = self.cache.get(self.game, self.kind, key)
        if found is None:
            try:
                cur, mask, ply = state.game.playout_board(state)
                found = int(self.solver.solve(cur, mask, ply, weak=self.kind == "weak", max_nodes=self.max_nodes))
            except RuntimeError as exc:
                raise BudgetError(f"{exc} (max_nodes={self.max_nodes}): raise max_nodes or solve a later position")\
                    from None
            if self.cache is not None:
                self.cache.put(self.game, self.kind, key, found)
        self.memo[key] = found
        return found

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
