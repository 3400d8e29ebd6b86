"""Tree statistics straight from a database, with SQL aggregates.

:func:`db_stats` answers ``treelab stats`` on a million-node file without
building the tree in memory: node, leaf and depth counts come from one
``GROUP BY depth`` query (a subtree is gathered with a recursive query on
``parent_id``), the principal variation from one indexed lookup per level, the
asymmetry index from a window query, and the children table from one query.
It returns the same object as :func:`treelab.analysis.stats` on the loaded
tree (the tests check that).
"""

from __future__ import annotations

import math
import os
import sqlite3
from typing import Any

from .analysis import assemble
from .dbfile import reading
from .games import find_game
from .tree import Moves
from .viewload import path_rows

__all__ = ["db_stats"]

_SUBTREE = (
    "WITH RECURSIVE sub(id, d) AS (SELECT ?, 0 UNION ALL "
    "SELECT n.id, sub.d + 1 FROM nodes n JOIN sub ON n.parent_id = sub.id) "
)


def _histograms(conn: sqlite3.Connection, node_id: int, whole: bool) -> tuple[list[int], list[int]]:
    """Nodes and leaves per depth below the node (depth 0 = the node)."""
    leaf = "NOT EXISTS (SELECT 1 FROM nodes c WHERE c.parent_id = {}.id)"
    if whole:
        query = f"SELECT depth, count(*), sum({leaf.format('n')}) FROM nodes n GROUP BY depth"
        rows = conn.execute(query).fetchall()
    else:
        query = _SUBTREE + f"SELECT d, count(*), sum({leaf.format('sub')}) FROM sub GROUP BY d"
        rows = conn.execute(query, (node_id,)).fetchall()
    size = max(d for d, _, _ in rows) + 1
    nodes, leaves = [0] * size, [0] * size
    for d, n, lv in rows:
        nodes[d], leaves[d] = n, lv
    return nodes, leaves


def _asymmetry(conn: sqlite3.Connection, node_id: int, whole: bool) -> float | None:
    """Visit-weighted Gini of children's visits (rank formula, as :meth:`TreeArrays.concentration`)."""
    args: tuple[int, ...] = ()
    if whole:
        kids = "SELECT parent_id AS p, nb_visit AS x FROM nodes WHERE parent_id IS NOT NULL"
        prefix = "WITH "
    else:
        kids = "SELECT n.parent_id AS p, n.nb_visit AS x FROM nodes n JOIN sub ON n.parent_id = sub.id"
        prefix, args = _SUBTREE + ", ", (node_id,)
    query = (
        prefix
        + f"k AS ({kids}), "
        "r AS (SELECT p, x, ROW_NUMBER() OVER (PARTITION BY p ORDER BY x) AS i FROM k), "
        "g AS (SELECT count(*) AS m, sum(x) AS s, sum(i * x) AS t FROM r GROUP BY p HAVING m >= 2 AND s > 0) "
        "SELECT sum(s * (2.0 * t / (m * s) - (m + 1.0) / m)), sum(s) FROM g"
    )
    num, den = conn.execute(query, args).fetchone()
    return None if not den else num / den


def _pv(conn: sqlite3.Connection, node_id: int) -> tuple[list[str], list[int]]:
    """The principal variation below the node: most visited child per level (ties: first created)."""
    moves: list[str] = []
    visits: list[int] = []
    while True:
        row = conn.execute(
            "SELECT id, move, nb_visit FROM nodes WHERE parent_id = ? ORDER BY nb_visit DESC, id LIMIT 1",
            (node_id,),
        ).fetchone()
        if row is None or row[2] == 0:
            return moves, visits
        node_id = row[0]
        moves.append(row[1])
        visits.append(row[2])


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
        pv, pv_visits = _pv(conn, node_id)
        kids = [
            (m, n, w, d, p)
            for m, n, w, d, p in conn.execute(
                "SELECT move, nb_visit, nb_win, nb_draw, proven FROM nodes WHERE parent_id = ? ORDER BY id",
                (node_id,),
            )
        ]
        counts = {
            "nodes": sum(hist),
            "leaves": sum(leaf_hist),
            "depth_histogram": hist,
            "leaf_depth_histogram": leaf_hist,
            "principal_variation": pv,
            "pv_visits": pv_visits,
            "asymmetry": _asymmetry(conn, node_id, whole),
        }
    moves = [r[2] for r in rows[1:]]
    out = assemble(game.name, moves, node[6], node[3], counts=counts, kids=kids, c=c)
    out["db"] = name
    return out
