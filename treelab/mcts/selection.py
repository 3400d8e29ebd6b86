"""Selection: the child a search descends to, behind one type alias, and UCT's tree walk.

A selection function is a plain function ``select(node, c, solver) -> child``
(:data:`SelectFn`, as OpenSpiel's ``child_selection_fn``); the search loop of
:mod:`treelab.mcts.uct` takes one as a hook. :func:`select_ucb1` is UCT's, the
highest :func:`treelab.nodes.ucb1_score`; the compiled walk
(``treelab._speedups.select``/``descend``, :mod:`treelab.speedups`)
is the fast path of exactly these functions, picking the very same children. The
backup is :func:`treelab.tree.backup`, the one rule of every search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .. import speedups
from ..nodes import TreeNode, children_of, ucb1_score

__all__ = [
    "PYTHON_WALK",
    "DescendFn",
    "SelectFn",
    "descend",
    "descend_by",
    "most_visited_unproven",
    "select_ucb1",
    "walk",
]

SelectFn = Callable[[TreeNode, float, bool], TreeNode]
"""``select(node, c, solver) -> child``: the child to descend to from ``node`` (which has children).

With ``solver``, proven children are skipped: simulations below a proven move are wasted."""

DescendFn = Callable[[TreeNode, list[TreeNode], float, bool, int], TreeNode]
"""``descend(node, path, c, solver, max_moves) -> node``: walk down by selection while fully expanded."""

def select_ucb1(node: TreeNode, c: float, solver: bool) -> TreeNode:
    """UCT's selection: the best :func:`~treelab.nodes.ucb1_score`, unvisited first, ties to the first.

    With ``solver``, proven children are skipped; if all are, the first most
    visited. ``treelab._speedups.select`` does exactly this in C.
    """
    kids = node.children_view
    big_n = node.nb_visit
    best = None
    best_score = -math.inf
    for kid in kids:
        if solver and kid.proven is not None:
            continue
        if kid.nb_visit == 0:
            return kid
        score = ucb1_score(kid.nb_win, kid.nb_draw, kid.nb_visit, big_n, c, kid.value_sum)
        if score > best_score:
            best_score = score
            best = kid
    return best if best is not None else most_visited_unproven(kids)


def most_visited_unproven(kids: Sequence[TreeNode]) -> TreeNode:
    """The fallback when the solver skipped every child (all proven, the node not): the first most visited."""
    return max(kids, key=_visits)


def _visits(node: TreeNode) -> int:
    return node.nb_visit


def descend(node: TreeNode, path: list[TreeNode], c: float, solver: bool, max_moves: int) -> TreeNode:
    """Walk down by :func:`select_ucb1` while the node has ``max_moves`` children, appending to ``path``.

    Returns the first node with fewer children (possibly not fully expanded);
    ``treelab._speedups.descend`` does exactly this in C.
    """
    while True:
        if len(children_of(node)) < max_moves:
            return node
        node = select_ucb1(node, c, solver)
        path.append(node)


PYTHON_WALK: tuple[DescendFn, SelectFn] = (descend, select_ucb1)
"""The pure-Python walk (descend, select): the reference, and the fallback without the extension."""


def walk(select: SelectFn | None = None, *, python: bool = False) -> tuple[DescendFn, SelectFn]:
    """The walk (descend, select) a search uses with the selection hook ``select``.

    None (UCB1): the compiled walk when :mod:`treelab.speedups` has it, else
    :data:`PYTHON_WALK` (also with ``python``: a tree with value sums, which the compiled
    walk does not read). A hook of one's own is walked in Python.
    """
    if python and (select is None or select is select_ucb1):
        return PYTHON_WALK
    if select is None or select is select_ucb1:
        fast = speedups.compiled
        return (fast.descend, fast.select) if fast is not None else PYTHON_WALK
    return descend_by(select), select


def descend_by(select: SelectFn) -> DescendFn:
    """:func:`descend` with another selection function."""

    def descend_with(node: TreeNode, path: list[TreeNode], c: float, solver: bool, max_moves: int) -> TreeNode:
        while True:
            if len(children_of(node)) < max_moves:
                return node
            node = select(node, c, solver)
            path.append(node)

    return descend_with
