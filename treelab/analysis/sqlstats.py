"""Tree statistics straight from a database, with SQL aggregates.

:func:`db_stats` answers ``treelab stats`` on a million-node file without
building the tree in memory: node, leaf and depth counts come from one
``GROUP BY depth`` query (a subtree is gathered with a recursive query on
``parent_id``), the principal variation from one indexed lookup per level, the
asymmetry index from one scan summed with numpy, and the children table from one query.
It returns the same object as :func:`treelab.analysis.arrays.stats` on the loaded
tree (the tests check that).
"""

from __future__ import annotations

import math
import os
import sqlite3
from typing import Any

import numpy as np

from ..games import find_game
from ..mcts.config import Statistics
from ..store.dbfile import diagnosed, reading
from ..store.positiontable import after_moves
from ..store.rows import child_visits, depth_rows, kid_rows, path_rows, principal_variation
from ..tree import Moves
from .arrays import assemble

__all__ = ["db_stats"]

def _histograms(conn: sqlite3.Connection, node_id: int, whole: bool) -> tuple[list[int], list[int]]:
    """Nodes and leaves per depth below the node (depth 0 = the node)."""
    rows = depth_rows(conn, node_id, whole)
    size = max(d for d, _, _ in rows) + 1
    nodes, leaves = [0] * size, [0] * size
    for d, n, lv in rows:
        nodes[d], leaves[d] = n, lv
    return nodes, leaves


def _asymmetry(conn: sqlite3.Connection, node_id: int, whole: bool) -> float | None:
    """Visit-weighted Gini of children's visits (rank formula, as :meth:`TreeArrays.concentration`).

    The store reads each child's ``(parent_id, nb_visit)`` in table order; numpy sorts
    them by parent and visits and sums per sibling group (twice as fast as a
    window query ranking a million rows in SQLite).
    """
    kids = np.fromiter(child_visits(conn, node_id, whole), dtype=[("p", np.int64), ("x", np.int64)])
    if not len(kids):
        return None
    order = np.lexsort((kids["x"], kids["p"]))
    p, x = kids["p"][order], kids["x"][order].astype(float)
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])  # first of each sibling group
    m = np.diff(np.r_[starts, len(p)])
    rank = np.arange(len(p)) - np.repeat(starts, m) + 1  # 1..m within the group, by visits
    s, t = np.add.reduceat(x, starts), np.add.reduceat(rank * x, starts)
    ok = (m >= 2) & (s > 0)
    if not ok.any():
        return None
    gini = 2 * t[ok] / (m[ok] * s[ok]) - (m[ok] + 1) / m[ok]
    return float((s[ok] * gini).sum() / s[ok].sum())


@diagnosed
def db_stats(db: str | os.PathLike[str], path: Moves = None, *, c: float | None = None) -> dict[str, Any]:
    """The ``stats --json`` object of the subtree at ``path`` in the database ``db``.

    Args:
        db: a treelab database file.
        path: the subtree root as moves (None: the whole tree).
        c: UCB1's constant for the children table (default: the tree's stored ``c``).

    Raises:
        PathNotFoundError: ``path`` is not stored.
        StoreError: not a readable treelab database.
    """
    name = os.fspath(db)
    with reading(name) as (conn, meta):
        game = find_game(meta["game"])
        if c is None:
            c = float(meta.get("c", math.sqrt(2)))
        rows = path_rows(conn, game, path, name)
        node = rows[-1]
        node_id, whole = node[0], len(rows) == 1
        hist, leaf_hist = _histograms(conn, node_id, whole)
        line = principal_variation(conn, node_id)
        raw = kid_rows(conn, node_id)
        if not all(isinstance(m, str) for m in (*(m for m, _ in line), *(r[2] for r in raw))):
            raise TypeError("a move that is not text")  # reading() checks the table and names the bad row
        statistics: Statistics = "graph" if meta.get("statistics") == "graph" else "classic"  # its searches' rule
        merged = {} if statistics == "classic" else after_moves(
            conn, game, game.replay(game.parse([r[2] for r in rows[1:]])), [r[2] for r in raw])
        kids = [(r[2], r[3], r[4], r[5], r[6], r[9], r[10], r[8], merged.get(r[2])) for r in raw]  # as child_rows
        counts = {
            "nodes": sum(hist),
            "leaves": sum(leaf_hist),
            "depth_histogram": hist,
            "leaf_depth_histogram": leaf_hist,
            "principal_variation": [m for m, _ in line],
            "pv_visits": [v for _, v in line],
            "asymmetry": _asymmetry(conn, node_id, whole),
        }
    moves = [r[2] for r in rows[1:]]
    out = assemble(game.name, moves, node[6], node[3], counts=counts, kids=kids, c=c, statistics=statistics)
    out["db"] = name
    return out
