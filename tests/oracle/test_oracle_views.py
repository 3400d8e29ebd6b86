"""The oracle as a view and a measure: ``analyse``/``stats --oracle`` and the optimal-move shares.

The commands run on real trees (grown here by real searches, saved in real
SQLite files); the extra ``"oracle"`` key must equal :func:`treelab.oracle.solve`
and leave every other key as it was. The optimal-move share is checked with
choosers whose answers are known from the oracle itself (the best move, the
worst move) and with treelab's own tree and UCT choosers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab.analysis.optimality import optimal_share, puct_chooser, tree_chooser, tree_positions, uct_chooser
from treelab.errors import UnsupportedGameError
from treelab.oracle import solve, solve_state

LATE_C4 = "2252576253462244111563365343671351441"  # a Test_L3_R1 position (quick to solve)


@pytest.fixture(scope="module")
def ttt_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tic-tac-toe tree of 40 self-play games of 200 simulations, in a real database."""
    db = tmp_path_factory.mktemp("oracle") / "ttt.db"
    result = run("train", "tictactoe", "--db", str(db), "--games", "40", "--iterations", "200", "--seed", "3")
    assert result.exit_code == 0, result.output
    return db


def test_stats_json_oracle_adds_one_key_per_child(ttt_db: Path) -> None:
    plain = json.loads(run("stats", str(ttt_db), "--path", "5", "--json").output)
    judged = json.loads(run("stats", str(ttt_db), "--path", "5", "--json", "--oracle").output)
    values = solve("tictactoe", "5")
    assert judged["children"], "the tree has moves at 5"
    for before, after in zip(plain["children"], judged["children"], strict=True):
        assert after.pop("oracle") == values[int(before["move"])]
        assert after == before
    assert {k: v for k, v in judged.items() if k != "children"} == {k: v for k, v in plain.items() if k != "children"}


def test_stats_text_oracle_line(ttt_db: Path) -> None:
    out = run("stats", str(ttt_db), "--path", "1", "--oracle").output.strip().splitlines()
    assert out[-1].startswith("perfect play, for each move's player: ")
    assert "5 draw" in out[-1] and "9 loss" in out[-1]  # after a corner only the centre holds the draw


def test_analyse_json_oracle_connect4() -> None:
    result = run("analyse", "connect4", "--moves", LATE_C4, "--iterations", "300", "--seed", "1", "--json", "--oracle")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    values = solve("connect4", LATE_C4)
    assert {c["move"]: c["oracle"] for c in data["children"]} == {str(m): v for m, v in values.items()}


def test_analyse_text_oracle_tictactoe() -> None:
    result = run("analyse", "tictactoe", "--moves", "15", "--iterations", "200", "--seed", "1", "--oracle")
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("perfect play") and "loss" not in last and last.count("draw") == 7


def test_oracle_refused_for_a_game_without_one(tmp_path: Path) -> None:
    db = tmp_path / "nim.db"
    assert_clean_error(run("analyse", "nim", "--db", str(db), "--json", "--oracle"), "'nim'", "oracle")
    assert not db.exists()  # refused before the search: nothing written
    run("train", "nim", "--db", str(db), "--games", "2", "--iterations", "20", "--seed", "1")
    before = db.read_bytes()
    assert_clean_error(run("stats", str(db), "--json", "--oracle"), "'nim'", "oracle")
    assert db.read_bytes() == before


def test_perfect_and_worst_choosers(ttt_db: Path) -> None:
    tree = treelab.load(ttt_db)
    positions = tree_positions(tree, 50)
    assert positions and all(sum(k.nb_select for k in tree.find(p).children_view) >= 50 for p in positions)

    def best(state, moves):
        values = solve_state("tictactoe", state)
        return max(values, key=values.get)

    def worst(state, moves):
        values = solve_state("tictactoe", state)
        return min(values, key=values.get)

    perfect = optimal_share("tictactoe", positions, best)
    assert perfect.overall.share == 1.0 and perfect.overall.positions == len(positions)
    bad = optimal_share("tictactoe", positions, worst)
    assert bad.overall.optimal == bad.overall.positions - bad.overall.with_choice  # right only where nothing matters
    assert bad.overall.optimal_with_choice == 0
    assert sum(b.positions for b in bad.bands) == bad.overall.positions


def test_tree_and_fresh_uct_choosers(ttt_db: Path) -> None:
    tree = treelab.load(ttt_db)
    positions = tree_positions(tree, 200)
    stored = optimal_share("tictactoe", positions, tree_chooser(tree))
    again = optimal_share("tictactoe", positions, tree_chooser(tree))
    assert stored == again and stored.overall.positions == len(positions) and stored.skipped == 0
    fresh = optimal_share("tictactoe", positions, uct_chooser("tictactoe", 100, seed=5))
    assert fresh == optimal_share("tictactoe", positions, uct_chooser("tictactoe", 100, seed=5))  # seeded
    assert fresh.overall.positions == len(positions)


def test_a_fresh_puct_search_plays_better_with_more_simulations_and_replays(ttt_db: Path) -> None:
    positions = tree_positions(treelab.load(ttt_db), 200)
    weak = optimal_share("tictactoe", positions, puct_chooser("tictactoe", 3, "rollout", seed=1))
    assert weak == optimal_share("tictactoe", positions, puct_chooser("tictactoe", 3, "rollout", seed=1))
    assert 0 < weak.overall.optimal < weak.overall.positions == len(positions)
    strong = optimal_share("tictactoe", positions, puct_chooser("tictactoe", 400, "heuristic", seed=1))
    assert strong.overall.optimal == strong.overall.positions == len(positions)  # the solver proves them all


def test_judging_the_chosen_move_only_gives_the_same_shares(ttt_db: Path) -> None:
    tree = treelab.load(ttt_db)
    positions = tree_positions(tree, 20)
    fresh = uct_chooser("tictactoe", 30, seed=2)  # a weak search: some of its moves are wrong
    every = optimal_share("tictactoe", positions, fresh)
    cheap = optimal_share("tictactoe", positions, fresh, mattered=False)
    assert 0 < every.overall.optimal < every.overall.positions
    assert [(b.positions, b.optimal) for b in cheap.bands] == [(b.positions, b.optimal) for b in every.bands]
    assert cheap.overall.with_choice is None and every.overall.with_choice is not None


def test_optimal_share_refuses_a_game_without_an_oracle() -> None:
    with pytest.raises(UnsupportedGameError, match="'nim'"):
        optimal_share("nim", [()], lambda state, moves: 1)


def test_positions_beyond_the_oracle_budget_are_skipped() -> None:
    """An early Connect Four position the budget cannot solve is skipped, not judged; a late one is judged."""
    from treelab.oracle import oracle_for

    oracle = oracle_for("connect4", max_nodes=2_000_000)
    late = tuple(int(c) for c in LATE_C4)
    seen = []
    report = optimal_share("connect4", [(), late], lambda state, moves: state.legal_moves()[0], oracle=oracle,
                           on_position=lambda moves, chosen, values: seen.append((moves, values)))
    assert report.skipped == 1 and report.overall.positions == 1
    assert seen[0] == ((), None) and seen[1][1] == solve("connect4", LATE_C4)
    assert [b.positions for b in report.bands] == [0, 0, 0, 1]
