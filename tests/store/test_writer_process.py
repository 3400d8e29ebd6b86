"""Training saves from a writer process: the same file as saving in-process, nothing lost, errors raised here."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import treelab
from tests.play.test_training import tree_invariants_hold
from treelab import train
from treelab.errors import NotATreelabDatabaseError, WorkerError
from treelab.mcts import uct
from treelab.store import writer as background
from treelab.store.binding import last_game
from treelab.store.writer import BackgroundSaver

SAVERS: list[BackgroundSaver] = []


def _saver(monkeypatch: pytest.MonkeyPatch, *, use_writer: bool) -> None:
    """Make train() save in-process, or from a writer process (track() waits for it before the first game)."""

    class Saver(BackgroundSaver):
        def __init__(self, db: Any, game: str, *, background: bool = True) -> None:
            super().__init__(db, game, background=use_writer)
            SAVERS.append(self)

    SAVERS.clear()
    monkeypatch.setattr(background, "BackgroundSaver", Saver)  # train() imports it when it runs


def _dump(db: Path) -> tuple[list[Any], ...]:
    conn = sqlite3.connect(db)
    try:
        movers = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'movers'").fetchone()[0]
        return (conn.execute("SELECT * FROM nodes ORDER BY id").fetchall(),
                conn.execute("SELECT id, moves, winner, opponent, tree_player, iterations FROM games "
                             "ORDER BY id").fetchall(),
                conn.execute("SELECT game_id, nodes, root_visits, depth_counts FROM history "
                             "ORDER BY game_id").fetchall(),
                conn.execute("SELECT * FROM movers ORDER BY node_id").fetchall() if movers else [],
                conn.execute("SELECT key, value FROM meta WHERE key NOT IN ('tree_id', 'saved_at', 'created_at') "
                             "ORDER BY key").fetchall())
    finally:
        conn.close()


@pytest.mark.parametrize("game,options", [
    ("connect4", {}),
    ("tictactoe", {"opponent": "random", "solver": True}),  # proofs
    pytest.param("openspiel:dots_and_boxes", {"iterations": 40},  # movers stored: a player may move twice in a row
                 marks=pytest.mark.openspiel),
])
def test_the_writer_process_writes_the_same_file_as_saving_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, game: str, options: dict[str, Any]
) -> None:
    dumps = []
    settings = {"iterations": 150, **options}
    for use_writer in (False, True):
        db = tmp_path / f"{use_writer}.db"
        _saver(monkeypatch, use_writer=use_writer)
        train(game, db, games=2, seed=4, progress=False, **settings)  # a new file
        first = SAVERS[0].handed
        summary = train(game, db, games=6, seed=5, progress=False, **settings)
        assert (first, SAVERS[1].handed) == ((2, 6) if use_writer else (0, 0))  # every game: the writer
        assert summary.total_games == 8 and summary.games == 6
        assert len(treelab.load(db)) == summary.nodes
        tree_invariants_hold(db)
        dumps.append(_dump(db))
    assert dumps[0] == dumps[1]  # same ids, counts, proofs, created games, movers; same games, history, meta
    assert game != "openspiel:dots_and_boxes" or dumps[0][3]  # the movers table was compared


def test_games_are_logged_once_committed_and_the_summary_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "c4.db"
    train("connect4", db, games=1, iterations=50, seed=1, progress=False)
    _saver(monkeypatch, use_writer=True)
    committed: list[int] = []

    def on_game(game_id: int, moves: str, winner: int | None) -> None:
        conn = sqlite3.connect(db)
        try:
            committed.append(conn.execute("SELECT count(*) FROM games WHERE id = ?", (game_id,)).fetchone()[0])
        finally:
            conn.close()

    summary = train("connect4", db, games=5, iterations=100, seed=2, progress=False, on_game=on_game)
    assert SAVERS[0].handed == 5
    assert committed == [1] * 5  # each game was in the file when the callback saw it
    tree = treelab.load(db)
    assert summary.total_games == last_game(tree) == 6 and len(tree) == summary.nodes
    conn = sqlite3.connect(db)
    try:  # self-play: the tree searched every move of every game, and nothing else
        searched = conn.execute("SELECT sum(length(moves) * iterations) FROM games").fetchone()[0]
    finally:
        conn.close()
    assert tree.root.nb_visit == searched
    tree_invariants_hold(db)


def test_someone_else_saving_between_games_is_merged(tmp_path: Path) -> None:
    """A foreign save (``treelab analyse --db``) lands between the writer's games: every count is the exact sum."""
    db = tmp_path / "c4.db"
    train("connect4", db, games=2, iterations=200, seed=1, progress=False)
    tree = treelab.load(db)
    start_visits = tree.root.nb_visit
    rng = random.Random(3)
    foreign = 0
    with BackgroundSaver(db, "connect4") as saver:
        saver.track(tree)
        assert saver.by_writer
        for _ in range(6):
            uct.search(tree, limit=uct.Limit(iterations=400), rng=rng)
            saver.save(None)  # searches without a game to log
            other = treelab.load(db)  # someone else: its new nodes collide with the tree's under the same parents
            uct.search(other, limit=uct.Limit(iterations=300), rng=rng)
            treelab.save(other, db)
            foreign += 300
        saver.finish()
        assert saver.handed == 6
    stored = treelab.load(db)
    assert stored.root.nb_visit == start_visits + 6 * 400 + foreign
    tree_invariants_hold(db)


