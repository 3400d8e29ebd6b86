"""Scoring and playout policies: plain functions behind type aliases.

Selection functions score a child from its counts (as OpenSpiel's
``child_selection_fn``); playout functions finish a game from a position and
return the winner. Tuning constants are keyword-only, with the literature's
defaults.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from ..errors import BudgetError, UnknownOptionError
from ..games import State
from ..nodes import SQRT2, TreeNode, ucb1_score

__all__ = [
    "PLAYOUTS",
    "PlayoutFn",
    "ScoreFn",
    "decisive_playout",
    "find_playout",
    "make_rng",
    "mean_value",
    "random_playout",
    "ucb1",
]

ScoreFn = Callable[..., float]
"""``score(child, parent_visits, *, c) -> float``: how much a child is worth exploring."""

PlayoutFn = Callable[[State, random.Random], "int | None"]
"""``playout(state, rng) -> winner``: finish the game from ``state`` (None: a draw)."""


def ucb1(child: TreeNode, parent_visits: int, *, c: float = SQRT2) -> float:
    """UCB1 score of ``child`` (a :data:`ScoreFn`): :func:`treelab.nodes.ucb1_score` of its counts."""
    return ucb1_score(child.nb_win, child.nb_draw, child.nb_visit, parent_visits, c, child.value_sum)


def mean_value(child: TreeNode, parent_visits: int = 0, *, c: float = 0.0) -> float:
    """The mean reward alone: UCB1 with ``c = 0``, Browne et al.'s (2012) "max child"."""
    return child.mean if child.nb_visit else -math.inf


def random_playout(state: State, rng: random.Random) -> int | None:
    """Uniformly random moves to the end (Browne et al. 2012's default policy)."""
    return state.game.playout(state, rng)


def decisive_playout(state: State, rng: random.Random) -> int | None:
    """Take an immediate win, else block the opponent's immediate win, else play at random.

    "Decisive moves" in Teytaud & Teytaud (2010), "On the huge benefit of
    decisive moves in Monte-Carlo tree search algorithms".
    """
    rand = rng.random
    while not state.is_terminal:
        wins = state.winning_moves()
        if wins:
            return state.to_move
        threats = state.threats()
        if threats:
            move = threats[int(rand() * len(threats))]
        else:
            legal = state.legal_moves()
            move = legal[int(rand() * len(legal))]
        state = state.play(move)
    return state.winner


PLAYOUTS: dict[str, PlayoutFn] = {"random": random_playout, "decisive": decisive_playout}
"""Playout policies by name (``--playout``)."""


def find_playout(name: str | PlayoutFn) -> PlayoutFn:
    """The playout policy called ``name`` (a function is returned as it is)."""
    if callable(name):
        return name
    try:
        return PLAYOUTS[name]
    except KeyError:
        raise UnknownOptionError(f"unknown playout {name!r}: use one of {', '.join(PLAYOUTS)}") from None


def make_rng(seed: int | random.Random | Any | None = None) -> random.Random:
    """A :class:`random.Random` from a seed, a Random, or a ``numpy.random.Generator``.

    None draws a fresh seed from the operating system (the run cannot be replayed).
    """
    if isinstance(seed, random.Random):
        return seed
    if seed is None or isinstance(seed, int):
        return random.Random(seed)
    integers = getattr(seed, "integers", None)
    if integers is not None:  # numpy Generator: derive a stream from it, reproducibly
        return random.Random(int(integers(0, 2**63 - 1)))
    raise BudgetError(f"seed {seed!r} is not an int, random.Random or numpy Generator")
