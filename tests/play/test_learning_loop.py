"""The learning loop: self-play grows the tree, a model is fitted from it every K games,
the next games search with it; tree and model resume; which model played each game is logged."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run
from logged_games import explorations

import treelab
from treelab.errors import GameMismatchError, ModelMismatchError
from treelab.learn.fitting import FitConfig
from treelab.play.learning import versioned

SMALL = FitConfig(min_visits=5, hidden=(16,), epochs=5)
"""A fit of a few seconds: the loop's mechanics are under test here, not the model's strength."""


def test_loop_refits_every_k_games_and_logs_which_model_played(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    result = treelab.learning_loop("tictactoe", db, model, 20, refit_every=10, fitting=SMALL, iterations=40, seed=3,
                                   progress=False)
    assert (result.games, result.total_games, result.version) == (20, 20, 2)
    assert [(r.version, r.games) for r in result.refits] == [(1, 10), (2, 20)]
    assert model.exists() and versioned(model, 1).exists() and versioned(model, 2).exists()
    info = treelab.load_model(model).info
    assert (info["version"], info["games_logged"]) == (2, 20)
    assert info["min_selections"] == 0  # every position with min_visits visits (FitConfig's default)
    rows = explorations(db)
    assert len(rows) == 20
    assert all("model" not in row for row in rows[:10])  # no model yet: PUCT with the game's heuristic
    assert all(row["model_version"] == 1 and row["algorithm"] == "puct" for row in rows[10:])
    assert all(row["searches"] == "fresh" for row in rows)  # every move searched on a tree of its own
    tree = treelab.load(db)
    # every simulation passed through the root; each game's first search began by evaluating the empty board
    # (no child), and its other 39 simulations each chose a first move
    assert tree.root.nb_visit == sum(k.nb_visit for k in tree.root.children_view) + 20
    assert sum(k.nb_select for k in tree.root.children_view) == 20 * 39


def test_loop_searches_the_one_tree_when_asked(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    treelab.learning_loop("tictactoe", db, model, 20, refit_every=10, fitting=SMALL, iterations=40, seed=3,
                          searches="tree", progress=False)
    assert all("searches" not in row for row in explorations(db))
    tree = treelab.load(db)
    # every simulation passed through the root, but PUCT's very first one, which evaluated the empty board
    assert tree.root.nb_visit == sum(k.nb_visit for k in tree.root.children_view) + 1


def test_loop_resumes_tree_and_model_where_it_stopped(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    treelab.learning_loop("tictactoe", db, model, 15, refit_every=10, fitting=SMALL, iterations=30, seed=1,
                          progress=False)
    assert treelab.load_model(model).info["version"] == 1  # fitted after 10 games; 5 more played with it
    again = treelab.learning_loop("tictactoe", db, model, 5, refit_every=10, fitting=SMALL, iterations=30, seed=1,
                                  progress=False)
    assert again.total_games == 20 and again.version == 2 and [r.games for r in again.refits] == [20]
    assert [row.get("model_version") for row in explorations(db)][10:] == [1] * 10


def test_loop_refuses_a_model_or_a_database_of_another_game_before_writing(tmp_path: Path) -> None:
    c4 = tmp_path / "c4.db"
    tree = treelab.Tree("connect4")
    tree.record("44", winner=1)
    tree.save(c4)
    before = c4.read_bytes()
    with pytest.raises(GameMismatchError, match="connect4"):
        treelab.learning_loop("tictactoe", c4, tmp_path / "m.npz", 5, refit_every=5, progress=False)
    assert c4.read_bytes() == before and not (tmp_path / "m.npz").exists()
    ttt_db, model = tmp_path / "t.db", tmp_path / "m.npz"
    treelab.learning_loop("tictactoe", ttt_db, model, 10, refit_every=10, fitting=SMALL, iterations=30,
                          progress=False)
    with pytest.raises(ModelMismatchError, match="tictactoe"):
        treelab.learning_loop("connect4", tmp_path / "new.db", model, 5, refit_every=5, progress=False)
    assert not (tmp_path / "new.db").exists()


def test_train_command_runs_the_loop_and_refuses_bad_combinations(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    result = run("train", "tictactoe", "--db", str(db), "--games", "10", "--iterations", "30", "--model", str(model),
                 "--refit-every", "10", "--min-visits", "5", "--min-selections", "12", "--root-value", "0.5",
                 "--outcome", "0.25", "--learning-rate", "0.004", "--seed", "2", "-q")
    assert result.exit_code == 0, result.output
    assert "refit v1 after 10 games" in result.output and model.exists()
    info = treelab.load_model(model).info
    assert (info["min_selections"], info["root_value"], info["outcome"]) == (12, 0.5, 0.25)
    assert info["learning_rate"] == 0.004  # 10 games: the replay window is not full, no decay yet
    guided = run("train", "tictactoe", "--db", str(db), "--games", "2", "--iterations", "30", "--model", str(model),
                 "-q")  # a fixed model, no refits
    assert guided.exit_code == 0, guided.output
    assert [row.get("model_version") for row in explorations(db)][10:] == [1, 1]
    missing = run("train", "tictactoe", "--db", str(db), "--games", "2", "--model", str(tmp_path / "none.npz"))
    assert_clean_error(missing, "none.npz", "--refit-every")
    alone = run("train", "tictactoe", "--db", str(db), "--games", "2", "--refit-every", "5")
    assert_clean_error(alone, "--model")
    loose = run("train", "tictactoe", "--db", str(db), "--games", "2", "--min-selections", "5")
    assert_clean_error(loose, "--min-selections is for the learning loop")
    loose = run("train", "tictactoe", "--db", str(db), "--games", "2", "--outcome", "0.5")
    assert_clean_error(loose, "--outcome is for the learning loop")
    loose = run("train", "tictactoe", "--db", str(db), "--games", "2", "--learning-rate", "0.01")
    assert_clean_error(loose, "--learning-rate is for the learning loop")
    share = run("train", "tictactoe", "--db", str(db), "--games", "2", "--model", str(model), "--refit-every", "5",
                "--root-value", "1.5")
    assert_clean_error(share, "1.5")
    assert treelab.info(db)["games"] == 12  # nothing played


def test_loop_with_workers_plays_and_refits(tmp_path: Path) -> None:
    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    result = treelab.learning_loop("tictactoe", db, model, 12, refit_every=6, fitting=SMALL, iterations=30, seed=4,
                                   workers=2, progress=False)
    assert (result.total_games, result.version) == (12, 2)
    rows = explorations(db)
    assert len(rows) == 12 and all(row.get("model_version") == 1 for row in rows[6:])
    tree = treelab.load(db)
    # every simulation passed through the root; each game's first search began by evaluating the empty board
    assert tree.root.nb_visit - sum(k.nb_visit for k in tree.root.children_view) == 12


def test_the_loop_without_settings_plays_and_fits_as_train_refit_every_does(tmp_path: Path) -> None:
    """``learning_loop`` with no ``training`` or ``fitting`` plays :data:`LOOP_ITERATIONS` simulations a move, as the
    command line's loop does (not ``train``'s 400), and fits with :data:`LOOP_FITTING`, as the command line's loop
    does."""
    import sqlite3

    from treelab.play.learning import LOOP_FITTING, LOOP_HIDDEN, LOOP_ITERATIONS, LOOP_OUTCOME

    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    treelab.learning_loop("tictactoe", db, model, 10, refit_every=10, seed=1, progress=False)
    with sqlite3.connect(db) as con:
        assert {row[0] for row in con.execute("SELECT iterations FROM games")} == {LOOP_ITERATIONS}
    info = treelab.load_model(model).info
    assert (info["outcome"], info["sample"]) == (LOOP_OUTCOME, LOOP_FITTING.sample)
    assert tuple(info["hidden"]) == LOOP_HIDDEN == treelab.load_model(model).hidden
    other = tmp_path / "o.npz"
    result = run("train", "tictactoe", "--db", str(tmp_path / "o.db"), "--games", "10", "--model", str(other),
                 "--refit-every", "10", "--seed", "1", "-q")
    assert result.exit_code == 0, result.output
    assert treelab.load_model(other).info["outcome"] == LOOP_OUTCOME


def test_a_resumed_loop_keeps_its_models_layers(tmp_path: Path) -> None:
    """A loop begun with other layers than :data:`LOOP_HIDDEN` (an older default, or a fit of one's own) goes on
    with them when resumed with the default settings: each refit starts from the model it has, never from random
    weights of another shape."""
    from treelab.play.learning import LOOP_HIDDEN

    db, model = tmp_path / "t.db", tmp_path / "m.npz"
    narrow = FitConfig(min_visits=5, hidden=(24, 12), epochs=5)
    assert narrow.hidden != LOOP_HIDDEN
    treelab.learning_loop("tictactoe", db, model, 10, refit_every=10, fitting=narrow, iterations=30, seed=1,
                          progress=False)
    result = treelab.learning_loop("tictactoe", db, model, 10, refit_every=10, iterations=30, seed=1,
                                   progress=False)
    assert result.version == 2
    again = treelab.load_model(model)
    assert again.hidden == (24, 12) and again.info["warm_start"] == 1  # warm-started from version 1
