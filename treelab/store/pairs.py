"""Two tree files read side by side (``treelab diff``, the explorer's compare view): one attached to the
other's connection in one read transaction, and the rows aligned by move path.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..games import Game

__all__ = ["COLUMNS", "aligned", "attached", "kid_moves", "node_at", "subtree_size"]

COLUMNS = "id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game"
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
    """The row (:data:`COLUMNS`) at ``moves`` in the attached ``schema``, or None if not stored."""
    row = conn.execute(f"SELECT {COLUMNS} FROM {schema}.nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    for move in moves:
        if row is None:
            return None
        row = conn.execute(
            f"SELECT {COLUMNS} FROM {schema}.nodes WHERE parent_id = ? AND move = ?", (row[0], game.label(move))
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
