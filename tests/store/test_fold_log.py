"""Folding the write-ahead log on demand: a log that a long read kept from restarting is emptied once no read
uses it, and left alone while one does."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import treelab
from treelab.store.dbfile import fold_log


def _wal(db: Path) -> int:
    log = Path(f"{db}-wal")
    return log.stat().st_size if log.exists() else 0


def test_a_log_kept_by_a_long_read_is_emptied_once_the_read_ends(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, games=3, iterations=20, seed=1, progress=False)
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM nodes").fetchone()  # a snapshot, held as a refit's read holds it
    treelab.train("tictactoe", db, games=3, iterations=20, seed=2, progress=False)  # its writer closes first
    held = _wal(db)
    assert held > 0  # the writer could not restart the log under the read
    fold_log(db)
    assert _wal(db) > 0  # still in use: folding waits at most 2 s, then leaves it
    reader.rollback()
    reader.close()
    fold_log(db)
    assert _wal(db) == 0
    assert treelab.load(db).root.nb_visit > 0 and sqlite3.connect(db).execute(
        "SELECT count(*) FROM games").fetchone()[0] == 6  # nothing lost in the fold
    fold_log(tmp_path / "missing.db")  # no file, no log: nothing to do
