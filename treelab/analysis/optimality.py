"""How often a move chooser plays a perfect move: the share of positions where its move is optimal.

Measured against a perfect-play oracle (:mod:`treelab.oracle`): a position
counts as optimal when the chosen move's game-theoretic value equals the best
value among the legal moves (a win kept, else a draw kept). Shares are given by
depth band (discs or marks on the board), so a tree that is right in the
opening but wrong in the middle game shows it.

A *chooser* is any function from a position to the move it would play: the
stored tree's move-choice rule (:func:`tree_chooser`, treelab's rule of
:mod:`treelab.mcts.choice`: a proven win, never a proven loss, else the most
selected child), a fresh UCT search of a given budget (:func:`uct_chooser`), a
fresh PUCT search with an evaluator such as a fitted model (:func:`puct_chooser`),
or a model's policy. :func:`tree_positions` lists the positions of a tree worth
asking about (at least ``min_selections`` selections among the children).

Example:
    >>> report = optimal_share("tictactoe", [(), (5,)], lambda state, moves: 5 if not moves else 1)
    >>> report.overall.optimal, report.overall.positions
    (2, 2)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..games import Game, State, find_game
from ..mcts.choice import best_child
from ..tree import SQRT2, Tree, TreeNode

if TYPE_CHECKING:
    from ..mcts.evaluators import Evaluator
    from ..mcts.puct import RootNoise

__all__ = [
    "DEFAULT_BANDS",
    "BandShare",
    "Chooser",
    "OptimalityReport",
    "Verdict",
    "judge_positions",
    "optimal_share",
    "puct_chooser",
    "share_report",
    "tree_chooser",
    "tree_positions",
    "uct_chooser",
]

Chooser = Callable[[State, tuple[int, ...]], "int | None"]
"""A move chooser: (position, the moves that reached it) -> the move it plays (None: it has no opinion)."""

DEFAULT_BANDS: tuple[tuple[int, int | None], ...] = ((0, 2), (3, 5), (6, 9), (10, None))
"""Depth bands ``(first, last)``, ``last`` None: no upper end."""


@dataclass(frozen=True)
class BandShare:
    """The optimal-move share in one depth band."""

    band: str
    """The band as text (``"3-5"``, ``"10+"``, ``"all"``)."""
    positions: int
    """Positions judged (the chooser had a move and the oracle answered)."""
    optimal: int
    """Positions where the chosen move was optimal."""
    with_choice: int | None
    """Positions where some legal move is not optimal (the others are right whatever is played); None: not
    asked (``mattered=False``)."""
    optimal_with_choice: int | None
    """Of those, the positions where the chosen move was optimal (None: not asked)."""

    @property
    def share(self) -> float | None:
        """``optimal / positions``, None for no positions."""
        return self.optimal / self.positions if self.positions else None

    def to_dict(self) -> dict[str, object]:
        """The band as a JSON-ready dict (with ``share``)."""
        return {"band": self.band, "positions": self.positions, "optimal": self.optimal, "share": self.share,
                "with_choice": self.with_choice, "optimal_with_choice": self.optimal_with_choice}


@dataclass(frozen=True)
class OptimalityReport:
    """The optimal-move shares of one chooser over a set of positions."""

    bands: tuple[BandShare, ...]
    """One share per depth band, in the bands' order."""
    overall: BandShare
    """All judged positions together."""
    skipped: int
    """Positions not judged: the chooser gave no move, or the oracle gave up (its budget)."""

    def to_dict(self) -> dict[str, object]:
        """The report as a JSON-ready dict."""
        return {"bands": [b.to_dict() for b in self.bands], "overall": self.overall.to_dict(),
                "skipped": self.skipped}


def _band_name(band: tuple[int, int | None]) -> str:
    first, last = band
    return f"{first}+" if last is None else f"{first}-{last}"


def _in_band(depth: int, band: tuple[int, int | None]) -> bool:
    return depth >= band[0] and (band[1] is None or depth <= band[1])


