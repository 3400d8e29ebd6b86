"""Load from a database only the nodes a diagram draws.

A diagram of a small part of a huge tree must be quick, so :func:`load_view`
never reads the whole ``nodes`` table. It follows the path from the root one
indexed lookup per move, then walks down level by level: one query per level
fetches the children of the nodes kept so far (``parent_id IN (...)``, on the
``parent_id`` index), the same top-K / minimum-visits / principal-variation
rules as :func:`treelab.view.subtree.select` decide which of them are expanded, and
one aggregate query counts the children of the bottom row, so the diagram can
say what lies below it. The rows read are the drawn nodes and their siblings.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..games import find_game
from ..mcts.choice import best_child
from ..nodes import walk
from ..positions import PositionTable, node_keys
from ..store import positiontable
from ..store.binding import cut_of
from ..store.dbfile import reading
from ..store.integrity import check_row, damaged
from ..store.rows import children, counts_below, path_rows
from ..tree import Moves, Tree, TreeNode
from .subtree import MAX_NODES, filter_children

__all__ = ["load_view"]



def _values(tree: Tree, node: TreeNode, row: tuple[Any, ...]) -> None:
    """Give ``node`` its row's value sum and prior (:data:`treelab.store.rows.COLUMNS`)."""
    if row[9]:
        node.value_sum = float(row[9])
        tree.valued = True
    if row[10] is not None:
        tree.priors[node] = float(row[10])


def _node(tree: Tree, parent: TreeNode, row: tuple[Any, ...]) -> TreeNode:
    try:
        check_row(row)  # values only: labels are drawn as stored (view.builder quotes every one)
    except ValueError as exc:
        raise damaged(str(exc)) from None
    node = TreeNode(
        row[2], parent, node_id=row[0], nb_visit=row[3], nb_win=row[4], nb_draw=row[5],
        proven=row[6], created_game=row[7], nb_select=row[8],
    )
    _values(tree, node, row)
    tree.size += 1
    counts = tree.depth_counts
    if node.depth == len(counts):
        counts.append(1)
    else:
        counts[node.depth] += 1
    return node


def _counts(conn: sqlite3.Connection, nodes: Iterable[TreeNode]) -> dict[TreeNode, tuple[int, int]]:
    """``(children, visits)`` stored under each of ``nodes``."""
    by_id = {n.node_id: n for n in nodes}
    return {by_id[nid]: found for nid, found in counts_below(conn, list(by_id)).items()}


def load_view(
    db: str | os.PathLike[str],
    *,
    path: Moves = None,
    depth: int = 2,
    top: int | None = None,
    min_visits: int = 0,
    around_pv: bool = False,
    max_nodes: int = MAX_NODES,
) -> tuple[Tree, dict[TreeNode, tuple[int, int]]]:
    """The part of the stored tree that a diagram of the subtree at ``path`` draws.

    Args:
        db: the database file.
        path, depth, top, min_visits, around_pv: as for :func:`treelab.view.builder.to_dot`.
        max_nodes: stop loading once more nodes than this would be drawn.

    Returns:
        A read-only view :class:`Tree` (its :func:`~treelab.store.binding.cut_of` holds the nodes
        whose children were not read) and, for the unexpanded drawn nodes, the
        stored ``(children, visits)`` under them.

    Raises:
        PathNotFoundError: ``path`` is not stored.
        StoreError: not a readable treelab database.
    """
    with reading(os.fspath(db)) as (conn, meta):
        game = find_game(meta["game"])
        tree = Tree(game, c=float(meta.get("c", math.sqrt(2))))
        rows = path_rows(conn, game, path, os.fspath(db))
        root = tree.root
        row = rows[0]
        try:
            check_row(row)
        except ValueError as exc:
            raise damaged(str(exc)) from None
        root.node_id, root.nb_visit, root.nb_win, root.nb_draw, root.proven, root.created_game, root.nb_select = (
            row[0], row[3], row[4], row[5], row[6], row[7], row[8],
        )
        _values(tree, root, row)
        node = root
        for row in rows[1:]:
            cut_of(tree).add(node)  # only the path is read on the way down
            node = _node(tree, node, row)
        start = node
        frontier = [start]
        kept = 1
        for level in range(depth):
            if not frontier or kept > max_nodes:
                break
            kid_rows = children(conn, [n.node_id for n in frontier])
            nxt: list[TreeNode] = []
            for parent in frontier:
                kids = [_node(tree, parent, r) for r in kid_rows[parent.node_id]]
                shown = filter_children(kids, top, min_visits)
                kept += len(shown)
                if level + 1 == depth:
                    continue
                if around_pv:  # only the principal variation's child is expanded further
                    best = best_child(parent)
                    nxt.extend(k for k in shown if k is best and k.nb_visit > 0)
                else:
                    nxt.extend(shown)
            frontier = nxt
        # every loaded node without loaded children: say what is stored below it
        bare = [n for n in walk(start) if not n.children_view]
        cut_of(tree).update(bare)
        below = _counts(conn, bare) if len(bare) <= 20 * max_nodes else {}
        if meta.get("statistics") == "graph":  # edges show the graph score: the drawn positions' stored rows
            tree.statistics = "graph"
            keys = node_keys(tree, list(walk(tree.root)))
            found = positiontable.rows_of(conn, set(keys.values()))
            table = tree.position_table = PositionTable(tree, {k: [*v[:3], v[4]] for k, v in found.items()})
            table.keys.update(keys)
    tree.forget_changes()  # a view, not new nodes: saving it must never write anything
    return tree, below

