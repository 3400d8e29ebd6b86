"""The logged games' figures by node (``game_outcomes``, ``logged_values``): every game followed down the rows
read at once (a sorted search a depth at a time) gives what following each game alone from the root gives.

The games are real (Connect Four with PUCT, tic-tac-toe with UCT against a random opponent, nim's written
moves ``"d7,c5"``), the files real SQLite files; sampled reads leave nodes out, so games stop part way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import treelab
from treelab.games import Game
from treelab.learn.dataset import game_outcomes, logged_values
from treelab.learn.fitting import _pick
from treelab.store.rows import FitRows, read_fit_rows


def _walked(game: Game, rows: FitRows) -> tuple[dict[int, tuple[int, float]], dict[int, tuple[int, float]]]:
    """Both figures the plain way: each game from the root, a dictionary lookup a move, sums in game order."""
    child = {(r[1], game.parse_move(r[2])): r[0] for r in rows.rows if r[1] is not None}
    root = next((r[0] for r in rows.rows if r[1] is None), None)
    outcomes: dict[int, tuple[int, float]] = {}
    values: dict[int, tuple[int, float]] = {}
    for moves, winner, text in rows.games:
        score = 0.5 if winner not in (1, 2) else float(winner == 1)
        logged = json.loads(text) if text else []
        nid, depth = root, 0
        while nid is not None:
            count, total = outcomes.get(nid, (0, 0.0))
            outcomes[nid] = (count + 1, total + score)
            if depth < len(logged) and logged[depth] is not None:
                count, total = values.get(nid, (0, 0.0))
                values[nid] = (count + 1, total + float(logged[depth]))
            played = game.parse(moves)
            nid = child.get((nid, played[depth])) if depth < len(played) else None
            depth += 1
    return outcomes, values


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
        outcomes, values = _walked(game, rows)
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
