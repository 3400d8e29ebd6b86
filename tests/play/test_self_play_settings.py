"""Self-play that explores: varied games by default, settings logged and validated, runs replayable."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab.play.training import NOISE, TEMPERATURE, TEMPERATURE_MOVES


def games_of(db: Path) -> list[tuple[str, str | None]]:
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT moves, exploration FROM games ORDER BY id").fetchall()
    conn.close()
    return rows


def test_default_self_play_explores_and_logs_its_settings(tmp_path: Path) -> None:
    db = tmp_path / "ttt.db"
    summary = treelab.train("tictactoe", db, games=30, iterations=100, seed=4, progress=False)
    rows = games_of(db)
    assert summary.distinct == len({moves for moves, _ in rows}) >= 15
    logged = json.loads(rows[0][1])
    assert logged["temperature"] == TEMPERATURE and logged["temperature_moves"] == TEMPERATURE_MOVES
    assert logged["noise"] == NOISE > 0 and logged["alpha"] > 0 and "distinct" in summary.describe()
    against = tmp_path / "h.db"
    treelab.train("tictactoe", against, games=2, iterations=50, seed=4, opponent="heuristic", progress=False)
    assert json.loads(games_of(against)[0][1])["noise"] == 0.0  # a fixed opponent varies the games itself


def test_a_seed_replays_the_run(tmp_path: Path) -> None:
    runs = []
    for name in ("a.db", "b.db"):
        treelab.train("connect4", tmp_path / name, games=4, iterations=60, seed=9, noise=0.25, progress=False)
        runs.append([moves for moves, _ in games_of(tmp_path / name)])
    assert runs[0] == runs[1] and len(set(runs[0])) > 1


@pytest.mark.parametrize(
    ("option", "value", "needle"),
    [("--temperature", "-1", "-1.0"), ("--noise", "1.5", "1.5"), ("--noise", "-0.1", "-0.1"),
     ("--temperature-moves", "-3", "-3"), ("--alpha", "0", "0.0"), ("--temperature", "nan", "nan")],
)
def test_bad_exploration_options_write_nothing(tmp_path: Path, option: str, value: str, needle: str) -> None:
    db = tmp_path / "c4.db"
    result = run("train", "connect4", "--db", str(db), "--games", "2", "--iterations", "20", option, value, "-q")
    assert_clean_error(result, f"'{option}'", needle)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "needle"),
    [({"temperature": -0.5}, "temperature -0.5"), ({"noise": 1.01}, "noise fraction 1.01"),
     ({"noise": -0.2}, "noise fraction -0.2"), ({"alpha": 0.0}, "alpha 0.0"),
     ({"temperature_moves": -1}, "temperature moves -1")],
)
def test_the_library_refuses_bad_exploration_settings(tmp_path: Path, options: dict, needle: str) -> None:
    with pytest.raises(treelab.BudgetError, match=needle):
        treelab.train("connect4", tmp_path / "c4.db", games=1, iterations=10, progress=False, **options)
    assert list(tmp_path.iterdir()) == []


def test_train_prints_the_distinct_games(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    result = run("train", "connect4", "--db", str(db), "--games", "3", "--iterations", "30", "--seed", "2",
                 "--noise", "0.25", "--temperature-moves", "-1", "-q")
    assert result.exit_code == 0, result.output
    assert "(3 distinct)" in result.output
    logged = json.loads(games_of(db)[0][1])
    assert logged["temperature_moves"] is None and logged["noise"] == 0.25 and logged["alpha"] > 0


@pytest.mark.slow
def test_a_hundred_default_games_are_nearly_all_different(tmp_path: Path) -> None:
    """100 default self-play games of Connect Four at 200 simulations, >= 95 distinct."""
    summary = treelab.train("connect4", tmp_path / "c4.db", games=100, iterations=200, seed=1, progress=False)
    assert summary.games == 100 and summary.distinct >= 95
