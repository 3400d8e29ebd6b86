"""PUCT search: the selection formula, backup semantics, priors, noise, temperature, evaluators."""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import Path

import pytest

import treelab
from treelab.errors import BudgetError, UnknownOptionError
from treelab.games.connect4 import C4_LINES
from treelab.mcts.config import SearchConfig
from treelab.mcts.dispatch import puct_search
from treelab.mcts.evaluators import (
    Evaluation,
    HeuristicEvaluator,
    RolloutEvaluator,
    find_evaluator,
    uniform_priors,
)
from treelab.mcts.puct import (
    C_PUCT,
    _outcome,
    choose_puct_move,
    dirichlet_alpha_for,
)
from treelab.mcts.uct import Limit
from treelab.play.players import MCTSPlayer


def limit(n: int) -> Limit:
    return Limit(iterations=n)


def check_counts(tree: treelab.Tree) -> None:
    """The tree's invariants: visits cover the children's, wins and draws fit in visits."""
    for node in tree:
        assert node.nb_win + node.nb_draw <= node.nb_visit
        assert node.nb_visit >= sum(k.nb_visit for k in node.children_view)
        if node in tree.pending and node.proven is None:
            priors = all_priors(tree, node)
            assert math.isclose(sum(priors.values()), 1.0) or not priors


def all_priors(tree: treelab.Tree, node: treelab.TreeNode) -> dict[str, float]:
    """The priors of every move PUCT evaluated at ``node``: its children's, and those of the moves it
    has not made a node for yet (``tree.pending``)."""
    return {**{k.name: tree.priors[k] for k in node.children_view if k in tree.priors}, **tree.pending.get(node, {})}


def fixed(priors: dict[int, float], value: float = 0.5):
    """An evaluator with fixed priors (renormalised over the legal moves) and value."""

    def evaluate(state, rng):
        legal = state.legal_moves()
        weights = {m: priors.get(m, 0.0) for m in legal}
        total = sum(weights.values()) or 1.0
        return Evaluation({m: w / total for m, w in weights.items()}, value)

    return evaluate


# -- the formula ------------------------------------------------------------
@pytest.mark.parametrize("c", [0.0, C_PUCT, 3.0])
def test_selection_takes_the_highest_puct_score(c):
    tree = treelab.Tree("tictactoe")
    puct_search(tree, limit=limit(1), evaluator="rollout", rng=1)  # evaluates the root: 9 moves wait
    root = tree.root
    assert root.nb_visit == 1 and not root.children_view and len(tree.pending[root]) == 9
    for label in list(tree.pending[root]):  # make every child (the search makes one when it first selects it)
        tree.add_child(root, label, 1)
    tree.pending[root] = {}
    rng = random.Random(3)
    for kid in root.children_view:  # give the children arbitrary statistics and priors
        kid.nb_select = rng.randint(1, 30)  # the times the root chose it
        kid.nb_visit = kid.nb_select + rng.choice([0, 0, rng.randint(1, 500)])  # and searches started deeper
        kid.nb_win = rng.randint(0, kid.nb_visit)
        kid.nb_draw = rng.randint(0, kid.nb_visit - kid.nb_win)
        tree.priors[kid] = rng.random()
    total = sum(tree.priors[k] for k in root.children_view)
    for kid in root.children_view:
        tree.priors[kid] /= total
    root.nb_visit = sum(k.nb_visit for k in root.children_view) + 1
    assert any(k.nb_visit > k.nb_select for k in root.children_view)

    def score(kid):  # AlphaZero's N(s) and n(s, a) are edge counts: pass-through visits explore nothing
        q = (kid.nb_win + 0.5 * kid.nb_draw) / kid.nb_visit
        big_n = 1 + sum(k.nb_select for k in root.children_view)
        return q + c * tree.priors[kid] * math.sqrt(big_n) / (1 + kid.nb_select)

    expected = max(root.children_view, key=score)
    before = {k.name: k.nb_visit for k in root.children_view}
    puct_search(tree, limit=limit(1), c=c, evaluator="rollout", rng=2)
    grown = [k.name for k in root.children_view if k.nb_visit != before[k.name]]
    assert grown == [expected.name]


