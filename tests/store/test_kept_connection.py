"""Opening database files: the connection a training run keeps open between saves.

``store.kept_open(tree)`` makes every save reuse one write connection; each
save is still its own transaction. These tests check that the connection is
really reused, that it is never reused for a file that was replaced, that an
error closes it, and that nothing is left open or beside the file afterwards.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import treelab
from treelab import StoreError
from treelab.store import dbfile
from treelab.store import persistence as store
from treelab.store.binding import kept_of
from treelab.store.persistence import kept_open, save


def grow(tree: treelab.Tree, seed: int, n: int = 40) -> None:
    treelab.search(tree, "", limit=treelab.Limit(iterations=n), rng=seed)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The read-write connections opened (their URIs), in order."""
    uris: list[str] = []
    real = sqlite3.connect

    def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if str(database).endswith("mode=rw"):
            uris.append(str(database))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(dbfile.sqlite3, "connect", connect)
    return uris


def test_saves_in_a_kept_block_share_one_connection(tmp_path: Path, opened: list[str]) -> None:
    db = tmp_path / "t.db"
    tree = treelab.Tree("connect4")
    with kept_open(tree):
        for seed in range(5):
            grow(tree, seed)
            save(tree, db, games=[{"moves": "4"}])
        assert len(opened) <= 1  # the first save builds the file aside; the next four share one connection
        assert kept_of(tree).conn is not None
    assert kept_of(tree) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]  # closed: log folded in, no -wal/-shm
    back = treelab.load(db)
    assert back.root.nb_visit == tree.root.nb_visit == 200 and back.size == tree.size
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM games").fetchone() == (5,)
    conn.close()


def test_without_the_block_every_save_opens_and_closes(tmp_path: Path, opened: list[str]) -> None:
    db = tmp_path / "t.db"
    tree = treelab.Tree("connect4")
    for seed in range(4):
        grow(tree, seed)
        save(tree, db)
    assert len(opened) == 3 and sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]


def test_a_replaced_file_is_never_written_through_the_old_connection(tmp_path: Path) -> None:
    db, other_db = tmp_path / "t.db", tmp_path / "other.db"
    tree, other = treelab.Tree("connect4"), treelab.Tree("connect4")
    grow(other, 9)
    save(other, other_db)
    with kept_open(tree):
        grow(tree, 1)
        save(tree, db)
        grow(tree, 2)
        save(tree, db)  # now kept open
        kept = kept_of(tree).conn
        shutil.copy(other_db, tmp_path / "copy.db")
        os.replace(tmp_path / "copy.db", db)  # someone puts another tree's file in its place
        grow(tree, 3)
        with pytest.raises(StoreError, match="replaced while a training run kept it open"):
            save(tree, db)
        assert kept_of(tree).conn is None  # the old connection was closed, not written through
        with pytest.raises(sqlite3.ProgrammingError):
            kept.execute("SELECT 1")
    # the new file is untouched; its stale log is the old file's (SQLite would replay it on open)
    assert (tmp_path / "t.db").read_bytes() == other_db.read_bytes()
    for stale in ("t.db-wal", "t.db-shm"):
        (tmp_path / stale).unlink(missing_ok=True)
    assert treelab.load(db).root.nb_visit == other.root.nb_visit


def test_an_error_closes_the_kept_connection_and_the_next_save_reopens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "t.db"
    tree = treelab.Tree("connect4")
    with kept_open(tree):
        grow(tree, 1)
        save(tree, db)
        grow(tree, 2)
        save(tree, db)
        before = treelab.load(db).root.nb_visit

        def crash(*args: Any) -> None:
            raise OSError("disk full")

        monkeypatch.setattr(store, "_log_games", crash)
        grow(tree, 3)
        with pytest.raises(OSError):
            save(tree, db, games=[{"moves": "44"}])
        assert kept_of(tree).conn is None
        assert treelab.load(db).root.nb_visit == before  # rolled back
        monkeypatch.undo()
        save(tree, db, games=[{"moves": "44"}])
        assert kept_of(tree).conn is not None
    assert treelab.load(db).root.nb_visit == tree.root.nb_visit


def test_readers_see_every_save_while_the_connection_is_kept(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    tree = treelab.Tree("tictactoe")
    with kept_open(tree):
        for seed in range(3):
            grow(tree, seed, 30)
            save(tree, db)
            assert treelab.info(db)["nodes"] == tree.size  # another connection reads the committed log
            assert treelab.load(db).root.nb_visit == tree.root.nb_visit
