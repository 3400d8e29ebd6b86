"""Nodes to rows and back, many at a time: first saves, multi-row inserts, loads.

A new database gets every node at once. Numbering the nodes breadth-first
(children in their list order) before writing them makes ``id`` order also
``parent_id`` order, so SQLite builds the two ``parent_id`` indexes of the
schema from nearly sorted input. On a million-node Connect Four tree that
takes the index builds from about 1.9 s to 0.7 s (``benchmarks/scale.py``).

Nothing in the tree changes until the rows are committed: :func:`breadth_first`
records each node's parent *position*, :func:`rows` turns positions into ids,
and the caller runs :func:`renumber` after the commit. The compiled versions in
``treelab._speedups`` (``_rows.c``) run when built; the Python code here is the
reference they must match. A later save's new nodes go in through :func:`insert`,
with the same multi-row statements, and the games and history rows through :func:`insert_records`; a
load turns rows back into nodes with :func:`build`.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from array import array
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from .. import speedups
from ..nodes import children_of, seal
from ..speedups import compiled
from ..tree import Tree, TreeNode
from .binding import cut_of
from .integrity import check_row, damaged, label_check

__all__ = ["CHUNK", "ROW", "VALUED_ROW", "WIDTH", "breadth_first", "build", "insert", "insert_grouped",
           "insert_records", "renumber", "rows", "write"]


WIDTH = 50
"""Rows per ``INSERT ... VALUES (...), (...)`` statement (450 parameters, under every SQLite's limit)."""

CHUNK = 1_300 * WIDTH
"""Rows built per ``executemany`` call: bounded memory, few calls."""

_COLUMNS = "id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game, nb_select"
ROW = 10
"""Values per ``nodes`` row written."""


VALUED_ROW = ROW + 2
"""Values per ``nodes`` row that also carries its ``value_sum`` and ``prior`` (a delta's new nodes with values)."""


def _insert(count: int, valued: bool = False) -> str:
    columns, width = (f"{_COLUMNS}, value_sum, prior", VALUED_ROW) if valued else (_COLUMNS, ROW)
    return f"INSERT INTO nodes ({columns}) VALUES " + ", ".join(["(" + ", ".join("?" * width) + ")"] * count)


def _breadth_first(root: TreeNode) -> tuple[list[TreeNode], bytes]:
    order, parents = [root], array("q", [-1])
    for i, node in enumerate(order):  # ``order`` grows while it is read: a queue
        kids = children_of(node)
        if kids:
            order.extend(kids)
            parents.extend([i] * len(kids))
    return order, parents.tobytes()


def _rows(
    nodes: list[TreeNode], parents: bytes, start: int, stop: int, first_id: int, width: int
) -> list[tuple[Any, ...]]:
    where = memoryview(parents).cast("q")
    stop = min(stop, len(nodes))
    out = []
    for group in range(start, stop, width):
        flat: list[Any] = []
        for i in range(group, min(group + width, stop)):
            n, p = nodes[i], where[i]
            flat += (first_id + i, None if p < 0 else first_id + p, n.name, n.depth, n.nb_visit, n.nb_win,
                     n.nb_draw, n.proven, n.created_game, n.nb_select)
        out.append(tuple(flat))
    return out


def _renumber(nodes: list[TreeNode], first_id: int) -> None:
    for i, node in enumerate(nodes, first_id):
        node.node_id = i


def breadth_first(root: TreeNode) -> tuple[list[TreeNode], bytes]:
    """The subtree of ``root`` breadth-first, and each node's parent position.

    Returns:
        ``(nodes, parents)``: ``nodes[0]`` is ``root``; ``parents`` holds native
        int64 positions in ``nodes`` (-1 for ``root``).
    """
    return compiled.breadth_first(root) if compiled is not None else _breadth_first(root)


def rows(
    nodes: list[TreeNode], parents: bytes, start: int, stop: int, first_id: int, width: int = 1
) -> list[tuple[Any, ...]]:
    """The ``nodes`` rows of ``nodes[start:stop]``, the node at position ``i`` numbered ``first_id + i``.

    Each tuple holds the values of ``width`` consecutive rows (the last tuple
    maybe fewer), in the column order ``id, parent_id, move, depth, nb_visit,
    nb_win, nb_draw, proven, created_game, nb_select``.
    """
    if compiled is not None:
        return compiled.rows(nodes, parents, start, stop, first_id, width)  # type: ignore[no-any-return]
    return _rows(nodes, parents, start, stop, first_id, width)


def write(conn: sqlite3.Connection, nodes: list[TreeNode], parents: bytes, first_id: int) -> None:
    """Insert the rows of all ``nodes`` (from :func:`breadth_first`), :data:`WIDTH` per statement.

    One multi-row ``INSERT`` per :data:`WIDTH` rows runs about twice as fast as
    ``executemany`` with one row per statement (``benchmarks/scale.py``).
    """
    collecting = gc.isenabled()
    gc.disable()  # the row tuples would set off collections that walk the whole tree: slower by half
    try:
        for start in range(0, len(nodes), CHUNK):
            insert_grouped(conn, rows(nodes, parents, start, start + CHUNK, first_id, WIDTH))
    finally:
        if collecting:
            gc.enable()


def insert(conn: sqlite3.Connection, node_rows: Iterable[tuple[Any, ...]]) -> None:
    """Insert ``nodes`` rows given as 10-tuples (a later save's new nodes), :data:`WIDTH` per statement."""
    flat = list(chain.from_iterable(node_rows))
    step = ROW * WIDTH
    whole = len(flat) - len(flat) % step
    groups = zip(*[iter(flat[:whole])] * step, strict=True)  # tuples of ``step`` values, made in C
    conn.executemany(_insert(WIDTH), groups)
    if whole < len(flat):
        conn.execute(_insert((len(flat) - whole) // ROW), flat[whole:])


def insert_records(conn: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` into ``table`` (``games``, ``history``): the columns any row names, missing ones NULL, a
    dict or list value as JSON (as :mod:`sqlite_utils`'s ``insert_all`` does, without its per-call schema reads)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    names = ", ".join('"' + str(column).replace('"', '""') + '"' for column in columns)  # quoted as SQL names
    values = [[json.dumps(v) if isinstance(v := row.get(column), (dict, list, tuple)) else v for column in columns]
              for row in rows]
    conn.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})', values)


def insert_grouped(conn: sqlite3.Connection, groups: list[tuple[Any, ...]], *, valued: bool = False) -> None:
    """Insert ``nodes`` rows as flat tuples of :data:`WIDTH` rows (the last maybe fewer), as :func:`rows` gives them
    (``valued``: rows of :data:`VALUED_ROW` values, each ending with its ``value_sum`` and ``prior``)."""
    width = VALUED_ROW if valued else ROW
    tail = groups.pop() if groups and len(groups[-1]) != width * WIDTH else None
    conn.executemany(_insert(WIDTH, valued), groups)
    if tail:
        conn.execute(_insert(len(tail) // width, valued), tail)


def renumber(nodes: list[TreeNode], first_id: int) -> None:
    """Give ``nodes[i]`` the ``node_id`` ``first_id + i`` (after the rows are committed)."""
    if compiled is not None:
        compiled.renumber(nodes, first_id)
    else:
        _renumber(nodes, first_id)


def build(
    tree: Tree, rows: Iterable[tuple[Any, ...]], nodes: dict[int, TreeNode] | list[Any], *, labels: bool = True
) -> None:
    """Create the nodes of ``rows`` (ordered by id, parents first), counting them per depth.

    A row is ``(id, parent_id, move, nb_visit, nb_win, nb_draw, proven,
    created_game, nb_select, cut)``; ``cut`` puts the node in the tree's :func:`~treelab.store.binding.cut_of`. Every
    row is checked first (:mod:`treelab.store.integrity`: whole numbers, counts
    >= 0, ``proven`` in -1/0/1, the move a label of ``tree.game`` unless
    ``labels`` is false, the parent already built, one root). A node with two or more
    children keeps them in an exact-size tuple, sealed as soon as a row of another
    parent comes (:func:`~treelab.nodes.seal`: rows numbered breadth-first bring
    siblings together, so one list is alive at a time and its memory is reused).
    The compiled ``build`` (``_rows.c``) does the same as the loop here, about 5x faster.

    Raises:
        DamagedDatabaseError: a row no treelab wrote (the caller's
            :func:`~treelab.store.dbfile.reading` names the file).
    """
    check = label_check(tree.game) if labels else None
    collecting = gc.isenabled()
    gc.disable()  # a million new objects would trigger many full collections: twice as slow
    try:
        if speedups.compiled is not None:  # looked up now: tests compare both builds
            speedups.compiled.build(tree.node_class, rows, nodes, tree.depth_counts, {}, cut_of(tree), check)
        else:
            _build(tree, rows, nodes, check)
    except KeyError as exc:  # a parent not built yet: missing, later, or the node itself
        _stop(rows)
        raise damaged(f"a node's parent {exc.args[0]!r} is not stored before it (an orphan or a cycle)") from None
    except (ValueError, IndexError, OverflowError) as exc:
        _stop(rows)
        raise damaged(str(exc)) from None
    finally:
        if collecting:
            gc.enable()


def _stop(rows: Iterable[tuple[Any, ...]]) -> None:
    """Finish a cursor left half read: its statement would keep the connection (and -wal) open."""
    close = getattr(rows, "close", None)
    if close is not None:
        close()


def _build(tree: Tree, rows: Iterable[tuple[Any, ...]], nodes: dict[int, TreeNode] | list[Any],
           check: Callable[[object], None] | None) -> None:
    counts, cut = tree.depth_counts, cut_of(tree)
    shared: dict[int, int] = {}  # one int object per game id, not one per node (~32 bytes a node)
    rooted, known = bool(counts), set()
    last = None  # the parent of the node built last: its children are sealed when another parent comes
    for row in rows:
        nid, pid, move, visits, wins, draws, proven, created, selected, truncated = row
        if check is not None and pid is not None and move not in known:
            check_row(row, check)
            known.add(move)
        else:
            check_row(row)
        if pid is None:
            if rooted:
                raise ValueError(f"node {nid!r} has no parent but is not the root")
            rooted = True
        try:
            parent = nodes[pid] if pid is not None else None
        except IndexError:
            raise KeyError(pid) from None
        if pid is not None and parent is None:
            raise KeyError(pid)
        if parent is not last:
            if last is not None:
                seal(last)
            last = parent
        node = tree.node_class(move, parent, node_id=nid, nb_visit=visits, nb_win=wins, nb_draw=draws, proven=proven,
                        created_game=shared.setdefault(created, created), nb_select=selected)
        nodes[nid] = node
        depth = node.depth
        if depth < len(counts):
            counts[depth] += 1
        else:
            counts.append(1)
        if truncated:
            cut.add(node)
    if last is not None:
        seal(last)
