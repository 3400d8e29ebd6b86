"""Typed search options (SearchConfig, Literal names, UnknownOptionError) and the search node budget."""

from __future__ import annotations

import math

import pytest

import treelab
from treelab.errors import BudgetError, UnknownOptionError
from treelab.mcts.config import MAX_NEW_NODES, SearchConfig
from treelab.mcts.dispatch import puct_search
from treelab.play.training.config import TrainingConfig


def test_defaults_and_the_algorithms_exploration():
    config = SearchConfig()
    assert (config.algorithm, config.playout, config.choice, config.evaluator) == ("uct", "random", "visits", "rollout")
    assert config.exploration == math.sqrt(2) and SearchConfig(algorithm="puct").exploration == 1.25
    assert SearchConfig(algorithm="puct", c=0.5).score_c == math.sqrt(2)  # PUCT reports UCB1 with sqrt(2)
    assert SearchConfig(c=0.9).score_c == 0.9
    with pytest.warns(DeprecationWarning, match="ucb_c is now called score_c"):
        assert SearchConfig(c=0.9).ucb_c == 0.9
    assert SearchConfig(algorithm="puct").proves and not SearchConfig().proves  # solver None: the algorithm's
    assert not SearchConfig(algorithm="puct", solver=False).proves and SearchConfig(solver=True).proves
    with pytest.warns(DeprecationWarning, match="'c_puct' is now called 'c'"):
        assert SearchConfig.of(algorithm="puct", c_puct=2.0).c == 2.0
    assert config.max_new_nodes == MAX_NEW_NODES
    with pytest.raises(AttributeError):
        config.c = 1.0  # type: ignore[misc]  # frozen


@pytest.mark.parametrize(("field", "value"), [("algorithm", "mcts"), ("playout", "greedy"), ("evaluator", "net"),
                                              ("choice", "best"), ("algorithm", None), ("playout", 3)])
def test_unknown_names_are_one_clear_value_error(field, value):
    with pytest.raises(UnknownOptionError, match=f"unknown .*{value!r}: use one of") as info:
        SearchConfig(**{field: value})
    assert isinstance(info.value, ValueError) and not isinstance(info.value, BudgetError)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("field", "value"), [("c", -1.0), ("c", math.nan), ("c", math.inf), ("temperature", math.nan),
                                              ("temperature", math.inf), ("temperature", -0.5),
                                              ("max_new_nodes", 0), ("max_new_nodes", 1.5)])
def test_out_of_range_numbers_are_budget_errors(field, value):
    with pytest.raises(BudgetError, match=field):
        SearchConfig(**{field: value})


def test_of_replaces_given_fields_and_refuses_unknown_options():
    base = SearchConfig(algorithm="puct", temperature=1.0)
    assert SearchConfig.of(base, temperature=None, c=2.0) == SearchConfig(algorithm="puct", temperature=1.0, c=2.0)
    with pytest.raises(UnknownOptionError, match="unknown search option 'cpuct'"):
        SearchConfig.of(base, cpuct=1.0)


def test_analyse_takes_a_config_and_the_keywords_alike():
    config = SearchConfig(solver=True, c=0.9, playout="decisive")
    by_config = treelab.analyse("tictactoe", "15", iterations=400, search=config, seed=3)
    by_keywords = treelab.analyse("tictactoe", "15", iterations=400, solver=True, c=0.9, playout="decisive", seed=3)
    assert by_config.to_dict() == by_keywords.to_dict()
    with pytest.warns(DeprecationWarning, match="'config' is now called 'search'"):
        by_old_name = treelab.analyse("tictactoe", "15", iterations=400, config=config, seed=3)
    assert by_old_name.to_dict() == by_config.to_dict()
    with pytest.warns(DeprecationWarning, match="'how' is now called 'choice'"):
        by_how = treelab.analyse("tictactoe", "15", iterations=400, how="ucb1", seed=3)
    assert by_how.to_dict() == treelab.analyse("tictactoe", "15", iterations=400, choice="ucb1", seed=3).to_dict()
    with pytest.raises(UnknownOptionError, match="unknown search option 'cpuct'"):
        treelab.analyse("tictactoe", iterations=10, cpuct=1.0)
    with pytest.raises(UnknownOptionError, match="unknown algorithm 'alpha'"):
        treelab.analyse("tictactoe", iterations=10, algorithm="alpha")  # type: ignore[arg-type]