@contextmanager
def _writer_ready(db: Path) -> Iterator[tuple[BackgroundSaver, treelab.Tree]]:
    """A one-game tree in ``db``, loaded, and a saver whose writer takes its games."""
    train("connect4", db, games=1, iterations=50, seed=1, progress=False)
    tree = treelab.load(db)
    with BackgroundSaver(db, "connect4") as saver:
        saver.track(tree)
        assert saver.by_writer
        yield saver, tree


def test_an_error_of_the_writer_is_raised_here_and_stops_it(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    with _writer_ready(db) as (saver, tree):
        uct.search(tree, limit=uct.Limit(iterations=100), rng=1)
        for name in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            name.unlink(missing_ok=True)
        db.write_bytes(b"not a database, just bytes" * 100)
        saver.save(None)  # handed over: the writer opens the file and fails
        with pytest.raises(NotATreelabDatabaseError, match=r"c4\.db"):
            saver.finish()
        assert saver._proc is None  # stopped


def test_a_bad_game_row_is_refused_by_the_writer_too_and_the_file_keeps_its_games(tmp_path: Path) -> None:
    """The games row is checked on every save path: in this process (``save``) and in the writer process."""
    from treelab.store.persistence import GAME_FIELDS, GameRow

    db = tmp_path / "c4.db"
    game = treelab.find_game("connect4")
    good = GameRow.of(game, {"moves": "4,4,5", "winner": None}).as_dict()
    assert set(good) == set(GAME_FIELDS) and good["moves"] == "445"  # the notation, made once
    with pytest.raises(ValueError, match="winner 3"):
        GameRow.of(game, {"moves": "445", "winner": 3})
    with _writer_ready(db) as (saver, tree):
        before = treelab.info(str(db))["games"]
        uct.search(tree, limit=uct.Limit(iterations=100), rng=1)
        saver.save({**good, "id": before + 1, "winner": 3})  # not built by GameRow: the writer checks it all the same
        with pytest.raises(ValueError, match="winner 3 is not 1, 2 or None"):
            saver.finish()
    assert treelab.info(str(db))["games"] == before
    with pytest.raises(ValueError, match="only the keys"):
        treelab.save(treelab.load(db), db, games=[{"moves": "445", "colour": "red"}])


def test_a_killed_writer_is_one_clear_error_and_the_file_resumes(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    with _writer_ready(db) as (saver, tree):
        os.kill(saver._proc.pid, signal.SIGKILL)
        saver._proc.join(timeout=10)
        uct.search(tree, limit=uct.Limit(iterations=100), rng=1)
        with pytest.raises(WorkerError, match=r"the writer process died \(signal 9\).*train again to resume"):
            saver.save({"id": 2, "moves": "4", "winner": None})
            saver.finish()
    tree_invariants_hold(db)
    assert train("connect4", db, games=2, iterations=50, seed=2, progress=False).total_games == 3


SCRIPT = """
import sys, treelab
with open(sys.argv[2], "a") as marks:
    marks.write("ran\\n")
treelab.train("tictactoe", sys.argv[1], games=40, iterations=40, seed=1, progress=False, workers=WORKERS)
"""


@pytest.mark.parametrize("workers", [None, 2])
def test_the_writer_and_workers_never_run_the_callers_script_again(tmp_path: Path, workers: int | None) -> None:
    """A script without an ``if __name__ == "__main__":`` guard trains once, not once more in each child."""
    script, marks = tmp_path / "train_me.py", tmp_path / "marks.txt"
    script.write_text(SCRIPT.replace("WORKERS", repr(workers)))
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "t.db"), str(marks)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert marks.read_text() == "ran\n"
    assert last_game(treelab.load(tmp_path / "t.db")) == 40


def _games_logged(db: Path) -> int:
    """The games ``db`` holds (0 while it does not exist yet, or has no games table yet)."""
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=5)
    try:
        return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])
    except sqlite3.OperationalError:  # created but not committed yet
        return 0
    finally:
        conn.close()


