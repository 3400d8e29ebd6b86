"""UCT search on the persistent tree: budgets, replayability, invariants, move choice, strength."""

from __future__ import annotations

import functools
import json
import math
import random

import pytest

import treelab
from treelab import BudgetError, IllegalMoveError, Limit, Tree, search
from treelab.errors import UnknownOptionError
from treelab.games import Game, State, find_game
from treelab.mcts.summary import choose_move, summarize
from treelab.play.players import HeuristicPlayer, MCTSPlayer, RandomPlayer


def snapshot(tree: Tree) -> list[tuple]:
    return [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw, None if n.proven is None else int(n.proven)) for n in tree]


def check_invariants(tree: Tree) -> None:
    for node in tree:
        kids = node.children_view
        assert node.nb_visit >= sum(k.nb_visit for k in kids)
        assert 0 <= node.nb_win + node.nb_draw <= node.nb_visit
        assert len({k.name for k in kids}) == len(kids)
        assert all(k.depth == node.depth + 1 for k in kids)


def test_same_seed_same_tree_and_other_seed_other_tree() -> None:
    trees = []
    for seed in (7, 7, 8):
        tree = Tree("connect4")
        search(tree, "44", limit=Limit(iterations=600), rng=seed)
        trees.append(snapshot(tree))
    assert trees[0] == trees[1]
    assert trees[0] != trees[2]


@pytest.mark.parametrize("game,moves", [("connect4", ""), ("connect4", "4453"), ("tictactoe", "15")])
def test_every_simulation_is_backed_up_from_the_root(game: str, moves: str) -> None:
    tree = Tree(game)
    done = search(tree, moves, limit=Limit(iterations=300), rng=1)
    assert done == 300
    assert tree.root.nb_visit == 300
    for node in tree.path(moves, create=False)[0]:
        assert node.nb_visit == 300  # every path runs through the searched position
    check_invariants(tree)
    # searches elsewhere later keep counting from the root
    search(tree, "", limit=Limit(iterations=100), rng=2)
    assert tree.root.nb_visit == 400
    check_invariants(tree)


def test_one_new_node_per_simulation_until_the_tree_is_complete() -> None:
    tree = Tree("connect4")
    search(tree, "", limit=Limit(iterations=500), rng=3)
    assert len(tree) == 501  # the root and one node per simulation
    small = Tree("tictactoe")
    search(small, "1234", limit=Limit(iterations=2000), rng=3)
    assert len(small) < 2000 + 5  # expansion stops at terminal positions, the tree is finite


def test_budget_in_seconds_stops() -> None:
    tree = Tree("connect4")
    done = search(tree, "", limit=Limit(seconds=0.05), rng=1)
    assert done >= 1
    assert tree.root.nb_visit == done


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"iterations": 0}, {"iterations": -5}, {"seconds": -1.0}, {"seconds": 0.0}, {"seconds": math.nan}],
)
def test_bad_budgets_are_refused(kwargs: dict) -> None:
    with pytest.raises(BudgetError) as info:
        Limit(**kwargs)
    message = str(info.value)
    assert "\n" not in message and message[0].islower()


def test_bad_inputs_leave_the_tree_unchanged() -> None:
    tree = Tree("connect4")
    search(tree, "", limit=Limit(iterations=50), rng=1)
    before = snapshot(tree)
    with pytest.raises(IllegalMoveError):
        search(tree, "4444444", limit=Limit(iterations=10), rng=1)
    with pytest.raises(BudgetError):
        search(tree, "", limit=Limit(iterations=10), c=-1.0)
    assert snapshot(tree) == before


def test_search_at_the_end_of_a_game_runs_nothing() -> None:
    tree = Tree("tictactoe")
    assert search(tree, "14253", limit=Limit(iterations=10)) == 0  # X has won
    assert tree.root.nb_visit == 0


