"""The treelab database format: tables, indexes, migrations, and the checks of ``meta``.

One SQLite file holds one tree (see docs/design.md, *Database*). ``meta`` holds
``schema_version``, ``game``, ``treelab_version``, ``c`` and the bookkeeping
of :mod:`treelab.store` (``tree_id``, ``generation``, ``depth_counts``);
``nodes`` the tree; ``games`` one row per training game; ``history`` one row
per logged game with the tree's size at that moment, so growth can be plotted
without replaying.

Opening files (reads, writes in one transaction) is :mod:`treelab.store.dbfile`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import sqlite_utils

from ..errors import (
    DamagedDatabaseError,
    GameMismatchError,
    NotATreelabDatabaseError,
    SchemaVersionError,
    StoreError,
)
from .files import special_kind
from .integrity import check_meta_values, named

__all__ = [
    "MIGRATIONS",
    "REDUNDANT_INDEX",
    "SCHEMA_VERSION",
    "DbPath",
    "check_file",
    "check_meta",
    "check_objects",
    "create",
    "display",
    "file_key",
    "hint",
    "migrate",
    "read_compat",
    "read_meta",
]

SCHEMA_VERSION = 6
"""The newest schema this treelab reads and writes."""

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


REDUNDANT_INDEX = "nodes_parent"
"""The index on ``parent_id`` alone that files of earlier versions have (``treelab compact`` drops it)."""


def _indexes_v1(db: sqlite_utils.Database) -> None:
    """The one ``nodes`` index: unique on ``(parent_id, move)``, which also serves lookups by ``parent_id``.

    Files made by earlier versions also have ``nodes_parent`` on ``parent_id`` alone; it is
    redundant (docs/design.md) and cost a fifth of every insert, so new files go without it.
    """
    db.table("nodes").create_index(["parent_id", "move"], index_name="nodes_parent_move", unique=True)


def _create_v1(db: sqlite_utils.Database) -> None:
    _tables_v1(db)
    _indexes_v1(db)


_OLD_SELECT = "CASE WHEN parent_id IS NULL THEN 0 ELSE nb_visit END"
"""A version-1 node's ``nb_select``: unknown, so its visits (the old most-visited rule); 0 for the root."""


def _columns_v2(db: sqlite_utils.Database) -> None:
    """Version 2: ``nodes.nb_select`` (simulations that selected the node at its parent) and
    ``games.exploration`` (the exploration settings of a training game, JSON)."""
    conn = db.conn
    conn.execute("ALTER TABLE nodes ADD COLUMN nb_select INTEGER NOT NULL DEFAULT 0")
    conn.execute(f"UPDATE nodes SET nb_select = {_OLD_SELECT}")
    conn.execute("ALTER TABLE games ADD COLUMN exploration TEXT")


def _positions_v3(db: sqlite_utils.Database) -> None:
    """Version 3: the ``positions`` table (:mod:`treelab.store.positiontable`), rebuilt from the stored nodes
    (a node's path gives its position), in a file whose searches read it (``meta.statistics = 'graph'``; every
    other file goes without it, as new files do: :func:`~treelab.store.positiontable.keeps`)."""
    from ..games import find_game
    from .positiontable import create, rebuild

    conn = db.conn
    rule = conn.execute("SELECT value FROM meta WHERE key = 'statistics'").fetchone()
    if rule is None or rule[0] != "graph":
        return
    create(conn)
    if conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None:
        game = conn.execute("SELECT value FROM meta WHERE key = 'game'").fetchone()
        if game is None:
            raise NotATreelabDatabaseError("a treelab file with nodes but no game in meta: it is damaged")
        rebuild(conn, find_game(game[0]))


def _columns_v4(db: sqlite_utils.Database) -> None:
    """Version 4: ``nodes.value_sum`` (the sum of the value estimates in [-1, 1], the mover's, of the
    simulations that ended in a value; 0 for whole results) and ``nodes.prior`` (the policy's probability
    of the move into the node, NULL: none). See :mod:`treelab.store.values`."""
    conn = db.conn
    conn.execute("ALTER TABLE nodes ADD COLUMN value_sum REAL NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE nodes ADD COLUMN prior REAL")


