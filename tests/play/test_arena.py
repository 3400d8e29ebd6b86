"""The arena: player specs, matches, scores with intervals, the ``arena`` command."""

from __future__ import annotations

import hashlib
import json
import math
import sys

import pytest
from click.testing import CliRunner

import treelab
from treelab.cli import cli
from treelab.errors import SpecError
from treelab.mcts.evaluators import HeuristicEvaluator, RolloutEvaluator
from treelab.mcts.uct import Limit, search
from treelab.play.arena import (
    MatchResult,
    OpenSpielPlayer,
    elo_difference,
    make_player,
    parse_spec,
    play_game,
    play_match,
    wilson_interval,
)
from treelab.play.players import HeuristicPlayer, MCTSPlayer, MonteCarloPlayer, RandomPlayer


# -- specs -------------------------------------------------------------------------
def test_parse_spec():
    assert parse_spec("random") == ("random", {})
    assert parse_spec(" UCT:iterations=200, c=0.7 ") == ("uct", {"iterations": "200", "c": "0.7"})
    assert parse_spec("openspiel:simulations=100,c=1.4") == ("openspiel", {"simulations": "100", "c": "1.4"})


@pytest.mark.parametrize("spec,match", [
    ("minimax", "unknown player 'minimax'"),
    ("uct:iterations", "is not key=value"),
    ("uct:iterations=", "is not key=value"),
    ("uct:depth=3", "unknown key 'depth' for 'uct'"),
    ("random:iterations=3", "random takes no options"),
    ("uct:iterations=10,iterations=20", "given twice"),
    ("uct:iterations=ten", "not a whole number"),
    ("uct:iterations=0", "at least 1"),
    ("uct:c=-1", "at least 0"),
    ("uct:c=nan", "'nan' .* not a finite number"),
    ("uct:c=1e400", "'1e400' .* not a finite number"),
    ("puct:c=-inf", "'-inf' .* not a finite number"),
    ("uct:playout=smart", "not one of decisive, random"),
    ("solver:solver=maybe", "not 0 or 1"),
    ("puct:evaluator=net", "not one of rollout, heuristic"),
    ("puct:alpha=-1", "at least"),
    ("puct:alpha=1,fraction=2", "at most 1"),
    ("mc:playouts=0", "at least 1"),
])
def test_bad_specs_are_one_line_errors(spec, match):
    with pytest.raises(SpecError, match=match) as info:
        make_player(spec, "connect4")
    assert "\n" not in str(info.value)
    assert repr(spec) in str(info.value) or spec.split(":")[0] in str(info.value)


def test_specs_build_the_right_players():
    assert isinstance(make_player("random", "connect4"), RandomPlayer)
    assert isinstance(make_player("heuristic", "connect4"), HeuristicPlayer)
    mc = make_player("mc:playouts=7,playout=decisive", "connect4")
    assert isinstance(mc, MonteCarloPlayer) and mc.playouts == 7 and mc.name == "mc:playouts=7,playout=decisive"
    uct = make_player("uct:iterations=123,c=0.5,playout=decisive,temperature=0.5", "connect4")
    assert isinstance(uct, MCTSPlayer) and uct.limit.iterations == 123 and uct.search.c == 0.5
    assert not uct.search.proves and uct.search.temperature == 0.5 and uct.search.playout == "decisive"
    solver = make_player("solver:iterations=50", "connect4")
    assert isinstance(solver, MCTSPlayer) and solver.search.proves and solver.limit.iterations == 50
    assert make_player("uct:seconds=0.5", "connect4").limit.seconds == 0.5
    assert make_player("uct", "connect4").limit.iterations == 400
    puct = make_player("puct:iterations=80,c=2,evaluator=rollout,alpha=auto,fraction=0.1,solver=0", "connect4")
    assert isinstance(puct, MCTSPlayer) and puct.search.algorithm == "puct" and puct.search.c == 2.0
    puct.new_game(treelab.find_game("connect4"))
    assert isinstance(puct.evaluator, RolloutEvaluator) and not puct.search.proves
    noise = puct.search.noise
    assert noise is not None and noise.alpha == pytest.approx(10 / 7) and noise.fraction == 0.1
    heuristic = make_player("puct", "tictactoe")
    heuristic.new_game(treelab.find_game("tictactoe"))
    assert isinstance(heuristic.evaluator, HeuristicEvaluator) and heuristic.search.noise is None
    player = RandomPlayer(rng=1)
    assert make_player(player, "connect4") is player