def test_unvisited_children_use_the_parents_value_and_their_prior():
    # Only the prior differs among unvisited children: the largest prior is tried first.
    tree = treelab.Tree("connect4")
    evaluator = fixed({1: 0.05, 2: 0.05, 3: 0.1, 4: 0.5, 5: 0.1, 6: 0.1, 7: 0.1})
    puct_search(tree, limit=limit(2), evaluator=evaluator, rng=1)
    assert [k.name for k in tree.root.children_view if k.nb_visit] == ["4"]
    assert math.isclose(tree.priors[tree.find("4")], 0.5)


def test_priors_steer_the_search():
    tree = treelab.Tree("connect4")
    evaluator = fixed({3: 0.8, 5: 0.2}, value=0.5)  # moves without a prior get 0
    puct_search(tree, limit=limit(200), evaluator=evaluator, rng=1, solver=False)
    visits = {k.name: k.nb_visit for k in tree.root.children_view}
    assert visits["3"] > visits["5"] > 0
    assert sum(visits.values()) == 199


def test_raw_prior_weights_are_normalised_and_all_zero_is_uniform():
    tree = treelab.Tree("tictactoe")
    puct_search(tree, limit=limit(1), evaluator=lambda state, rng: Evaluation({5: 8.0, 1: 2.0}, 0.5), rng=1)
    priors = all_priors(tree, tree.root)
    assert priors["5"] == pytest.approx(0.8) and priors["1"] == pytest.approx(0.2) and priors["9"] == 0.0
    tree = treelab.Tree("tictactoe")
    puct_search(tree, limit=limit(1), evaluator=lambda state, rng: Evaluation({}, 0.5), rng=1)
    priors = all_priors(tree, tree.root)
    assert len(priors) == 9 and all(p == pytest.approx(1 / 9) for p in priors.values())


# -- backup -----------------------------------------------------------------
@pytest.mark.parametrize("game,moves", [("connect4", ""), ("connect4", "4453"), ("tictactoe", "15")])
@pytest.mark.parametrize("evaluator", ["rollout", "heuristic"])
def test_backup_counts_every_simulation_from_the_root(game, moves, evaluator):
    tree = treelab.Tree(game)
    done = puct_search(tree, moves, limit=limit(300), evaluator=evaluator, rng=5)
    assert tree.root.nb_visit == done
    assert tree.find(moves).nb_visit == done
    done2 = puct_search(tree, moves + ("1" if game == "connect4" else "9"), limit=limit(100), rng=6)
    assert tree.root.nb_visit == done + done2
    check_counts(tree)
    assert tree.unsaved == len(tree)  # every node changed since creation is marked for saving


def test_wins_are_counted_for_the_mover():
    # X to move wins at once in column 4 (three X discs stacked there): a proof, and exact backups.
    tree = treelab.Tree("connect4")
    puct_search(tree, "414141", limit=limit(10), rng=1)
    node = tree.find("414141")
    assert node.proven == -1  # the player who moved into it (O) loses
    assert node.nb_visit == 1 and node.nb_win == 0  # one simulation: a win for X, the player to move
    assert tree.root.nb_win == 0 and tree.find("4").nb_win == 1


def test_fractional_values_are_sampled_with_the_right_mean():
    rng = random.Random(1)
    for value in (0.1, 0.3, 0.7, 0.9):
        counts = Counter(_outcome(value, 1, rng) for _ in range(20000))
        mean = (counts[1] + 0.5 * counts[None]) / 20000
        assert abs(mean - value) < 0.01
        assert counts[2 if value > 0.5 else 1] == 0  # only the two nearest results
    state = random.Random(5)
    before = state.getstate()
    assert [_outcome(v, 2, state) for v in (0.0, 0.5, 1.0)] == [1, None, 2]
    assert state.getstate() == before  # exact values draw nothing


def test_a_static_evaluator_backs_up_draws_and_wins():
    tree = treelab.Tree("connect4")
    puct_search(tree, limit=limit(400), evaluator=fixed({}, value=0.75), rng=2, solver=False)
    assert tree.root.nb_draw > 0
    check_counts(tree)