def _positions_v5(db: sqlite_utils.Database) -> None:
    """Version 5: ``positions.value_sum`` (the value sums of the nodes that reach the position, player 1's),
    rebuilt from the nodes if any holds a value sum (a table made by a migration from before version 3 has it)."""
    from ..games import find_game
    from .positiontable import rebuild

    conn = db.conn
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'positions'").fetchone() is None:
        return  # a file that does not keep the table
    if not any(row[1] == "value_sum" for row in conn.execute("PRAGMA table_info(positions)")):
        conn.execute("ALTER TABLE positions ADD COLUMN value_sum REAL NOT NULL DEFAULT 0")
    if conn.execute("SELECT 1 FROM nodes WHERE value_sum != 0 LIMIT 1").fetchone() is not None:
        game = conn.execute("SELECT value FROM meta WHERE key = 'game'").fetchone()
        rebuild(conn, find_game(game[0]))


def _games_v6(db: sqlite_utils.Database) -> None:
    """Version 6: ``games.root_values`` (JSON: before each move of the game, the value the tree's search found
    for the player to move, :func:`treelab.mcts.summary.search_value`; null where another player moved; NULL for
    games logged without them)."""
    conn = db.conn
    if not any(row[1] == "root_values" for row in conn.execute("PRAGMA table_info(games)")):
        conn.execute("ALTER TABLE games ADD COLUMN root_values TEXT")


MIGRATIONS: list[tuple[int, Callable[[sqlite_utils.Database], None]]] = [
    (1, _create_v1), (2, _columns_v2), (3, _positions_v3), (4, _columns_v4), (5, _positions_v5), (6, _games_v6),
]
"""Ordered ``(version, step)`` pairs; a step takes the database from ``version - 1`` to ``version``."""


def create(conn: sqlite3.Connection, fill: Callable[[], object]) -> None:
    """Create the newest schema in an empty database, calling ``fill()`` to bulk-write the base tables.

    ``fill`` runs before the indexes exist: building an index once over a
    million rows is faster than keeping it up to date row by row.
    """
    db = sqlite_utils.Database(conn, execute_plugins=False, recursive_triggers=False)
    _tables_v1(db)
    for target, step in MIGRATIONS:
        if target > 1:
            step(db)  # on empty tables: instant
    fill()
    _indexes_v1(db)
    db.table("meta").upsert({"key": "schema_version", "value": str(SCHEMA_VERSION)}, pk="key")


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


def read_compat(conn: sqlite3.Connection, version: int) -> None:
    """Let a read-only connection read an older schema as the newest: temporary views over ``main``.

    A version-1 file has no ``nodes.nb_select`` (its nodes read their visits, the old rule) and
    no ``games.exploration``; a file before version 4 no ``nodes.value_sum`` (0) and ``nodes.prior``
    (NULL); a file before version 6 no ``games.root_values`` (NULL). The views live in the connection's
    temporary schema, which SQLite searches first: the file is never written.
    """
    added, games = [], []
    if version < 2:
        added.append(f"{_OLD_SELECT} AS nb_select")
        games.append("NULL AS exploration")
    if version < 6:
        games.append("NULL AS root_values")
    if games:
        conn.execute(f"CREATE TEMP VIEW games AS SELECT *, {', '.join(games)} FROM main.games")
    if version < 4:
        added.append("0.0 AS value_sum, NULL AS prior")
    if added:
        conn.execute(f"CREATE TEMP VIEW nodes AS SELECT *, {', '.join(added)} FROM main.nodes")


def display(db: DbPath) -> str:
    """The database name as the user wrote it, for messages."""
    return os.fspath(db)


def file_key(db: DbPath) -> tuple[int, int] | Path:
    """What identifies the file ``db`` names: its ``(device, inode)`` when it exists (a hard link, a
    symbolic link and another spelling of the path give the same key), else its resolved path."""
    try:
        st = os.stat(db)
    except OSError:
        return Path(db).resolve()
    return (st.st_dev, st.st_ino)