def test_train_takes_a_config_and_grows_the_tree_the_keywords_grow(tmp_path):
    config = SearchConfig(c=1.1, temperature=0.5)
    training = TrainingConfig(iterations=60, seed=5, progress=False)
    a = treelab.train("tictactoe", tmp_path / "a.db", 3, search=config, training=training)
    b = treelab.train("tictactoe", tmp_path / "b.db", games=3, iterations=60, seed=5, c=1.1, temperature=0.5,
                      progress=False)
    assert (a.nodes, a.simulations, a.wins, a.draws) == (b.nodes, b.simulations, b.wins, b.draws)
    with pytest.warns(DeprecationWarning, match="'config' is now called 'search'"):
        c = treelab.train("tictactoe", tmp_path / "c0.db", games=3, iterations=60, seed=5, config=config,
                          progress=False)
    ta, tb, tc = (treelab.load(tmp_path / f) for f in ("a.db", "b.db", "c0.db"))
    assert [(n.sequence, n.nb_visit, n.nb_win) for n in ta] == [(n.sequence, n.nb_visit, n.nb_win) for n in tb]
    assert [(n.sequence, n.nb_visit, n.nb_win) for n in tc] == [(n.sequence, n.nb_visit, n.nb_win) for n in ta]
    assert c.nodes == a.nodes
    with pytest.raises(UnknownOptionError, match="unknown option 'iteration'"):
        treelab.train("tictactoe", tmp_path / "d.db", 1, iteration=5)
    assert not (tmp_path / "d.db").exists()
    with pytest.raises(UnknownOptionError, match="unknown opponent 'human'"):
        treelab.train("tictactoe", tmp_path / "c.db", games=1, opponent="human", progress=False)
    assert not (tmp_path / "c.db").exists()


def test_a_huge_iteration_budget_stops_at_the_node_budget():
    """``--iterations 99999999999999999999999`` must not grow memory without bound."""
    tree = treelab.Tree("connect4")
    done = treelab.search(tree, limit=treelab.Limit(iterations=99999999999999999999999), rng=1, max_new_nodes=3000)
    assert tree.size == 1 + 3000 and done == 3000  # UCT adds one node per simulation until then
    tree2 = treelab.Tree("connect4")
    puct_search(tree2, limit=treelab.Limit(iterations=99999999999999999999999), rng=1, max_new_nodes=500)
    assert 1 + 500 <= tree2.size < 1 + 500 + 7  # PUCT adds a node per legal move: at most one expansion over
    result = treelab.analyse("connect4", iterations=99999999999999999999999, max_new_nodes=800, seed=2)
    assert result.iterations == 800
    with pytest.raises(BudgetError, match="max_new_nodes 0"):
        treelab.search(treelab.Tree("connect4"), limit=treelab.Limit(iterations=5), max_new_nodes=0)


def test_the_selection_hook_replaces_ucb1_and_the_compiled_walk_is_its_fast_path():
    from treelab.mcts.selection import select_ucb1

    def same_rule(node, c, solver):  # UCB1 through the hook: walked in Python
        return select_ucb1(node, c, solver)

    def snapshot(tree):
        return [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw) for n in tree]

    default, hooked = treelab.Tree("connect4"), treelab.Tree("connect4")
    treelab.search(default, "44", limit=treelab.Limit(iterations=1500), rng=4, c=1.1)
    treelab.search(hooked, "44", limit=treelab.Limit(iterations=1500), rng=4, c=1.1, select=same_rule)
    assert snapshot(hooked) == snapshot(default)

    def first_child(node, c, solver):
        return node.children_view[0]

    greedy = treelab.Tree("connect4")
    treelab.search(greedy, limit=treelab.Limit(iterations=500), rng=4, select=first_child)
    kids = greedy.root.children_view
    assert len(kids) == 7 and kids[0].nb_visit == 500 - 6  # once every move is tried, always the first


