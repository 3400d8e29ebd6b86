"""Crafted databases (SQL of their own, damaged rows, a bad ``schema_version``): each case as it was reported.

Every command meets these files with one ``Error:`` line and a non-zero exit, never a traceback,
and leaves the file byte for byte as it was, with nothing created beside it.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab import DamagedDatabaseError, NotATreelabDatabaseError, StoreError
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


def test_a_trigger_in_the_file_never_fires(tmp_path: Path) -> None:
    """The reported case: a trigger rewrote ``schema_version`` during ``train``."""
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


LEAF = "(SELECT max(id) FROM nodes)"
DAMAGE = {
    "orphan": (f"UPDATE nodes SET parent_id = 99999 WHERE id = {LEAF}", "parent 99999"),
    "self-parent": (f"UPDATE nodes SET parent_id = id WHERE id = {LEAF}", "parent"),
    "nb_visit=-5": ("UPDATE nodes SET nb_visit = -5 WHERE id = 3", "nb_visit -5"),
    "proven=5": ("UPDATE nodes SET proven = 5 WHERE id = 3", "proven 5"),
    "text in nb_visit": ("UPDATE nodes SET nb_visit = 'abc' WHERE id = 3", "nb_visit 'abc'"),
    "text in nb_win": ("UPDATE nodes SET nb_win = 'x' WHERE id = 2", "nb_win 'x'"),
    "move='Z'": ("UPDATE nodes SET move = 'Z' WHERE id = 3", "move 'Z'"),
    "meta c='abc'": ("UPDATE meta SET value = 'abc' WHERE key = 'c'", "meta c 'abc'"),
    "two roots": (f"UPDATE nodes SET parent_id = NULL WHERE id = {LEAF}", "not the root"),
    "binary move": ("UPDATE nodes SET move = x'00ff' WHERE id = 2", "not a text"),
}
VALUES = ("nb_visit=-5", "proven=5", "text in nb_visit", "text in nb_win", "binary move")


@pytest.mark.parametrize("case", list(DAMAGE))
def test_damaged_rows_are_one_line_errors(tmp_path: Path, case: str) -> None:
    """Each case used to end in a traceback (KeyError, math domain error, TypeError...).

    Commands that search (``analyse``, ``train``) and ``load`` refuse every case (a bad move label
    only where a search would meet it); ``stats`` and
    ``render`` refuse the bad values they used to crash on; every command either answers or refuses
    in one line, never a traceback, and nothing changes on disk.
    """
    sql, needle = DAMAGE[case]
    db = trained(tmp_path / "x.db")
    execute(db, sql)
    before = snapshot(tmp_path)
    must = {"analyse", "train"} | ({"stats", "render"} if case in VALUES else set())
    must |= {"shape"} if case.startswith("text") else set()
    for command in READERS:
        result = run(*[a.format(db=db, out=tmp_path / "out") for a in command])
        if command[0] in must or case == "meta c='abc'":
            assert_clean_error(result, "damaged", needle)
        elif result.exit_code:
            assert_clean_error(result)
        assert "Traceback" not in result.output
        if result.exit_code:
            assert snapshot(tmp_path) == before, command
        else:  # an answer (compact may rewrite the file): start again from what is there now
            for made in set(snapshot(tmp_path)) - set(before):
                (tmp_path / made).unlink()
            before = snapshot(tmp_path)
    if case == "move='Z'":  # a tree to look at keeps its labels as stored (diagrams quote them); one to search in not
        assert treelab.load(db).size == treelab.info(db)["nodes"]
        with pytest.raises(DamagedDatabaseError, match="move 'Z'"):
            treelab.open_tree(db, "connect4")
        return
    with pytest.raises(DamagedDatabaseError, match="damaged"):
        treelab.load(db)


def test_a_far_node_id_costs_memory_by_rows_not_by_id(tmp_path: Path) -> None:
    """One row with ``id = 50000000`` in a 6k-node database made ``load`` use 431 MB; ``2**62`` failed."""
    script = (
        "import resource, sys, treelab; t = treelab.load(sys.argv[1]); "
        "print(t.size, t.root.nb_visit, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    sizes = {}
    for far in (None, 50_000_000, 2**62):
        db = trained(tmp_path / f"t{far}.db", iterations=2_000)
        if far is not None:
            execute(db, f"UPDATE nodes SET id = {far} WHERE id = {LEAF}")
        done = subprocess.run([sys.executable, "-c", script, str(db)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        size, visits, rss_kib = map(int, done.stdout.split())
        assert size > 5_000 and visits == 6_000
        sizes[far] = rss_kib
    assert sizes[50_000_000] < 1.3 * sizes[None] and sizes[2**62] < 1.3 * sizes[None], sizes


def test_a_stale_log_beside_a_replaced_database(tmp_path: Path) -> None:
    """A ``-wal`` left by another file's writer: the IndexError in the compiled loader is now a clear error
    (or, where SQLite ignores the log, a correct load)."""
    db, other = trained(tmp_path / "x.db"), trained(tmp_path / "other.db", iterations=500)
    holder = sqlite3.connect(other, isolation_level=None)  # a writer with a non-empty log, never checkpointed
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("UPDATE nodes SET nb_visit = nb_visit + 1")
    shutil.copy(f"{other}-wal", f"{db}-wal")
    holder.close()
    for command in READERS[:-2]:
        result = run(*[a.format(db=db, out=tmp_path / "out") for a in command])
        assert result.exit_code == 0 or result.output.startswith("Error: "), result.output
        assert "Traceback" not in result.output
    try:
        tree = treelab.load(db)
    except StoreError:
        return
    assert tree.size == treelab.info(db)["nodes"]
