"""The write connection a training run keeps open from one save to the next.

SQLite's page cache stays warm between saves and closing does not checkpoint the log after every
game; the connection is only ever used for the file it was opened on (same path, device and inode).
:func:`treelab.store.dbfile.writing` opens write connections through :func:`open_for_writing`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import StoreError
from .connect import BUSY_TIMEOUT, close, connect, uri

__all__ = ["KEPT_CHECKPOINT_PAGES", "KeptConnection", "open_for_writing"]

KEPT_CHECKPOINT_PAGES = 16384
"""WAL pages (64 MB) a kept connection's log holds before SQLite folds it into the file (default 1000): a
training save per game on a million-node file rewrites the same upper pages every game, and folding them
every 4 MB cost 1.9x the simulations/s of a 10k-node tree against 1.1x (``benchmarks/training_scale.py``)."""


class KeptConnection:
    """A write connection kept open from one save to the next (see :func:`writing`).

    It is used only for the file it was opened on (same path, device and
    inode). A file deleted or replaced meanwhile is refused, never written
    through the old connection: its ``-wal`` log beside the path belongs to the
    old file, and SQLite would replay it onto the new one. :meth:`close` ends
    it; SQLite then folds the log into the file.
    """

    def __init__(self) -> None:
        self.conn: sqlite3.Connection | None = None
        self._file: tuple[Path, int, int] | None = None

    def check(self, path: Path, name: str) -> None:
        """Refuse ``path`` if the kept connection is to a file no longer there (closing it).

        Raises:
            StoreError: the file was deleted or replaced since the connection opened.
        """
        if self.conn is None:
            return
        try:
            st = path.stat()
            same = self._file == (path.resolve(), st.st_dev, st.st_ino)
        except OSError:
            same = False
        if not same and self._file is not None and self._file[0] == path.resolve():
            self.close()
            raise StoreError(
                f"{name!r} was deleted or replaced while a training run kept it open; {name}-wal beside it "
                "is the old file's log: move the -wal and -shm files away, then train again"
            )

    def take(self, path: Path) -> sqlite3.Connection | None:
        """The open connection to ``path``, or None (closing one to another file)."""
        if self.conn is not None and self._file is not None and self._file[0] != path.resolve():
            self.close()
        return self.conn

    def keep(self, conn: sqlite3.Connection, path: Path) -> None:
        st = path.stat()
        self.conn, self._file = conn, (path.resolve(), st.st_dev, st.st_ino)

    def close(self) -> None:
        """Close the kept connection, if any."""
        conn, self.conn, self._file = self.conn, None, None
        if conn is not None:
            close(conn)


def open_for_writing(path: Path, name: str, kept: KeptConnection | None) -> sqlite3.Connection:
    """A write connection to ``path``: ``kept``'s open one, or a new one tuned for saves."""
    conn = kept.take(path) if kept is not None else None
    if conn is not None:
        return conn
    try:
        conn = connect(uri(path, "rw"), timeout=BUSY_TIMEOUT, check_same_thread=kept is None)
    except sqlite3.Error as exc:
        raise StoreError(
            f"cannot open {name!r} for writing ({exc}): the file or its directory is read-only: "
            "check the permissions, or save to a copy somewhere writable"
        ) from None
    try:
        for pragma in ("synchronous = NORMAL", "cache_size = -65536", "temp_store = MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        if kept is not None:  # a training loop's saves: fold the log into the file every 64 MB, not every 4 MB
            conn.execute(f"PRAGMA wal_autocheckpoint = {KEPT_CHECKPOINT_PAGES}")
    except BaseException:
        close(conn)
        raise
    return conn
