"""The ``positions`` table: a tree's counts merged by position (schema 3; ``value_sum`` schema 5), beside ``nodes``.

``positions(key TEXT PRIMARY KEY, nb_visit, nb_win, nb_draw, nb_path, value_sum) WITHOUT ROWID``: one row
per position key (:meth:`treelab.games.Game.position_key`, transpositions and symmetric images merged),
with the sums over the nodes that reach it: ``nb_visit``, ``nb_win`` counted for **player 1** (the
first player, a fixed point of view), ``nb_draw``, ``nb_path`` (how many stored nodes, that is
move paths, reach it) and ``value_sum`` (the nodes' value sums, player 1's). See :mod:`treelab.positions`.

It is a function of ``nodes``, and a file pays for it only where it is used (:func:`keeps`: a tree whose
searches select by graph statistics, ``meta.statistics = 'graph'``): there the one write path,
:func:`treelab.store.deltas.apply`, adds each save's increments (a :class:`~treelab.store.deltas.Delta`
carries its nodes' keys) by ``ON CONFLICT DO UPDATE``, so two writers add up exactly; a new file's first
save writes it whole (:func:`write_tree`); a merge and the migration of an older file rebuild it from the
nodes (:func:`rebuild`), a depth at a time. Built on demand: the first save of a tree that keeps it into
a file without it rebuilds it from the nodes, and a graph search reading a file without it has it built
from the file's nodes in memory (:func:`read_or_build`); a save of a tree that does not keep it drops a
table that it would leave behind.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from itertools import chain, compress
from typing import Any

import numpy as np

from ..errors import NotationError
from ..games import Game, State
from ..positions import node_keys, player_one_value, value_changes
from ..tree import Tree, TreeNode
from .values import adding, columns

__all__ = ["CREATE", "WIDTH", "add", "add_delta", "after_moves", "by_key", "create", "delta_fields", "drop", "exists",
           "keeps", "read", "read_or_build", "rebuild", "row", "rows_of", "write_tree"]

CREATE = ("CREATE TABLE IF NOT EXISTS positions (key TEXT PRIMARY KEY, nb_visit INTEGER NOT NULL, "
          "nb_win INTEGER NOT NULL, nb_draw INTEGER NOT NULL, nb_path INTEGER NOT NULL, "
          "value_sum REAL NOT NULL DEFAULT 0) WITHOUT ROWID")
"""The table (schema 5; schema 3 and 4 without ``value_sum``)."""

_SUMS = ("nb_visit", "nb_win", "nb_draw", "nb_path", "value_sum")
_ADD = (f"INSERT INTO positions (key, {', '.join(_SUMS)}) VALUES {{}} "
        f"ON CONFLICT(key) DO UPDATE SET {adding(_SUMS, 'excluded.')}")
WIDTH = 100
"""Rows per upsert statement (600 parameters): one multi-row statement costs about a quarter less a row than
``executemany`` of single rows (``benchmarks/parallel.py``'s writer)."""
_UPSERT, _UPSERT_MANY = _ADD.format("(?, ?, ?, ?, ?, ?)"), _ADD.format(", ".join(["(?, ?, ?, ?, ?, ?)"] * WIDTH))


def keeps(tree: Tree) -> bool:
    """Whether the files ``tree`` is saved to keep the table: its searches select by graph statistics (the one
    reader of stored position rows). Every other file goes without it and pays nothing for it."""
    return tree.statistics == "graph"


def create(conn: sqlite3.Connection) -> None:
    """Create the (empty) table if it is missing."""
    conn.execute(CREATE)


def drop(conn: sqlite3.Connection) -> None:
    """Drop the table (a save that would not keep it in step; it is rebuilt from the nodes when needed)."""
    conn.execute("DROP TABLE IF EXISTS positions")


def exists(conn: sqlite3.Connection) -> bool:
    """Whether the file has the table (schema 3 and up; a read-only look at an older file has not)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'positions'").fetchone()
    return found is not None


def add(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Add ``(key, nb_visit, player 1's wins, nb_draw, nb_path, player 1's value sum)`` rows (zero rows are
    skipped), :data:`WIDTH` a statement (a key may come more than once: its rows add up)."""
    _upsert(conn, [r for r in rows if r[1] or r[2] or r[3] or r[4] or r[5]])


def _upsert(conn: sqlite3.Connection, kept: list[tuple[Any, ...]]) -> None:
    full = len(kept) - len(kept) % WIDTH
    if full:
        conn.executemany(_UPSERT_MANY, [tuple(chain.from_iterable(kept[i:i + WIDTH])) for i in range(0, full, WIDTH)])
    conn.executemany(_UPSERT, kept[full:])


def write_tree(conn: sqlite3.Connection, tree: Tree, nodes: list[TreeNode]) -> None:
    """Add the whole table of ``tree``'s ``nodes`` (all of them: a new file's first save) as the new nodes of a
    delta, through :func:`delta_fields` and :func:`add_delta` (Connect Four's keys computed in C)."""
    create(conn)
    counts = columns(nodes, ("nb_visit", "nb_win", "nb_draw"))
    fields = delta_fields(tree, nodes, np.zeros((0, 3), dtype=np.int64), counts)
    add_delta(conn, fields["keys"], fields["position_counts"], fields["key_of_new"], np.ones(len(nodes), dtype=bool),
              fields["position_values"])


def delta_fields(tree: Tree, nodes: list[TreeNode], known_counts: np.ndarray, new_counts: np.ndarray
                 ) -> dict[str, Any]:
    """A :class:`~treelab.store.deltas.Delta`'s ``keys``, ``position_counts``, ``position_values`` and
    ``key_of_new`` for ``nodes`` (its changed stored nodes, then its new ones), from their counts
    (``known_counts``: increments; ``new_counts``: whole) and value sums. The worker sums them by key, so the
    writer adds one row a position."""
    keys = node_keys(tree, nodes)
    amounts = np.concatenate([known_counts[:, :3], new_counts]) if nodes else np.zeros((0, 3), dtype=np.int64)
    ones = np.fromiter((node.mover == 1 for node in nodes), dtype=bool, count=len(nodes))
    amounts[:, 1] = np.where(ones, amounts[:, 1], amounts[:, 0] - amounts[:, 1] - amounts[:, 2])
    return by_key([keys[node] for node in nodes], amounts, value_changes(tree, nodes), len(known_counts))


def by_key(keys: Sequence[str], amounts: np.ndarray, values: Sequence[float] | None, known: int) -> dict[str, Any]:
    """A delta's position fields from a key, counts ``(nb_visit, player 1's wins, nb_draw)`` and player 1's value
    sum per node (the first ``known`` stored nodes, then new ones): ``keys`` each once, the counts and value sums
    summed by key, and each new node's key (``key_of_new``, by position in ``keys``)."""
    index: dict[str, int] = {}
    where = np.fromiter((index.setdefault(key, len(index)) for key in keys), dtype=np.int64, count=len(keys))
    sums = np.zeros((len(index), 3), dtype=np.int64)
    np.add.at(sums, where, amounts)
    summed: np.ndarray | None = None
    if values is not None and any(values):
        summed = np.zeros(len(index), dtype=np.float64)
        np.add.at(summed, where, np.asarray(values, dtype=np.float64))
    return {"keys": list(index), "position_counts": sums, "key_of_new": where[known:], "position_values": summed}


def add_delta(conn: sqlite3.Connection, keys: Sequence[str], amounts: np.ndarray, key_of_new: np.ndarray,
              fresh: np.ndarray, values: np.ndarray | None = None) -> None:
    """Add a delta's position counts (``amounts``, a row per key; ``values``: player 1's value sums by key, None:
    none) to the table, and one more path to the key of each new node inserted (``fresh``; ``key_of_new``: each
    new node's key, by position in ``keys``)."""
    paths = np.bincount(key_of_new[fresh], minlength=len(keys))
    sums = np.zeros(len(keys), dtype=np.float64) if values is None else values
    live = np.asarray(amounts.any(axis=1) | (paths != 0) | (sums != 0), dtype=bool)
    wanted: list[bool] = live.tolist()
    rows = zip(compress(keys, wanted), *amounts[live].T.tolist(), paths[live].tolist(), sums[live].tolist(),
               strict=True)
    _upsert(conn, list(rows))


def rebuild(conn: sqlite3.Connection, game: Game) -> int:
    """Rebuild the table from the file's nodes (a merge, an older file's migration); return its rows.

    The nodes are read by depth, each position replayed from its parent's: only one depth's
    positions are held at a time. A node's mover is the player to move at its parent.
    """
    create(conn)
    conn.execute("DELETE FROM positions")
    _fill(conn, game)
    return int(conn.execute("SELECT count(*) FROM positions").fetchone()[0])


def read_or_build(conn: sqlite3.Connection, game: Game) -> dict[str, list[Any]]:
    """:func:`read`, or, in a file without the table, the table built from the file's nodes in memory (a temporary
    table of this read connection: the file is not changed)."""
    found = read(conn)
    if found is not None:
        return found
    conn.execute(CREATE.replace("CREATE TABLE IF NOT EXISTS positions", "CREATE TEMP TABLE positions"))
    try:
        _fill(conn, game)
        return {k: [v, w, d, s] for k, v, w, d, s in conn.execute(
            "SELECT key, nb_visit, nb_win, nb_draw, value_sum FROM temp.positions")}
    finally:
        conn.execute("DROP TABLE temp.positions")


def _fill(conn: sqlite3.Connection, game: Game) -> None:
    """Add every stored node's counts to the (empty) table ``positions``, a depth at a time."""
    key, parse = game.position_key, game.parse_move
    above: dict[int, State] = {}
    level: dict[int, State] = {}
    depth = -1
    valued = "value_sum" if "value_sum" in {row[1] for row in conn.execute("PRAGMA table_info(nodes)")} else "0.0"
    rows = conn.execute(f"SELECT id, parent_id, depth, move, nb_visit, nb_win, nb_draw, {valued} FROM nodes "
                        "ORDER BY depth, id")
    table: dict[str, list[Any]] = {}
    for nid, pid, d, move, visits, wins, draws, value in rows:
        if d != depth:
            _flush(conn, table)
            above, level, depth = level, {}, d
        if pid is None:
            state, mover = game.initial(), 3 - game.initial().to_move
        else:
            parent = above[pid]
            state, mover = parent.play(parse(move)), parent.to_move
        level[nid] = state
        k = key(state)
        r = table.get(k)
        if r is None:
            r = table[k] = [0, 0, 0, 0, 0.0]
        r[0] += visits
        r[1] += wins if mover == 1 else visits - wins - draws
        r[2] += draws
        r[3] += 1
        if value:
            r[4] += player_one_value(mover, value)
    _flush(conn, table)


def _flush(conn: sqlite3.Connection, table: dict[str, list[Any]]) -> None:
    add(conn, ((k, *v) for k, v in table.items()))
    table.clear()


def read(conn: sqlite3.Connection) -> dict[str, list[Any]] | None:
    """The whole table as ``key -> [nb_visit, player 1's wins, nb_draw, player 1's value sum]`` (a
    :data:`treelab.positions.Row`); None if the file has none."""
    if not exists(conn):
        return None
    return {k: [v, w, d, s] for k, v, w, d, s in conn.execute(
        f"SELECT key, nb_visit, nb_win, nb_draw, {_value(conn)} FROM positions")}


def _value(conn: sqlite3.Connection) -> str:
    """``value_sum``, or 0 in a table of schema 3 or 4 (read as it is)."""
    return "value_sum" if any(r[1] == "value_sum" for r in conn.execute("PRAGMA table_info(positions)")) else "0.0"


def rows_of(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, tuple[int, int, int, int, float]]:
    """The rows of ``keys`` that are stored (none without the table), as :func:`row` gives them."""
    if not exists(conn):
        return {}
    found = {}
    query = f"SELECT nb_visit, nb_win, nb_draw, nb_path, {_value(conn)} FROM positions WHERE key = ?"
    for k in keys:
        got = conn.execute(query, (k,)).fetchone()
        if got is not None:
            found[k] = (got[0], got[1], got[2], got[3], got[4])
    return found


def row(conn: sqlite3.Connection, key: str) -> tuple[int, int, int, int, float] | None:
    """``(nb_visit, player 1's wins, nb_draw, nb_path, player 1's value sum)`` of one position; None if not stored
    (or no table)."""
    if not exists(conn):
        return None
    found = conn.execute(f"SELECT nb_visit, nb_win, nb_draw, nb_path, {_value(conn)} FROM positions WHERE key = ?",
                         (key,)).fetchone()
    return None if found is None else (found[0], found[1], found[2], found[3], found[4])


def after_moves(conn: sqlite3.Connection, game: Game, state: State,
                labels: Iterable[str]) -> dict[str, tuple[int, int, int, int, float]]:
    """The stored rows (as :func:`row`) of the positions after each move label at ``state``, by label; a label
    that is no legal move here (a row no treelab wrote) or a position not stored has none."""
    keys = {}
    for label in labels:
        try:
            keys[label] = game.position_key(state.play(game.parse_move(label)))
        except (NotationError, ValueError):
            continue
    found = rows_of(conn, keys.values())
    return {label: found[k] for label, k in keys.items() if k in found}
