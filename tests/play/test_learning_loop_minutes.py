"""A learning loop bounded by wall time (``--minutes``), its growing replay window, and the tree it keeps
loaded between steps instead of reading the database again (exactly the same file either way)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from cli_helpers import run

import treelab
import treelab.store.persistence as persistence
from treelab.learn.fitting import FitConfig
from treelab.play.learning import DECAY_AFTER, LOOP_SAMPLE, REPLAY_MAX, REPLAY_PER_GAME, WARM_EPOCHS, replay_plan

SMALL = FitConfig(min_visits=5, hidden=(16,), epochs=5, sample=200)
"""A fit of a second: the loop's mechanics are under test here, not the model's strength."""


def _rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        nodes = conn.execute("SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, nb_select, proven, created_game, "
                             "round(value_sum, 9) FROM nodes ORDER BY id").fetchall()
        games = conn.execute("SELECT id, moves, winner, exploration FROM games ORDER BY id").fetchall()
        return nodes + games
    finally:
        conn.close()


def test_the_kept_tree_writes_the_very_file_a_reload_at_every_step_writes(tmp_path: Path, monkeypatch) -> None:
    """Three steps between refits on Connect Four (a model guides the later ones, in C where built)."""
    kept, reloaded = tmp_path / "kept", tmp_path / "reloaded"
    kept.mkdir()
    reloaded.mkdir()
    loads = []
    real_load = persistence._load
    monkeypatch.setattr(persistence, "_load", lambda *a, **k: loads.append(1) or real_load(*a, **k))
    monkeypatch.chdir(kept)  # relative names: the games log the model's path as given
    one = treelab.learning_loop("connect4", "c.db", "m.npz", 9, refit_every=3, fitting=SMALL, iterations=40, seed=4,
                                progress=False)
    assert not loads  # the first step made the tree (and the file); the later steps kept it
    monkeypatch.setattr(persistence, "_kept_tree", lambda db, game: None)
    monkeypatch.chdir(reloaded)
    two = treelab.learning_loop("connect4", "c.db", "m.npz", 9, refit_every=3, fitting=SMALL, iterations=40, seed=4,
                                progress=False)
    assert len(loads) == 2  # steps 2 and 3 read it again
    assert one.version == two.version == 3 and one.total_games == two.total_games == 9
    assert _rows(kept / "c.db") == _rows(reloaded / "c.db")


def test_another_writer_between_steps_makes_the_loop_read_the_file_again(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with persistence.reusing_trees():
        first = persistence.open_tree(db, "tictactoe")
        treelab.search(first, "5", limit=treelab.Limit(iterations=50), rng=1)
        first.save(db)
        assert persistence.open_tree(db, "tictactoe") is first  # as it saved it: kept
        other = treelab.load(db)
        treelab.search(other, "1", limit=treelab.Limit(iterations=20), rng=2)
        other.save(db)  # someone else's save: the kept tree no longer mirrors the file
        again = persistence.open_tree(db, "tictactoe")
        assert again is not first and again.root.nb_visit == first.root.nb_visit + 20
    assert persistence.open_tree(db, "tictactoe") is not again  # outside the block nothing is kept


def test_the_replay_window_grows_with_the_games_and_a_refit_trains_fewer_epochs_over_it() -> None:
    base = FitConfig(sample=LOOP_SAMPLE)
    assert replay_plan(base, 100, warm=True).sample == LOOP_SAMPLE
    assert replay_plan(base, 100, warm=True).epochs == WARM_EPOCHS
    grown = replay_plan(base, 2_000, warm=True)
    assert grown.sample == REPLAY_PER_GAME * 2_000 > LOOP_SAMPLE
    assert grown.epochs < WARM_EPOCHS and grown.epochs * grown.sample <= WARM_EPOCHS * LOOP_SAMPLE * 1.1
    assert replay_plan(base, 10**7, warm=True).sample == REPLAY_MAX
    assert replay_plan(base, 2_000, warm=False).epochs == base.epochs  # the first fit trains from scratch


def test_the_refits_learning_rate_falls_as_the_inverse_square_root_of_the_games_once_the_window_is_full() -> None:
    base = FitConfig(sample=LOOP_SAMPLE, learning_rate=4e-3)
    assert DECAY_AFTER is not None and DECAY_AFTER * REPLAY_PER_GAME == REPLAY_MAX
    assert replay_plan(base, 100, warm=True).learning_rate == 4e-3
    assert replay_plan(base, DECAY_AFTER, warm=True).learning_rate == 4e-3
    assert replay_plan(base, 4 * DECAY_AFTER, warm=True).learning_rate == pytest.approx(2e-3)
    assert replay_plan(base, 100 * DECAY_AFTER, warm=True).learning_rate == pytest.approx(4e-4)


def test_train_minutes_stops_cleanly_between_games_and_the_same_command_resumes(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    command = ["train", "tictactoe", "--db", str(db), "--minutes", "0.03", "--iterations", "30", "--seed", "1", "-q"]
    began = time.monotonic()
    first = run(*command)
    took = time.monotonic() - began
    assert first.exit_code == 0, first.output
    assert "trained" in first.stdout and "interrupted" not in first.stdout
    games = treelab.info(db)["games"]
    assert games >= 1 and took < 30  # 1.8 s of games, then the one under way finished
    again = run(*command)
    assert again.exit_code == 0, again.output
    assert treelab.info(db)["games"] > games
    tree = treelab.load(db)
    assert tree.root.nb_visit == sum(k.nb_visit for k in tree.root.children_view)


@pytest.mark.parametrize("bad", ["0", "-1", "nan"])
def test_train_minutes_must_be_a_positive_number(tmp_path: Path, bad: str) -> None:
    result = run("train", "tictactoe", "--db", str(tmp_path / "t.db"), "--minutes", bad)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "--minutes" in result.output
    assert not (tmp_path / "t.db").exists()


def test_the_loop_with_minutes_alone_plays_until_the_time_is_up(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    result = treelab.learning_loop("tictactoe", db, model, None, refit_every=5, minutes=0.05, fitting=SMALL,
                                   iterations=20, seed=2, progress=False)
    assert result.games >= 1 and not result.interrupted and result.total_games == result.games
    assert result.seconds < 40
    assert "refitting" in result.describe() or not result.refits
