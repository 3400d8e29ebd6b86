"""The logged games' figures by node (``game_outcomes``, ``logged_values``): every game followed down the rows
read at once (a sorted search a depth at a time) gives what following each game alone from the root gives.

The games are real (Connect Four with PUCT, tic-tac-toe with UCT against a random opponent, nim's written
moves ``"d7,c5"``), the files real SQLite files; sampled reads leave nodes out, so games stop part way.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import treelab
from treelab.learn.dataset import game_outcomes, logged_values
from treelab.learn.fitting import _pick
from treelab.store.rows import FitRows, read_fit_rows

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("game_paths_benchmark", ROOT / "benchmarks" / "game_paths.py")
assert _spec is not None and _spec.loader is not None
BENCHMARK = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(BENCHMARK)
walked = BENCHMARK.walked  # the plain walk: each game from the root, a dictionary lookup a move


def _sampled(share: int, seed: int) -> Callable[[list[tuple[int, int | None]]], list[int]]:
    """A picker for ``read_fit_rows``: about one candidate in ``share``."""
    rng = np.random.default_rng(seed)

    def pick(found: list[tuple[int, int | None]]) -> list[int]:
        chosen = _pick(found, max(1, len(found) // share), 0.1, None, rng)
        return chosen[0] + chosen[1]
    return pick


@pytest.mark.parametrize(("name", "options"), [
    ("connect4", {"algorithm": "puct", "evaluator": "heuristic", "iterations": 60}),
    ("tictactoe", {"opponent": "random", "iterations": 40}),
    ("nim", {"iterations": 40}),
])
def test_every_game_followed_at_once_gives_each_game_followed_alone(tmp_path: Path, name: str,
                                                                    options: dict[str, Any]) -> None:
    db = tmp_path / "t.db"
    treelab.train(name, db, 12, seed=5, progress=False, **options)
    game = treelab.find_game(name)
    for pick in (None, _sampled(3, 1), _sampled(10, 2)):
        rows = read_fit_rows(db, min_visits=1, max_depth=None, pick=pick)
        outcomes, values = walked(game, rows, "outcomes"), walked(game, rows, "values")
        assert game_outcomes(game, rows) == outcomes
        assert logged_values(game, rows) == values
        root = next(r[0] for r in rows.rows if r[1] is None)
        assert outcomes[root][0] == len(rows.games) == 12  # every game starts at the root
        if pick is not None:  # a sampled read stops some games part way: fewer nodes than the whole file's
            assert len(outcomes) < len(game_outcomes(game, read_fit_rows(db, min_visits=1, max_depth=None)))


def test_no_root_read_or_no_game_logged_gives_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 2, iterations=30, seed=1, progress=False)
    game = treelab.find_game("tictactoe")
    rows = read_fit_rows(db, min_visits=1, max_depth=None)
    assert game_outcomes(game, FitRows(rows.game, [r for r in rows.rows if r[1] is not None], rows.nodes,
                                       rows.simulations, rows.games)) == {}
    assert logged_values(game, FitRows(rows.game, rows.rows, rows.nodes, rows.simulations, [])) == {}


def test_the_benchmark_checks_both_ways_agree_and_prints_the_ratio(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("connect4", db, 6, iterations=40, seed=3, progress=False)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "game_paths.py"), "--db", str(db),
                           "--sample", "50", "--rounds", "2"], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0].endswith(", 6 games") and [line.split()[0] for line in lines[1:]] == ["outcomes", "values"]
    assert all("reference / treelab" in line for line in lines[1:])
