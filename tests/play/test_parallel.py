"""Parallel training (``train --workers N``): real processes, real files, real kills."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import treelab
from treelab.cli import cli
from treelab.errors import BudgetError, StoreError, WorkerError
from treelab.store.merging import SOURCES

AS_ASKED = [sys.executable, "-c", "import treelab.play.training.parallel as p; "
            "p.advice = lambda workers, **_: (workers, ''); from treelab.cli import main; main()"]
"""``treelab`` with ``--workers N`` run as asked: the command line trains UCT in one process, where workers would
not pay (:func:`treelab.play.training.parallel.advice`); these tests are of the workers themselves."""


@pytest.fixture
def as_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process command lines run ``--workers N`` as asked (see :data:`AS_ASKED`)."""
    from treelab.play.training import parallel

    monkeypatch.setattr(parallel, "advice", lambda workers, **_: (workers, ""))


def check_consistent(db: Path, iterations: int, *, exact: bool = True) -> int:
    """Every node's counts add up, and the root's visits are iterations x moves of the logged games."""
    tree = treelab.load(db)
    for node in tree:
        kids = node.children_view
        assert node.nb_win + node.nb_draw <= node.nb_visit
        assert node.nb_visit >= sum(k.nb_visit for k in kids), node
    games = treelab.read_games(db)
    moves = sum(len(tree.game.parse(g["moves"])) for g in games)
    if exact:
        assert tree.root.nb_visit == iterations * moves
    else:
        assert tree.root.nb_visit >= iterations * moves
    assert [g["id"] for g in games] == sorted({g["id"] for g in games})
    return len(games)


