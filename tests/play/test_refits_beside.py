"""Refits beside the games: a child process fits the next version from the file as the last step left it
while the games play on with the version before; the run replays exactly for a seed; a child that dies or
is stopped leaves the model at a whole version."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_clean_error, run
from logged_games import explorations

import treelab
from treelab.errors import UnknownOptionError, WorkerError
from treelab.learn.fitting import FitConfig
from treelab.play.learning import versioned
from treelab.play.refits import BesideRefit

SMALL = FitConfig(min_visits=5, hidden=(16,), epochs=5)
"""A fit of a fraction of a second: the refits' mechanics are under test here, not the model's strength."""


def _versions_that_played(db: Path) -> list[object]:
    return [row.get("model_version") for row in explorations(db)]


def _nodes_made_by_game(db: Path, games: int) -> int:
    """The nodes of the file after its first ``games`` games: the root and every node those games made."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT count(*) FROM nodes WHERE created_game IS NULL OR created_game <= ?",
                            (games,)).fetchone()[0]
    finally:
        conn.close()


def test_a_refit_beside_the_games_learns_from_the_file_as_the_step_left_it(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    result = treelab.learning_loop("tictactoe", db, model, 40, refit_every=10, fitting=SMALL, iterations=40, seed=3,
                                   progress=False)
    assert [(r.version, r.games, r.beside) for r in result.refits] == [
        (1, 10, False), (2, 20, True), (3, 30, True), (4, 40, False)]  # the first and the last between steps
    # one version behind: v2 was fitted while games 21-30 played with v1
    assert _versions_that_played(db) == [None] * 10 + [1] * 20 + [2] * 10
    for version in (2, 3):
        info = treelab.load_model(versioned(model, version)).info
        # what it learned from is the file after its games, though the next step wrote on meanwhile
        assert info["source_nodes"] == _nodes_made_by_game(db, info["games_logged"])
        assert info["warm_start"] == version - 1 and info["since"] == info["games_logged"] - 10
    assert treelab.load_model(model).info["version"] == 4
    assert all(r.waited <= r.seconds + 1.0 for r in result.refits if r.beside)
    assert "refitting beside the games" in result.describe()
    # the games wait for the fits, and a refit beside them for its child's start too (a second at most, as above;
    # with fits of a tenth of a second that start can outweigh them on a loaded machine)
    beside = sum(r.beside for r in result.refits)
    assert 0 <= result.wait_share * result.seconds <= result.refit_share * result.seconds + 1.0 * beside + 1e-6


def test_a_run_with_refits_beside_replays_exactly_for_a_seed(tmp_path: Path) -> None:
    runs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        treelab.learning_loop("connect4", folder / "c.db", folder / "m.npz", 12, refit_every=4, fitting=SMALL,
                              iterations=30, seed=5, progress=False)
        conn = sqlite3.connect(folder / "c.db")
        games = conn.execute("SELECT moves, winner FROM games ORDER BY id").fetchall()
        conn.close()
        runs.append((games, treelab.load_model(folder / "m.npz"), treelab.load_model(versioned(folder / "m.npz", 2))))
    (games_a, last_a, beside_a), (games_b, last_b, beside_b) = runs
    assert games_a == games_b
    for a, b in ((last_a, last_b), (beside_a, beside_b)):
        assert all(np.array_equal(x, y) for x, y in zip(a.weights, b.weights, strict=True))


def test_refits_between_make_the_games_wait_for_each_version(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    result = treelab.learning_loop("tictactoe", db, model, 30, refit_every=10, refits="between", fitting=SMALL,
                                   iterations=40, seed=3, progress=False)
    assert [(r.version, r.beside) for r in result.refits] == [(1, False), (2, False), (3, False)]
    assert _versions_that_played(db) == [None] * 10 + [1] * 10 + [2] * 10
    assert all(r.waited == r.seconds for r in result.refits) and result.wait_share == result.refit_share
    with pytest.raises(UnknownOptionError, match="unknown refits 'sideways': use one of beside, between"):
        treelab.learning_loop("tictactoe", db, model, 5, refit_every=10, refits="sideways", progress=False)


def test_a_refit_process_that_dies_leaves_the_model_at_its_version(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    treelab.learning_loop("tictactoe", db, model, 10, refit_every=10, fitting=SMALL, iterations=30, seed=1,
                          progress=False)
    before = model.read_bytes()
    current = treelab.load_model(model)
    refit = BesideRefit(db, model, "tictactoe", FitConfig(min_visits=5, hidden=(16,), epochs=2000, patience=2000),
                        version=2, logged=10, since=10, current=current)
    refit._proc.kill()  # as an out-of-memory kill would
    with pytest.raises(WorkerError, match=r"died .*the model stays at version 1: run the same command again"):
        refit.finish()
    assert model.read_bytes() == before and not versioned(model, 2).exists()
    stopped = BesideRefit(db, model, "tictactoe", FitConfig(min_visits=5, hidden=(16,), epochs=2000, patience=2000),
                          version=2, logged=10, since=10, current=current)
    process = stopped._proc
    stopped.cancel()  # Ctrl-C in the loop: the child is stopped, nothing of its version is installed
    assert not process.is_alive() and model.read_bytes() == before


def test_train_refits_option_is_for_the_loop_and_names_its_values(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    done = run("train", "tictactoe", "--db", str(db), "--model", str(tmp_path / "m.npz"), "--refit-every", "5",
               "--games", "15", "--iterations", "30", "--min-visits", "5", "--refits", "between", "--seed", "2", "-q")
    assert done.exit_code == 0, done.output
    assert "refit v3 after 15 games" in done.output and "beside the games" not in done.output
    assert_clean_error(run("train", "tictactoe", "--db", str(db), "--games", "5", "--refits", "between"),
                       "--refits is for the learning loop")
    assert_clean_error(run("train", "tictactoe", "--db", str(db), "--model", str(tmp_path / "m.npz"),
                           "--refit-every", "5", "--refits", "sideways"), "'sideways' is not one of")


def _children(pid: int) -> set[int]:
    """The processes ``pid`` started (Linux's /proc), and theirs."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with suppress(OSError):
            for child in (task / "children").read_text().split():
                found |= {int(child)} | _children(int(child))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _version(model: Path) -> int:
    """The version of the model file now (0 while there is none: each version is written whole)."""
    return int(treelab.load_model(model).info["version"]) if model.exists() else 0


def _loop_command(db: Path, model: Path, games: int) -> list[str]:
    return [sys.executable, "-m", "treelab", "train", "connect4", "--db", str(db), "--model", str(model),
            "--refit-every", "10", "--games", str(games), "--iterations", "50", "--min-visits", "5", "--seed", "4"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("how", ["kill -9", "Ctrl-C"])
def test_stopping_the_loop_while_a_refit_runs_beside_leaves_whole_files_and_no_process(tmp_path: Path,
                                                                                        how: str) -> None:
    db, model = tmp_path / "c.db", tmp_path / "m.npz"
    proc = subprocess.Popen(_loop_command(db, model, 200), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    children: set[int] = set()
    deadline = time.monotonic() + 120
    while not versioned(model, 2).exists():  # v2 made beside games 21-30; v3 and later beside the next steps
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        children |= _children(proc.pid)
        time.sleep(0.02)
    time.sleep(0.5)  # inside the next step, the next version fitting beside it
    children |= _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL if how == "kill -9" else signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    if how == "Ctrl-C":
        assert "Traceback" not in err
        assert proc.returncode == 0 and "stopped early: run the same command again" in out, err
    else:  # nothing of treelab's; a child being started (the next step's writer, the next refit) when its parent
        assert "treelab/" not in err  # is killed may print Python's own "spawn_main ... EOFError", from outside treelab
    gone = time.monotonic() + 5
    while any(_alive(pid) for pid in children) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not [pid for pid in children if _alive(pid)]  # the refit (and the writer) ended with the loop
    version = treelab.load_model(model).info["version"]  # a whole version, whichever
    assert version >= 1  # v2 is installed at the end of the step it was fitted beside: the kill may come first
    resumed = subprocess.run(_loop_command(db, model, 10), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert treelab.load_model(model).info["version"] > version


def test_the_log_is_folded_before_each_refit_beside_the_games_and_at_the_end(tmp_path: Path, monkeypatch) -> None:
    """Each refit's read holds a snapshot for its whole length: with one always under way SQLite never restarts
    the log, so the loop folds it into the file while no read is under way (between one refit and the next;
    what folding does is tested in tests/store/test_fold_log.py)."""
    import treelab.play.learning as learning

    db, model = tmp_path / "c.db", tmp_path / "m.npz"
    folded: list[int] = []
    monkeypatch.setattr(learning, "fold_log", lambda path: folded.append(len(list(Path(tmp_path).glob("m.v*.npz")))))
    result = treelab.learning_loop("connect4", db, model, 16, refit_every=4, fitting=SMALL, iterations=30, seed=2,
                                   progress=False)
    assert sum(r.beside for r in result.refits) == 2
    assert folded == [1, 2, 4]  # before v2 (v1 made), before v3 (v2 made, its child gone), and at the end
