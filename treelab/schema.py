"""The treelab database format: tables, migrations, and safe ways to open a file.

One SQLite file holds one tree (see DESIGN.md, *Database*). ``meta`` holds
``schema_version``, ``game``, ``treelab_version``, ``c`` and the bookkeeping
of :mod:`treelab.store` (``tree_id``, ``generation``, ``depth_counts``);
``nodes`` the tree; ``games`` one row per training game; ``history`` one row
per logged game with the tree's size at that moment, so growth can be plotted
without replaying.

Opening never damages a file: a file that is not SQLite is refused after
reading its 16-byte header, reads use a read-only connection (and tidy the
``-wal``/``-shm`` files that SQLite creates for it), and a write checks the
file is a treelab database (or empty) before changing anything.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from .errors import GameMismatchError, NotATreelabDatabaseError, SchemaVersionError, StoreError

__all__ = [
    "SCHEMA_VERSION", "MIGRATIONS", "create", "migrate", "reading", "writing", "check_meta", "display",
    "is_empty",
]

SCHEMA_VERSION = 1
"""The newest schema this treelab reads and writes."""

SQLITE_HEADER = b"SQLite format 3\x00"

DbPath = str | os.PathLike[str]
"""A database file name."""


def _tables_v1(db: sqlite_utils.Database) -> None:
    """The tables of version 1, the base schema: ``meta``, ``nodes``, ``games``, ``history``."""
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("nodes").create(
        {"id": int, "parent_id": int, "move": str, "depth": int, "nb_visit": int, "nb_win": int,
         "nb_draw": int, "proven": int, "created_game": int},
        pk="id",
        not_null=["move", "depth", "nb_visit", "nb_win", "nb_draw"],
        foreign_keys=[("parent_id", "nodes", "id")],
    )
    db.table("games").create(
        {"id": int, "moves": str, "winner": int, "opponent": str, "tree_player": int,
         "iterations": int, "started_at": str, "finished_at": str},
        pk="id",
        not_null=["moves"],
    )
    db.table("history").create(
        {"game_id": int, "nodes": int, "max_depth": int, "root_visits": int,
         "depth_counts": str, "root_children": str, "saved_at": str},
        pk="game_id",
    )


def _indexes_v1(db: sqlite_utils.Database) -> None:
    """The ``nodes`` indexes of version 1: unique on ``(parent_id, move)``, and on ``parent_id``."""
    nodes = db.table("nodes")
    nodes.create_index(["parent_id", "move"], index_name="nodes_parent_move", unique=True)
    nodes.create_index(["parent_id"], index_name="nodes_parent")


def _create_v1(db: sqlite_utils.Database) -> None:
    _tables_v1(db)
    _indexes_v1(db)


MIGRATIONS: list[tuple[int, Callable[[sqlite_utils.Database], None]]] = [(1, _create_v1)]
"""Ordered ``(version, step)`` pairs; a step takes the database from ``version - 1`` to ``version``."""


def create(conn: sqlite3.Connection, fill: Callable[[], object]) -> None:
    """Create the newest schema in an empty database, calling ``fill()`` to bulk-write the base tables.

    ``fill`` runs before the indexes exist: building an index once over a
    million rows is faster than keeping it up to date row by row.
    """
    db = sqlite_utils.Database(conn, execute_plugins=False, recursive_triggers=False)
    _tables_v1(db)
    fill()
    _indexes_v1(db)
    db.table("meta").upsert({"key": "schema_version", "value": "1"}, pk="key")
    migrate(conn, 1)


def migrate(conn: sqlite3.Connection, version: int) -> int:
    """Bring a database at schema ``version`` (0: empty) to :data:`SCHEMA_VERSION`.

    Runs inside the caller's transaction and records the new version in ``meta``.

    Returns:
        The number of steps applied.
    """
    db = sqlite_utils.Database(conn, execute_plugins=False, recursive_triggers=False)
    steps = [step for target, step in MIGRATIONS if target > version]
    for step in steps:
        step(db)
    if steps:
        db.table("meta").upsert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key")
    return len(steps)


def display(db: DbPath) -> str:
    """The database name as the user wrote it, for messages."""
    return os.fspath(db)


def _check_file(path: Path, name: str) -> int:
    """Refuse directories and non-SQLite files; return the file size (0 allowed)."""
    if path.is_dir():
        raise StoreError(f"{name!r} is a directory, not a database file: give the path of a .db file")
    size = path.stat().st_size
    if size:
        with path.open("rb") as fh:
            header = fh.read(16)
        if header != SQLITE_HEADER:
            raise NotATreelabDatabaseError(
                f"{name!r} is not a treelab database (not an SQLite file): check the path"
            )
    return size


def read_meta(conn: sqlite3.Connection, name: str) -> dict[str, str] | None:
    """The ``meta`` table as a dict, or None for an empty database (no tables at all).

    Raises:
        NotATreelabDatabaseError: the file has tables but no treelab ``meta``.
    """
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return None
        meta = dict(conn.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
    except sqlite3.OperationalError as exc:  # locked, unreadable, or a crashed writer's hot journal
        raise StoreError(
            f"cannot read {name!r} ({exc}): if a writer crashed, save to it once to recover it"
        ) from None
    except sqlite3.DatabaseError as exc:
        raise NotATreelabDatabaseError(
            f"{name!r} is not a treelab database ({exc}): check the path"
        ) from None
    if "schema_version" not in meta or "game" not in meta or "nodes" not in tables:
        raise NotATreelabDatabaseError(
            f"{name!r} is an SQLite file but not a treelab database (no treelab meta): check the path"
        )
    return meta


def check_meta(meta: dict[str, str], name: str, game: str | None = None) -> int:
    """Check the schema version (and the game, if given); return the schema version.

    Raises:
        SchemaVersionError: written by a newer treelab.
        GameMismatchError: the tree is of another game.
    """
    try:
        version = int(meta["schema_version"])
    except ValueError:
        raise NotATreelabDatabaseError(
            f"{name!r} has a bad schema_version {meta['schema_version']!r}: is it a treelab database?"
        ) from None
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{name!r} has schema version {version}, newer than {SCHEMA_VERSION} (treelab "
            f"{meta.get('treelab_version', '?')} wrote it): upgrade treelab to read it"
        )
    if game is not None and meta["game"] != game:
        raise GameMismatchError(
            f"{name!r} holds a {meta['game']} tree, not {game}: use game {meta['game']!r} or another database"
        )
    return version


def _tidy(path: Path) -> None:
    """Remove the empty ``-wal``/``-shm`` files a read-only connection left behind.

    A read-write connection that closes as the last one checkpoints (nothing:
    the log is empty) and deletes both; if another connection is open it
    leaves them, as SQLite must.
    """
    wal = Path(f"{path}-wal")
    try:
        if wal.exists() and wal.stat().st_size == 0:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, isolation_level=None)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            finally:
                conn.close()
    except (OSError, sqlite3.Error):  # tidying is a courtesy; never fail a read for it
        pass


def is_empty(db: DbPath) -> bool:
    """Whether ``db`` is an empty file or an SQLite database without tables (a save may fill it)."""
    path = Path(db)
    if not _check_file(path, display(db)):
        return True
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    had_wal = Path(f"{path}-wal").exists()
    try:
        return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()
        if not had_wal:
            _tidy(path)


@contextmanager
def reading(db: DbPath, game: str | None = None) -> Iterator[tuple[sqlite3.Connection, dict[str, str]]]:
    """A read-only connection inside one read transaction, with the checked ``meta``.

    Never creates or changes the file.

    Raises:
        StoreError: no such file, or a directory.
        NotATreelabDatabaseError: not SQLite, or no treelab meta (also an empty database).
        SchemaVersionError, GameMismatchError: see :func:`check_meta`.
    """
    path, name = Path(db), display(db)
    if not path.exists():
        raise StoreError(f"no such database {name!r}: check the path, or save or train a tree to create it")
    if not _check_file(path, name):
        raise NotATreelabDatabaseError(f"{name!r} is an empty file, not a treelab database: check the path")
    had_wal = Path(f"{path}-wal").exists()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("BEGIN")
        meta = read_meta(conn, name)
        if meta is None:
            raise NotATreelabDatabaseError(
                f"{name!r} is an empty database, not a treelab tree: check the path"
            )
        check_meta(meta, name, game)
        yield conn, meta
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot read {name!r}: {exc}") from exc
    finally:
        conn.close()
        if not had_wal:
            _tidy(path)


def _uri(path: Path, mode: str) -> str:
    return f"{path.resolve().as_uri()}?mode={mode}"


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a directory on Windows
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _close(conn: sqlite3.Connection) -> None:
    """Roll back whatever is open and close (also when already closed)."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass
    conn.close()


