"""``kill -9`` a process that keeps recording and saving: the database stays at a committed state."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paths import HELPERS, ROOT

from treelab.store.persistence import load, open_tree, save
from treelab.store.records import read_games, read_history

# Records random Connect Four games and saves each batch (with one games row per game) in a loop.
# Every committed state therefore has root nb_visit == number of games rows.
WRITER = """
import random, sys
sys.path.insert(0, sys.argv[3])
from random_games import random_game
from treelab.store.persistence import open_tree, save
db, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
tree = open_tree(db, "connect4")
print("ready", flush=True)
while True:
    rows = []
    for _ in range(rng.randrange(1, 40)):
        moves, winner = random_game(tree.game, rng)
        tree.record(moves, winner)
        rows.append({"moves": moves, "winner": winner})
    save(tree, db, games=rows)
"""


def check_database(db: Path) -> int:
    """Integrity and tree invariants of a database left by a killed writer; returns its games."""
    if not db.exists():
        return 0  # killed before its first save
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        if not conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            return 0  # killed during the very first save: an empty database
        games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
        assert conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone() == (games,)
        overdrawn = conn.execute(
            "SELECT count(*) FROM nodes AS p JOIN (SELECT parent_id, sum(nb_visit) AS s FROM nodes "
            "GROUP BY parent_id) AS k ON k.parent_id = p.id WHERE p.nb_visit < k.s"
        ).fetchone()[0]
        assert overdrawn == 0
        assert conn.execute(
            "SELECT count(*) FROM nodes AS c JOIN nodes AS p ON c.parent_id = p.id WHERE c.depth != p.depth + 1"
        ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM history").fetchone() == (games,)
        return int(games)
    finally:
        conn.close()


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_kill_9_leaves_the_last_committed_state(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    seed = random.randrange(10**6)
    rng = random.Random(seed)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    played = 0
    for round_ in range(5):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(seed + round_), str(HELPERS)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n", child.stderr.read() if child.stderr else ""
        time.sleep(rng.uniform(0.0, 0.4) if round_ else rng.uniform(0.0, 0.05))
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL, f"seed {seed}: {child.stderr.read() if child.stderr else ''}"
        games = check_database(db)
        assert games >= played, f"seed {seed}: committed games were lost"
        played = games
    # the survivor loads, keeps its invariants, and grows and saves again
    tree = open_tree(db, "connect4")
    assert tree.root.nb_visit == played
    if played:
        assert load(db).size == tree.size and len(read_games(db)) == len(read_history(db)) == played
    tree.record("4444", winner=None)
    save(tree, db, games=[{"moves": "4444", "winner": None}])
    assert check_database(db) == played + 1
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []  # swept