@dataclass(frozen=True)
class Verdict:
    """One position judged: the chooser's move, and whether it is optimal."""

    moves: tuple[int, ...]
    """The position, as moves from the start."""
    chosen: int
    """The chooser's move."""
    optimal: bool
    """The move keeps the position's game-theoretic value (a win kept, else a draw kept)."""
    mattered: bool | None
    """Some legal move is not optimal (None: not asked)."""


def judge_positions(
    game: str | Game,
    positions: Iterable[Sequence[int]],
    chooser: Chooser,
    *,
    oracle: Callable[[State], dict[int, int]] | None = None,
    mattered: bool = True,
    on_position: Callable[[tuple[int, ...], int | None, dict[int, int] | None], None] | None = None,
) -> list[Verdict | None]:
    """Judge ``chooser``'s move at each of ``positions``: one :class:`Verdict` each, None where not judged.

    Args:
        game: the game (it must have an oracle unless ``oracle`` is given).
        positions: move sequences from the start (finished positions are not judged).
        chooser: the move chooser judged.
        oracle: each legal move's value (None: :func:`treelab.oracle.oracle_for` the game). An oracle
            that raises ``BudgetError`` (its node budget) leaves the position unjudged.
        mattered: value every move, to tell whether the choice mattered; False: judge only the chosen
            move (:func:`treelab.oracle.move_judge`, far cheaper for Connect Four).
        on_position: called after each position with (moves, chosen move, the oracle's values; None when
            the oracle gave up or ``mattered`` is False).

    Raises:
        UnsupportedGameError: the game has no oracle.
    """
    from ..errors import BudgetError, UnsupportedGameError
    from ..oracle import move_judge, oracle_for

    found = find_game(game)
    judge = oracle or oracle_for(found)
    if judge is None:
        raise UnsupportedGameError(f"{found.name!r} has no perfect-play oracle: optimal-move shares need one")
    one_move = move_judge(judge)
    out: list[Verdict | None] = []
    for seq in positions:
        moves = tuple(seq)
        state = found.replay(moves)
        chosen = None if state.is_terminal else chooser(state, moves)
        values, verdict = None, None
        if chosen is not None and chosen in state.legal_moves():
            try:
                if mattered:
                    values = judge(state)
                    best = max(values.values())
                    verdict = Verdict(moves, chosen, values[chosen] == best, min(values.values()) != best)
                else:
                    verdict = Verdict(moves, chosen, one_move(state, chosen), None)
            except BudgetError:
                pass
        if on_position is not None:
            on_position(moves, chosen, values)
        out.append(verdict)
    return out


def share_report(verdicts: Iterable[Verdict | None],
                 bands: Sequence[tuple[int, int | None]] = DEFAULT_BANDS) -> OptimalityReport:
    """The optimal-move shares by depth band of ``verdicts`` (None: a position not judged, counted as skipped)."""
    judged = list(verdicts)
    skipped = sum(v is None for v in judged)
    asked = all(v.mattered is not None for v in judged if v is not None)

    def tally(name: str, group: list[Verdict]) -> BandShare:
        choice = sum(bool(v.mattered) for v in group) if asked else None
        right_choice = sum(v.optimal and bool(v.mattered) for v in group) if asked else None
        return BandShare(name, len(group), sum(v.optimal for v in group), choice, right_choice)

    done = [v for v in judged if v is not None]
    return OptimalityReport(
        bands=tuple(tally(_band_name(b), [v for v in done if _in_band(len(v.moves), b)]) for b in bands),
        overall=tally("all", done),
        skipped=skipped,
    )


