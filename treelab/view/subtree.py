"""Which nodes a diagram draws: a subtree cut by depth, top-K, minimum visits or the PV.

:func:`select` walks down from one node, breadth first, and decides which
children to draw. Nothing is dropped silently: children left out by a filter
are summarised per parent (:attr:`Selection.hidden`, drawn as one "+12 more,
340 visits" node), and drawn nodes whose children lie below the depth limit
say so (:attr:`Selection.below`). The walk stops as soon as the drawing would
exceed ``max_nodes``, so asking for too much fails fast instead of walking a
million-node tree or hanging ``dot``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import BudgetError, TooLargeError
from ..mcts.choice import preference, principal_variation
from ..tree import TreeNode

__all__ = ["MAX_NODES", "Cut", "Selection", "filter_children", "move_order", "principal_variation", "select"]

MAX_NODES = 400
"""Default size guard: the most nodes (drawn plus summary) one diagram may hold."""


@dataclass(frozen=True)
class Cut:
    """Children of a drawn node that the diagram leaves out."""

    count: int
    """How many children are left out (-1: unknown, they were not loaded)."""
    visits: int
    """Their visits in total (-1: unknown)."""


@dataclass
class Selection:
    """The nodes one diagram draws, with what it leaves out."""

    top: TreeNode
    """The subtree root: the first node drawn."""
    nodes: list[TreeNode] = field(default_factory=list)
    """Every drawn node, breadth first, children in move order."""
    children: dict[TreeNode, list[TreeNode]] = field(default_factory=dict)
    """The drawn children of each drawn node (in move order)."""
    hidden: dict[TreeNode, Cut] = field(default_factory=dict)
    """Children left out by ``top``/``min_visits``/``around_pv``, per drawn parent (a summary node)."""
    below: dict[TreeNode, Cut] = field(default_factory=dict)
    """Drawn nodes at the depth limit (or not expanded) whose children are not drawn."""
    pv: list[TreeNode] = field(default_factory=list)
    """The principal variation from :attr:`top` (:func:`treelab.mcts.choice.principal_variation`), as drawn."""

    @property
    def size(self) -> int:
        """Nodes in the diagram: drawn nodes plus one summary node per :attr:`hidden` entry."""
        return len(self.nodes) + len(self.hidden)


def move_order(node: TreeNode) -> tuple[int, int | str]:
    """Sort key that puts numeric move labels in numeric order (columns left to right)."""
    name = node.name
    return (0, int(name)) if name.isdigit() else (1, name)


def select(
    top: TreeNode,
    *,
    depth: int = 2,
    top_k: int | None = None,
    min_visits: int = 0,
    around_pv: bool = False,
    max_nodes: int = MAX_NODES,
    unloaded: Sequence[TreeNode] | set[TreeNode] = (),
    counts_below: Mapping[TreeNode, tuple[int, int]] | None = None,
) -> Selection:
    """Choose the nodes to draw below ``top``.

    Args:
        top: the subtree root.
        depth: levels drawn below ``top`` (0: ``top`` alone).
        top_k: at each node draw only its ``top_k`` first children by the move-choice rule (proofs first, then the
            most selected, then the most visited: the principal variation's order; None: all).
        min_visits: draw only children with at least this many visits.
        around_pv: expand only the nodes of the principal variation; their
            other children are drawn but not expanded.
        max_nodes: the size guard (drawn plus summary nodes).
        unloaded: nodes whose children were not loaded from the database.
        counts_below: for unloaded nodes, their real ``(children, visits)`` if known.

    Raises:
        TooLargeError: the diagram would hold more than ``max_nodes`` nodes.
        BudgetError: a negative ``depth``, ``top_k < 1`` or negative ``min_visits``.
    """
    if depth < 0:
        raise BudgetError(f"depth {depth!r} is negative: use 0 (the node alone) or more")
    if top_k is not None and top_k < 1:
        raise BudgetError(f"top {top_k!r} must be at least 1 (or None for every child)")
    if min_visits < 0:
        raise BudgetError(f"min_visits {min_visits!r} is negative: use 0 or more")
    unloaded_set = set(unloaded)
    known = counts_below or {}
    pv = principal_variation(top, depth)
    pv_set = set(pv)
    pv_set.add(top)
    sel = Selection(top=top, pv=pv)
    sel.nodes.append(top)
    level = [top]
    for d in range(depth + 1):
        nxt: list[TreeNode] = []
        for node in level:
            kids = list(node.children_view)
            if node in unloaded_set and not kids:
                count, visits = known.get(node, (-1, -1))
                if count != 0:
                    sel.below[node] = Cut(count, visits)
                continue
            if not kids:
                continue
            if d == depth or (around_pv and node not in pv_set):
                sel.below[node] = Cut(len(kids), sum(k.nb_visit for k in kids))
                continue
            shown = filter_children(kids, top_k, min_visits)
            if len(shown) < len(kids):
                kept = set(shown)
                left = [k for k in kids if k not in kept]
                sel.hidden[node] = Cut(len(left), sum(k.nb_visit for k in left))
            shown.sort(key=move_order)
            sel.children[node] = shown
            sel.nodes.extend(shown)
            nxt.extend(shown)
            if sel.size > max_nodes:
                raise _too_large(sel.size, max_nodes, depth, top_k, min_visits, around_pv)
        level = nxt
    return sel


def filter_children(kids: Sequence[TreeNode], top_k: int | None, min_visits: int) -> list[TreeNode]:
    shown = [k for k in kids if k.nb_visit >= min_visits] if min_visits else list(kids)
    if top_k is not None and len(shown) > top_k:
        # the move-choice rule's order, so the principal variation is always drawn; stable: ties keep creation order
        shown = sorted(shown, key=lambda k: preference(k.proven, k.nb_select, k.nb_visit), reverse=True)[:top_k]
    return shown


def _too_large(
    size: int, limit: int, depth: int, top_k: int | None, min_visits: int, around_pv: bool
) -> TooLargeError:
    hints = []
    if depth > 1:
        hints.append(f"a smaller depth (now {depth}; --depth)")
    hints.append("only the K most selected moves (top=K; --top K)" if top_k is None
                 else f"a smaller top (now {top_k}; --top)")
    hints.append("a visit floor (min_visits=N; --min-visits N)" if not min_visits
                 else f"a larger min_visits (now {min_visits}; --min-visits)")
    if not around_pv:
        hints.append("only the principal variation (around_pv=True; --around-pv)")
    return TooLargeError(
        f"diagram would hold more than {limit!r} nodes (reached {size!r}): draw less with "
        + ", ".join(hints)
        + f", or raise max_nodes (--max-nodes) above {limit!r}"
    )