def test_the_options_of_a_run_are_made_and_checked_once():
    """``train`` builds its SearchConfig once (a given value is used as it is when nothing replaces it)."""
    from treelab.play.training.config import TEMPERATURE, split_options

    given = SearchConfig(c=0.8, temperature=0.3)
    search, training = split_options(given, TrainingConfig(opponent="heuristic"), {}, 7)
    assert search is given and training.noise == 0.0 and training.alpha == 10 / 7
    search, training = split_options(None, None, {"solver": True, "iterations": 50}, 9)
    assert (search.solver, search.temperature, training.iterations, training.noise) == (True, TEMPERATURE, 50, 0.25)
    search, _ = split_options(None, None, {"temperature": 0.0}, 9)  # self-play without sampling: said so
    assert search.temperature == 0.0
    with pytest.raises(BudgetError, match="iterations 0"):
        TrainingConfig(iterations=0)
    with pytest.raises(BudgetError, match=r"noise fraction 1\.5"):
        TrainingConfig(noise=1.5)


def test_a_training_run_makes_its_search_config_once(tmp_path, monkeypatch):
    """``treelab train`` (the command, in this process) checks its search options once, not per layer."""
    from click.testing import CliRunner

    from treelab.cli import cli

    made = []
    check = SearchConfig.__post_init__

    def counted(self):
        made.append(self)
        check(self)

    monkeypatch.setattr(SearchConfig, "__post_init__", counted)
    db = tmp_path / "t.db"
    result = CliRunner().invoke(cli, ["train", "tictactoe", "--db", str(db), "--games", "2", "--iterations", "30",
                                      "--solver", "--seed", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    assert len(made) == 1 and made[0].solver and made[0].temperature == 1.0  # self-play's default, decided once
    assert treelab.info(str(db))["games"] == 2


def test_puct_search_with_a_model_path_is_the_config_with_that_model(tmp_path):
    """``puct_search(evaluator="model:PATH")`` is :class:`SearchConfig`'s ``model``: its default ``c`` comes from the
    one rule (:attr:`SearchConfig.exploration`, a model's values alone: 0.625), and a bad file fails before the
    search touches the tree."""
    from tests.mcts.test_puct_compiled import random_model
    from treelab.errors import ModelFileError
    from treelab.mcts.dispatch import run_search
    from treelab.mcts.loop import Limit
    from treelab.nodes import walk

    path = str(random_model(5).save(tmp_path / "m.npz").path)
    grown = []
    for search in (lambda t: puct_search(t, "4", limit=Limit(iterations=300), evaluator=f"model:{path}", rng=2),
                   lambda t: run_search(t, "4", SearchConfig(algorithm="puct", c=0.625, model=path),
                                        Limit(iterations=300), rng=2)):
        tree = treelab.Tree("connect4")
        assert search(tree) == 300
        grown.append(sorted((n.sequence, n.nb_visit, n.nb_win) for n in walk(tree.root)))
    assert grown[0] == grown[1]
    assert SearchConfig(algorithm="puct", model=path).exploration == 0.625
    tree = treelab.Tree("connect4")
    (tmp_path / "bad.npz").write_bytes(b"not a model")
    with pytest.raises(ModelFileError, match=r"bad\.npz"):
        puct_search(tree, "4", limit=Limit(iterations=10), evaluator=f"model:{tmp_path / 'bad.npz'}")
    assert len(list(walk(tree.root))) == 1  # untouched: the root alone
