"""The score a move shows and is chosen by: the one its tree's searches select with, term by term.

A tree's searches select by one statistics rule (:data:`~treelab.mcts.config.Statistics`, kept in the
file's ``meta.statistics``): the seed's **classic** UCB1 on ``nb_visit``
(:func:`treelab.nodes.ucb1_score`, :func:`~treelab.mcts.selection.select_ucb1`) or the **graph** score
(:mod:`treelab.mcts.graph`, :func:`~treelab.mcts.graph.select_graph`: the position's value and the
edge's exploration). Every place that shows a score or chooses by one asks :func:`score_terms` (or
:func:`node_score`): ``analyse --json`` and ``stats --json`` (each child's ``ucb1``, and under the
graph rule its ``value`` and ``exploration``), diagrams' edges, the explorer's columns and
``choice="ucb1"``. So what a user reads is what the search computed, with the same operations in the
same order (``tests/view/test_scores_shown.py`` holds that on a real graph-statistics file).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..nodes import TreeNode, mean_reward, ucb1_score
from ..positions import PositionTable, mover_mean
from ..tree import Tree
from .config import Statistics
from .graph import edge_exploration, graph_score

__all__ = ["Edge", "Score", "node_score", "score_terms", "table_for"]


@dataclass(frozen=True)
class Edge:
    """What the score of one child reads, under either rule: its counts, its parent's and siblings', its position's."""

    wins: float
    """The child's ``nb_win`` (the wins of the player who moves into it)."""
    draws: float
    """The child's ``nb_draw``."""
    visits: int
    """The child's ``nb_visit`` (classic: its exploration count ``n``)."""
    selected: int
    """The child's ``nb_select``: simulations that took this edge (graph: its exploration count ``s``)."""
    parent_visits: int
    """The parent's ``nb_visit`` (classic: ``N``)."""
    selections: int
    """``nb_select`` summed over the parent's children (graph: ``S``)."""
    mover: int
    """The player who moves into the child (1 or 2): whose value its position's row gives."""
    value_sum: float = 0.0
    """The child's value sum (evaluator values, :func:`treelab.nodes.mean_reward`)."""
    position: Sequence[int] | None = None
    """The merged counts of the child's position, ``(nb_visit, player 1's wins, nb_draw[, nb_path], value_sum)`` (graph;
    None or no visits: none yet, and the child's own mean stands in, as in the search)."""

    @classmethod
    def of(cls, kid: TreeNode, position: Sequence[int] | None = None, mover: int | None = None) -> Edge:
        """The edge into ``kid`` from its parent (``mover``: the player moving into it, if ``kid`` does not know)."""
        parent = kid.parent
        return cls(kid.nb_win, kid.nb_draw, kid.nb_visit, kid.nb_select,
                   0 if parent is None else parent.nb_visit,
                   0 if parent is None else sum(k.nb_select for k in parent.children_view),
                   kid.mover if mover is None else mover, kid.value_sum, position)


@dataclass(frozen=True)
class Score:
    """A child's score under one statistics rule, and its two terms."""

    statistics: Statistics
    """The rule: ``"classic"`` or ``"graph"``."""
    value: float
    """The first term: the child's mean (classic), or its position's mean for the mover (graph; the child's own
    mean while the position has no visits)."""
    exploration: float | None
    """The second term, ``c * sqrt(ln N / n)`` (classic) or ``c * sqrt(ln S / s)`` (graph); None: +inf (never
    visited, or never selected here: the search tries it first)."""
    total: float | None
    """The score the selection maximises, computed as it computes it (None: +inf)."""


def score_terms(statistics: Statistics, edge: Edge, c: float) -> Score:
    """The score of ``edge`` under ``statistics``, as :func:`~treelab.mcts.selection.select_ucb1` (classic) or
    :func:`~treelab.mcts.graph.select_graph` (graph) computes it, with its terms."""
    own = mean_reward(edge.wins, edge.draws, edge.visits, edge.value_sum)
    if statistics == "graph":
        row = edge.position
        value = (mover_mean(row[0], row[1], row[2], edge.mover, row[-1] if len(row) > 3 else 0.0)
                 if row is not None and row[0] else own)  # a row's value sum comes last (in memory and stored)
        explore = edge_exploration(edge.selected, edge.selections, c)
        total = graph_score(value, edge.selected, edge.selections, c)
    else:
        value = own
        total = ucb1_score(edge.wins, edge.draws, edge.visits, edge.parent_visits, c, edge.value_sum)
        explore = total - value if edge.visits else math.inf
    return Score(statistics, value, None if math.isinf(explore) else explore, None if math.isinf(total) else total)


def node_score(kid: TreeNode, c: float, table: PositionTable | None = None) -> Score:
    """The score of the child ``kid`` of its parent: the graph score with ``table`` (the position table of a tree
    whose searches use graph statistics, :meth:`~treelab.positions.PositionTable.of`), else classic UCB1."""
    if table is None:
        return score_terms("classic", Edge.of(kid), c)
    return score_terms("graph", Edge.of(kid, table.row(kid)), c)


def table_for(tree: Tree) -> PositionTable | None:
    """The position table the scores of ``tree``'s children read: its graph search's when its searches select by
    graph statistics (``tree.statistics``), else None (classic UCB1 reads none)."""
    return PositionTable.of(tree) if tree.statistics == "graph" else None