@pytest.mark.parametrize("after", [0.0, 1.0])
def test_ctrl_c_of_the_whole_process_group_saves_and_exits_cleanly(tmp_path: Path, after: float) -> None:
    db = tmp_path / "c4.db"
    proc = subprocess.Popen([sys.executable, "-m", "treelab", "train", "connect4", "--db", str(db), "--games", "500",
                             "--iterations", "100", "--seed", "1", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not _games_logged(db) and time.monotonic() < deadline:  # a game is saved: train handles Ctrl-C now
        time.sleep(0.01)
    time.sleep(after)  # the writer is saving, or between games
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    tree_invariants_hold(db)
    conn = sqlite3.connect(db)
    try:
        assert 0 < conn.execute("SELECT count(*) FROM games").fetchone()[0] < 500  # cut short, not finished
    finally:
        conn.close()
    tree = treelab.load(db)  # whole games or nothing: the unfinished game's searches are not saved
    assert tree.root.nb_visit == 100 * sum(len(g["moves"]) for g in treelab.read_games(db))


def _train_in_a_pool_worker(db: str) -> int:
    return train("tictactoe", db, games=30, iterations=30, seed=1, progress=False).total_games


def test_a_process_that_may_not_start_children_saves_every_game_itself(tmp_path: Path) -> None:
    """multiprocessing.Pool workers are daemonic and may not start the writer: train saves in-process."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_train_in_a_pool_worker, (str(tmp_path / "t.db"),)) == 30
    tree_invariants_hold(tmp_path / "t.db")


KILLED_TRAINER = """
import sys, treelab
from treelab.store import writer as background
savers = []

class Saver(background.BackgroundSaver):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        savers.append(self)

background.BackgroundSaver = Saver
treelab.train("connect4", sys.argv[1], games=10_000, iterations=100, seed=int(sys.argv[2]), progress=False,
              on_game=lambda i, m, w: print(i, savers[0].handed, flush=True))
"""


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_while_the_writer_saves_leaves_a_database_that_resumes(tmp_path: Path, seed: int) -> None:
    db = tmp_path / "c4.db"
    proc = subprocess.Popen([sys.executable, "-c", KILLED_TRAINER, str(db), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    handed = 0
    while handed < 3 + seed:  # the writer holds games by now
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "trainer died"
        handed = int(line.split()[1])
    time.sleep(0.007 * seed)  # a different moment each time: mid-search, mid-hand-over, mid-commit
    os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=30)  # returns once the writer, which shares stderr, has stopped too
    assert "Traceback" not in err
    tree_invariants_hold(db)
    conn = sqlite3.connect(db)
    try:
        games, history = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("games", "history"))
        searched = conn.execute("SELECT sum(length(moves) * iterations) FROM games").fetchone()[0]
    finally:
        conn.close()
    tree = treelab.load(db)
    assert games == history == last_game(tree) and tree.root.nb_visit == searched  # whole games, nothing else
    summary = train("connect4", db, games=2, iterations=50, seed=seed, progress=False)
    assert summary.total_games == games + 2
    tree_invariants_hold(db)


def test_on_one_core_every_game_is_saved_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer process could only take turns with the searches on a lone core: none is started."""
    from treelab.play import training

    started: list[bool] = []
    real = background.BackgroundSaver

    class Saver(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self._proc is not None)

    monkeypatch.setattr(background, "BackgroundSaver", Saver)
    monkeypatch.setattr(training, "_cores", lambda: 1)
    assert train("tictactoe", tmp_path / "t.db", games=5, iterations=30, seed=1, progress=False).total_games == 5
    monkeypatch.setattr(training, "_cores", lambda: 2)
    train("tictactoe", tmp_path / "t.db", games=5, iterations=30, seed=1, progress=False)
    assert started == [False, True]


def test_searches_of_a_game_cut_short_are_saved_alike_with_no_game(tmp_path: Path) -> None:
    """Ctrl-C mid-game: what the searches learned is saved, the same either way, its nodes naming no game."""
    dumps = []
    for use_writer in (False, True):
        db = tmp_path / f"{use_writer}.db"
        train("connect4", db, games=1, iterations=50, seed=1, progress=False)
        tree = treelab.load(db)
        with BackgroundSaver(db, "connect4", background=use_writer) as saver:
            saver.track(tree)
            assert saver.by_writer == use_writer
            uct.search(tree, "4", limit=uct.Limit(iterations=300), rng=3)
            assert saver.save(None) == []
            assert saver.finish() == []
        dumps.append(_dump(db))
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("SELECT count(*) FROM nodes WHERE created_game = 2").fetchone()[0] == 0
            assert conn.execute("SELECT count(*) FROM nodes WHERE created_game IS NULL").fetchone()[0] > 100
        finally:
            conn.close()
    assert dumps[0] == dumps[1]
