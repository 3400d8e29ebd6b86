"""The database file: opening it without ever damaging it, from the connection up to a transaction.

This module owns every connection treelab opens to a tree's file:

- :func:`connect`, an SQLite connection that cannot be steered by the file (``trusted_schema`` off, and
  SQLite's defensive flag where Python exposes it); read-only media (:func:`read_only_media`, opened
  ``immutable``), and keeping the log small (:func:`wal_limit`, :func:`checkpoint`, :func:`tidied`);
- the write connection a training run keeps open from one save to the next (:class:`KeptConnection`):
  SQLite's page cache stays warm and closing does not checkpoint the log after every game; it is only
  ever used for the file it was opened on (same path, device and inode);
- :func:`reading` and :func:`writing`, one transaction each. Reads use a read-only connection (and tidy the
  ``-wal``/``-shm`` files SQLite creates for it). A write checks that the file is a treelab database (or
  empty) before changing anything, runs in one transaction that commits when the block ends cleanly, and
  builds a new file aside before moving it into place. After a save the log is checkpointed once it
  outgrows :func:`wal_limit`, so it stays bounded while readers come and go.

No connection here opens a database's file descriptor itself: closing one would drop every POSIX lock
the process holds on the file (SQLite's "How To Corrupt An SQLite Database File", section 2.2), and a
training run keeps its write connection open while other processes may ``VACUUM``. Files holding
triggers, views or virtual tables are refused (:func:`treelab.store.schema.check_objects`); the format
itself is :mod:`treelab.store.schema`.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext, suppress
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast

from ..errors import DamagedDatabaseError, DatabaseBusyError, NotATreelabDatabaseError, StoreError, TreelabError
from ..games import find_game
from .files import fsync_path
from .integrity import check_nodes, named
from .schema import DbPath, check_file, check_meta, display, hint, read_compat, read_meta

__all__ = [
    "BUSY_TIMEOUT", "KEPT_CHECKPOINT_PAGES", "WAL_FLOOR", "KeptConnection", "check_unlocked", "checkpoint", "close",
    "connect", "diagnosed", "fold_log", "is_empty", "open_for_writing", "read_only_media", "reading", "tidied", "tidy",
    "uri", "wal_limit", "writing",
]

# -- connections that distrust the file, read-only media, a small log --------------------------------------------------
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
    _truncate(conn)


def fold_log(db: DbPath) -> None:
    """Fold the log into the file and empty it now (a no-op without a log, or while a read still uses it).

    The learning loop calls it between a refit beside the games and the next: each refit's read holds a
    snapshot for its whole length, and with one always under way SQLite never finds the moment to restart
    the log, which then grows by every write of the run (1.8 GB in 40 minutes of Connect Four).
    """
    path = Path(db)
    if not Path(f"{path}-wal").exists():
        return
    try:
        conn = connect(uri(path, "rw"))
    except sqlite3.Error:
        return
    try:
        _truncate(conn)
    finally:
        conn.close()


def _truncate(conn: sqlite3.Connection) -> None:
    """A ``TRUNCATE`` checkpoint that waits at most 2 s for the reads still using the log, then gives up quietly
    (the data is committed either way; the next chance tries again)."""
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

# -- the write connection kept between saves ---------------------------------------------------------------------------


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

# -- reads and writes, one transaction each ----------------------------------------------------------------------------


_F = TypeVar("_F", bound=Callable[..., Any])


def is_empty(db: DbPath) -> bool:
    """Whether ``db`` is an empty file or an SQLite database without tables (a save may fill it)."""
    path = Path(db)
    if not check_file(path, display(db)):
        return True
    frozen = read_only_media(path)
    with nullcontext() if frozen else tidied(path):
        conn = connect(uri(path, "ro&immutable=1" if frozen else "ro"))
        try:
            return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
        except (sqlite3.DatabaseError, ValueError):  # damaged: not empty, and the load says what is wrong
            return False
        finally:
            conn.close()


@contextmanager
def reading(db: DbPath, game: str | None = None) -> Iterator[tuple[sqlite3.Connection, dict[str, str]]]:
    """A read-only connection inside one read transaction, with the checked ``meta``.

    An error of the block that bad rows can cause (``ValueError``, ``KeyError``,
    ``ZeroDivisionError``...) has the whole table checked
    (:func:`~treelab.store.integrity.check_nodes`): rows no treelab wrote
    become one :class:`DamagedDatabaseError` naming the bad value; otherwise
    the error goes on as it was (a bug stays visible). Readers pay nothing for
    the check until something fails.

    Never creates or changes the file, and leaves nothing beside it: on
    read-only media (see :func:`treelab.store.dbfile.read_only_media`) the file is opened
    ``immutable``, elsewhere the empty ``-wal``/``-shm`` of the read are removed.

    Raises:
        StoreError: no such file, or a directory.
        NotATreelabDatabaseError: not SQLite, or no treelab meta (also an empty database).
        DamagedDatabaseError: ``meta`` or ``nodes`` values no treelab wrote.
        SchemaVersionError, GameMismatchError: see :func:`check_meta`.
    """
    path, name = Path(db), display(db)
    if not path.exists():
        raise StoreError(f"no such database {name!r}: check the path, or save or train a tree to create it")
    if not check_file(path, name):
        raise NotATreelabDatabaseError(f"{name!r} is an empty file, not a treelab database: check the path")
    frozen = read_only_media(path)
    with nullcontext() if frozen else tidied(path):  # the last reader of this process tidies the log
        yield from _read(path, name, frozen, game)


def _read(path: Path, name: str, frozen: bool, game: str | None) -> Iterator[tuple[sqlite3.Connection, dict[str, str]]]:
    try:
        conn = connect(uri(path, "ro&immutable=1" if frozen else "ro"))
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {name!r} ({exc}): check the path and permissions") from None
    try:
        conn.execute("BEGIN")
        meta = read_meta(conn, name)
        if meta is None:
            raise NotATreelabDatabaseError(
                f"{name!r} is an empty database, not a treelab tree: check the path"
            )
        read_compat(conn, check_meta(meta, name, game))
        try:
            yield conn, meta
        except BaseException as exc:
            # a cursor left half read in a finished frame keeps the connection (and -wal/-shm) open
            traceback.clear_frames(exc.__traceback__)
            if isinstance(exc, (ArithmeticError, LookupError, MemoryError, TypeError, ValueError)) and not isinstance(
                exc, TreelabError
            ):  # bad rows, or a bug: only the first becomes a clear error
                check_nodes(conn, find_game(meta["game"]))
            raise
    except DamagedDatabaseError as exc:
        raise named(exc, name) from None
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot read {name!r} ({exc}): {hint(exc)}") from None
    finally:
        conn.close()


def diagnosed(func: _F) -> _F:
    """Decorate a reader ``func(db, ...)`` or ``(cls, db, ...)``: errors bad rows can cause have ``db`` checked.

    For readers that go on computing after their :func:`reading` block: a
    ``ValueError``, ``KeyError``, ``ZeroDivisionError``... that is not a
    treelab error has the table checked (:func:`~treelab.store.integrity.check_nodes`);
    damage becomes one :class:`DamagedDatabaseError`, anything else goes on as
    it was.
    """

    @wraps(func)
    def reader(*args: Any, **kwargs: Any) -> Any:
        db = args[1] if isinstance(args[0], type) else args[0]  # a classmethod's function: (cls, db, ...)
        try:
            return func(*args, **kwargs)
        except DamagedDatabaseError as exc:
            raise named(exc, display(db)) from None
        except (ArithmeticError, LookupError, MemoryError, TypeError, ValueError) as exc:
            if isinstance(exc, TreelabError):
                raise
            try:
                with reading(db) as (conn, meta):
                    check_nodes(conn, find_game(meta["game"]))
            except TreelabError as found:
                raise found from None
            raise

    return cast(_F, reader)


def _as_store_error(exc: BaseException, name: str) -> None:
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
        raise NotATreelabDatabaseError(
            f"{name!r} is not a treelab database (not an SQLite file): check the path"
        ) from None
    if isinstance(exc, sqlite3.Error):
        raise StoreError(f"cannot write {name!r} ({exc}); it is unchanged: {hint(exc)}") from exc


def _sweep(path: Path) -> None:
    """Delete the temporary files of first saves to ``path`` whose process died (POSIX only)."""
    if os.name != "posix":
        return
    for stale in path.parent.glob(f".{path.name}.*.tmp*"):
        try:
            pid = int(stale.name[len(path.name) + 2:].split("-", 1)[0])
            os.kill(pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            stale.unlink(missing_ok=True)
        except (ValueError, OSError):
            pass


def _creating(path: Path, name: str, replace: bool) -> Iterator[tuple[sqlite3.Connection, None]]:
    """Build a new database in a hidden temporary file, then move it to ``path`` in one step.

    The temporary file needs no journal (nobody else sees it), so a first save
    of a big tree runs at plain-insert speed; a crash leaves ``path`` as it was
    (absent or empty) and at worst a stray ``.NAME.*.tmp`` file.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")
    try:
        conn = connect(uri(tmp, "rwc"))
    except sqlite3.Error as exc:
        raise StoreError(f"cannot create {name!r} ({exc}): check the path and permissions") from None
    try:
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -65536", "temp_store = MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("BEGIN")
        yield conn, None
        if conn.in_transaction:
            conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.close()
        fsync_path(tmp)
        if replace:
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size:  # its log would be replayed onto the new file
                raise StoreError(f"{name!r} is in use by another process: close it, then save again")
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # fails if someone created ``path`` meanwhile: never clobber it
            except FileExistsError:
                raise StoreError(
                    f"{name!r} was created by someone else while saving: load it, or save elsewhere"
                ) from None
            except OSError:  # no hard links on this file system
                os.replace(tmp, path)
        fsync_path(path.parent)
    except BaseException as exc:
        close(conn)
        _as_store_error(exc, name)
        raise
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
            leftover.unlink(missing_ok=True)