def _as_store_error(exc: BaseException, name: str) -> None:
    if isinstance(exc, sqlite3.Error):
        raise StoreError(f"cannot write {name!r} ({exc}); it is unchanged: retry, or check the file") from exc


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
        conn = sqlite3.connect(_uri(tmp, "rwc"), uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot create {name!r} ({exc}): check the path and permissions") from None
    try:
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "cache_size = -65536", "temp_store = MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("BEGIN")
        yield conn, None
        if conn.in_transaction:
            raise StoreError(f"internal error: the save to {name!r} did not commit")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.close()
        _fsync(tmp)
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
        _fsync(path.parent)
    except BaseException as exc:
        _close(conn)
        _as_store_error(exc, name)
        raise
    finally:
        for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
            leftover.unlink(missing_ok=True)


@contextmanager
def writing(db: DbPath) -> Iterator[tuple[sqlite3.Connection, dict[str, str] | None]]:
    """A read-write connection inside a transaction, with ``meta`` (None: a new database).

    An existing treelab database is written in place inside ``BEGIN IMMEDIATE``
    (WAL mode). A missing or empty file is built aside and moved into place
    after the commit. The caller checks ``meta`` and commits; any exception
    rolls everything back. A file that is not a treelab database is refused
    before anything is written to it.
    """
    path, name = Path(db), display(db)
    if not path.exists() and not path.parent.is_dir():
        raise StoreError(f"cannot create {name!r}: no such directory {str(path.parent)!r}")
    _sweep(path)
    if not path.exists():
        yield from _creating(path, name, replace=False)
        return
    if not _check_file(path, name):
        yield from _creating(path, name, replace=True)
        return
    try:
        conn = sqlite3.connect(_uri(path, "rw"), uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {name!r} for writing ({exc}): check the permissions") from None
    try:
        for pragma in ("synchronous = NORMAL", "cache_size = -65536", "temp_store = MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("BEGIN IMMEDIATE")
        meta = read_meta(conn, name)
    except BaseException as exc:
        _close(conn)
        _as_store_error(exc, name)
        raise
    if meta is None:  # an empty SQLite database: build a new one instead
        _close(conn)
        yield from _creating(path, name, replace=True)
        return
    try:
        yield conn, meta
    except BaseException as exc:
        _close(conn)
        _as_store_error(exc, name)
        raise
    _close(conn)
