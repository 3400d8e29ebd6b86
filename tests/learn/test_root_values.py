"""The value each self-play search found (``games.root_values``, schema 6) and the fits that learn from it.

On a persistent tree a searched position's stored mean also counts the visits of the searches made later in
the same game, deeper on the line it went on to play; the search's own value is AlphaZero's root value. Games
played here are real (tic-tac-toe, PUCT and UCT, one process and workers), the files real SQLite files.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab.learn.dataset import build_dataset, logged_values
from treelab.mcts.evaluators import Evaluation, uniform_priors
from treelab.mcts.summary import search_value, tally
from treelab.store.rows import read_fit_rows
from treelab.store.schema import SCHEMA_VERSION


def _games(db: Path) -> list[tuple[str, int | None, list[float | None] | None]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT moves, winner, root_values FROM games ORDER BY id").fetchall()
    conn.close()
    return [(moves, winner, None if text is None else json.loads(text)) for moves, winner, text in rows]


def _evens(state: treelab.State, rng: random.Random) -> Evaluation:
    return Evaluation(uniform_priors(state), 0.5)  # every leaf an even position


def test_a_search_value_counts_only_that_searchs_simulations() -> None:
    tree = treelab.Tree("tictactoe")
    for _ in range(6):
        tree.record("5", winner=1)  # pass-through visits: player one won every one of them
    node = tree.find("5")
    before = tally(node)
    treelab.puct_search(tree, "5", limit=treelab.Limit(iterations=8), evaluator=_evens, solver=False, rng=1)
    assert node.nb_visit == 6 + 8 and node.mean != pytest.approx(0.5)  # the stored mean: mostly the records
    assert search_value(node, before) == pytest.approx(0.5)  # the search's own: its eight even evaluations
    assert search_value(node, tally(node)) is None  # no simulation since
    assert search_value(None, before) is None


def test_a_proven_position_is_worth_its_proof() -> None:
    tree = treelab.Tree("tictactoe")
    won = "1425"  # player one to move, 3 wins at once (and player two threatens 6)
    treelab.puct_search(tree, won, limit=treelab.Limit(iterations=50), rng=1)
    assert search_value(tree.find(won), (0, 0, 0, 0.0)) == 1.0


@pytest.mark.parametrize("options", [{"algorithm": "puct", "evaluator": "heuristic"}, {}, {"workers": 2}],
                         ids=["puct", "uct", "workers"])
def test_self_play_logs_one_root_value_per_move(tmp_path: Path, options: dict[str, object]) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 4, iterations=60, seed=2, progress=False, **options)
    games = _games(db)
    assert len(games) == 4
    for moves, winner, values in games:
        assert values is not None and len(values) == len(moves)  # one per move: both sides are the tree's
        assert all(v is not None and 0.0 <= v <= 1.0 for v in values)
        if winner is not None and options.get("algorithm") == "puct":
            assert values[-1] == 1.0  # the winning move's search proved it (PUCT proves terminal results)


def test_against_an_opponent_only_the_trees_moves_have_values(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 2, iterations=40, seed=1, progress=False, opponent="random")
    for number, (moves, _, values) in enumerate(_games(db), start=1):
        assert values is not None and len(values) == len(moves)
        tree_player = 1 + (number + 1) % 2  # colours change every game
        assert [v is not None for v in values] == [ply % 2 == tree_player - 1 for ply in range(len(moves))]


def test_a_fit_learns_the_logged_value_where_a_game_searched(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 6, iterations=80, seed=4, progress=False, algorithm="puct", evaluator="heuristic")
    game = treelab.find_game("tictactoe")
    rows = read_fit_rows(db, min_visits=1, max_depth=None)
    logged = logged_values(game, rows)
    moves, _, _ = _games(db)[-1]
    path = [(), *[tuple(game.parse(moves[:i])) for i in range(1, len(moves))]]
    tree = treelab.load(db)
    nodes = [tree.find(position) for position in path]
    for node in nodes:  # the last game's positions: each searched at least once, by it
        count, total = logged[node.node_id]
        assert count >= 1 and 0.0 <= total / count <= 1.0
    unproven = [n.node_id for n in nodes if n.proven is None]
    assert unproven
    own = build_dataset(game, rows, min_visits=1, max_depth=None, root_value=1.0)
    mean = build_dataset(game, rows, min_visits=1, max_depth=None, root_value=0.0)
    at = {int(nid): i for i, nid in enumerate(own.nodes)}
    for nid in unproven:
        count, total = logged[nid]
        assert own.value[at[nid]] == pytest.approx(total / count, abs=1e-6)  # the searches' value, not the mean
        half = build_dataset(game, rows, min_visits=1, max_depth=None, root_value=0.5, only={nid})
        assert half.value[0] == pytest.approx((own.value[at[nid]] + mean.value[at[nid]]) / 2, abs=1e-6)
    assert any(abs(own.value[at[nid]] - mean.value[at[nid]]) > 0.01 for nid in unproven)  # not the mean again
    model = treelab.fit(db, tmp_path / "m.npz", min_visits=1, hidden=(8,), epochs=3, root_value=1.0)
    assert model.info["root_value"] == 1.0
    assert treelab.fit(db, None, min_visits=1, hidden=(8,), epochs=3).info["root_value"] == 0.0  # the default


def test_a_schema_5_file_reads_without_root_values_and_migrates(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    treelab.train("tictactoe", db, 2, iterations=30, seed=1, progress=False)
    with sqlite3.connect(db) as conn:  # the file as treelab wrote it before schema 6
        conn.execute("ALTER TABLE games DROP COLUMN root_values")
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    conn.close()
    assert [g["id"] for g in treelab.read_games(db)] == [1, 2]
    assert logged_values(treelab.find_game("tictactoe"), read_fit_rows(db, min_visits=1, max_depth=None)) == {}
    treelab.train("tictactoe", db, 1, iterations=30, seed=2, progress=False)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert [row[0] is None for row in conn.execute("SELECT root_values FROM games ORDER BY id")] == [
            True, True, False]
    conn.close()


def test_merge_keeps_the_root_values(tmp_path: Path) -> None:
    dbs = [tmp_path / "a.db", tmp_path / "b.db"]
    for seed, db in enumerate(dbs):
        treelab.train("tictactoe", db, 2, iterations=30, seed=seed, progress=False)
    out = tmp_path / "out.db"
    treelab.merge(out, *dbs)
    assert [g[2] for g in _games(out)] == [g[2] for db in dbs for g in _games(db)]


def test_damaged_root_values_are_one_clear_error_and_can_be_left_out(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 3, iterations=40, seed=1, progress=False)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE games SET root_values = '[0.5, 7]' WHERE id = 2")
    conn.close()
    out = tmp_path / "m.npz"
    result = run("fit", str(db), "-o", str(out), "--min-visits", "1", "--epochs", "2", "--root-value", "1")
    assert_clean_error(result, "'[0.5, 7]'", "--root-value 0")
    assert not out.exists()
    assert run("fit", str(db), "-o", str(out), "--min-visits", "1", "--epochs", "2").exit_code == 0  # not read
    assert out.exists()
