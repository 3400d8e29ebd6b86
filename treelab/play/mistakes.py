"""Mistake rates of any player on judged Connect Four positions, by class (Pons' test protocol).

:func:`mistake_rates` asks a player for its move in every test position
(:mod:`treelab.analysis.mistakes`: each position's class and every legal move's
game-theoretic value, stored with the position, so no solver runs here) and
counts, per ``stage-difficulty`` class, the **mistakes**: moves that another
legal move beats (win > draw > loss). The player is a spec as ``treelab arena``
reads them (``uct:iterations=600``, ``puct:iterations=600,model=M``,
``puct:iterations=600,model=M,db=DB``) or any :class:`~treelab.play.players.Player`.
Each position is a new game for the player: a fresh tree per position, or, with
``db=``, the stored tree read only and put back as stored before every position
(:class:`~treelab.play.stored.StoredTreePlayer`). Specs search at temperature 0
without root noise unless they say otherwise, as AlphaZero.jl's benchmark does;
one ``seed`` drives the player's random choices, so a run replays exactly.

Every class comes with its Wilson 95% interval and the number of its positions
where a mistake was possible at all (``decisive``: some move is worse than
another; in the others every move keeps the result).

Example:
    >>> from treelab.analysis.mistakes import judge_position
    >>> won = judge_position("445566")  # every move wins here: no mistake is possible
    >>> report = mistake_rates("uct:iterations=50", [won, judge_position("1212127")], seed=1)
    >>> [(row.name, row.positions, row.decisive) for row in report.classes]
    [('beginning-easy', 2, 1)]
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..analysis.mistakes import CLASSES, PONS_CLASSES, SPLITS, JudgedPosition, read_positions
from ..errors import SpecError
from ..games import find_game
from .arena import make_player, wilson_interval
from .console import bar as new_bar
from .players import Player

__all__ = ["ClassRate", "MistakeReport", "Verdict", "mistake_rates", "sample_per_class"]


@dataclass(frozen=True)
class ClassRate:
    """One class's count of mistakes."""

    name: str
    """``stage-difficulty``, e.g. ``beginning-hard``."""
    positions: int
    """Positions asked."""
    mistakes: int
    """Moves that another legal move beats."""
    decisive: int
    """Positions where a mistake was possible (the others count as right whatever is played)."""

    @property
    def rate(self) -> float:
        """``mistakes / positions`` (0 for no positions)."""
        return self.mistakes / self.positions if self.positions else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        """The Wilson 95% interval of :attr:`rate`."""
        return wilson_interval(self.rate, self.positions)

    @property
    def decisive_rate(self) -> float:
        """``mistakes / decisive``: the rate among the positions where a mistake was possible (0 for none)."""
        return self.mistakes / self.decisive if self.decisive else 0.0

    @property
    def decisive_ci95(self) -> tuple[float, float]:
        """The Wilson 95% interval of :attr:`decisive_rate`."""
        return wilson_interval(self.decisive_rate, self.decisive)

    def to_dict(self) -> dict[str, Any]:
        """``name``, ``positions``, ``mistakes``, ``rate``, ``ci95``, ``decisive``, ``decisive_rate``,
        ``decisive_ci95``."""
        return {"name": self.name, "positions": self.positions, "mistakes": self.mistakes, "rate": self.rate,
                "ci95": list(self.ci95), "decisive": self.decisive, "decisive_rate": self.decisive_rate,
                "decisive_ci95": list(self.decisive_ci95)}


@dataclass(frozen=True)
class Verdict:
    """One position asked: the move played and whether it was a mistake."""

    moves: str
    """The position."""
    name: str
    """Its class."""
    move: int
    """The player's move (column 1-7)."""
    mistake: bool
    """Whether another legal move has a strictly better value."""


