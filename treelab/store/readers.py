"""What the layers above read from a tree's file, as plain rows: SQL on the schema stays in the store.

Each reader takes a connection inside :func:`treelab.store.dbfile.reading` (one read transaction,
so the rows agree with each other) and returns tuples; the caller builds its own values from them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

__all__ = ["growth_rows", "proofs", "rows_until"]

_CHUNK = 500
"""Ids asked for in one statement (SQLite allows 999 parameters in old builds)."""


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