def test_same_seed_same_tree():
    def grow(seed):
        tree = treelab.Tree("connect4")
        puct_search(tree, limit=limit(300), evaluator="heuristic", noise=treelab.RootNoise(1.0), rng=seed)
        return [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw, n.proven) for n in tree]

    assert grow(7) == grow(7)
    assert grow(7) != grow(8)


# -- noise, temperature, move choice -------------------------------------------
def test_root_dirichlet_noise_changes_the_search_but_not_the_stored_priors():
    quiet, noisy = treelab.Tree("connect4"), treelab.Tree("connect4")
    puct_search(quiet, limit=limit(400), evaluator="heuristic", rng=1)
    puct_search(noisy, limit=limit(400), evaluator="heuristic", rng=1, noise=treelab.RootNoise(0.3, 0.5))
    assert all_priors(quiet, quiet.root) == all_priors(noisy, noisy.root)
    assert [k.nb_visit for k in quiet.root.children_view] != [k.nb_visit for k in noisy.root.children_view]
    assert dirichlet_alpha_for(7) == pytest.approx(10 / 7)
    old = treelab.Tree("connect4")
    with pytest.warns(DeprecationWarning, match="'dirichlet_alpha' is now called 'alpha'"):
        puct_search(old, limit=limit(400), evaluator="heuristic", rng=1, dirichlet_alpha=0.3, dirichlet_fraction=0.5)
    assert [k.nb_visit for k in old.root.children_view] == [k.nb_visit for k in noisy.root.children_view]


def test_temperature_zero_is_greedy_and_large_temperature_near_uniform():
    tree = treelab.Tree("connect4")
    puct_search(tree, limit=limit(500), evaluator="rollout", c=3.0, rng=1)
    again = treelab.Tree("connect4")
    with pytest.warns(DeprecationWarning, match="'c_puct' is now called 'c'"):
        puct_search(again, limit=limit(500), evaluator="rollout", c_puct=3.0, rng=1)
    assert [k.nb_visit for k in again.root.children_view] == [k.nb_visit for k in tree.root.children_view]
    root = tree.root
    top = max(root.children_view, key=lambda k: k.nb_visit)
    assert choose_puct_move(root).name == top.name
    rng = random.Random(2)
    picks = Counter(choose_puct_move(root, temperature=100.0, rng=rng).name for _ in range(7000))
    assert len(picks) == 7 and min(picks.values()) > 700  # ~1000 each


def test_a_proven_win_is_always_played_even_unvisited():
    state_moves = "414141"  # X wins in column 4 at once
    tree = treelab.Tree("connect4")
    puct_search(tree, state_moves, limit=limit(1), rng=1)
    node = tree.find(state_moves)
    win = node.child("4")
    assert win.proven == 1 and win.nb_visit == 0
    for tau in (0.0, 1.0, 50.0):
        assert choose_puct_move(node, temperature=tau, rng=random.Random(1)).name == "4"
    player = MCTSPlayer(SearchConfig(algorithm="puct", temperature=5.0), Limit(iterations=1), rng=3)
    game = treelab.find_game("connect4")
    assert player.choose(game.replay(state_moves), game.parse(state_moves)) == 4


def test_puct_player_keeps_a_given_tree():
    tree = treelab.Tree("tictactoe")
    with pytest.warns(DeprecationWarning, match="PUCTPlayer is now MCTSPlayer"):
        player = treelab.PUCTPlayer(tree=tree, iterations=50, rng=1)
    assert isinstance(player, MCTSPlayer) and player.search.algorithm == "puct"
    assert isinstance(player.evaluator, HeuristicEvaluator)  # the old alias's default evaluator, kept
    game = tree.game
    player.new_game(game)
    player.choose(game.initial(), ())
    player.new_game(game)
    assert player.tree is tree and tree.root.nb_visit == 50


