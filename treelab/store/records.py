"""What a database holds, read without loading its tree: :func:`info`, the games and growth
logs, and :func:`compact` (``treelab info``, ``treelab compact``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..tree import SQRT2
from .dbfile import BUSY_TIMEOUT, connect, reading, uri
from .schema import REDUNDANT_INDEX, DbPath, display

__all__ = ["compact", "info", "read_games", "read_history"]


def info(db: DbPath) -> dict[str, Any]:
    """Facts about the tree in ``db`` from SQL aggregates, without loading it.

    Returns:
        ``game``, ``nodes``, ``games``, ``simulations`` (the root's visits),
        ``max_depth``, ``size_bytes`` (file and log), ``bytes_per_node``, ``schema_version``,
        ``treelab_version`` and ``c``.
    """
    with reading(db) as (conn, meta):
        nodes, max_depth = conn.execute("SELECT count(*), max(depth) FROM nodes").fetchone()
        simulations = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()
        played = conn.execute("SELECT count(*) FROM games").fetchone()[0]
    size = _bytes_on_disk(Path(db))
    return {
        "game": meta["game"], "nodes": nodes, "games": played,
        "simulations": simulations[0] if simulations else 0, "max_depth": max_depth or 0,
        "size_bytes": size, "bytes_per_node": round(size / nodes, 1) if nodes else None,
        "schema_version": int(meta["schema_version"]), "treelab_version": meta.get("treelab_version"),
        "c": float(meta.get("c", SQRT2)),
    }


def _select(db: DbPath, sql: str) -> list[dict[str, Any]]:
    with reading(db) as (conn, _):
        cur = conn.execute(sql)
        keys = [d[0] for d in cur.description]
        return [dict(zip(keys, row, strict=True)) for row in cur]


def compact(db: DbPath) -> tuple[int, int]:
    """Fold the write-ahead log into ``db`` and rebuild the file without free pages (``VACUUM``).

    Safe beside readers and writers in other processes, a training run
    included: the ``VACUUM`` is one write transaction under SQLite's locks, so
    a save waits for it (up to :data:`~treelab.store.dbfile.BUSY_TIMEOUT`
    seconds) and readers keep reading the state they started with. This holds
    because treelab never opens and closes a database's file descriptor beside
    its own connection, which would drop the process's locks (SQLite's "How To
    Corrupt An SQLite Database File", 2.2). A process that does (or a network
    file system without working locks) can still be damaged by any concurrent
    write, ``VACUUM`` or not. Files made by earlier versions lose their
    redundant index on ``parent_id`` alone (saves get faster). Compact waits up to ``BUSY_TIMEOUT`` seconds for a
    save in progress, then gives up, changing nothing.

    Returns:
        The bytes on disk (file and log) before and after.

    Raises:
        StoreError: not a treelab database, or a writer held it past the timeout.
    """
    path, name = Path(db), display(db)
    with reading(db):
        pass  # refuses missing files and files that are not treelab databases, changing nothing
    before = _bytes_on_disk(path)
    try:
        conn = connect(uri(path, "rw"), timeout=BUSY_TIMEOUT)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot compact {name!r} ({exc}): check the permissions") from None
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute(f"DROP INDEX IF EXISTS {REDUNDANT_INDEX}")  # older files' (see treelab.store.schema)
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot compact {name!r} ({exc}): close other programs using it and retry") from None
    finally:
        conn.close()
    return before, _bytes_on_disk(path)


def _bytes_on_disk(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def read_games(db: DbPath) -> list[dict[str, Any]]:
    """The ``games`` rows of ``db``, in id order."""
    return _select(db, "SELECT * FROM games ORDER BY id")


def read_history(db: DbPath) -> list[dict[str, Any]]:
    """The ``history`` rows of ``db`` (growth per logged game), JSON columns decoded."""
    rows = _select(db, "SELECT * FROM history ORDER BY game_id")
    for row in rows:
        row["depth_counts"], row["root_children"] = json.loads(row["depth_counts"]), json.loads(row["root_children"])
    return rows
