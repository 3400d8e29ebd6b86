"""Opening treelab database files without ever damaging them.

Every connection is SQLite's own: this module never opens a file descriptor
of a database itself, because closing one drops every POSIX lock the process
holds on the file (SQLite's "How To Corrupt An SQLite Database File", 2.2) and
a training run keeps its write connection open while other processes may
``VACUUM``. Connections run with ``trusted_schema`` off (and SQLite's
defensive flag where Python exposes it), and files holding triggers, views or
virtual tables are refused (:func:`treelab.store.schema.check_objects`).

Reads use a read-only connection inside one transaction (and tidy the
``-wal``/``-shm`` files SQLite creates for it); on read-only media, where
nobody can be writing, the file is opened ``immutable`` and nothing is created
beside it. A write checks that the file is a treelab database (or empty)
before changing anything, runs in one transaction that commits when the block
ends cleanly, and builds a new file aside before moving it into place. During
training, a :class:`~treelab.store.kept.KeptConnection` keeps the write connection open from one
save to the next: SQLite's page cache stays warm and closing does not
checkpoint the log after every game. After a save the log is checkpointed once
it outgrows :func:`treelab.store.connect.wal_limit`, so it stays bounded while readers come and go.
The format itself is :mod:`treelab.store.schema`.
"""

from __future__ import annotations

import os
import sqlite3
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast

from ..errors import DamagedDatabaseError, DatabaseBusyError, NotATreelabDatabaseError, StoreError, TreelabError
from ..games import find_game
from .connect import BUSY_TIMEOUT, checkpoint, close, connect, read_only_media, tidied, uri
from .integrity import check_nodes, named
from .kept import KeptConnection, open_for_writing
from .outfile import fsync_path
from .schema import DbPath, check_file, check_meta, display, hint, read_compat, read_meta

__all__ = ["diagnosed", "is_empty", "reading", "writing"]

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
    read-only media (see :func:`treelab.store.connect.read_only_media`) the file is opened
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
    (WAL mode), waiting up to :data:`treelab.store.connect.BUSY_TIMEOUT` seconds for another process's
    write. A missing or empty file is built aside and moved into place after
    the commit. The caller checks ``meta``. A file that is not a treelab
    database is refused before anything is written to it. With ``kept``, the
    connection to an existing database is taken from it and left open in it
    after a successful write (closed after an error); a new file is built with a
    connection of its own. With ``wait`` False, a file another process is writing
    now is a :class:`~treelab.errors.DatabaseBusyError` at once (the kept connection
    stays open), so the caller can do something else and try again. After the
    commit, a log grown past :func:`treelab.store.connect.wal_limit` is
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