def test_ucb1_shown_matches_the_formula() -> None:
    tree = Tree("connect4")
    search(tree, "", limit=Limit(iterations=400), rng=5)
    summary = summarize(tree, "", iterations=400, c=0.9)
    for child in summary.children:
        node = tree.find(child.move)
        mean = (node.nb_win + node.nb_draw / 2) / node.nb_visit
        assert child.mean == pytest.approx(mean)
        assert child.ucb1 == pytest.approx(mean + 0.9 * math.sqrt(math.log(tree.root.nb_visit) / node.nb_visit))
        assert child.ucb1 == pytest.approx(treelab.ucb1(node, tree.root.nb_visit, c=0.9))


def test_move_choice_by_visits_by_ucb1_and_by_temperature() -> None:
    tree = Tree("connect4")
    for moves, winner, times in (("4", 1, 30), ("3", 2, 5), ("5", 1, 8)):
        for _ in range(times):
            tree.record(moves, winner=winner)
    root = tree.root
    assert choose_move(root).name == "4"
    assert choose_move(root, choice="ucb1", c=100.0).name == "3"  # the least visited explores most
    with pytest.warns(DeprecationWarning, match="'how' is now called 'choice'"):
        assert choose_move(root, how="ucb1", c=100.0).name == "3"  # the old spelling still works
    rng = random.Random(1)
    picks = [choose_move(root, temperature=100.0, rng=rng).name for _ in range(600)]
    assert set(picks) == {"3", "4", "5"}  # high temperature: close to uniform
    assert abs(picks.count("3") - 200) < 60
    picks = [choose_move(root, temperature=0.05, rng=rng).name for _ in range(50)]
    assert set(picks) == {"4"}
    tree.find("3").proven = 1  # a proven win is always played
    assert choose_move(root).name == "3"
    with pytest.raises(UnknownOptionError, match="unknown move choice 'best'"):
        choose_move(root, choice="best")


def play_game(game: Game, first, second) -> int | None:
    state: State = game.initial()
    moves: list[int] = []
    players = (first, second)
    for p in players:
        p.new_game(game)
    while not state.is_terminal:
        move = players[state.ply % 2].choose(state, moves)
        state = state.play(move)
        moves.append(move)
    return state.winner


@functools.cache
def minimax_value(x: int, o: int) -> int:
    """Tic-tac-toe value for the player to move: 1 win, 0 draw, -1 loss."""
    state = find_game("tictactoe").initial().__class__(x, o, bin(x | o).count("1"))
    if state.winning_moves():
        return 1
    values = []
    for move in state.legal_moves():
        after = state.play(move)
        values.append(0 if after.is_terminal else -minimax_value(after.x, after.o))
    return max(values) if values else 0


class PerfectTicTacToe:
    name = "minimax"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def new_game(self, game: Game) -> None:
        return None

    def choose(self, state, moves) -> int:
        scored = []
        for move in state.legal_moves():
            after = state.play(move)
            value = (1 if after.winner else 0) if after.is_terminal else -minimax_value(after.x, after.o)
            scored.append((value, move))
        best = max(v for v, _ in scored)
        options = [m for v, m in scored if v == best]
        return self.rng.choice(options)  # any optimal move: varied games


def test_uct_finds_immediate_wins_and_forced_blocks_at_tictactoe() -> None:
    # X to move wins at 3 (row 1-2-3); O to move must block at 3
    for seed in range(5):
        win = treelab.analyse("tictactoe", "1425", iterations=300, seed=seed)
        assert win.best_move == "3" or win.best_move == "7"  # 1-4-7 column also wins
        block = treelab.analyse("tictactoe", "152", iterations=500, seed=seed)
        assert block.best_move == "3"
    c4 = treelab.analyse("connect4", "445566", iterations=400, seed=1)
    assert c4.best_move in ("3", "7")
    c4_block = treelab.analyse("connect4", "4455661", iterations=600, seed=1)
    assert c4_block.best_move in ("3", "7")


@pytest.mark.slow
def test_uct_never_loses_tictactoe_to_perfect_play() -> None:
    game = find_game("tictactoe")
    for i in range(20):
        # 1,500 simulations still lose about 0.7% of games to perfect play (measured over 1,000
        # seeds, with Python and compiled playouts alike); 3,000 lost none of 500
        uct = MCTSPlayer(iterations=3000, rng=i)
        perfect = PerfectTicTacToe(random.Random(100 + i))
        if i % 2:
            assert play_game(game, perfect, uct) != 1
        else:
            assert play_game(game, uct, perfect) != 2


