"""The ``positions`` table: a tree's counts merged by position (schema 3), beside ``nodes``.

``positions(key TEXT PRIMARY KEY, nb_visit, nb_win, nb_draw, nb_path) WITHOUT ROWID``: one row per
position key (:meth:`treelab.games.Game.position_key`, transpositions and symmetric images merged),
with the sums over the nodes that reach it: ``nb_visit``, ``nb_win`` counted for **player 1** (the
first player, a fixed point of view), ``nb_draw``, and ``nb_path`` (how many stored nodes, that is
move paths, reach it). See :mod:`treelab.positions`.

It is a function of ``nodes``, kept by the one write path: :func:`treelab.store.deltas.apply` adds
each save's increments (a :class:`~treelab.store.deltas.Delta` carries its nodes' keys) by
``ON CONFLICT DO UPDATE``, so two writers add up exactly; a new file's first save writes it whole
(:func:`write_tree`); a merge and the migration of an older file rebuild it from the nodes
(:func:`rebuild`), a depth at a time.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from itertools import chain, compress
from typing import Any

import numpy as np

from ..games import Game, State
from ..positions import counts_of_nodes, node_keys
from ..tree import Tree, TreeNode

__all__ = ["CREATE", "WIDTH", "add", "add_delta", "create", "delta_fields", "exists", "read", "rebuild", "row",
           "rows_of", "write_tree"]

CREATE = ("CREATE TABLE IF NOT EXISTS positions (key TEXT PRIMARY KEY, nb_visit INTEGER NOT NULL, "
          "nb_win INTEGER NOT NULL, nb_draw INTEGER NOT NULL, nb_path INTEGER NOT NULL) WITHOUT ROWID")
"""The table (schema 3)."""

_ADD = ("INSERT INTO positions (key, nb_visit, nb_win, nb_draw, nb_path) VALUES {} "
        "ON CONFLICT(key) DO UPDATE SET nb_visit = nb_visit + excluded.nb_visit, "
        "nb_win = nb_win + excluded.nb_win, nb_draw = nb_draw + excluded.nb_draw, "
        "nb_path = nb_path + excluded.nb_path")
WIDTH = 100
"""Rows per upsert statement (500 parameters): one multi-row statement costs about a quarter less a row than
``executemany`` of single rows (``benchmarks/parallel.py``'s writer)."""
_UPSERT, _UPSERT_MANY = _ADD.format("(?, ?, ?, ?, ?)"), _ADD.format(", ".join(["(?, ?, ?, ?, ?)"] * WIDTH))


def create(conn: sqlite3.Connection) -> None:
    """Create the (empty) table if it is missing."""
    conn.execute(CREATE)


def exists(conn: sqlite3.Connection) -> bool:
    """Whether the file has the table (schema 3 and up; a read-only look at an older file has not)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'positions'").fetchone()
    return found is not None


def add(conn: sqlite3.Connection, rows: Iterable[tuple[Any, ...]]) -> None:
    """Add ``(key, nb_visit, player 1's wins, nb_draw, nb_path)`` rows (zero rows are skipped), :data:`WIDTH` a
    statement (a key may come more than once: its rows add up)."""
    _upsert(conn, [r for r in rows if r[1] or r[2] or r[3] or r[4]])


def _upsert(conn: sqlite3.Connection, kept: list[tuple[Any, ...]]) -> None:
    full = len(kept) - len(kept) % WIDTH
    if full:
        conn.executemany(_UPSERT_MANY, [tuple(chain.from_iterable(kept[i:i + WIDTH])) for i in range(0, full, WIDTH)])
    conn.executemany(_UPSERT, kept[full:])


def write_tree(conn: sqlite3.Connection, tree: Tree) -> None:
    """Add the whole table of ``tree``'s nodes (a new file's first save)."""
    create(conn)
    add(conn, ((k, *v) for k, v in counts_of_nodes(tree).items()))


def delta_fields(tree: Tree, nodes: list[TreeNode], known_counts: np.ndarray, new_counts: np.ndarray
                 ) -> dict[str, Any]:
    """A :class:`~treelab.store.deltas.Delta`'s ``keys``, ``position_counts`` and ``key_of_new`` for ``nodes`` (its
    changed stored nodes, then its new ones), from their counts (``known_counts``: increments; ``new_counts``:
    whole). The worker sums the counts by key, so the writer adds one row a position."""
    keys = node_keys(tree, nodes)
    amounts = np.concatenate([known_counts[:, :3], new_counts]) if nodes else np.zeros((0, 3), dtype=np.int64)
    ones = np.fromiter((node.mover == 1 for node in nodes), dtype=bool, count=len(nodes))
    amounts[:, 1] = np.where(ones, amounts[:, 1], amounts[:, 0] - amounts[:, 1] - amounts[:, 2])
    index: dict[str, int] = {}
    where = np.fromiter((index.setdefault(keys[node], len(index)) for node in nodes), dtype=np.int64,
                        count=len(nodes))
    sums = np.zeros((len(index), 3), dtype=np.int64)
    np.add.at(sums, where, amounts)
    return {"keys": list(index), "position_counts": sums, "key_of_new": where[len(known_counts):]}


def add_delta(conn: sqlite3.Connection, keys: Sequence[str], amounts: np.ndarray, key_of_new: np.ndarray,
              fresh: np.ndarray) -> None:
    """Add a delta's position counts (``amounts``, a row per key) to the table, and one more path to the key of
    each new node inserted (``fresh``; ``key_of_new``: each new node's key, by position in ``keys``)."""
    paths = np.bincount(key_of_new[fresh], minlength=len(keys))
    table = np.column_stack((amounts, paths))
    live = np.asarray(table.any(axis=1), dtype=bool)
    wanted: list[bool] = live.tolist()
    _upsert(conn, list(zip(compress(keys, wanted), *table[live].T.tolist(), strict=True)))


def rebuild(conn: sqlite3.Connection, game: Game) -> int:
    """Rebuild the table from the file's nodes (a merge, an older file's migration); return its rows.

    The nodes are read by depth, each position replayed from its parent's: only one depth's
    positions are held at a time. A node's mover is the player to move at its parent.
    """
    create(conn)
    conn.execute("DELETE FROM positions")
    key, parse = game.position_key, game.parse_move
    above: dict[int, State] = {}
    level: dict[int, State] = {}
    depth = -1
    rows = conn.execute("SELECT id, parent_id, depth, move, nb_visit, nb_win, nb_draw FROM nodes ORDER BY depth, id")
    table: dict[str, list[int]] = {}
    for nid, pid, d, move, visits, wins, draws in rows:
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
            r = table[k] = [0, 0, 0, 0]
        r[0] += visits
        r[1] += wins if mover == 1 else visits - wins - draws
        r[2] += draws
        r[3] += 1
    _flush(conn, table)
    return int(conn.execute("SELECT count(*) FROM positions").fetchone()[0])


def _flush(conn: sqlite3.Connection, table: dict[str, list[int]]) -> None:
    add(conn, ((k, *v) for k, v in table.items()))
    table.clear()


def read(conn: sqlite3.Connection) -> dict[str, list[int]] | None:
    """The whole table as ``key -> [nb_visit, player 1's wins, nb_draw]``; None if the file has none."""
    if not exists(conn):
        return None
    return {k: [v, w, d] for k, v, w, d in conn.execute("SELECT key, nb_visit, nb_win, nb_draw FROM positions")}


def rows_of(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, tuple[int, int, int, int]]:
    """The rows of ``keys`` that are stored (none without the table), as :func:`row` gives them."""
    if not exists(conn):
        return {}
    found = {}
    for k in keys:
        got = conn.execute("SELECT nb_visit, nb_win, nb_draw, nb_path FROM positions WHERE key = ?", (k,)).fetchone()
        if got is not None:
            found[k] = (got[0], got[1], got[2], got[3])
    return found


def row(conn: sqlite3.Connection, key: str) -> tuple[int, int, int, int] | None:
    """``(nb_visit, player 1's wins, nb_draw, nb_path)`` of one position; None if not stored (or no table)."""
    if not exists(conn):
        return None
    found = conn.execute("SELECT nb_visit, nb_win, nb_draw, nb_path FROM positions WHERE key = ?", (key,)).fetchone()
    return None if found is None else (found[0], found[1], found[2], found[3])
