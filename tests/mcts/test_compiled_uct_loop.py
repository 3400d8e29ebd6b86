"""The compiled batch loop (treelab/_loop.c) against the Python phases of treelab.mcts.uct_phases, its reference.

From the same seed both must grow the very same tree: the same nodes with the same ids, counts,
proofs and creation order, the same change tracking (baselines, new nodes, per-depth counts), the
same random draws (each simulation draws ``rng.random()`` for the expansion and ``getrandbits(64)``
for the playout, in the same order). The phases are forced by making ``_compiled_batch`` give None;
a spy checks the compiled side really ran whole batches. Without the extension these tests skip.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treelab
from treelab import speedups
from treelab.games import find_game
from treelab.mcts import loop, uct_phases
from treelab.mcts.selection import select_ucb1
from treelab.nodes import walk

needs_compiled = pytest.mark.skipif(speedups.compiled is None, reason=speedups.describe())
pytestmark = needs_compiled


def snapshot(tree: treelab.Tree) -> dict:
    """Everything a search changes: every node in depth-first order and the tree's change tracking."""
    return {
        "nodes": [(n.node_id, n.name, n.depth, n.nb_visit, n.nb_win, n.nb_draw, n.nb_select, n.proven,
                   n.created_game, n.parent.node_id if n.parent is not None else None) for n in walk(tree.root)],
        "size": tree.size,
        "next_id": tree.next_id,
        "depth_counts": list(tree.depth_counts),
        "new": [n.node_id for n in tree.new_nodes],
        "baselines": sorted((n.node_id, b) for n, b in tree.baselines.items()),
    }


def grow(tree: treelab.Tree, moves: str, *, compiled: bool, monkeypatch: pytest.MonkeyPatch, **options) -> tuple:
    """Search ``tree`` from ``moves`` with the compiled loop or the Python phases; (done, batches run, rng state)."""
    calls = []
    real = uct_phases._compiled_batch

    def spy(*args):
        batch = real(*args) if compiled else None
        if batch is None:
            return None

        def counted(*a):
            calls.append(a[1])
            return batch(*a)

        return counted

    monkeypatch.setattr(uct_phases, "_compiled_batch", spy)
    rng = random.Random(options.pop("seed", 0))
    done = treelab.search(tree, moves, rng=rng, **options)
    monkeypatch.setattr(uct_phases, "_compiled_batch", real)
    return done, calls, rng.getstate()


def both(game: str, moves: str, monkeypatch: pytest.MonkeyPatch, **options) -> tuple[dict, dict, list]:
    trees = []
    results = []
    for compiled in (True, False):
        tree = treelab.Tree(game)
        results.append(grow(tree, moves, compiled=compiled, monkeypatch=monkeypatch, **dict(options)))
        trees.append(snapshot(tree))
    (done_c, calls, state_c), (done_p, none, state_p) = results
    assert done_c == done_p and state_c == state_p  # the same number of simulations and random draws
    assert calls and not none
    return trees[0], trees[1], calls


CASES = [
    ("connect4", "", False, "random", 3000),
    ("connect4", "", True, "random", 15000),
    ("connect4", "4453", False, "decisive", 1500),
    ("connect4", "44444363", True, "decisive", 4000),
    ("connect4", "4455", True, "random", 2500),
    ("tictactoe", "", False, "random", 3000),
    ("tictactoe", "", True, "random", 3000),
    ("tictactoe", "51", True, "random", 2000),
    ("tictactoe", "5137", False, "random", 800),
]


@pytest.mark.parametrize(("game", "moves", "solver", "playout", "n"), CASES)
def test_the_same_tree_as_the_phases(game, moves, solver, playout, n, monkeypatch):
    ours, reference, calls = both(game, moves, monkeypatch, limit=treelab.Limit(iterations=n), solver=solver,
                                  playout=playout, seed=11)
    assert ours == reference
    assert len(ours["nodes"]) > 100
    assert max(calls) == min(n, loop.BATCH)  # whole batches, not one simulation at a time
    if solver:
        assert any(row[7] is not None for row in ours["nodes"])  # proofs were made (handed back to Python)


@settings(max_examples=25, deadline=None)
@given(game=st.sampled_from(["connect4", "tictactoe"]), seed=st.integers(0, 2**32), plies=st.integers(0, 12),
       solver=st.booleans(), n=st.integers(1, 700), c=st.sampled_from([0.0, 0.5, 2**-0.5, 2**0.5, 3.0]))