@pytest.mark.slow
def test_uct_beats_random_and_heuristic_at_connect_four() -> None:
    game = find_game("connect4")
    wins_random = wins_heuristic = 0
    for i in range(10):
        uct = MCTSPlayer(iterations=300, rng=i)
        for opponent, counter in ((RandomPlayer(rng=50 + i), "r"), (HeuristicPlayer(rng=70 + i), "h")):
            uct_first = i % 2 == 0
            winner = play_game(game, uct, opponent) if uct_first else play_game(game, opponent, uct)
            won = winner == (1 if uct_first else 2)
            if counter == "r":
                wins_random += won
            else:
                wins_heuristic += won
    assert wins_random == 10
    assert wins_heuristic >= 9


def test_analyse_json_is_the_contract() -> None:
    result = treelab.analyse("connect4", "4453", iterations=500, seed=1)
    data = json.loads(json.dumps(result.to_dict()))
    assert list(data) == ["game", "moves", "to_move", "iterations", "best_move", "value", "proven", "children"]
    assert data["game"] == "connect4" and data["moves"] == "4453" and data["to_move"] == 1
    assert data["iterations"] == 500
    kids = data["children"]
    assert sum(k["nb_visit"] for k in kids) == 500
    value = sum(k["nb_win"] + k["nb_draw"] / 2 for k in kids) / sum(k["nb_visit"] for k in kids)
    assert data["value"] == pytest.approx(value)
    assert data["best_move"] == max(kids, key=lambda k: k["nb_visit"])["move"]
    for k in kids:
        assert set(k) == {"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven", "nb_select"}
        assert k["nb_select"] == k["nb_visit"]  # a fresh tree searched from this position: every visit chose here
        assert k["mean"] == pytest.approx((k["nb_win"] + k["nb_draw"] / 2) / k["nb_visit"])


def test_solver_proves_tictactoe_a_draw_and_stops_early() -> None:
    result = treelab.analyse("tictactoe", "", iterations=200_000, solver=True, seed=1)
    assert result.proven == "draw"
    assert result.iterations < 200_000
    assert all(child.proven == "draw" for child in result.children)
    won = treelab.analyse("tictactoe", "1425", iterations=1000, solver=True, seed=1)
    assert won.proven == "win" and won.best_move in ("3", "7")
    lost = treelab.analyse("tictactoe", "15", iterations=50_000, solver=True, seed=1)
    assert lost.proven == {1: "win", 0: "draw", -1: "loss"}[_value("15")]


def _value(moves: str) -> int:
    state = find_game("tictactoe").replay(moves)
    return minimax_value(state.x, state.o)


def test_analyse_in_a_database_reads_only_the_searched_subtree(tmp_path) -> None:
    db = tmp_path / "c4.db"
    tree = Tree("connect4")
    search(tree, "", limit=Limit(iterations=3000), rng=1)
    tree.save(db)
    whole = len(tree)
    part = treelab.open_tree(db, "connect4", path="44")
    assert len(part) < whole / 3
    assert part.find("44").nb_visit == tree.find("44").nb_visit
    deeper = treelab.open_tree(db, "connect4", path="4444444"[:6] + "3")  # not stored: its longest stored prefix
    assert deeper.get("4444443") is None or deeper.find("4444443").nb_visit == 0
    result = treelab.analyse("connect4", "4444443", iterations=100, seed=1, db=str(db))
    assert result.iterations == 100
    after = treelab.load(db)
    assert after.root.nb_visit == 3100 and after.find("4444443").nb_visit == 100
    check_invariants(after)


def test_analyse_of_a_finished_game_reports_its_result() -> None:
    lost = treelab.analyse("tictactoe", "14253", iterations=10).to_dict()
    assert (lost["iterations"], lost["best_move"], lost["children"]) == (0, None, [])
    assert lost["to_move"] == 2 and lost["proven"] == "loss" and lost["value"] == 0.0
    drawn = treelab.analyse("tictactoe", "123547968", iterations=10).to_dict()
    assert drawn["proven"] == "draw" and drawn["value"] == 0.5
