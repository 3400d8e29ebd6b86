"""The score terms a trace records at each level of a simulation's path: UCB1's, the graph score's and PUCT's.

A :class:`~treelab.mcts.tracer.Tracer` shows, for every candidate at a level, the two terms of its
score as the search computed them at that moment, and its prior under PUCT.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..nodes import Proof, TreeNode
from ..positions import PositionTable
from .puct_rules import chosen_here
from .scores import node_score

__all__ = ["PUCTTerms", "Terms", "Unmade", "graph_terms", "puct_terms", "ucb1_terms"]

Terms = Callable[[TreeNode, TreeNode, float], "tuple[float | None, float | None, float | None]"]
"""``terms(parent, child, c) -> (mean, explore, prior)``: the two terms of a child's score at that moment
(None, None: +inf, an unvisited child under UCB1) and its prior (None: no prior, UCB1)."""


def ucb1_terms(parent: TreeNode, child: TreeNode, c: float) -> tuple[float | None, float | None, None]:
    """UCB1's terms, as :func:`treelab.nodes.ucb1_score` computes them (Auer et al. 2002)."""
    n = child.nb_visit
    if n == 0:
        return None, None, None
    big_n = parent.nb_visit
    explore = c * math.sqrt(math.log(big_n)) if big_n > 1 else 0.0
    return child.mean, explore / math.sqrt(n), None


def graph_terms(table: PositionTable) -> Terms:
    """The graph score's terms on ``table`` (:func:`treelab.mcts.scores.node_score`): the position's value and the
    edge's exploration (None, None: +inf, an edge never selected here)."""

    def terms(parent: TreeNode, child: TreeNode, c: float) -> tuple[float | None, float | None, None]:
        score = node_score(child, c, table)
        return (None, None, None) if score.exploration is None else (score.value, score.exploration, None)

    return terms


def puct_terms(priors: Mapping[TreeNode, float], start: TreeNode, noisy: Mapping[str, float]) -> Terms:
    """PUCT's terms ``Q`` and ``c * P * sqrt(N) / (1 + n)``, as :func:`treelab.mcts.puct_rules._pick` has them
    (also for the moves waiting in ``tree.pending``: :meth:`PUCTTerms.waiting`)."""
    return PUCTTerms(priors, start, noisy)


@dataclass(frozen=True)
class PUCTTerms:
    """PUCT's score terms of a child, or of a move not made yet (its node is made when first selected)."""

    priors: Mapping[TreeNode, float]
    """The tree's priors, by node."""
    start: TreeNode
    """The search's start (where root noise applies)."""
    noisy: Mapping[str, float]
    """The start's priors with root noise, by label (empty: none)."""

    def __call__(self, parent: TreeNode, child: TreeNode, c: float) -> tuple[float, float, float]:
        q = child.mean if child.nb_visit else (1.0 - parent.mean if parent.nb_visit else 0.5)
        noisy = self.noisy if self.noisy and parent is self.start else None
        prior = noisy.get(child.name, 0.0) if noisy is not None else self.priors.get(child, 0.0)
        return q, c * math.sqrt(chosen_here(parent)) * prior / (1 + child.nb_select), prior

    def waiting(self, parent: TreeNode, label: str, prior: float, c: float) -> tuple[float, float, float]:
        """The terms of the move ``label``, not made yet, with its prior ``prior``: an unvisited child's."""
        if self.noisy and parent is self.start:
            prior = self.noisy.get(label, 0.0)
        return (1.0 - parent.mean if parent.nb_visit else 0.5), c * math.sqrt(chosen_here(parent)) * prior, prior


@dataclass(frozen=True)
class Unmade:
    """A candidate move with no node yet, as a row of a level shows it."""

    name: str
    nb_visit: int = 0
    nb_win: int = 0
    nb_draw: int = 0
    nb_select: int = 0
    proven: Proof | None = None