def test_two_workers_self_play_counts_exact(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    logged: list[int] = []
    summary = treelab.train("connect4", db, games=6, iterations=60, workers=2, seed=1, progress=False,
                            on_game=lambda gid, moves, winner: logged.append(gid))
    assert summary.games == 6 and not summary.interrupted
    assert sorted(logged) == list(range(1, 7))
    assert check_consistent(db, 60) == 6
    assert summary.simulations == treelab.load(db).root.nb_visit
    assert summary.wins + summary.draws + summary.losses == 6
    with sqlite3.connect(db) as conn:
        sources = {s for (s,) in conn.execute(f"SELECT source FROM {SOURCES}")}
        distinct = conn.execute("SELECT count(DISTINCT moves) FROM games").fetchone()[0]
    assert summary.distinct == distinct >= 2  # once always "(0 distinct)" with workers
    assert sources <= {"worker 1", "worker 2"} and sources
    # resumes: a second run adds games 7.. and keeps every count exact
    again = treelab.train("connect4", db, games=3, iterations=60, workers=2, seed=2, progress=False)
    assert again.total_games == 9 and check_consistent(db, 60) == 9
    # and a single-process run continues the same file
    treelab.train("connect4", db, games=1, iterations=60, seed=3, progress=False)
    assert check_consistent(db, 60) == 10


def test_workers_against_an_opponent_and_with_the_solver(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    summary = treelab.train("tictactoe", db, games=4, iterations=80, opponent="heuristic", solver=True,
                            workers=2, seed=5, progress=False)
    assert summary.games == 4
    games = treelab.read_games(db)
    assert [g["tree_player"] for g in games] == [1 + (g["id"] + 1) % 2 for g in games]
    tree = treelab.load(db)
    assert tree.root.nb_visit >= 80 * 2  # the tree searched on its own moves only
    proven = [n for n in tree if n.proven is not None]
    assert proven  # the solver's proofs travel to the writer


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    with pytest.raises(BudgetError, match="workers 0 must be"):
        treelab.train("connect4", db, games=2, workers=0, progress=False)
    with pytest.raises(BudgetError, match="workers 3 is more than games 2"):
        treelab.train("connect4", db, games=2, workers=3, progress=False)
    assert not db.exists()
    runner = CliRunner()
    for args in (["--workers", "0"], ["--workers", "5", "--games", "2"]):
        result = runner.invoke(cli, ["train", "connect4", "--db", str(db), "-q", *args])
        assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1, result.output
        assert "Traceback" not in result.output
    assert not db.exists()


def test_locked_database_refused(tmp_path: Path, as_asked: None) -> None:
    db = tmp_path / "c4.db"
    treelab.train("connect4", db, games=1, iterations=20, progress=False)
    before = db.read_bytes()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer in the middle of a transaction
    try:
        with pytest.raises(StoreError, match="is locked by another writer"):
            treelab.train("connect4", db, games=2, iterations=20, workers=2, progress=False)
        result = CliRunner().invoke(cli, ["train", "connect4", "--db", str(db), "--games", "2", "--workers", "2"])
        assert result.exit_code == 1 and "locked by another writer" in result.output
        assert len(result.output.strip().splitlines()) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert db.read_bytes() == before and len(treelab.read_games(db)) == 1


@pytest.mark.ray
def test_ray_missing_or_unreachable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "c4.db"
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = CliRunner().invoke(cli, ["train", "connect4", "--db", str(db), "--games", "2",
                                      "--ray", f"127.0.0.1:{port}"])
    assert result.exit_code == 1 and "cannot reach a ray cluster at" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(WorkerError, match=r"ray is not installed: .*treelab\[ray\]"):
        treelab.train("connect4", db, games=2, ray=True, progress=False)
    assert not db.exists()


def _start(db: Path, games: int, iterations: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*AS_ASKED, "train", "connect4", "--db", str(db), "--games", str(games),
         "--iterations", str(iterations), "--workers", "2", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _wait_for_games(db: Path, n: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if db.exists() and len(treelab.read_games(db)) >= n:
                return
        except StoreError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"fewer than {n} games logged in time: {proc.poll()}")


def _workers(proc: subprocess.Popen[bytes]) -> list[int]:
    # forked workers, or spawned ones; the spawn start method may run a resource tracker beside them
    pids = []
    for pid in _children(proc.pid):
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        if "resource_tracker" not in cmd:
            pids.append(pid)
    return pids


def _running(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def test_kill_a_worker(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    proc = _start(db, 400, 100)
    try:
        _wait_for_games(db, 2, proc)
        victim = _workers(proc)[0]
        os.kill(victim, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1
    lines = err.decode().strip().splitlines()
    assert lines[-1].startswith("Error: worker") and "signal 9" in lines[-1] and "train again to resume" in lines[-1]
    assert "Traceback" not in err.decode()
    logged = check_consistent(db, 100, exact=False)  # the other worker's cut game counts too
    assert 2 <= logged < 400
    treelab.train("connect4", db, games=2, iterations=100, workers=2, progress=False)  # resumable
    assert check_consistent(db, 100, exact=False) == logged + 2


def test_kill_the_writer(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    proc = _start(db, 400, 100)
    try:
        _wait_for_games(db, 2, proc)
        workers = _workers(proc)
        assert len(workers) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _running(workers):  # orphans: init reaps them
            time.sleep(0.2)
        assert not _running(workers), "workers outlived their writer"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    logged = check_consistent(db, 100)  # exact: only whole batches of whole games were committed
    treelab.train("connect4", db, games=2, iterations=100, workers=2, progress=False)
    assert check_consistent(db, 100) == logged + 2


@pytest.mark.ray
def test_ray_trains_24_games_into_a_consistent_tree(tmp_path: Path) -> None:
    """A local Ray (2 CPUs): worker actors, the writer an actor owning the file."""
    db = tmp_path / "c4.db"
    summary = treelab.train("connect4", db, games=24, iterations=40, ray=True, seed=7, progress=False)
    assert summary.games == 24 and summary.total_games == 24
    assert check_consistent(db, 40) == 24
    with sqlite3.connect(db) as conn:
        sources = {s for (s,) in conn.execute(f"SELECT source FROM {SOURCES}")}
    assert sources and sources <= {"worker 1", "worker 2"}


def test_workers_run_only_where_they_pay(tmp_path: Path) -> None:
    """UCT, one worker or one core: one process; PUCT: workers, never more than cores; busy cores: a warning."""
    from treelab.play.training.parallel import advice

    for asked, options in ((2, {"cores": 1}), (2, {"algorithm": "uct"}), (1, {"algorithm": "puct"})):
        workers, note = advice(asked, **{"cores": 2, "load": 0.0, **options})  # type: ignore[arg-type]
        assert workers is None and "one process" in note
    assert advice(4, cores=2, load=0.0, algorithm="puct") == (
        2, "--workers 4 on 2 cores: 2 workers instead (more would take turns)")
    assert advice(2, cores=2, load=0.1, algorithm="puct") == (2, "")
    workers, note = advice(2, cores=2, load=3.5, algorithm="puct")  # what was asked, never a silent override
    assert workers == 2 and note.startswith("warning: the cores were busy") and "load average 3.5 on 2" in note
    out = CliRunner().invoke(cli, ["train", "tictactoe", "--db", str(tmp_path / "t.db"), "--games", "2",
                                   "--iterations", "20", "-q", "--workers", "2"])
    assert out.exit_code == 0 and "with UCT: trained in one process" in out.output, out.output


def test_a_model_run_on_busy_cores_says_so_and_runs_the_workers_asked(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``--model`` with ``--workers 2`` on busy cores: the workers asked for, with the warning (it was dropped)."""
    from tests.core.test_node_memory import random_model

    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 5.0, 5.0))  # what advice reads
    db = tmp_path / "c4.db"
    out = CliRunner().invoke(cli, ["train", "connect4", "--db", str(db), "--games", "2", "--iterations", "20", "-q",
                                   "--workers", "2", "--model", str(random_model(tmp_path / "m.npz"))])
    assert out.exit_code == 0, out.output
    assert "note: warning: the cores were busy when the run started (load average 5.0 on" in out.output, out.output
    with sqlite3.connect(db) as conn:
        sources = {s for (s,) in conn.execute(f"SELECT source FROM {SOURCES}")}
    assert sources and sources <= {"worker 1", "worker 2"}, sources  # played by workers, not one process


@pytest.mark.parametrize("mode", [("--workers", "2"), pytest.param(("--ray",), marks=pytest.mark.ray)])
def test_ctrl_c_saves_finished_games_and_ends_with_the_summary_in_both_modes(tmp_path: Path,
                                                                             mode: tuple[str, ...]) -> None:
    """Ctrl-C under --ray once printed "Aborted." and exited 1; under --workers it saved and summarised."""
    db = tmp_path / "c4.db"
    proc = subprocess.Popen([*AS_ASKED, "train", "connect4", "--db", str(db), "--games", "400",
                             "--iterations", "60", "--seed", "1", "-q", *mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(sqlite3.Error):
            conn = sqlite3.connect(db, timeout=5)
            try:
                if conn.execute("SELECT count(*) FROM games").fetchone()[0]:
                    break
            finally:
                conn.close()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "interrupted after" in out and "Aborted" not in out + err and "Traceback" not in err
    games = check_consistent(db, 60)
    assert 0 < games < 400


def test_workers_that_play_on_while_the_writer_stores_their_games_late_add_up_exactly(tmp_path: Path) -> None:
    """Local workers never wait for the file: each hands on a delta after every game and plays on, so its next
    deltas name the nodes still without a row id by local id (``Result.named_from``); the writer stores batches of
    both workers' games late, in arrival order, mapping those ids per worker. Every sum is exact, no path twice."""
    from collections import deque

    from tests.store.test_deltas import counts_by_path, plus
    from tests.store.test_merge import by_path, random_tree, saved
    from treelab.mcts.uct import Limit, search
    from treelab.play.training.workers import Job, Result, Writer
    from treelab.store.binding import binding_of
    from treelab.store.deltas import LOCAL, renumber, start, take

    db = saved(random_tree("connect4", 5, 20), tmp_path / "c4.db")
    writer = Writer(Job("connect4", str(db), treelab.SearchConfig()))
    copies = [start(treelab.load(db)) for _ in range(2)]
    seen = binding_of(copies[0]).generation  # type: ignore[union-attr]
    expected = by_path(db)
    owed: list[deque[list[Any]]] = [deque(), deque()]
    arrived: list[Result] = []
    chains: dict[str, Any] = {}
    rng = random.Random(5)
    named_local = 0
    for game_id in range(1, 15):
        k = game_id % 2
        tree = copies[k]
        before = counts_by_path(tree)
        search(tree, "4" if game_id % 3 else "", limit=Limit(iterations=150), rng=rng.randrange(1 << 30))
        plus(expected, before, tree)
        named_from = next((nodes[0].node_id for nodes in owed[k] if nodes), tree.next_id)
        delta, new = take(tree, seen)
        named_local += int((delta.known >= LOCAL).any() or (delta.parents >= LOCAL).any())
        owed[k].append(new)
        row = {"id": 1000 + game_id, "moves": "4", "iterations": 150, "started_at": f"game {game_id}"}
        arrived.append(Result(k + 1, row, delta, named_from))
        if game_id % 5 == 0 or game_id == 14:  # the writer catches up: one transaction for what arrived
            _, stored = writer.write(arrived, chains=chains)
            for result, ids in zip(arrived, stored, strict=True):
                renumber(owed[result.worker - 1].popleft(), ids)  # type: ignore[arg-type]
            arrived.clear()
            assert by_path(db) == expected
    writer.close()
    assert named_local >= 6  # most deltas named nodes of games not stored yet
    assert all(not o for o in owed)
    assert chains and all(e is None or len(e.ids) < 20_000 for e in chains.values())  # forgotten once not named