def optimal_share(
    game: str | Game,
    positions: Iterable[Sequence[int]],
    chooser: Chooser,
    *,
    oracle: Callable[[State], dict[int, int]] | None = None,
    bands: Sequence[tuple[int, int | None]] = DEFAULT_BANDS,
    on_position: Callable[[tuple[int, ...], int | None, dict[int, int] | None], None] | None = None,
    mattered: bool = True,
) -> OptimalityReport:
    """The share of ``positions`` where ``chooser`` plays an optimal move, by depth band.

    Args:
        game: the game (it must have an oracle unless ``oracle`` is given).
        positions: move sequences from the start (non-terminal positions; finished ones are skipped).
        chooser: the move chooser judged.
        oracle: each legal move's value (None: :func:`treelab.oracle.oracle_for` the game). An oracle
            that raises ``BudgetError`` (its node budget) skips the position.
        bands: the depth bands.
        on_position: called after each position with (moves, chosen move, the oracle's values or None).
        mattered: also count where the choice mattered (every move valued); False: judge the chosen
            move only (far cheaper for Connect Four; ``with_choice`` is then None).

    Raises:
        UnsupportedGameError: the game has no oracle.
    """
    verdicts = judge_positions(game, positions, chooser, oracle=oracle, mattered=mattered, on_position=on_position)
    return share_report(verdicts, bands)


def tree_positions(tree: Tree, min_selections: int = 200, *, max_depth: int | None = None,
                   min_depth: int = 0) -> list[tuple[int, ...]]:
    """The positions of ``tree`` whose children were selected at least ``min_selections`` times in all.

    Breadth first (shallow positions first); ``max_depth``/``min_depth`` bound the depth.
    """
    game = tree.game
    found: list[tuple[int, ...]] = []
    level: list[tuple[TreeNode, tuple[int, ...]]] = [(tree.root, ())]
    depth = 0
    while level and (max_depth is None or depth <= max_depth):
        nxt: list[tuple[TreeNode, tuple[int, ...]]] = []
        for node, moves in level:
            kids = node.children_view
            if depth >= min_depth and kids and sum(k.nb_select for k in kids) >= min_selections:
                found.append(moves)
            nxt.extend((k, (*moves, game.parse_move(k.name))) for k in kids if k.children_view)
        level = nxt
        depth += 1
    return found


def tree_chooser(tree: Tree) -> Chooser:
    """The stored tree's move at each position: treelab's move-choice rule (``mcts/choice.py``)."""

    def choose(state: State, moves: tuple[int, ...]) -> int | None:
        node = tree.get(moves)
        best = None if node is None else best_child(node)
        return None if best is None else tree.game.parse_move(best.name)

    return choose


def uct_chooser(game: str | Game, iterations: int, *, c: float = SQRT2, seed: int | None = 0) -> Chooser:
    """A fresh UCT search of ``iterations`` simulations from each position, in a new tree (the reference).

    Each position gets its own seeded generator (``seed`` and the position), so a run replays exactly.
    """
    from ..mcts.uct import Limit, search

    found = find_game(game)

    def choose(state: State, moves: tuple[int, ...]) -> int | None:
        tree = Tree(found, c=c)
        rng = random.Random(f"{seed}:{found.notation(moves)}")
        search(tree, moves, limit=Limit(iterations=iterations), c=c, rng=rng)
        best = best_child(tree.find(moves))
        return None if best is None else found.parse_move(best.name)

    return choose


def puct_chooser(game: str | Game, iterations: int, evaluator: str | Evaluator, *, seed: int | None = 0,
                 noise: RootNoise | None = None) -> Chooser:
    """A fresh PUCT search of ``iterations`` simulations from each position with ``evaluator`` (e.g. a fitted
    model's :class:`~treelab.mcts.evaluators.ModelEvaluator`), in a new tree: what the evaluator's search
    plays now, to set beside a stored tree grown by earlier versions of it.

    ``noise``: root Dirichlet noise, as self-play mixes in (None: none, as a match player searches). Each
    position gets its own seeded generator (``seed`` and the position), so a run replays exactly.
    """
    from ..mcts.dispatch import puct_search
    from ..mcts.loop import Limit

    found = find_game(game)

    def choose(state: State, moves: tuple[int, ...]) -> int | None:
        tree = Tree(found)
        rng = random.Random(f"{seed}:{found.notation(moves)}")
        puct_search(tree, moves, limit=Limit(iterations=iterations), evaluator=evaluator, rng=rng, noise=noise)
        best = best_child(tree.find(moves))
        return None if best is None else found.parse_move(best.name)

    return choose