# -- evaluators ----------------------------------------------------------------
def test_heuristic_priors():
    game = treelab.find_game("connect4")
    h = HeuristicEvaluator()
    empty = h.priors(game.initial())
    assert math.isclose(sum(empty.values()), 1.0)
    assert max(empty, key=empty.get) == 4
    assert empty[4] / empty[1] == pytest.approx(C4_LINES[0][3] / C4_LINES[0][0])
    assert h.priors(game.replay("414141")) == {4: 1.0}  # win at once
    assert h.priors(game.replay("41414")) == {4: 1.0}  # block
    ttt = h.priors(treelab.find_game("tictactoe").initial())
    assert max(ttt, key=ttt.get) == 5


@pytest.mark.parametrize("moves,blunder", [("143423362", 4), ("65763537", 4), ("671334431", 2)])
def test_heuristic_avoids_moves_that_hand_the_opponent_a_win(moves, blunder):
    state = treelab.find_game("connect4").replay(moves)
    assert not state.winning_moves() and not state.threats()
    assert state.play(blunder).winning_moves()  # the opponent would win at once
    priors = HeuristicEvaluator().priors(state)
    assert set(priors) == set(state.legal_moves())
    assert priors[blunder] < 0.2 * min(p for m, p in priors.items() if m != blunder)


def test_connect4_bitboard_priors_equal_the_generic_rules():
    from treelab.mcts.evaluators import _normalised

    h = HeuristicEvaluator()

    def generic(state):  # the class docstring, written with the game interface only
        wins = state.winning_moves() or state.threats()
        if wins:
            return _normalised(dict.fromkeys(wins, 1.0))
        weights = {}
        for move in state.legal_moves():
            after = state.play(move)
            weight = state.centrality(move)
            if not after.is_terminal:
                weight *= h.threat_bonus ** len(after.threats())
                if after.winning_moves():
                    weight *= h.blunder_weight
            weights[move] = weight
        return _normalised(weights)

    game = treelab.find_game("connect4")
    rng = random.Random(9)
    for _ in range(150):
        state = game.initial()
        while not state.is_terminal:
            fast, slow = h.priors(state), generic(state)
            assert fast.keys() == slow.keys()
            assert all(math.isclose(fast[m], slow[m]) for m in fast), state.board()
            state = state.play(rng.choice(state.legal_moves()))


def test_rollout_evaluator_and_registry():
    game = treelab.find_game("tictactoe")
    state = game.replay("15")
    ev = RolloutEvaluator(rollouts=3)
    result = ev(state, random.Random(1))
    assert result.priors == uniform_priors(state)
    assert result.value in {k / 6 for k in range(7)}
    assert isinstance(find_evaluator("heuristic", playout="decisive"), HeuristicEvaluator)
    with pytest.raises(UnknownOptionError, match="unknown evaluator"):
        find_evaluator("network")
    with pytest.raises(BudgetError):
        RolloutEvaluator(rollouts=0)


# -- errors ------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    ({"c": -1.0}, "c -1.0 must be"),
    ({"c": math.inf}, "c inf must be"),
    ({"noise": "0.3"}, "noise '0.3' must be a RootNoise"),
    ({"evaluator": "nope"}, "unknown evaluator"),
    ({"evaluator": fixed({}, value=1.5)}, "not in"),
    ({"evaluator": lambda state, rng: Evaluation({1: -0.5}, 0.5)}, "negative"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises((BudgetError, UnknownOptionError), match=match):
        puct_search(treelab.Tree("tictactoe"), limit=limit(5), rng=1, **kwargs)


@pytest.mark.parametrize("kwargs,match", [
    ({"alpha": 0.0}, "noise alpha 0.0 must be"),
    ({"alpha": 1.0, "fraction": 1.5}, "noise fraction 1.5 must be"),
])
def test_bad_root_noise_is_a_clear_error(kwargs, match):
    with pytest.raises(BudgetError, match=match):
        treelab.RootNoise.of(**kwargs)


def test_terminal_position_and_seconds_budget():
    tree = treelab.Tree("tictactoe")
    assert puct_search(tree, "14253", limit=limit(10)) == 0  # X won already (1-2-3 top row)
    done = puct_search(treelab.Tree("connect4"), limit=Limit(seconds=0.05), rng=1)
    assert done >= 1


def test_save_and_load_keep_puct_trees_and_proofs(tmp_path):
    from treelab.store.persistence import load

    tree = treelab.Tree("tictactoe")
    puct_search(tree, "1", limit=limit(5000), rng=1)
    assert tree.find("1").proven == 0  # X's corner opening is a draw
    db = tmp_path / "ttt.db"
    tree.save(db)
    back = load(db)
    assert len(back) == len(tree)
    assert [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw, n.proven) for n in back] == [
        (n.sequence, n.nb_visit, n.nb_win, n.nb_draw, n.proven) for n in tree
    ]
    # priors are not stored: the search re-evaluates them and goes on growing the loaded tree
    assert puct_search(back, "1", limit=limit(50), rng=2) == 0  # proven: nothing to do
    assert puct_search(back, "5", limit=limit(50), rng=2) == 50
    assert back.root.nb_visit == tree.root.nb_visit + 50
    check_counts(back)
    back.save(db)
    assert load(db).root.nb_visit == back.root.nb_visit


