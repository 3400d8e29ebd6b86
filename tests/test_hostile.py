"""Crafted databases (issue 14 items 4, 7 and 8's ``schema_version``): each case as the issue wrote it.

Every command meets these files with one ``Error:`` line and a non-zero exit, never a traceback,
and leaves the file byte for byte as it was, with nothing created beside it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab import NotATreelabDatabaseError, StoreError
from treelab.store.schema import SCHEMA_VERSION


def trained(path: Path, game: str = "connect4", iterations: int = 300) -> Path:
    tree = treelab.Tree(game)
    for seed in range(3):
        treelab.search(tree, "", limit=treelab.Limit(iterations=iterations), rng=seed)
    treelab.save(tree, path, games=[{"moves": "4" if game == "connect4" else "5"}])
    return path


def execute(db: Path, *sql: str) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in sql:
            conn.executescript(statement)
    finally:
        conn.close()


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


READERS = [
    ("info", "{db}"), ("stats", "{db}"), ("stats", "{db}", "--json"), ("render", "{db}", "-o", "{out}.svg"),
    ("growth", "{db}", "-o", "{out}.png"), ("shape", "{db}", "-o", "{out}.png"), ("compact", "{db}"),
    ("analyse", "connect4", "--db", "{db}", "--iterations", "20", "--seed", "1"),
    ("train", "connect4", "--db", "{db}", "--games", "1", "--iterations", "20", "--seed", "1", "-q"),
]


def refused_everywhere(db: Path, *needles: str) -> None:
    """Every command and ``load`` refuse ``db`` cleanly, changing and creating nothing."""
    before = snapshot(db.parent)
    for command in READERS:
        args = [a.format(db=db, out=db.parent / "out") for a in command]
        assert_clean_error(run(*args), *needles)
        assert snapshot(db.parent) == before, command
    with pytest.raises(StoreError):
        treelab.load(db)
    assert snapshot(db.parent) == before


@pytest.mark.parametrize("sql", [
    "CREATE TRIGGER evil AFTER UPDATE ON nodes BEGIN UPDATE meta SET value = '9' WHERE key = 'schema_version'; END",
    "CREATE TRIGGER evil AFTER INSERT ON games BEGIN DELETE FROM nodes; END",
    "CREATE VIEW lookalike AS SELECT * FROM nodes",
    "CREATE TABLE extra (x); CREATE TRIGGER t2 AFTER INSERT ON extra BEGIN DELETE FROM nodes; END",
])
def test_a_database_with_its_own_sql_is_refused(tmp_path: Path, sql: str) -> None:
    db = trained(tmp_path / "x.db")
    execute(db, sql)
    refused_everywhere(db, "treelab never creates", "x.db")


def test_the_trigger_of_the_issue_never_fires(tmp_path: Path) -> None:
    """The issue's case: a trigger rewrote ``schema_version`` during ``train``."""
    db = trained(tmp_path / "x.db")
    execute(db, "CREATE TRIGGER evil AFTER UPDATE ON nodes BEGIN "
                "UPDATE meta SET value = '7' WHERE key = 'schema_version'; END")
    result = run("train", "connect4", "--db", str(db), "--games", "1", "--iterations", "30", "--seed", "1", "-q")
    assert_clean_error(result, "trigger", "'evil'")
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    conn.close()


def test_connections_distrust_the_schema(tmp_path: Path) -> None:
    db = trained(tmp_path / "x.db")
    with treelab.store.dbfile.reading(db) as (conn, _):
        assert conn.execute("PRAGMA trusted_schema").fetchone() == (0,)


@pytest.mark.parametrize("version", ["0", "-1"])
def test_schema_version_below_one_is_refused(tmp_path: Path, version: str) -> None:
    db = trained(tmp_path / "x.db")
    execute(db, f"UPDATE meta SET value = '{version}' WHERE key = 'schema_version'")
    refused_everywhere(db, f"bad schema_version '{version}'")
    with pytest.raises(NotATreelabDatabaseError, match="treelab writes 1 and up"):
        treelab.load(db)
