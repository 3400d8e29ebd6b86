"""The part of a stored tree a search from one position reaches, read a few levels at a time (the explorer's
step mode on a stored tree).

:func:`load_reach` reads the nodes from the root down to the position, the position's children, and the
children of every node the caller asks to *expand* together with the lines of most visited children below
its children (the lines a search of a trained tree mostly follows), never the whole subtree: on a
5-million-node file a one-simulation search once loaded every node below the position (28.8 s, 1.46 GB).
The nodes whose stored children were not read are the *frontier*; a search that changed one of them went
where nothing was read, and the caller expands those and searches again
(:func:`treelab.view.explorer.stepping.trace_answer`), until no search leaves what was read: the search
then ran exactly as on the whole stored tree. The rows read are kept in the :class:`Reach`, so a second
call reads only the new parents' children and builds the tree from rows in memory.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NotATreelabDatabaseError, PathNotFoundError
from ..tree import SQRT2, Tree, TreeNode
from . import bulk, movers
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


@dataclass
class _Read:
    """The rows read so far, kept from one :func:`load_reach` to the next (only new parents are asked)."""

    line: list[tuple[Any, ...]]
    """The rows from the root down to the position."""
    kids: dict[int, list[tuple[Any, ...]]] = field(default_factory=dict)
    """Each read parent's children as :func:`treelab.store.bulk.build` rows, in id order."""
    depth: dict[int, int] = field(default_factory=dict)
    """Each child's depth."""
    inner: set[int] = field(default_factory=set)
    """The children read that have stored children of their own."""
    valued: list[tuple[int, Any, Any]] = field(default_factory=list)
    """``(id, value_sum, prior)`` of the rows read that hold either, checked."""


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
    read: _Read = field(repr=False)
    """The rows read, for the next call."""


def load_reach(db: DbPath, moves: Sequence[str], expanded: Collection[int] = (), touched: Collection[int] = (),
               known: Reach | None = None) -> Reach:
    """The nodes of ``db`` from the root down to the position ``moves`` (move labels), the position's children,
    the children of the nodes ``expanded`` (a former :attr:`Reach.expanded`), and those of every node of
    ``touched`` (frontier nodes a search changed) and of the lines of most visited children below its children;
    the position's own lines are expanded from the start. ``known``: a former answer whose rows are reused.

    Raises:
        PathNotFoundError: the position is not stored.
        NotATreelabDatabaseError: a value or prior no treelab wrote.
        StoreError: see :func:`treelab.store.dbfile.reading`.
    """
    name = display(db)
    with reading(db) as (conn, meta):
        tree = Tree(meta["game"], c=float(meta.get("c", SQRT2)))
        tree.statistics = meta.get("statistics", "classic")
        tree.depth_counts = []
        valued = "value_sum" in {row[1] for row in conn.execute("PRAGMA table_info(nodes)")}
        picked = (f"{_COLUMNS}, EXISTS (SELECT 1 FROM nodes AS k WHERE k.parent_id = n.id), n.depth, "
                  + ("n.value_sum, n.prior" if valued else "0.0, NULL"))
        read = known.read if known is not None else _Read(_line_rows(conn, picked, moves, name))
        top = read.line[-1][0]
        fresh = [*touched] if expanded else [top, *touched]
        kids = [k for (k,) in _ask(conn, "SELECT id FROM nodes WHERE parent_id IN (%s)", fresh)]
        grown = set(expanded) | set(fresh) | set(_lines(conn, kids))  # and each child's line
        asked = sorted(nid for nid in grown if nid not in read.kids)
        for nid in asked:
            read.kids[nid] = []
        for row in _ask(conn, f"SELECT {picked} FROM nodes AS n WHERE n.parent_id IN (%s) "
                              "ORDER BY n.parent_id, n.id", asked):
            nid = row[0]
            read.kids[row[1]].append((*row[:9], 0))
            read.depth[nid] = row[10]
            if row[9]:
                read.inner.add(nid)
            if row[11] or row[12] is not None:
                read.valued.append(_checked(row, name))
        order = sorted(grown - {top}, key=read.depth.__getitem__)  # a parent's row before its children's
        built = [row for nid in (top, *order) for row in read.kids[nid]]
        nodes: dict[int, TreeNode] = {}
        bulk.build(tree, [(*row[:9], 0) for row in read.line], nodes)  # the line to the position, parents first
        bulk.build(tree, built, nodes)
        _proofs(conn, nodes, name)
        movers.read(conn, tree, nodes, name)
        for nid, value, prior in (*(_checked(row, name) for row in read.line if row[11] or row[12] is not None),
                                  *read.valued):
            if value:
                nodes[nid].value_sum = float(value)
                tree.valued = True
            if prior is not None:
                tree.priors[nodes[nid]] = float(prior)
        next_id = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] + 1
    tree.root, tree.size = nodes[read.line[0][0]], sum(tree.depth_counts)
    tree.mark_saved(next_id=next_id)
    frontier = {nid: nodes[nid] for nid in read.inner - grown}
    return Reach(tree, frozenset(grown), frontier, read)


def _line_rows(conn: sqlite3.Connection, picked: str, moves: Sequence[str], name: str) -> list[tuple[Any, ...]]:
    """The rows from the root down to the position ``moves``."""
    line = [conn.execute(f"SELECT {picked} FROM nodes AS n WHERE n.parent_id IS NULL").fetchone()]
    for i, label in enumerate(moves):
        found = conn.execute(f"SELECT {picked} FROM nodes AS n WHERE n.parent_id = ? AND n.move = ?",
                             (line[-1][0], label)).fetchone()
        if found is None:
            raise PathNotFoundError(f"path {''.join(moves)!r} is not in {name!r} (no node "
                                    f"{''.join(moves[: i + 1])!r}): check the moves, or train deeper")
        line.append(found)
    return line


def _checked(row: tuple[Any, ...], name: str) -> tuple[int, Any, Any]:
    """``(id, value_sum, prior)`` of a row (its last two), checked as every load checks them."""
    value, prior = row[11], row[12]
    if not isinstance(value, int | float) or not math.isfinite(value) or (
            prior is not None and (not isinstance(prior, int | float) or not 0.0 <= prior <= 1.0)):
        raise NotATreelabDatabaseError(f"{name!r} is damaged: node id {row[0]} has value_sum {value!r} and prior "
                                       f"{prior!r} (a finite number, and a probability or NULL): restore a copy")
    return row[0], value, prior


def _ask(conn: sqlite3.Connection, sql: str, ids: Sequence[int]) -> list[tuple[Any, ...]]:
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