def test_the_same_tree_over_seeds_and_positions(game, seed, plies, solver, n, c):
    rules = find_game(game)
    pick = random.Random(seed)
    state, moves = rules.initial(), []
    for _ in range(plies):
        if state.is_terminal:
            break
        move = pick.choice(state.legal_moves())
        moves.append(move)
        state = state.play(move)
    if state.is_terminal:
        moves.pop()
    notation = rules.notation(moves)
    with pytest.MonkeyPatch.context() as monkeypatch:
        ours, reference, _ = both(game, notation, monkeypatch, limit=treelab.Limit(iterations=n), solver=solver,
                                  c=c, seed=seed)
    assert ours == reference


def test_a_loaded_tree_grows_and_saves_the_same(tmp_path: Path, monkeypatch):
    """Loaded nodes' names are not the search's label objects; the saves write the same rows."""
    first = treelab.Tree("connect4")
    treelab.search(first, "", limit=treelab.Limit(iterations=2000), rng=3)
    base = tmp_path / "base.db"
    first.save(base)
    dumps = []
    for compiled, name in ((True, "c.db"), (False, "p.db")):
        db = tmp_path / name
        db.write_bytes(base.read_bytes())
        tree = treelab.load(db)
        grow(tree, "44", compiled=compiled, monkeypatch=monkeypatch, limit=treelab.Limit(iterations=3000),
             solver=True, seed=5)
        tree.save(db)
        with sqlite3.connect(db) as con:
            dumps.append(con.execute("SELECT * FROM nodes ORDER BY id").fetchall())
    assert dumps[0] == dumps[1]
    assert len(dumps[0]) > 2000


def test_the_node_budget_stops_both_at_the_same_simulation(monkeypatch):
    ours, reference, _ = both("connect4", "", monkeypatch, limit=treelab.Limit(iterations=5000), max_new_nodes=777,
                              seed=2)
    assert ours == reference
    assert ours["size"] == 1 + 777


def test_time_limits_and_should_stop_are_checked_between_batches():
    tree = treelab.Tree("connect4")
    polls = []
    done = treelab.search(tree, "", limit=treelab.Limit(seconds=60), rng=1,
                          should_stop=lambda: polls.append(1) or len(polls) >= 3)
    assert done == 3 * loop.BATCH and tree.root.nb_visit == done
    tree = treelab.Tree("connect4")
    done = treelab.search(tree, "", limit=treelab.Limit(seconds=0.05), rng=1)
    assert done > 0 and tree.root.nb_visit == done


class Interrupting(random.Random):
    """A generator whose ``random()`` raises KeyboardInterrupt at its ``at``-th call (Ctrl-C mid-batch)."""

    def __init__(self, seed: int, at: int) -> None:
        super().__init__(seed)
        self.calls, self.at = 0, at

    def random(self) -> float:
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().random()


@pytest.mark.parametrize("moves", ["", "4"])
def test_an_interrupted_batch_leaves_the_tree_consistent(moves, tmp_path: Path):
    tree = treelab.Tree("connect4")
    with pytest.raises(KeyboardInterrupt):
        treelab.search(tree, moves, limit=treelab.Limit(iterations=5000), rng=Interrupting(4, 1000))
    nodes = list(walk(tree.root))
    assert tree.size == len(nodes) and tree.next_id == max(n.node_id for n in nodes) + 1
    assert sum(tree.depth_counts) == len(nodes)
    for node in nodes:  # every simulation counted once on its whole path, the nodes above the start included
        if node.children:
            assert node.nb_visit >= sum(k.nb_visit for k in node.children) >= node.nb_visit - 1
    assert tree.root.nb_visit >= 999 - 1
    db = tmp_path / "t.db"
    tree.save(db)
    again = treelab.load(db)
    assert snapshot(again)["nodes"] == snapshot(tree)["nodes"]


@pytest.mark.parametrize(("game", "options"), [
    ("nim", {}),
    ("tictactoe", {"playout": "decisive"}),
    ("connect4", {"select": lambda node, c, solver: select_ucb1(node, c, solver)}),
    ("connect4", {"playout": lambda state, rng: None}),
])
def test_other_options_keep_the_phases(game, options, monkeypatch):
    tree = treelab.Tree(game)
    _, calls, _ = grow(tree, "", compiled=True, monkeypatch=monkeypatch, limit=treelab.Limit(iterations=300),
                       **options)
    assert calls == [] and tree.root.nb_visit == 300


def test_bad_arguments_are_refused():
    with pytest.raises(TypeError, match="batch"):
        speedups.compiled.batch(1, 2, 3)
    tree = treelab.Tree("connect4")
    args = [tree.root, 10, 1.0, False, 7, 0, 0, 0, False, random.random, random.getrandbits, None, [], [1],
            tree.node_class, 2, None, 100, tuple(str(m) for m in range(8)), {}, 0, [0] * 5]
    with pytest.raises(ValueError, match="game 0"):
        speedups.compiled.batch(*args)