def test_old_spec_keys_still_work_with_a_warning():
    with pytest.warns(DeprecationWarning, match="'dirichlet' is now called 'alpha'"):
        old = make_player("puct:iterations=5,dirichlet=0.5", "tictactoe")
    assert old.search.noise == treelab.RootNoise(0.5, 0.25)
    with pytest.warns(DeprecationWarning, match="'uct_c' is now called 'c'"):
        assert parse_spec("openspiel:uct_c=0.7") == ("openspiel", {"c": "0.7"})


# -- matches --------------------------------------------------------------------------
def test_colours_alternate_and_counts_add_up():
    result = play_match("tictactoe", "random", "heuristic", games=9, seed=4)
    assert [r.a_player for r in result.records] == [1, 2, 1, 2, 1, 2, 1, 2, 1]
    assert result.games == 9 == result.a_wins + result.b_wins + result.draws
    assert result.a_score == pytest.approx((result.a_wins + result.draws / 2) / 9)
    for record in result.records:
        state = treelab.find_game("tictactoe").replay(record.moves)
        assert state.is_terminal and state.winner == record.winner
    a_won = sum(r.winner == r.a_player for r in result.records)
    assert a_won == result.a_wins
    first, second = result.side(1), result.side(2)
    assert first["wins"] + second["wins"] == result.a_wins
    assert sum(first.values()) == 5 and sum(second.values()) == 4


def test_same_seed_same_match_and_seed_is_reported():
    a = play_match("connect4", "uct:iterations=30", "mc:playouts=3", games=4, seed=11)
    b = play_match("connect4", "uct:iterations=30", "mc:playouts=3", games=4, seed=11)
    c = play_match("connect4", "uct:iterations=30", "mc:playouts=3", games=4, seed=12)
    assert a.records == b.records and a.records != c.records
    unseeded = play_match("tictactoe", "random", "random", games=2)
    again = play_match("tictactoe", "random", "random", games=2, seed=unseeded.seed)
    assert again.records == unseeded.records


def test_json_object_has_the_contract_fields_and_is_strict_json():
    result = play_match("tictactoe", "heuristic", "random", games=6, seed=1)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    for key in ("games", "a_wins", "b_wins", "draws", "a_score", "ci95", "elo", "elo_ci95", "seed", "records"):
        assert key in data
    assert data["a_score"] == (data["a_wins"] + data["draws"] / 2) / data["games"]
    low, high = data["ci95"]
    assert 0 <= low <= data["a_score"] <= high <= 1