# -- batched leaf evaluation ----------------------------------------------------
class Batched:
    """A :class:`~treelab.mcts.evaluators.BatchEvaluator`: the rollout evaluator, keeping the size of each batch."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self.inner = RolloutEvaluator()
        self.sizes: list[int] = []

    def __call__(self, state, rng):
        self.sizes.append(1)
        return self.inner(state, rng)

    def evaluate_many(self, states, rng):
        self.sizes.append(len(states))
        return [self.inner(state, rng) for state in states]


@pytest.mark.parametrize("game,moves", [("connect4", ""), ("connect4", "4453"), ("tictactoe", "1")])
def test_batched_evaluation_counts_every_simulation_and_takes_back_its_virtual_losses(game, moves):
    evaluator = Batched(8)
    tree = treelab.Tree(game)
    done = puct_search(tree, moves, limit=limit(400), evaluator=evaluator, rng=4)
    # with the solver no simulation enters a finished game: each one is one evaluated leaf
    assert tree.root.nb_visit == done == sum(evaluator.sizes)
    check_counts(tree)  # every visit is a real one: the virtual losses are gone
    assert max(evaluator.sizes) == 8 and sorted(evaluator.sizes)[len(evaluator.sizes) // 2] >= 4  # mostly batches
    assert tree.unsaved == len(tree)

    def grow(seed: int) -> list[tuple[object, ...]]:
        again = treelab.Tree(game)
        puct_search(again, moves, limit=limit(400), evaluator=Batched(8), rng=seed)
        return [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw, n.proven) for n in again]

    assert grow(4) == grow(4)


def test_a_batched_search_still_finds_the_only_good_move():
    # X has 2-3-4 on the bottom row and column 1 is O's: O must block at 5, batched as one at a time
    for evaluator in (Batched(8), Batched(1)):
        tree = treelab.Tree("connect4")
        puct_search(tree, "21314", limit=limit(600), evaluator=evaluator, rng=2)
        assert choose_puct_move(tree.find("21314")).name == "5", evaluator.batch_size
        assert set(evaluator.sizes) == ({1} if evaluator.batch_size == 1 else set(range(1, 9)) & set(evaluator.sizes))


def test_a_fresh_puct_files_root_has_one_visit_more_than_its_children(tmp_path: Path) -> None:
    """The first simulation evaluates the root and makes no node (docs/design.md, docs/guide/search.md)."""
    from cli_helpers import run

    db = tmp_path / "p.db"
    result = run("analyse", "connect4", "--algorithm", "puct", "--iterations", "200", "--db", str(db), "--seed", "1")
    assert result.exit_code == 0, result.output
    root = treelab.load(db).root
    assert root.nb_visit == 200 and sum(k.nb_visit for k in root.children_view) == 199
    fresh = treelab.Tree("connect4")  # UCT makes a child in its first simulation
    treelab.search(fresh, limit=Limit(iterations=200), rng=1)
    assert fresh.root.nb_visit == sum(k.nb_visit for k in fresh.root.children_view) == 200