@dataclass(frozen=True)
class MistakeReport:
    """A player's mistake rates, per class (Pons' order, classes without positions left out)."""

    player: str
    """The spec, or the player's name."""
    seed: int
    """The seed of the player's random choices."""
    classes: tuple[ClassRate, ...]
    """Each class with positions."""
    seconds: float
    """Wall time of the run."""
    verdicts: tuple[Verdict, ...]
    """Every position asked, in order."""

    def rate_of(self, name: str) -> ClassRate | None:
        """The class called ``name``, if it had positions."""
        return next((row for row in self.classes if row.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON object: ``player``, ``seed``, ``seconds``, ``classes`` (:meth:`ClassRate.to_dict` each),
        ``verdicts`` (``moves``, ``class``, ``move``, ``mistake``)."""
        return {"player": self.player, "seed": self.seed, "seconds": self.seconds,
                "classes": [row.to_dict() for row in self.classes],
                "verdicts": [{"moves": v.moves, "class": v.name, "move": v.move, "mistake": v.mistake}
                             for v in self.verdicts]}


def sample_per_class(positions: Iterable[JudgedPosition], per_class: int | None) -> list[JudgedPosition]:
    """The first ``per_class`` positions of each class, in their order (None: all of them)."""
    if per_class is not None and per_class < 1:
        raise SpecError(f"per_class {per_class!r} must be at least 1 (or None for every position)")
    taken: dict[str, int] = {}
    out = []
    for position in positions:
        if per_class is None or taken.get(position.name, 0) < per_class:
            taken[position.name] = taken.get(position.name, 0) + 1
            out.append(position)
    return out


def mistake_rates(player: str | Player, positions: Iterable[JudgedPosition] | None = None, *,
                  split: str | None = None, per_class: int | None = None, seed: int = 0,
                  progress: bool = False, on_verdict: Callable[[Verdict], None] | None = None) -> MistakeReport:
    """How often ``player`` makes a mistake, per class of Pons' protocol.

    Args:
        player: a spec as ``treelab arena`` reads them (``"uct:iterations=600"``,
            ``"puct:iterations=600,model=M.npz"``, ``"...,db=TREE.db"`` for a stored tree, read only), or a
            :class:`~treelab.play.players.Player` (asked ``new_game`` before every position, then ``choose``).
        positions: the judged positions (:class:`~treelab.analysis.mistakes.JudgedPosition`); None: the file
            shipped with treelab (``data/connect4/mistakes/positions.txt``).
        split: keep only the ``dev`` or the ``test`` positions (None: all given).
        per_class: ask at most this many positions of each class, the first in their order (None: all).
        seed: seeds the player's random choices (one stream for the whole run).
        progress: show a progress bar (stderr) with the rate and the mistakes so far.
        on_verdict: called after every position.

    Raises:
        SpecError: a bad spec, split or ``per_class``, or a player that chose an illegal move.
        ImportFormatError: a malformed position file.
    """
    if split is not None and split not in SPLITS:
        raise SpecError(f"split {split!r} is not one of {', '.join(SPLITS)}")
    chosen = read_positions(split=split) if positions is None else [
        p for p in positions if split is None or p.split == split]
    chosen = sample_per_class(chosen, per_class)
    game = find_game("connect4")
    agent = make_player(player, game, rng=random.Random(seed))
    name = player if isinstance(player, str) else agent.name
    bar = new_bar(len(chosen), str(name), "pos") if progress else None
    verdicts: list[Verdict] = []
    mistakes = 0
    started = time.perf_counter()
    try:
        for position in chosen:
            moves = game.parse(position.moves)
            agent.new_game(game)
            move = agent.choose(game.replay(moves), moves)
            if move not in position.values:
                raise SpecError(f"player {name!r} chose the illegal move {move!r} after {position.moves!r}")
            verdict = Verdict(position.moves, position.name, move, position.is_mistake(move))
            verdicts.append(verdict)
            mistakes += verdict.mistake
            if on_verdict is not None:
                on_verdict(verdict)
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"mistakes {mistakes}")
    finally:
        if bar is not None:
            bar.close()
    return MistakeReport(str(name), seed, _tally(chosen, verdicts), time.perf_counter() - started, tuple(verdicts))


def _tally(positions: list[JudgedPosition], verdicts: list[Verdict]) -> tuple[ClassRate, ...]:
    order = [*PONS_CLASSES, *(name for name in CLASSES if name not in PONS_CLASSES)]
    rows = []
    for name in order:
        mine = [(p, v) for p, v in zip(positions, verdicts, strict=False) if p.name == name]
        if mine:
            rows.append(ClassRate(name, len(mine), sum(v.mistake for _, v in mine), sum(p.decisive for p, _ in mine)))
    return tuple(rows)
