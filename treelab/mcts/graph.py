"""Graph-search statistics for UCT: explore by the edge taken, value a child by its position.

The persistent tree stores every path from the root, so a node on a game's line also counts the
simulations of searches rooted deeper in that game (pass-through visits, docs/design.md *Semantics*),
and a position reached by several move orders (or mirror images) is several nodes, each knowing
part of what was learned there. The seed's classic UCB1 (:func:`treelab.mcts.selection.select_ucb1`)
reads both distortions: at a node on a game's line the move that was played looks well explored
and its siblings are tried instead.

``statistics="graph"`` (:attr:`~treelab.mcts.config.SearchConfig.statistics`) follows KataGo's
graph search (``docs/GraphSearch.md``) and Czech, Korus & Kersting (2020), "Monte-Carlo Graph
Search for AlphaZero": the *edge* from a node to a child carries the exploration counts, the
child's *position* its value. At a node ``p`` the search picks the child ``j`` maximising

    ``Q(position of j) + c * sqrt(ln S_p / s_j)``

where ``s_j`` is the child's ``nb_select`` (simulations that took this edge from ``p``; never
pass-through visits), ``S_p`` the sum of ``s`` over ``p``'s children, and ``Q`` the mean reward,
for the player who moves into ``j``, of every simulation through ``j``'s position
(:class:`treelab.positions.PositionTable`: all its move orders and images). A child never selected
here scores +inf, as in UCB1. The move to play is the most selected (:mod:`treelab.mcts.choice`),
as for the classic rule. Only UCT has this rule (:class:`treelab.mcts.uct.GraphPhases`); its compiled
batch (``_loop.c``) has not, so a graph search runs the Python phases (``benchmarks/search.py``
measures what that costs).
"""

from __future__ import annotations

import math

from ..nodes import SQRT2, TreeNode, ucb1_score
from ..positions import PositionTable
from .selection import SelectFn, most_visited_unproven

__all__ = ["edge_exploration", "graph_score", "select_graph"]


def edge_exploration(selected: int, total: int, c: float = SQRT2) -> float:
    """The graph rule's exploration term ``c * sqrt(ln S / s)`` of an edge taken ``selected`` times out of
    ``total`` selections at its parent (+inf when never taken; 0 while ``S <= 1``)."""
    return ucb1_score(0, 0, selected, total, c)  # UCB1's term, on the edge's counts


def graph_score(value: float, selected: int, total: int, c: float = SQRT2) -> float:
    """The graph rule's score of an edge, ``value + c * sqrt(ln S / s)``, with the operations :func:`select_graph`
    runs (+inf when never taken): ``value`` is the child's position's mean for its mover; ``selected`` and ``total``
    are ``s`` and ``S``. Shown by :func:`treelab.mcts.scores.score_terms`."""
    return ucb1_score(value * selected, 0, selected, total, c)


def select_graph(table: PositionTable) -> SelectFn:
    """The graph rule's :data:`~treelab.mcts.selection.SelectFn` on ``table`` (module docstring).

    Ties go to the first child; with ``solver``, proven children are skipped (all proven: the first most visited).
    """
    rows, key = table.rows, table.key

    def select(node: TreeNode, c: float, solver: bool) -> TreeNode:
        kids = node.children_view
        total = 0
        for kid in kids:
            total += kid.nb_select
        best = None
        best_score = -math.inf
        for kid in kids:
            if solver and kid.proven is not None:
                continue
            selected = kid.nb_select
            if selected == 0:
                return kid
            row = rows.get(key(kid))
            if row is None or not row[0]:
                value = kid.mean
            else:  # treelab.positions.mover_mean, inline
                visits, ones, draws, values = row
                if kid.mover == 1:
                    value = (ones + 0.5 * draws + 0.5 * values) / visits
                else:
                    value = (visits - ones - 0.5 * draws - 0.5 * values) / visits
            score = ucb1_score(value * selected, 0, selected, total, c)  # graph_score's operations, inlined
            if score > best_score:
                best_score = score
                best = kid
        return best if best is not None else most_visited_unproven(kids)

    return select
