"""Training with the persistent tree: real games, per-game saves, resume, signals, kill -9."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import treelab
from treelab import BudgetError, GameMismatchError, UnknownOptionError, train
from treelab.store.binding import last_game


def tree_invariants_hold(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        bad = conn.execute(
            """SELECT p.id FROM nodes p JOIN nodes c ON c.parent_id = p.id
               GROUP BY p.id HAVING p.nb_visit < SUM(c.nb_visit)"""
        ).fetchall()
        assert bad == []
        assert conn.execute("SELECT COUNT(*) FROM nodes WHERE nb_win + nb_draw > nb_visit").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM nodes c JOIN nodes p ON c.parent_id = p.id "
                            "WHERE c.depth != p.depth + 1").fetchone()[0] == 0
    finally:
        conn.close()


def test_train_logs_every_game_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    first = train("connect4", db, games=4, iterations=60, opponent="random", seed=1, progress=False)
    assert first.games == 4 and first.wins + first.draws + first.losses == 4
    assert first.total_games == 4
    tree = treelab.load(db)
    assert len(tree) == first.nodes
    assert tree.root.nb_visit == first.simulations
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT id, moves, winner, opponent, tree_player FROM games ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    for _id, moves, winner, opponent, tree_player in rows:
        state = treelab.find_game("connect4").replay(moves)  # every logged game is a real, finished game
        assert state.is_terminal and state.winner == winner
        assert opponent == "random" and tree_player in (1, 2)
    assert {r[4] for r in rows} == {1, 2}  # colours alternate
    created = conn.execute("SELECT MIN(created_game), MAX(created_game) FROM nodes WHERE id > 1").fetchone()
    assert created == (1, 4)
    conn.close()
    second = train("connect4", db, games=3, iterations=60, opponent="self", seed=2, progress=False)
    assert second.total_games == 7
    resumed = treelab.load(db)
    assert resumed.root.nb_visit == first.simulations + second.simulations
    assert len(resumed) == first.nodes + second.new_nodes
    tree_invariants_hold(db)


def test_same_seed_trains_the_same_tree(tmp_path: Path) -> None:
    dumps = []
    for name in ("a.db", "b.db"):
        train("tictactoe", tmp_path / name, games=5, iterations=80, opponent="heuristic", seed=9, progress=False)
        conn = sqlite3.connect(tmp_path / name)
        dumps.append(conn.execute("SELECT * FROM nodes ORDER BY id").fetchall())
        dumps.append(conn.execute("SELECT moves, winner FROM games ORDER BY id").fetchall())
        conn.close()
    assert dumps[0] == dumps[2] and dumps[1] == dumps[3]


def test_training_against_heuristic_wins_most_games(tmp_path: Path) -> None:
    summary = train("connect4", tmp_path / "c4.db", games=10, iterations=300, opponent="heuristic",
                    seed=3, progress=False)
    assert summary.wins >= 9


def test_bad_arguments_touch_nothing(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with pytest.raises(BudgetError):
        train("connect4", db, games=-1, progress=False)
    with pytest.raises(BudgetError):
        train("connect4", db, iterations=0, progress=False)
    with pytest.raises(UnknownOptionError, match="unknown opponent 'grandmaster'"):
        train("connect4", db, opponent="grandmaster", progress=False)
    assert not db.exists()
    train("tictactoe", db, games=1, iterations=20, seed=1, progress=False)
    before = db.read_bytes()
    with pytest.raises(GameMismatchError):
        train("connect4", db, games=1, progress=False)
    assert db.read_bytes() == before


TRAINER = """
import sys, treelab
treelab.train("connect4", sys.argv[1], games=10_000, iterations=int(sys.argv[2]), opponent="random",
              seed=int(sys.argv[3]), progress=False,
              on_game=lambda i, m, w: print(i, flush=True))
print("clean exit", flush=True)
"""


def _start(db: Path, iterations: int, seed: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", TRAINER, str(db), str(iterations), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_games(proc: subprocess.Popen[str], n: int) -> None:
    assert proc.stdout is not None
    for _ in range(n):
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "trainer died"


def test_ctrl_c_saves_and_exits_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    proc = _start(db, 400, 1)
    _wait_for_games(proc, 2)
    time.sleep(0.05)  # land somewhere inside a game
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "clean exit" in out and "Traceback" not in err
    tree_invariants_hold(db)
    tree = treelab.load(db)
    logged = sqlite3.connect(db).execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert logged >= 2 and last_game(tree) == logged
    summary = train("connect4", db, games=1, iterations=50, seed=5, progress=False)  # resumes
    assert summary.total_games == logged + 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_any_moment_leaves_a_database_that_resumes(tmp_path: Path, seed: int) -> None:
    db = tmp_path / "c4.db"
    proc = _start(db, 30, seed)
    _wait_for_games(proc, 1 + seed)
    time.sleep(0.013 * seed)  # a different moment each time: mid-search or mid-save
    os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=30)  # returns once the writer process, which shares stderr, is gone too
    assert "Traceback" not in err  # the writer stores what it holds and stops without a word
    tree_invariants_hold(db)
    tree = treelab.load(db)
    conn = sqlite3.connect(db)
    games = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    history = conn.execute("SELECT COUNT(*) FROM history").fetchone()[0]
    conn.close()
    assert games >= 1 + seed and history == games
    summary = train("connect4", db, games=2, iterations=30, seed=seed, progress=False)
    assert summary.total_games == games + 2
    assert treelab.load(db).root.nb_visit == tree.root.nb_visit + summary.simulations
    tree_invariants_hold(db)


def test_train_with_puct_and_temperature_then_resume_with_uct(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    first = train("connect4", db, games=3, iterations=80, algorithm="puct", evaluator="heuristic",
                  opponent="heuristic", seed=1, progress=False)
    assert first.games == 3 and first.new_nodes > 0
    second = train("connect4", db, games=3, iterations=60, temperature=1.0, seed=2, progress=False)
    assert second.total_games == 6
    tree_invariants_hold(db)
    with pytest.raises(UnknownOptionError, match="unknown algorithm 'minimax'"):
        train("connect4", db, algorithm="minimax", progress=False)
    with pytest.raises(BudgetError):
        train("connect4", db, temperature=-0.5, progress=False)
