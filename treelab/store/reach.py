"""The part of a stored tree a search from one position reaches, read a few levels at a time (the explorer's
step mode on a stored tree).

:func:`load_reach` reads the nodes from the root down to the position, the position's children, and the
children of every node the caller asks to *expand* together with the line of most visited children below
it (the line a search of a trained tree mostly follows), never the whole subtree: on a 5-million-node file
a one-simulation search once loaded every node below the position (28.8 s, 1.46 GB). The nodes whose stored
children were not read are the *frontier*; a search that changed one of them went where nothing was
loaded, and the caller expands those and searches again (:func:`treelab.view.explorer.stepping.trace_answer`),
until no search leaves what was loaded: the search then ran exactly as on the whole stored tree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import PathNotFoundError
from ..tree import SQRT2, Tree, TreeNode
from . import bulk, movers, values
from .dbfile import reading
from .persistence import _proofs
from .schema import DbPath, display

__all__ = ["Reach", "load_reach"]

_COLUMNS = "n.id, n.parent_id, n.move, n.nb_visit, n.nb_win, n.nb_draw, n.proven, n.created_game, n.nb_select"
_CHUNK = 500
"""Ids asked for in one statement."""
_LINE = """
WITH RECURSIVE line(id) AS (
    SELECT ?
    UNION ALL
    SELECT (SELECT c.id FROM nodes AS c WHERE c.parent_id = line.id ORDER BY c.nb_visit DESC, c.id LIMIT 1)
    FROM line WHERE line.id IS NOT NULL
)
SELECT id FROM line WHERE id IS NOT NULL
"""
"""A node and its line of most visited children down to a stored leaf."""


@dataclass(frozen=True)
class Reach:
    """What :func:`load_reach` read."""

    tree: Tree
    """The nodes read, as a tree to search in memory (never saved: its changes are forgotten)."""
    expanded: frozenset[int]
    """The ids of the nodes whose children were read (the position's included): pass them back, with the
    frontier nodes a search changed, to read further."""
    frontier: dict[int, TreeNode]
    """The nodes read below the position whose stored children were not, by id."""


def load_reach(db: DbPath, moves: Sequence[str], expanded: Collection[int] = (), touched: Collection[int] = ()
               ) -> Reach:
    """The nodes of ``db`` from the root down to the position ``moves`` (move labels), the position's children,
    the children of the nodes ``expanded`` (a former :attr:`Reach.expanded`), and those of every node of
    ``touched`` (frontier nodes a search changed) and of its line of most visited children; the position's
    own line is expanded from the start.

    Raises:
        PathNotFoundError: the position is not stored.
        StoreError: see :func:`treelab.store.dbfile.reading`.
    """
    name = display(db)
    with reading(db) as (conn, meta):
        tree = Tree(meta["game"], c=float(meta.get("c", SQRT2)))
        tree.statistics = meta.get("statistics", "classic")
        tree.depth_counts = []
        chain = [conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()[0]]
        for i, label in enumerate(moves):
            found = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (chain[-1], label)).fetchone()
            if found is None:
                raise PathNotFoundError(f"path {''.join(moves)!r} is not in {name!r} (no node "
                                        f"{''.join(moves[: i + 1])!r}): check the moves, or train deeper")
            chain.append(found[0])
        top = chain[-1]
        fresh = [*touched] if expanded else [top, *touched]
        kids = _rows(conn, "SELECT id FROM nodes WHERE parent_id IN (%s)", fresh)  # each child's line too
        grown = set(expanded) | set(fresh) | set(_lines(conn, [k for (k,) in kids]))
        nodes: dict[int, TreeNode] = {}
        place = {nid: i for i, nid in enumerate(chain)}
        above = _rows(conn, f"SELECT {_COLUMNS}, 0 FROM nodes AS n WHERE n.id IN (%s)", chain)
        bulk.build(tree, sorted(above, key=lambda row: place[row[0]]), nodes)  # parents first
        below = _rows(conn, f"SELECT {_COLUMNS}, EXISTS (SELECT 1 FROM nodes AS k WHERE k.parent_id = n.id), "
                            "n.depth FROM nodes AS n WHERE n.parent_id IN (%s)", sorted(grown))
        below.sort(key=lambda row: (row[-1], row[0]))  # parents first
        bulk.build(tree, [(*row[:9], row[9] and row[0] not in grown) for row in below], nodes)
        _proofs(conn, nodes, name)
        movers.read(conn, tree, nodes, name)
        values.read(conn, tree, nodes, name)
        tree.root, tree.size = nodes[chain[0]], sum(tree.depth_counts)
        next_id = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] + 1
    tree.mark_saved(next_id=next_id)
    frontier = {row[0]: nodes[row[0]] for row in below if row[9] and row[0] not in grown}
    return Reach(tree, frozenset(grown), frontier)


def _rows(conn: sqlite3.Connection, sql: str, ids: Sequence[int]) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(ids), _CHUNK):
        part = list(ids[start:start + _CHUNK])
        found.extend(conn.execute(sql % ",".join("?" * len(part)), part))
    return found


def _lines(conn: sqlite3.Connection, ids: Sequence[int]) -> list[int]:
    """``ids`` and the nodes on each one's line of most visited children (those not already on a line found)."""
    seen: list[int] = []
    done: set[int] = set()
    for nid in ids:
        if nid in done:
            continue
        for (found,) in conn.execute(_LINE, (nid,)):
            done.add(found)
            seen.append(found)
    return seen
