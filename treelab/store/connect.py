"""SQLite connections that cannot be steered by the file, read-only media, and keeping the log small.

Every connection treelab opens comes from :func:`connect`. This module never
opens a database's file descriptor itself: closing one would drop the POSIX
locks of every connection this process holds on the file (SQLite's "How To
Corrupt An SQLite Database File", section 2.2).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..errors import NotATreelabDatabaseError, StoreError

__all__ = [
    "BUSY_TIMEOUT", "WAL_FLOOR", "check_unlocked", "checkpoint", "close", "connect", "read_only_media", "tidied",
    "tidy", "uri", "wal_limit",
]

BUSY_TIMEOUT = 60.0
"""Seconds a write waits for another process's transaction (a ``treelab compact`` ``VACUUM``) to end."""

WAL_FLOOR = 4 << 20
"""Bytes of write-ahead log always allowed before a save checkpoints it (SQLite's own auto-checkpoint
starts at 1,000 pages, 4 MiB at the default page size)."""


def connect(uri: str, *, timeout: float = 5.0, check_same_thread: bool = True) -> sqlite3.Connection:
    """An SQLite connection to ``uri`` that never runs SQL stored in the file's schema on its own.

    ``trusted_schema`` is off (functions in views, triggers and indexes must be
    innocuous) and, where Python exposes it (3.12+), ``SQLITE_DBCONFIG_DEFENSIVE``
    is on (no writes to the schema table or shadow tables).
    """
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout, check_same_thread=check_same_thread)
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        defensive = getattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE", None)
        if defensive is not None and hasattr(conn, "setconfig"):
            conn.setconfig(defensive, True)
    except BaseException:
        conn.close()
        raise
    return conn


def wal_limit(path: Path) -> int:
    """The log size past which a save checkpoints: the database's size, at least :data:`WAL_FLOOR`."""
    try:
        return max(WAL_FLOOR, path.stat().st_size)
    except OSError:
        return WAL_FLOOR


def read_only_media(path: Path) -> bool:
    """Whether nobody can be writing ``path``: no log beside it, and the file or its directory is read-only.

    A WAL writer keeps ``-wal`` beside the file while it is connected, and
    cannot create one in a read-only directory or write a read-only file, so
    such a file can be read ``immutable`` (SQLite then creates nothing beside it).
    """
    if Path(f"{path}-wal").exists():
        return False
    return not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)


def uri(path: Path, mode: str) -> str:
    """The ``file:`` URI of ``path`` with ``mode`` (``ro``, ``rw``, ``rwc``, or more parameters after ``&``)."""
    return f"{path.resolve().as_uri()}?mode={mode}"


_READERS: dict[str, list[Any]] = {}
"""This process's read-only connections open per file (by real path), and whether its log was there before them."""
_READERS_LOCK = threading.Lock()


@contextmanager
def tidied(path: Path) -> Iterator[None]:
    """Around a read-only connection to ``path``: the last of this process's readers to leave :func:`tidy` s the
    file, if no log was beside it when the first came.

    Each read once decided alone: with two threads reading one file (the explorer answering a request while
    it lays out a diagram ahead), the first found no log, tidied while the second was still open (SQLite
    keeps the files then), and the second found the first one's log and left it: ``-wal``/``-shm`` stayed
    beside a file that was only read.
    """
    key = os.path.realpath(path)
    with _READERS_LOCK:
        entry = _READERS.setdefault(key, [0, Path(f"{path}-wal").exists()])
        entry[0] += 1
    try:
        yield
    finally:
        with _READERS_LOCK:  # held while tidying: a reader coming now waits, then finds the file tidy
            entry[0] -= 1
            if entry[0] == 0:
                del _READERS[key]
                if not entry[1]:
                    tidy(path)


def tidy(path: Path) -> None:
    """Remove the empty ``-wal``/``-shm`` files a read-only connection left behind.

    A read-write connection that closes as the last one checkpoints (nothing:
    the log is empty) and deletes both; if another connection is open it
    leaves them, as SQLite must.
    """
    wal = Path(f"{path}-wal")
    try:
        if wal.exists() and wal.stat().st_size == 0:
            conn = connect(uri(path, "rw"))
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            finally:
                conn.close()
    except (OSError, ValueError, sqlite3.Error):  # tidying is a courtesy; never fail a read for it
        pass


def checkpoint(conn: sqlite3.Connection, path: Path) -> None:
    """Fold the log into the file and empty it once it outgrows :func:`wal_limit`.

    SQLite's own checkpoints after a commit are passive: while readers come and
    go without a pause, the log is never restarted and grows without bound. A
    ``TRUNCATE`` checkpoint waits for the reads still using the log (new reads
    go on from the file meanwhile), so the log stays near the database's size.
    A checkpoint that cannot finish in time is left for the next save.
    """
    try:
        if Path(f"{path}-wal").stat().st_size <= wal_limit(path):
            return
    except OSError:
        return
    try:
        conn.execute("PRAGMA busy_timeout = 2000")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass  # busy or interrupted: the data is committed; the next save tries again
    finally:
        with suppress(sqlite3.Error):
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")


def check_unlocked(db: str | os.PathLike[str]) -> None:
    """Refuse a database another writer holds locked now (nothing is written).

    Raises:
        StoreError: a write transaction cannot start within half a second.
        NotATreelabDatabaseError: the file is not an SQLite database.
    """
    path = Path(db)
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=0.5, isolation_level=None)
    except sqlite3.Error:
        return  # not openable for writing: the save says why, in its own words
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreError(
                f"{os.fspath(db)!r} is locked by another writer (another training run?): "
                "wait for it to finish, or train into another file"
            ) from None
    except sqlite3.DatabaseError as exc:  # not SQLite at all (a text file): refused before any worker starts
        raise NotATreelabDatabaseError(
            f"{os.fspath(db)!r} is not a treelab database ({exc}): check the path, or train into a new file"
        ) from None
    finally:
        conn.close()


def close(conn: sqlite3.Connection) -> None:
    """Roll back whatever is open and close (also when already closed)."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
    conn.close()