def test_wilson_interval_and_elo():
    low, high = wilson_interval(0.5, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    low, high = wilson_interval(1.0, 10)  # all won: the interval still has width
    assert low == pytest.approx(0.7225, abs=1e-3) and high == 1.0
    assert wilson_interval(0.3, 0) == (0.0, 1.0)
    assert elo_difference(0.5) == 0.0
    assert elo_difference(0.75) == pytest.approx(190.85, abs=0.01)
    assert elo_difference(1.0) is None and elo_difference(0.0) is None
    perfect = MatchResult("connect4", "a", "b", games=10, a_wins=10, b_wins=0, draws=0, seed=0)
    assert perfect.elo == pytest.approx(400 * math.log10(0.95 / 0.05))  # 9.5 of 10: finite
    assert perfect.elo_ci95[1] is None  # but unbounded above


def test_an_illegal_move_is_a_clear_error():
    class Cheat:
        name = "cheat"

        def new_game(self, game):
            return None

        def choose(self, state, moves):
            return 1

    with pytest.raises(SpecError, match="illegal move 1"):
        play_game(treelab.find_game("tictactoe"), Cheat(), Cheat())


# -- trained trees ---------------------------------------------------------------------
def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_uct_plays_from_a_trained_tree_without_changing_it(tmp_path):
    tree = treelab.Tree("tictactoe")
    search(tree, limit=Limit(iterations=3000), rng=1)
    db = tmp_path / "ttt.db"
    tree.save(db)
    before = _digest(db)
    player = make_player(f"uct:iterations=100,db={db}", "tictactoe", rng=1)
    assert player.tree is not None and player.tree.root.nb_visit == 3000
    assert player.search.c == tree.c  # the stored constant, unless the spec gives c
    assert make_player(f"uct:c=0.3,db={db}", "tictactoe").search.c == 0.3
    result = play_match("tictactoe", f"uct:iterations=100,db={db}", "random", games=4, seed=2)
    assert result.b_wins == 0
    assert _digest(db) == before
    with pytest.raises(SpecError, match="holds a tictactoe tree, not connect4"):
        make_player(f"uct:db={db}", "connect4")
    with pytest.raises(treelab.StoreError):
        make_player(f"uct:db={tmp_path / 'missing.db'}", "tictactoe")


# -- OpenSpiel ------------------------------------------------------------------------------
@pytest.mark.openspiel
def test_openspiel_player_plays_legal_and_winning_moves():
    pytest.importorskip("pyspiel")
    game = treelab.find_game("connect4")
    player = make_player("openspiel:simulations=200", game, rng=3)
    assert isinstance(player, OpenSpielPlayer)
    state = game.replay("414141")
    assert player.choose(state, game.parse("414141")) == 4  # X completes column 4
    ttt = treelab.find_game("tictactoe")
    bot = make_player("openspiel:simulations=300,solve=0", ttt, rng=1)
    assert bot.choose(ttt.replay("1425"), ttt.parse("1425")) == 3  # X completes the top row
    result = play_match("tictactoe", "openspiel:simulations=100", "random", games=4, seed=1)
    assert result.games == 4


def test_openspiel_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now raises ImportError
    with pytest.raises(SpecError, match=r"pip install 'treelab\[openspiel\]'"):
        make_player("openspiel:simulations=10", "connect4")


# -- the command ---------------------------------------------------------------------------
def test_arena_command_json_and_text():
    runner = CliRunner()
    out = runner.invoke(cli, ["arena", "tictactoe", "--a", "heuristic", "--b", "random", "--games", "4",
                              "--seed", "3", "--json", "--quiet"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["games"] == 4 and data["a"] == "heuristic" and data["seed"] == 3
    text = runner.invoke(cli, ["arena", "tictactoe", "--a", "heuristic", "--b", "random", "--games", "4",
                               "--seed", "3", "-q"])
    assert text.exit_code == 0 and "A scores" in text.output and "95% CI" in text.output
    helped = runner.invoke(cli, ["arena", "--help"])
    assert helped.exit_code == 0 and helped.output.rstrip().splitlines()[-1].strip().startswith("--b openspiel")
    assert "Example:" in helped.output


@pytest.mark.parametrize("args,match", [
    (["arena", "connect4", "--a", "uct:iterations=x", "--b", "random"], "iterations='x'"),
    (["arena", "chess", "--a", "random", "--b", "random"], "unknown game 'chess'"),
    (["arena", "connect4", "--a", "random"], "--b"),
    (["arena", "connect4", "--a", "random", "--b", "random", "--games", "0"], "--games"),
])
def test_arena_command_errors_are_one_line(args, match):
    from subprocess import run

    proc = run([sys.executable, "-m", "treelab", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:") and match in lines[0], proc.stderr


def test_progress_bar_goes_to_stderr(capsys):
    result = play_match("tictactoe", "heuristic", "random", games=3, seed=1, progress=True)
    out, err = capsys.readouterr()
    assert result.games == 3 and out == ""
    assert "heuristic vs random" in err