def check_file(path: Path, name: str) -> int:
    """Refuse directories and special files (devices, FIFOs, sockets); return the file size (0 allowed).
    Never opens the file (a FIFO would block).

    Opening and closing a file descriptor of a database drops every POSIX lock
    this process holds on it (SQLite's "How To Corrupt An SQLite Database File",
    section 2.2), so a training run that keeps its write connection open would
    write unlocked beside another process's ``VACUUM``. The header is checked
    through the SQLite connection instead (:func:`read_meta`).
    """
    if path.is_dir():
        raise StoreError(f"{name!r} is a directory, not a database file: give the path of a .db file")
    st = path.stat()  # through symbolic links: a link to a database file is that file
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise StoreError(f"{name!r} is {kind}, not a database file: give the path of a .db file")
    return st.st_size


def check_objects(conn: sqlite3.Connection, name: str) -> None:
    """Refuse a database holding schema objects treelab never creates: triggers, views, virtual tables.

    A trigger or view stored in a shared file would run its own SQL inside
    treelab's transactions (a crafted trigger could rewrite ``meta``).

    Raises:
        NotATreelabDatabaseError: such an object is present.
    """
    found = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') "
        "OR (type = 'table' AND upper(sql) LIKE 'CREATE VIRTUAL%') ORDER BY rowid LIMIT 1"
    ).fetchone()
    if found is not None:
        kind = "virtual table" if found[0] == "table" else found[0]
        raise NotATreelabDatabaseError(
            f"{name!r} holds a {kind} {found[1]!r} that treelab never creates: refusing to open it "
            "(it would run its own SQL); drop it with the sqlite3 shell only if you trust the file"
        )


def read_meta(conn: sqlite3.Connection, name: str) -> dict[str, str] | None:
    """The ``meta`` table as a dict, or None for an empty database (no tables at all).

    Raises:
        NotATreelabDatabaseError: the file has tables but no treelab ``meta``.
    """
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return None
        check_objects(conn, name)
        meta = dict(conn.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
    except UnicodeDecodeError:
        raise NotATreelabDatabaseError(
            f"{name!r} is damaged (its schema or meta holds text that is not UTF-8): restore a copy"
        ) from None
    except sqlite3.OperationalError as exc:  # locked, read-only media, unreadable
        raise StoreError(f"cannot read {name!r} ({exc}): {hint(exc)}") from None
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            raise NotATreelabDatabaseError(
                f"{name!r} is not a treelab database (not an SQLite file): check the path"
            ) from None
        raise NotATreelabDatabaseError(
            f"{name!r} is damaged or not a treelab database ({exc}): check the path, or restore a copy"
        ) from None
    if "schema_version" not in meta or "game" not in meta or "nodes" not in tables:
        raise NotATreelabDatabaseError(
            f"{name!r} is an SQLite file but not a treelab database (no treelab meta): check the path"
        )
    try:
        check_meta_values(meta)
    except DamagedDatabaseError as exc:
        raise named(exc, name) from None
    return meta


def hint(exc: sqlite3.Error) -> str:
    """What to do about an SQLite error met while opening a database."""
    text = str(exc)
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return "the file or its directory is read-only: copy the database somewhere writable to change it"
    if "locked" in text or "busy" in text:
        return "another program holds it: wait for it to finish, then retry"
    return "retry, or check the file"


def check_meta(meta: dict[str, str], name: str, game: str | None = None) -> int:
    """Check the schema version (and the game, if given); return the schema version.

    Raises:
        SchemaVersionError: written by a newer treelab.
        GameMismatchError: the tree is of another game.
    """
    try:
        version = int(meta["schema_version"])
    except (TypeError, ValueError):
        raise NotATreelabDatabaseError(
            f"{name!r} has a bad schema_version {meta['schema_version']!r}: is it a treelab database?"
        ) from None
    if version < 1:
        raise NotATreelabDatabaseError(
            f"{name!r} has a bad schema_version {meta['schema_version']!r} (treelab writes 1 and up): "
            "is it a treelab database?"
        )
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
