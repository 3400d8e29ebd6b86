"""A perfect-play oracle for solved games: each legal move's game-theoretic value.

:func:`solve` answers, for a position given by its moves, what every legal move
is worth with perfect play from both sides, for the player making it: ``1`` a
win, ``0`` a draw, ``-1`` a loss. Tic-tac-toe is solved by memoised minimax; Connect
Four by treelab's compiled exact solver after Pascal Pons' method (the C code in
``treelab/_solver.c``), which can also give Pons' score (``score=True``: the
sign is the result, the size how early it comes). The two oracles are generic
parts: exhaustive minimax (:mod:`treelab.oracle.minimax`) for any game small
enough, and the compiled solver (:mod:`treelab.oracle.compiled`) for the game
whose bitboards it reads (``Game.playout_board``); :data:`ORACLES` says which
game uses which. Other games have no oracle:
:func:`oracle_for` returns None and :func:`solve` refuses them in one line.

Example:
    >>> from treelab.oracle import solve
    >>> solve("tictactoe", "15")  # X took the corner, O the centre: every X move draws
    {2: 0, 3: 0, 4: 0, 6: 0, 7: 0, 8: 0, 9: 0}
    >>> values = solve("tictactoe", "1425")  # X holds 1 and 2, O holds 4 and 5: X to move
    >>> values[3], values[6], values[9]  # 3 wins at once; blocking at 6 only draws; 9 lets O win
    (1, 0, -1)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import GameOverError, UnsupportedGameError
from ..games import Game, State, find_game
from ..store.oraclecache import OracleCache

__all__ = [
    "ORACLE_GAMES",
    "MoveJudge",
    "Oracle",
    "OracleCache",
    "annotate",
    "move_judge",
    "oracle_for",
    "oracle_line",
    "require_oracle",
    "solve",
    "solve_state",
]

Oracle = Callable[[State], dict[int, int]]
"""An oracle: a non-terminal position -> each legal move's value for the player making it (1, 0, -1)."""

MoveJudge = Callable[[State, int], bool]
"""A judge of one move: (a non-terminal position, a legal move) -> whether the move keeps the position's value."""

ORACLES: dict[str, str] = {"connect4": "compiled", "tictactoe": "minimax"}
"""The games that have an oracle, and which: ``"minimax"`` (exhaustive, memoised) or ``"compiled"`` (the C solver)."""

ORACLE_GAMES = tuple(sorted(ORACLES))
"""The games that have an oracle."""


def oracle_for(game: str | Game, *, cache: OracleCache | None = None, score: bool = False,
               max_nodes: int | None = None) -> Oracle | None:
    """The oracle of ``game``, or None for a game without one.

    Args:
        game: a game name or :class:`~treelab.games.Game`.
        cache: a persistent cache of solved positions (Connect Four only; minimax is instant).
        score: Connect Four only: Pons' score instead of its sign (positive: a win, larger the sooner).
        max_nodes: Connect Four only: give up (``BudgetError``) after searching this many positions
            for one move (None: no limit).
    """
    found = find_game(game)
    kind = ORACLES.get(found.name)
    if kind == "minimax":
        from .minimax import move_values

        return move_values
    if kind == "compiled":
        from .compiled import SolverOracle

        return SolverOracle(found.name, cache=cache, score=score, max_nodes=max_nodes)
    return None


def require_oracle(game: str | Game, **options: object) -> Oracle:
    """The oracle of ``game`` (``options`` as :func:`oracle_for`); a one-line :class:`UnsupportedGameError`
    for a game without one."""
    found = find_game(game)
    oracle = oracle_for(found, **options)  # type: ignore[arg-type]
    if oracle is None:
        raise UnsupportedGameError(
            f"{found.name!r} has no perfect-play oracle: oracles exist for {', '.join(ORACLE_GAMES)}"
        )
    return oracle


def move_judge(oracle: Oracle) -> MoveJudge:
    """The cheapest way ``oracle`` has to tell whether one move is optimal.

    The Connect Four solver's :meth:`~treelab.oracle.compiled.SolverOracle.is_optimal` (the move's child
    solved, then one null-window search proving that no move does better), minimax's
    :func:`~treelab.oracle.minimax.is_optimal` (the same by alpha-beta), else a comparison with the best
    of every move's value.
    """
    from .minimax import is_optimal, move_values

    if oracle is move_values:
        return is_optimal
    cheap = getattr(oracle, "is_optimal", None)
    if cheap is not None:
        return cheap  # type: ignore[no-any-return]

    def judge(state: State, move: int) -> bool:
        values = oracle(state)
        return values[move] == max(values.values())

    return judge


def annotate(game: str | Game, moves: str | Iterable[str | int] | None, children: list[dict[str, object]],
             oracle: Oracle | None = None) -> list[dict[str, object]]:
    """Add ``"oracle"`` (the move's value for its player: 1, 0, -1) to each child row of the position ``moves``.

    The rows are those of ``analyse --json`` and ``stats --json`` (``"move"``: the move's label); a finished
    position leaves them as they are. Returns ``children``, changed in place.
    """
    found = find_game(game)
    judge = oracle or require_oracle(found)
    state = found.replay(moves)
    if state.is_terminal or not children:
        return children
    values = judge(state)
    for row in children:
        value = values.get(found.parse_move(str(row["move"])))
        if value is not None:
            row["oracle"] = value
    return children


def oracle_line(children: list[dict[str, object]]) -> str:
    """One readable line of the ``"oracle"`` values of :func:`annotate`d rows (``4 win · 3 draw · ...``)."""
    from ..nodes import proof_word

    parts = [f"{row['move']} {proof_word(row['oracle'])}" for row in children if "oracle" in row]  # type: ignore[arg-type]
    return "perfect play, for each move's player: " + (" · ".join(parts) or "-")


def solve_state(game: str | Game, state: State, **options: object) -> dict[int, int]:
    """Each legal move of ``state`` and its value for the player making it (see :func:`solve`)."""
    oracle = require_oracle(game, **options)
    if state.is_terminal:
        raise GameOverError("the game is over in this position: no move to value")
    return oracle(state)


def solve(game: str | Game, moves: str | Iterable[str | int] | None = None, **options: object) -> dict[int, int]:
    """Each legal move after ``moves`` and its game-theoretic value for the player making it.

    Args:
        game: ``"connect4"``, ``"tictactoe"`` or such a :class:`~treelab.games.Game`.
        moves: the position, as the game's notation (``"4453"``) or a list of moves; None: the start.
        options: ``cache``, ``score`` and ``max_nodes`` of :func:`oracle_for`.

    Returns:
        ``{move: value}`` over the legal moves in the game's order: ``1`` win, ``0`` draw,
        ``-1`` loss (with ``score=True``, Pons' score for Connect Four).

    Raises:
        UnsupportedGameError: the game has no oracle, or the compiled Connect Four solver is missing.
        NotationError, IllegalMoveError, GameOverError: bad moves, or a finished game.
        BudgetError: ``max_nodes`` was reached.
    """
    found = find_game(game)
    return solve_state(found, found.replay(moves), **options)