@contextmanager
def writing(
    db: DbPath, kept: KeptConnection | None = None, *, wait: bool = True
) -> Iterator[tuple[sqlite3.Connection, dict[str, str] | None]]:
    """A read-write connection inside a transaction, with ``meta`` (None: a new database).

    Like ``sqlite3``'s connection as a context manager: the transaction commits
    when the block ends without an exception (the caller may also commit
    itself) and rolls back on any exception, leaving the file as it was. An
    existing treelab database is written in place inside ``BEGIN IMMEDIATE``
    (WAL mode), waiting up to :data:`treelab.store.dbfile.BUSY_TIMEOUT` seconds for another process's
    write. A missing or empty file is built aside and moved into place after
    the commit. The caller checks ``meta``. A file that is not a treelab
    database is refused before anything is written to it. With ``kept``, the
    connection to an existing database is taken from it and left open in it
    after a successful write (closed after an error); a new file is built with a
    connection of its own. With ``wait`` False, a file another process is writing
    now is a :class:`~treelab.errors.DatabaseBusyError` at once (the kept connection
    stays open), so the caller can do something else and try again. After the
    commit, a log grown past :func:`treelab.store.dbfile.wal_limit` is
    checkpointed (readers are never blocked; the save waits for the reads that
    still use the log, a moment at most).
    """
    path, name = Path(db), display(db)
    if path.is_symlink() and path.exists():  # write the file it points to, never replace the link itself
        path = Path(os.path.realpath(path))
    if not path.exists() and not path.parent.is_dir():
        raise StoreError(f"cannot create {name!r}: no such directory {str(path.parent)!r}")
    if kept is not None:
        kept.check(path, name)
    if kept is None or kept.conn is None:  # a kept connection's first write swept already
        _sweep(path)
    if not path.exists():
        yield from _creating(path, name, replace=False)
        return
    if not check_file(path, name):
        yield from _creating(path, name, replace=True)
        return
    conn = None
    try:
        conn = open_for_writing(path, name, kept)
        _begin(conn, wait)
        meta = read_meta(conn, name)
    except _Busy:
        _finish(conn, kept, path, ok=True)  # nothing began: keep the connection warm for the next try
        raise DatabaseBusyError(f"{name!r} is being written by another process now") from None
    except BaseException as exc:
        _finish(conn, kept, path, ok=False)
        _as_store_error(exc, name)
        raise
    if meta is None:  # an empty SQLite database: build a new one instead
        _finish(conn, kept, path, ok=False)
        yield from _creating(path, name, replace=True)
        return
    try:
        yield conn, meta
        if conn.in_transaction:
            conn.execute("COMMIT")
    except BaseException as exc:
        _finish(conn, kept, path, ok=False)
        _as_store_error(exc, name)
        raise
    checkpoint(conn, path)
    _finish(conn, kept, path, ok=True)


class _Busy(Exception):
    """``BEGIN IMMEDIATE`` found the write lock taken, and the writer would not wait."""


def _begin(conn: sqlite3.Connection, wait: bool) -> None:
    """``BEGIN IMMEDIATE``: waiting for another process's write (SQLite's busy timeout), or not at all."""
    if wait:
        conn.execute("BEGIN IMMEDIATE")
        return
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if exc.sqlite_errorcode == sqlite3.SQLITE_BUSY:
            raise _Busy from None
        raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")


def _finish(conn: sqlite3.Connection | None, kept: KeptConnection | None, path: Path, ok: bool) -> None:
    """After a write: keep ``conn`` open in ``kept`` if it succeeded, else roll back and close it."""
    if conn is None:
        return
    if ok and kept is not None and not conn.in_transaction:
        try:
            if kept.conn is not conn:
                kept.keep(conn, path)
            return
        except OSError:  # the file is gone: nothing to keep open
            pass
    if kept is not None and kept.conn is conn:
        kept.close()
    else:
        close(conn)
