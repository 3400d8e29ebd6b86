"""Every read the other layers make of a tree's file, as plain rows: SQL on the schema stays in the store.

The diagrams (:mod:`treelab.view.loading`), ``stats`` (:mod:`treelab.analysis.sqlstats`), ``diff``
(:mod:`treelab.analysis.compare`), growth plots, fits and the explorer read the file through these, not
with SQL of their own. Each reader takes a connection inside :func:`treelab.store.dbfile.reading` (one read
transaction, so the rows agree with each other) and returns tuples; the caller builds its own values:

- one tree's rows: a path, the children of many nodes, counts below, the principal variation, whole levels;
- the logs and proofs: proofs of some rows, the growth log, the rows created up to a game;
- two tree files side by side (``treelab diff``, the explorer's compare view): one attached to the other's
  connection in one read transaction, and the rows aligned by move path (:func:`attached`, :func:`aligned`);
- the stored nodes a policy/value model is fitted from (``treelab fit``), read without loading the tree
  (:func:`read_fit_rows`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import PathNotFoundError
from ..games import Game
from ..nodes import best_index
from ..tree import Moves
from .dbfile import diagnosed, reading
from .schema import DbPath

__all__ = [
    "COLUMNS", "LEVEL_COLUMNS", "PAIR_COLUMNS", "FitRow", "FitRows", "Picker", "aligned", "attached", "child_visits",
    "children", "counts_below", "created_by", "depth_rows", "growth_rows", "kid_moves", "kid_rows", "level_tables",
    "logged_root", "node_at", "path_rows", "principal_variation", "proofs", "read_fit_rows", "rows_until",
    "subtree_size", "subtree_table", "totals",
]

# -- one tree's rows ---------------------------------------------------------------------------------------------------
COLUMNS = "id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game, nb_select, value_sum, prior"
"""The columns of a node row as these readers return them, in this order (an older file reads ``value_sum`` 0
and ``prior`` NULL: :func:`treelab.store.schema.read_compat`)."""

_CHUNK = 900
"""Ids asked for in one statement (SQLite allows 999 parameters in old builds)."""


def children(conn: sqlite3.Connection, ids: list[int]) -> dict[int, list[tuple[Any, ...]]]:
    """Rows of the children of ``ids``, grouped by parent, each in creation (id) order."""
    out: dict[int, list[tuple[Any, ...]]] = {i: [] for i in ids}
    for start in range(0, len(ids), _CHUNK):
        part = ids[start:start + _CHUNK]
        marks = ",".join("?" * len(part))
        for row in conn.execute(f"SELECT {COLUMNS} FROM nodes WHERE parent_id IN ({marks}) ORDER BY id", part):
            out[row[1]].append(row)
    return out


def counts_below(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[int, int]]:
    """``(children, their visits)`` stored under each row of ``ids`` (``(0, 0)``: none)."""
    out = dict.fromkeys(ids, (0, 0))
    for start in range(0, len(ids), _CHUNK):
        part = ids[start:start + _CHUNK]
        marks = ",".join("?" * len(part))
        query = (
            f"SELECT parent_id, count(*), coalesce(sum(nb_visit), 0) FROM nodes "
            f"WHERE parent_id IN ({marks}) GROUP BY parent_id"
        )
        for pid, count, visits in conn.execute(query, part):
            out[pid] = (count, visits)
    return out


def path_rows(conn: sqlite3.Connection, game: Game, path: Moves, db: str) -> list[tuple[Any, ...]]:
    """The stored rows (:data:`COLUMNS`) from the root down to ``path``, one indexed lookup per move.

    Raises:
        PathNotFoundError: a node on the path is not stored.
    """
    moves = game.parse(path)
    row = conn.execute(f"SELECT {COLUMNS} FROM nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    if row is None:
        raise PathNotFoundError(f"{db!r} holds no nodes yet: train or save a tree first")
    rows = [row]
    for i, move in enumerate(moves):
        row = conn.execute(
            f"SELECT {COLUMNS} FROM nodes WHERE parent_id = ? AND move = ?", (rows[-1][0], game.label(move))
        ).fetchone()
        if row is None:
            raise PathNotFoundError(
                f"path {game.notation(moves[:i + 1])!r} is not in {db!r}: "
                "check the moves, or train or analyse that position first"
            )
        rows.append(row)
    return rows


def principal_variation(
    conn: sqlite3.Connection, node_id: int, *, schema: str = "main", where: str = "", limit: int = 1 << 30
) -> list[tuple[str, int]]:
    """The principal variation below a stored node as ``(move, visits)``: :func:`treelab.nodes.best_index`
    per level, down to a leaf or an unvisited child (``stats``, ``diff`` and the explorer read it so).

    Args:
        conn: an open database.
        node_id: the node's id.
        schema: the attached database to read (``diff`` reads two); a schema-1 file has no
            ``nb_select``, and its visits stand in (as :func:`treelab.store.schema.read_compat`).
        where: an SQL condition the children must also meet (the explorer's replay of a past game).
        limit: at most this many moves.
    """
    columns = {row[1] for row in conn.execute(f"PRAGMA {schema}.table_info(nodes)")}
    selected = "nb_select" if "nb_select" in columns else "nb_visit"
    query = (f"SELECT id, move, nb_visit, proven, {selected} FROM {schema}.nodes WHERE parent_id = ?"
             f"{' AND ' + where if where else ''} ORDER BY id")
    line: list[tuple[str, int]] = []
    while len(line) < limit:
        kids = conn.execute(query, (node_id,)).fetchall()
        at = best_index([(p, s, v) for _, _, v, p, s in kids])
        if at is None or kids[at][2] == 0:
            break
        node_id = kids[at][0]
        line.append((kids[at][1], kids[at][2]))
    return line


def created_by(game_id: int, alias: str = "") -> str:
    """The SQL condition (for ``where`` below) that keeps the nodes created by training game ``game_id``."""
    col = f"{alias}created_game" if alias else "created_game"
    return f"({col} IS NULL OR {col} <= {int(game_id)})"


def kid_rows(conn: sqlite3.Connection, node_id: int, where: str = "") -> list[tuple[Any, ...]]:
    """The rows (:data:`COLUMNS`) of a node's children in id order; ``where``: a condition they also meet."""
    return conn.execute(
        f"SELECT {COLUMNS} FROM nodes WHERE parent_id = ?{' AND ' + where if where else ''} ORDER BY id", (node_id,)
    ).fetchall()


def totals(conn: sqlite3.Connection, meta: dict[str, str]) -> tuple[int, int, int, int]:
    """The root's visits, the games logged, the last game's id and the nodes stored."""
    root = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    games, last_game = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM games").fetchone()
    try:  # every save keeps the nodes per depth in meta
        nodes = sum(json.loads(meta["depth_counts"]))
    except (KeyError, ValueError, TypeError):
        nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    return (root[0] if root else 0), games, last_game, nodes


def logged_root(conn: sqlite3.Connection, game_id: int) -> tuple[int, dict[str, list[Any]]] | None:
    """The root's visits and its children's ``[visits, wins, draws]`` (a value sum fourth, if any) logged after
    ``game_id`` (None: no history)."""
    try:
        snap = conn.execute(
            "SELECT root_visits, root_children FROM history WHERE game_id <= ? ORDER BY game_id DESC LIMIT 1",
            (game_id,),
        ).fetchone()
    except sqlite3.OperationalError:  # no history table: counts of today
        return None
    if snap is None:
        return 0, {}
    return int(snap[0]), json.loads(snap[1])


_SUBTREE = (
    "WITH RECURSIVE sub(id, d) AS (SELECT ?, 0 UNION ALL "
    "SELECT n.id, sub.d + 1 FROM nodes n JOIN sub ON n.parent_id = sub.id) "
)


def depth_rows(conn: sqlite3.Connection, node_id: int, whole: bool) -> list[tuple[int, int, int]]:
    """``(depth below the node, nodes, leaves)`` per depth of the subtree at ``node_id`` (``whole``: the
    whole table, the node being the root: one scan instead of a recursive walk)."""
    leaf = "NOT EXISTS (SELECT 1 FROM nodes c WHERE c.parent_id = {}.id)"
    if whole:
        return conn.execute(f"SELECT depth, count(*), sum({leaf.format('n')}) FROM nodes n GROUP BY depth").fetchall()
    query = _SUBTREE + f"SELECT d, count(*), sum({leaf.format('sub')}) FROM sub GROUP BY d"
    return conn.execute(query, (node_id,)).fetchall()


def child_visits(conn: sqlite3.Connection, node_id: int, whole: bool) -> Iterator[tuple[int, int]]:
    """``(parent_id, nb_visit)`` of every node below ``node_id``, in table order (``whole``: as above)."""
    if whole:
        return conn.execute("SELECT parent_id, nb_visit FROM nodes WHERE parent_id IS NOT NULL")  # type: ignore[return-value]
    return conn.execute(  # type: ignore[return-value]
        _SUBTREE + "SELECT n.parent_id, n.nb_visit FROM nodes n JOIN sub ON n.parent_id = sub.id", (node_id,)
    )


def subtree_table(conn: sqlite3.Connection, top: int, root_depth: int, max_depth: int | None, no_proof: int,
                  name: str, game: Game) -> tuple[list[tuple[int, ...]], list[str], list[int] | None, list[float]]:
    """The rows below (and at) row ``top`` down to ``max_depth`` levels (None: all), in id order, as
    ``(id, parent_id or -1, depth, nb_visit, nb_win, nb_draw, proven or no_proof, created_game or -1,
    nb_select)``; their moves; their movers (None for a game whose players alternate); their value sums."""
    from .movers import column

    cols = (
        "n.id, coalesce(n.parent_id, -1), n.depth, n.nb_visit, n.nb_win, n.nb_draw, "
        f"coalesce(n.proven, {int(no_proof)}), coalesce(n.created_game, -1), n.nb_select"
    )
    prefix, source, where, args = _subtree(top, root_depth, max_depth)
    rows = conn.execute(f"{prefix}SELECT {cols} FROM {source} {where} ORDER BY n.id", args).fetchall()
    pairs = conn.execute(f"{prefix}SELECT n.move, n.value_sum FROM {source} {where} ORDER BY n.id", args).fetchall()
    moves, values = [m for m, _ in pairs], [v for _, v in pairs]
    # only the subtree's movers: the table joined on the same rows, in the same order
    mover = None if game.alternating else column(conn, (prefix, source, where, args), name, game.name)
    return rows, moves, mover, values


def _subtree(top: int, root_depth: int, max_depth: int | None) -> tuple[str, str, str, tuple[int, ...]]:
    """``(prefix, source, where, args)`` of a query over the rows below (and at) row ``top`` (at ``root_depth``)
    down to ``max_depth`` levels (None: all): ``f"{prefix}SELECT ... FROM {source} {where}"`` with ``args``. From
    the root, a plain scan by depth; below it, a recursive walk down the parent links."""
    limit = root_depth + (max_depth if max_depth is not None else 1 << 30)
    if root_depth == 0:
        return "", "nodes n", "WHERE n.depth <= ?", (limit,)
    prefix = ("WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT n.id FROM nodes n "
              "JOIN sub ON n.parent_id = sub.id WHERE n.depth <= ?) ")
    return prefix, "nodes n JOIN sub USING (id)", "", (top, limit)


LEVEL_CHUNK = 65_536
"""Rows :func:`level_tables` fetches at a time."""

LEVEL_COLUMNS = ("id", "parent_id", "depth", "nb_visit", "nb_win", "nb_draw", "key", "mover", "value_sum")
"""The columns of a table :func:`level_tables` yields (``parent_id`` -1 for none, ``mover`` 0 when not stored,
``value_sum`` a float64's bits: read it with ``table[:, 8].view(np.float64)``)."""


def level_tables(conn: sqlite3.Connection, top: int, root_depth: int, max_depth: int | None, name: str, game: Game,
                 key: Callable[[Sequence[str]], Any], *, labelled: int = 2) -> Iterator[tuple[Any, list[str]]]:
    """The nodes below (and at) row ``top`` down to ``max_depth`` levels (None: all), one depth at a time, in id
    order within it: an ``(N, 9)`` int64 array of :data:`LEVEL_COLUMNS` (``key``: ``key(moves)``), and the
    moves of the depths down to ``labelled`` below ``top`` (else an empty list).

    One pass over the rows spools each depth to a temporary file, so the memory is that of the widest depth, not
    of the tree (a sort by depth in SQLite took three times longer). Every row is checked as it passes
    (:func:`~treelab.store.integrity.check_table`).

    Raises:
        DamagedDatabaseError: counts, proofs or moves no treelab wrote.
        NotATreelabDatabaseError: a node has no stored mover.
    """
    import tempfile

    import numpy as np  # late, as the array readers need it

    from .integrity import check_table

    cols = ("n.id, coalesce(n.parent_id, -1), n.depth, n.nb_visit, n.nb_win, n.nb_draw, coalesce(n.proven, 2), "
            "coalesce(n.created_game, -1), n.move")
    prefix, source, where, args = _subtree(top, root_depth, max_depth)
    join, mover = "", "0"
    if not game.alternating:
        have = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'movers'").fetchone()
        join = " LEFT JOIN movers m ON m.node_id = n.id" if have else " LEFT JOIN (SELECT NULL AS mover) m ON 0"
        mover = "m.mover"
    cursor = conn.execute(f"{prefix}SELECT {cols}, {mover}, n.value_sum FROM {source}{join} {where}", args)
    width = len(LEVEL_COLUMNS)
    shallow: dict[int, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="treelab-levels-") as spool:
        depths: set[int] = set()
        while chunk := cursor.fetchmany(LEVEL_CHUNK):
            columns = list(zip(*chunk, strict=True))
            moves = columns[8]
            if None in columns[9]:
                raise _no_mover(name, chunk[columns[9].index(None)][0], game.name)
            table = np.array(columns[:8], dtype=np.int64).T
            check_table(table, 2, list(moves), game)
            rows = np.empty((len(chunk), width), dtype=np.int64)
            rows[:, :6], rows[:, 6], rows[:, 7] = table[:, :6], key(moves), columns[9]
            rows[:, 8] = np.array(columns[10], dtype=np.float64).view(np.int64)
            order = np.argsort(rows[:, 2], kind="stable")
            cuts = np.flatnonzero(np.diff(rows[order, 2])) + 1
            for run in np.split(order, cuts):
                d = int(rows[run[0], 2])
                depths.add(d)
                with open(f"{spool}/{d}", "ab") as file:
                    file.write(rows[run].tobytes())
                if d - root_depth <= labelled:
                    shallow.setdefault(d, []).extend(moves[i] for i in run.tolist())
        for d in sorted(depths):
            level = np.fromfile(f"{spool}/{d}", dtype=np.int64).reshape(-1, width)
            os.unlink(f"{spool}/{d}")
            order = np.argsort(level[:, 0], kind="stable")  # a subtree's rows come breadth first: id order
            labels = shallow.pop(d, [])
            yield level[order], [labels[i] for i in order.tolist()] if labels else []


def _no_mover(name: str, node_id: int, game: str) -> Exception:
    from ..errors import NotATreelabDatabaseError

    return NotATreelabDatabaseError(
        f"{name!r} has no mover for node id {node_id!r} of this {game} tree: the file is damaged; "
        "train again into a new file"
    )

# -- proofs and logs ---------------------------------------------------------------------------------------------------


def proofs(conn: sqlite3.Connection, ids: Sequence[int]) -> list[tuple[int, Any]]:
    """``(id, proven)`` of the rows ``ids`` (those that exist)."""
    found: list[tuple[int, Any]] = []
    for start in range(0, len(ids), _CHUNK):
        part = list(ids[start:start + _CHUNK])
        marks = ",".join("?" * len(part))
        found.extend(conn.execute(f"SELECT id, proven FROM nodes WHERE id IN ({marks})", part))
    return found


def growth_rows(conn: sqlite3.Connection) -> tuple[list[Any], list[Any], list[Any]]:
    """How the tree grew: the games ``(id, winner, tree_player, opponent)`` in order, the ``history`` rows
    ``(game_id, nodes, root_visits, depth_counts, root_children)`` and, only when there is no history,
    the ``(created_game or 0, depth, nodes)`` counts of the node stamps."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    extra = ", ".join(c if c in columns else "NULL" for c in ("tree_player", "opponent"))
    logged = conn.execute(f"SELECT id, winner, {extra} FROM games ORDER BY id").fetchall()
    history = conn.execute(
        "SELECT game_id, nodes, root_visits, depth_counts, root_children FROM history ORDER BY game_id"
    ).fetchall()
    stamps = [] if history else conn.execute(
        "SELECT coalesce(created_game, 0), depth, count(*) FROM nodes GROUP BY 1, 2"
    ).fetchall()
    return logged, history, stamps


def rows_until(conn: sqlite3.Connection, game_id: int) -> tuple[list[Any], Any]:
    """The node rows ``(id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game, value_sum)`` that
    existed after game ``game_id`` (in id order), and the last ``(root_visits, root_children)`` history row by then."""
    rows = conn.execute(
        "SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game, value_sum FROM nodes "
        "WHERE created_game IS NULL OR created_game <= ? ORDER BY id",
        (game_id,),
    ).fetchall()
    snap = conn.execute(
        "SELECT root_visits, root_children FROM history WHERE game_id <= ? ORDER BY game_id DESC LIMIT 1",
        (game_id,),
    ).fetchone()
    return rows, snap

# -- two tree files side by side ---------------------------------------------------------------------------------------


PAIR_COLUMNS = "id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game"
"""The row of :func:`node_at` (columns every schema version has; ``{schema}.nodes`` skips the compat view)."""

_ALIGNED = (
    "WITH RECURSIVE pair(a, b) AS (SELECT ?, ? UNION ALL "
    "SELECT na.id, nb.id FROM pair JOIN main.nodes na ON na.parent_id = pair.a "
    "JOIN other.nodes nb ON nb.parent_id = pair.b AND nb.move = na.move) "
    "SELECT count(*) FROM pair"
)

SUBTREE = (
    "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL "
    "SELECT n.id FROM {db}.nodes n JOIN sub ON n.parent_id = sub.id) SELECT count(*) FROM sub"
)


@contextmanager
def attached(conn: sqlite3.Connection, other: str) -> Iterator[sqlite3.Connection]:
    """Attach the file ``other`` (read-only) to ``conn`` as schema ``other`` for one read transaction over both."""
    conn.execute("COMMIT")  # SQLite attaches only outside a transaction
    conn.execute("ATTACH DATABASE ? AS other", (f"file:{_quote_uri(os.path.abspath(other))}?mode=ro",))
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")
        conn.execute("DETACH DATABASE other")


def aligned(conn: sqlite3.Connection, a: int, b: int) -> int:
    """Nodes at the same move paths below row ``a`` of ``main`` and row ``b`` of ``other`` (both included)."""
    return int(conn.execute(_ALIGNED, (a, b)).fetchone()[0])


def node_at(conn: sqlite3.Connection, schema: str, game: Game, moves: tuple[int, ...]) -> tuple[Any, ...] | None:
    """The row (:data:`PAIR_COLUMNS`) at ``moves`` in the attached ``schema``, or None if not stored."""
    row = conn.execute(
        f"SELECT {PAIR_COLUMNS} FROM {schema}.nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    for move in moves:
        if row is None:
            return None
        row = conn.execute(
            f"SELECT {PAIR_COLUMNS} FROM {schema}.nodes WHERE parent_id = ? AND move = ?", (row[0], game.label(move))
        ).fetchone()
    return row


def kid_moves(conn: sqlite3.Connection, schema: str, node_id: int) -> dict[str, tuple[Any, ...]]:
    """Each child of row ``node_id`` of ``schema`` by move: ``(nb_visit, nb_win, nb_draw, proven, value_sum)``
    (``value_sum`` 0 in a file before schema 4)."""
    valued = any(row[1] == "value_sum" for row in conn.execute(f"PRAGMA {schema}.table_info(nodes)"))
    rows = conn.execute(
        f"SELECT move, nb_visit, nb_win, nb_draw, proven, {'value_sum' if valued else '0.0'} FROM {schema}.nodes "
        "WHERE parent_id = ? ORDER BY id", (node_id,),
    )
    return {m: (n, w, d, p, v) for m, n, w, d, p, v in rows}


def subtree_size(conn: sqlite3.Connection, schema: str, row: tuple[Any, ...] | None, whole: bool) -> int:
    """Nodes in the subtree at ``row`` of ``schema`` (0: no row; ``whole``: the whole table, counted directly)."""
    if row is None:
        return 0
    if whole:
        return int(conn.execute(f"SELECT count(*) FROM {schema}.nodes").fetchone()[0])
    return int(conn.execute(SUBTREE.format(db=schema), (row[0],)).fetchone()[0])


def _quote_uri(path: str) -> str:
    """A file path made safe inside an SQLite ``file:`` URI (``?``, ``#`` and ``%`` escaped)."""
    return path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")

# -- the rows a fit learns from ----------------------------------------------------------------------------------------
FitRow = tuple[int, Any, str, int, int, int, int, Any, int, Any, float]
"""``(id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, nb_select, created_game, value_sum)`` of one
node (``value_sum``: 0 in a file before schema 4)."""


@dataclass(frozen=True)
class FitRows:
    """What :func:`read_fit_rows` read from one database."""

    game: str
    """The database's game (its ``meta``)."""
    rows: list[FitRow]
    """The nodes, parents before children (by depth, then id)."""
    nodes: int
    """Every node the database holds (for the record)."""
    simulations: int
    """The root's visits: the simulations ever recorded."""
    games: list[tuple[str, int | None, str | None]]
    """Every logged game's ``(moves, winner, root_values)`` (winner None: a draw; root_values: the JSON list of
    ``games.root_values``, None when not logged), in the order they were played."""


Picker = Callable[[list[tuple[int, Any]]], Sequence[int]]
"""Chooses the positions a sampled fit learns from: given every candidate ``(node id, created_game)`` (a node
with at least ``min_visits`` visits, at most ``max_depth`` deep, with children; by depth, then id), the ids to
read."""


def _with_ancestors(conn: sqlite3.Connection, ids: list[int], parents: dict[int, int | None]) -> list[int]:
    """``ids`` and every ancestor of theirs, found through ``parents`` (each candidate's parent: an ancestor of a
    candidate is one, having at least its visits), and through the file for any that is not (a tree whose counts
    break that rule)."""
    found: set[int] = set()
    for node in ids:
        while node not in found:
            found.add(node)
            if node not in parents:
                (parent,) = conn.execute("SELECT parent_id FROM nodes WHERE id = ?", (node,)).fetchone() or (None,)
                parents[node] = parent
            parent = parents[node]
            if parent is None:
                break
            node = parent
    return sorted(found)


_FIT_COLUMNS = ("n.id, n.parent_id, n.move, n.depth, n.nb_visit, n.nb_win, n.nb_draw, n.proven, n.nb_select, "
            "n.created_game, n.value_sum")


@diagnosed
def read_fit_rows(db: DbPath, *, min_visits: int, max_depth: int | None, game: str | None = None,
                  pick: Picker | None = None, on_snapshot: Callable[[], None] | None = None) -> FitRows:
    """The nodes of ``db`` that a model can learn from, in one read transaction.

    A node is read when it is at most ``max_depth`` deep (None: any depth) and
    has at least ``min_visits`` visits, and also when its parent has (a training
    example's policy needs all the children it has). Every ancestor of a node
    read is read (an ancestor has at least its descendants' visits), so each
    node's move path can be rebuilt from ``parent_id``.

    With ``pick``, only the positions it picks from the candidates are read, with their children and
    ancestors: a sampled fit of a large tree reads a few hundred thousand rows instead of every
    well-visited node (the examples built from them are the same as from a whole read).

    ``on_snapshot`` is called once the read transaction holds its snapshot: everything read is the file as it was
    then, whatever another process commits afterwards (the learning loop's refit beside the games waits for it).

    Raises:
        StoreError: and its subclasses, as :func:`~treelab.store.dbfile.reading`;
        GameMismatchError: ``game`` is given and the database holds another game.
    """
    deepest = (1 << 62) if max_depth is None else max_depth
    with reading(db, game) as (conn, meta):  # its first read (meta) fixed the snapshot
        if on_snapshot is not None:
            on_snapshot()
        nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        root = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()
        if pick is None:
            rows = conn.execute(
                f"SELECT {_FIT_COLUMNS} FROM nodes AS n LEFT JOIN nodes AS p ON n.parent_id = p.id "
                "WHERE n.depth <= ? + 1 AND (n.nb_visit >= ? AND n.depth <= ? OR p.nb_visit >= ? AND p.depth <= ?) "
                "ORDER BY n.depth, n.id",
                (deepest, min_visits, deepest, min_visits, deepest),
            ).fetchall()
        else:
            pool = conn.execute(
                "SELECT n.id, n.created_game, n.parent_id FROM nodes AS n WHERE n.nb_visit >= ? AND n.depth <= ? "
                "AND EXISTS (SELECT 1 FROM nodes AS c WHERE c.parent_id = n.id) ORDER BY n.depth, n.id",
                (min_visits, deepest),
            ).fetchall()
            picked = [int(i) for i in pick([(i, created) for i, created, _ in pool])]
            rows = conn.execute(  # the picked nodes and every ancestor, and the picked nodes' children, parents first
                "WITH up(id) AS (SELECT value FROM json_each(?)), picked(id) AS (SELECT value FROM json_each(?)), "
                "wanted(id) AS (SELECT id FROM up "
                "UNION SELECT c.id FROM picked JOIN nodes AS c ON c.parent_id = picked.id) "
                f"SELECT {_FIT_COLUMNS} FROM nodes AS n JOIN wanted ON n.id = wanted.id ORDER BY n.depth, n.id",
                (json.dumps(_with_ancestors(conn, picked, {i: parent for i, _, parent in pool})), json.dumps(picked)),
            ).fetchall()
        games = conn.execute("SELECT moves, winner, root_values FROM games ORDER BY id").fetchall()
    return FitRows(meta["game"], rows, nodes, root[0] if root else 0, games)
