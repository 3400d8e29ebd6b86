"""How often a move chooser plays a perfect move: the share of positions where its move is optimal.

Measured against a perfect-play oracle (:mod:`treelab.oracle`): a position
counts as optimal when the chosen move's game-theoretic value equals the best
value among the legal moves (a win kept, else a draw kept). Shares are given by
depth band (discs or marks on the board), so a tree that is right in the
opening but wrong in the middle game shows it.

A *chooser* is any function from a position to the move it would play: the
stored tree's move-choice rule (:func:`tree_chooser`, treelab's rule of
:mod:`treelab.mcts.choice`: a proven win, never a proven loss, else the most
selected child), a fresh UCT search of a given budget (:func:`uct_chooser`), or
a model's policy. :func:`tree_positions` lists the positions of a tree worth
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

from ..games import Game, State, find_game
from ..mcts.choice import best_child
from ..tree import SQRT2, Tree, TreeNode

__all__ = [
    "DEFAULT_BANDS",
    "BandShare",
    "Chooser",
    "OptimalityReport",
    "optimal_share",
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
    with_choice: int
    """Positions where some legal move is not optimal (the others are right whatever is played)."""
    optimal_with_choice: int
    """Of those, the positions where the chosen move was optimal."""

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


def optimal_share(
    game: str | Game,
    positions: Iterable[Sequence[int]],
    chooser: Chooser,
    *,
    oracle: Callable[[State], dict[int, int]] | None = None,
    bands: Sequence[tuple[int, int | None]] = DEFAULT_BANDS,
    on_position: Callable[[tuple[int, ...], int | None, dict[int, int] | None], None] | None = None,
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

    Raises:
        UnsupportedGameError: the game has no oracle.
    """
    from ..errors import BudgetError, UnsupportedGameError
    from ..oracle import oracle_for

    found = find_game(game)
    judge = oracle or oracle_for(found)
    if judge is None:
        raise UnsupportedGameError(f"{found.name!r} has no perfect-play oracle: optimal-move shares need one")
    tallies = {band: [0, 0, 0, 0] for band in bands}
    total, skipped = [0, 0, 0, 0], 0
    for seq in positions:
        moves = tuple(seq)
        state = found.replay(moves)
        if state.is_terminal:
            skipped += 1
            continue
        chosen = chooser(state, moves)
        values = None
        if chosen is not None:
            try:
                values = judge(state)
            except BudgetError:
                values = None
        if on_position is not None:
            on_position(moves, chosen, values)
        if values is None or chosen not in values:
            skipped += 1
            continue
        best = max(values.values())
        right = values[chosen] == best
        choice = min(values.values()) != best
        for tally in [total, *(tallies[b] for b in bands if _in_band(len(moves), b))]:
            tally[0] += 1
            tally[1] += right
            tally[2] += choice
            tally[3] += right and choice
    return OptimalityReport(
        bands=tuple(BandShare(_band_name(b), *tallies[b]) for b in bands),
        overall=BandShare("all", *total),
        skipped=skipped,
    )


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
            kids = node.kids
            if depth >= min_depth and kids and sum(k.nb_select for k in kids) >= min_selections:
                found.append(moves)
            nxt.extend((k, (*moves, game.parse_move(k.name))) for k in kids if k.kids)
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
