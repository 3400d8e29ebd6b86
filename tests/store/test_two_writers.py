"""Two writers of one database queue and merge: saves write increments.

A save adds the counts a tree gained since its last save or load to whatever
the file holds now, and new nodes whose (parent, move) the file holds already
are added to that row; a contradicting proof is refused.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treelab import ProofConflictError, Tree, load, save
from treelab.nodes import Proof


def rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT parent_id, move, depth, nb_visit, nb_win, nb_draw, proven FROM nodes "
                            "ORDER BY id").fetchall()
    finally:
        conn.close()


def check(db: Path) -> None:
    """The file is sound and every node's visits cover its children's."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        bad = conn.execute("SELECT count(*) FROM nodes AS p WHERE p.nb_visit < "
                           "(SELECT coalesce(sum(k.nb_visit), 0) FROM nodes AS k WHERE k.parent_id = p.id)").fetchone()
        assert bad == (0,)
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    tree = Tree("connect4")
    for moves, winner in [("4453", 1), ("4455", None), ("3", 2)]:
        tree.record(moves, winner)
    save(tree, tmp_path / "c4.db")
    return tmp_path / "c4.db"


def test_two_loaded_copies_add_their_increments_and_share_new_nodes(db: Path) -> None:
    a, b = load(db), load(db)
    a.record("4456", 1)
    a.record("4456", 2)
    b.record("4456", None)  # the same new node "4456" in both copies
    b.record("2", 1)
    save(a, db)
    save(b, db)  # someone else saved since b was loaded: merge, do not refuse
    both = load(db)
    assert both.root.nb_visit == 3 + 2 + 2
    assert both.find("4456").nb_visit == 3 and both.find("4456").nb_draw == 1
    assert both.find("445").nb_visit == 2 + 3  # loaded with 2, then 2 from a and 1 from b
    assert both.find("2").nb_visit == 1
    assert sum(1 for r in rows(db) if r[1] == "6" and r[2] == 4) == 1  # one row for the shared new node
    check(db)
    # b keeps merging (the file holds nodes it never loaded), a merges once it sees b's save
    b.record("4456", 1)
    a.record("44567", 2)
    save(b, db)
    save(a, db)
    again = load(db)
    assert again.root.nb_visit == 9 and again.find("4456").nb_visit == 5 and again.find("44567").nb_visit == 1
    assert a.unsaved == 0 and b.unsaved == 0
    check(db)


def test_a_single_writer_still_writes_exact_rows(db: Path) -> None:
    tree = load(db)
    for moves in ["1", "12", "4453", "77"]:
        tree.record(moves, 2)
        save(tree, db)
    assert rows(db) == [(None if n.parent is None else n.parent.node_id, n.name, n.depth, n.nb_visit, n.nb_win,
                         n.nb_draw, n.proven) for n in sorted(tree, key=lambda n: n.node_id)]


def test_a_contradicting_proof_is_refused_and_nothing_is_written(db: Path) -> None:
    a, b = load(db), load(db)
    a.find("4453").proven = Proof.WIN
    a.mark_dirty(a.find("4453"))
    save(a, db)
    before = rows(db)
    node = b.find("4453")
    b.mark_dirty(node)
    node.proven = Proof.LOSS  # wrong: the file proved a win
    b.record("11", 1)
    conflict = r"holds proof 'win' for '4/4/5/3' \(node id \d+\) but this tree proved 'loss'"
    with pytest.raises(ProofConflictError, match=conflict):
        save(b, db)
    assert rows(db) == before and b.unsaved > 0
    node.proven = Proof.WIN  # agreeing proofs merge
    save(b, db)
    assert load(db).find("4453").proven is Proof.WIN and load(db).find("11").nb_visit == 1


def test_a_new_node_with_a_contradicting_proof_is_refused(db: Path) -> None:
    a, b = load(db), load(db)
    a.record("4456", 1).proven = Proof.WIN
    save(a, db)
    before = rows(db)
    b.record("4456", 1).proven = Proof.DRAW
    with pytest.raises(ProofConflictError, match="holds proof 'win'"):
        save(b, db)
    assert rows(db) == before


def _treelab(*args: str) -> list[str]:
    return [sys.executable, "-m", "treelab", *args]


@pytest.mark.slow
def test_analyse_three_times_during_train_real_processes(tmp_path: Path) -> None:
    """The reported case: train completes; the root's visits are train's simulations plus analyse's."""
    db = tmp_path / "ta.db"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(_treelab("train", "connect4", "--db", str(db), "--games", "2", "--iterations", "100",
                            "--seed", "1", "-q"), check=True, env=env, capture_output=True)
    start_visits = load(db).root.nb_visit
    iterations = 300
    games = 150  # a few seconds: training saves from a writer process now, and 30 games ended before analyse began
    train = subprocess.Popen(_treelab("train", "connect4", "--db", str(db), "--games", str(games), "--iterations",
                                      str(iterations), "--seed", "2", "-q"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    analysed, overlapped = 0, 0
    try:
        deadline = time.monotonic() + 120
        while _games(db) < 4 and time.monotonic() < deadline and train.poll() is None:
            time.sleep(0.1)  # train has saved a few games: it holds the tree in memory and writes often
        for seed in (11, 12, 13):
            running = train.poll() is None
            done = subprocess.run(_treelab("analyse", "connect4", "--db", str(db), "--iterations", "400",
                                           "--seed", str(seed), "--json"),
                                  capture_output=True, text=True, env=env, timeout=300)
            assert done.returncode == 0, done.stderr
            assert "Traceback" not in done.stderr
            analysed += json.loads(done.stdout)["iterations"]
            overlapped += running and train.poll() is None
        out, err = train.communicate(timeout=600)
    finally:
        if train.poll() is None:
            train.kill()
    assert train.returncode == 0, err
    assert "Traceback" not in err and "someone else" not in err + out
    assert overlapped >= 1, "train ended before analyse ran: make train longer"
    conn = sqlite3.connect(db)
    try:
        moves = [m for (m,) in conn.execute("SELECT moves FROM games WHERE id > 2")]
    finally:
        conn.close()
    assert len(moves) == games
    trained = sum(len(m) for m in moves) * iterations  # self-play: the tree searches every move
    assert load(db).root.nb_visit == start_visits + trained + analysed
    check(db)


def _games(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
