"""Model-guided PUCT in C (``_puct.c``) grows exactly the tree its Python phases grow, and saves like it.

Every comparison runs the same search twice from the same seed: once with the compiled batch
(:meth:`treelab.mcts.puct.PUCTPhases.compiled_batch`) and once with it switched off, and compares every
node's counts, value sum, proof, id, prior and waiting moves.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import treelab
import treelab.mcts.puct as puct_phases
from treelab import speedups
from treelab.learn.model import Model
from treelab.mcts.config import RootNoise
from treelab.mcts.dispatch import puct_search
from treelab.mcts.evaluators import ModelEvaluator
from treelab.mcts.loop import Limit
from treelab.nodes import walk

pytestmark = pytest.mark.skipif(
    getattr(speedups.compiled, "puct_batch", None) is None,
    reason="the C extension is not built (TREELAB_PURE_PYTHON or no compiler): nothing compiled to compare",
)


def random_model(seed: int, hidden: tuple[int, ...] = (32, 16), scale: float = 0.4) -> Model:
    """A Connect Four model with random weights: arbitrary priors, values inside and outside [-1, 1]."""
    game = treelab.find_game("connect4")
    rng = np.random.default_rng(seed)
    sizes = [int(np.prod(game.feature_shape)), *hidden, game.num_moves + 1]
    weights = tuple(rng.normal(0, scale, (a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes))
    biases = tuple(rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:])
    return Model("connect4", game.encoding, tuple(game.feature_shape), game.first_move, game.num_moves,
                 weights, biases)


def snapshot(tree: treelab.Tree) -> list[tuple]:
    """Everything a search leaves on the nodes, in tree order."""
    rows = []
    for node in walk(tree.root):
        waiting = tree.pending.get(node)
        rows.append((node.sequence, node.node_id, node.nb_visit, node.nb_win, node.nb_draw, node.nb_select,
                     node.value_sum, None if node.proven is None else int(node.proven), tree.priors.get(node),
                     None if waiting is None else tuple(waiting.items())))
    return rows


def grow(compiled: bool, model: Model, moves: str, iterations: int, *, tree: treelab.Tree | None = None,
         solver: bool = True, noise: RootNoise | None = None, seed: int = 3, mix: float = 0.0) -> treelab.Tree:
    saved = puct_phases._COMPILED
    if not compiled:
        puct_phases._COMPILED = None
    try:
        tree = tree if tree is not None else treelab.Tree("connect4")
        done = puct_search(tree, moves, limit=Limit(iterations=iterations), evaluator=ModelEvaluator(model, mix=mix),
                           solver=solver, noise=noise, rng=seed)
        assert done > 0
    finally:
        puct_phases._COMPILED = saved
    return tree


@pytest.mark.parametrize("moves", ["", "44", "4453", "4444442", "1234567123"])
@pytest.mark.parametrize("solver", [True, False])
def test_the_compiled_batch_grows_the_python_phases_tree(moves: str, solver: bool) -> None:
    model = random_model(len(moves))
    fast = grow(True, model, moves, 600, solver=solver)
    reference = grow(False, model, moves, 600, solver=solver)
    assert snapshot(fast) == snapshot(reference)
    assert fast.size == reference.size and fast.depth_counts == reference.depth_counts
    assert fast.valued == reference.valued
    assert sorted(n.sequence for n in fast.new_nodes) == sorted(n.sequence for n in reference.new_nodes)


def test_the_compiled_batch_proves_what_python_proves_near_the_end() -> None:
    """A position a few moves from the end: terminal children, proofs propagating, a proven start."""
    model = random_model(7)
    moves = "1111112222223333335555556666667"
    fast = grow(True, model, moves, 3000)
    reference = grow(False, model, moves, 3000)
    assert snapshot(fast) == snapshot(reference)
    assert any(node.proven is not None for node in walk(fast.root))


@pytest.mark.parametrize("mix", [0.5, 1.0])
def test_a_playout_mixed_into_the_value_draws_the_same_random_games(mix: float) -> None:
    """The learning loop's searches (``mix``): the playout seeded from the search's generator, as in Python."""
    model = random_model(9)
    fast = grow(True, model, "44", 600, mix=mix)
    reference = grow(False, model, "44", 600, mix=mix)
    assert snapshot(fast) == snapshot(reference)


def test_root_noise_and_a_second_search_match() -> None:
    model = random_model(11)
    noise = RootNoise(alpha=1.4, fraction=0.25)
    fast = grow(True, model, "4", 800, noise=noise)
    reference = grow(False, model, "4", 800, noise=noise)
    assert snapshot(fast) == snapshot(reference)
    grow(True, model, "44", 600, tree=fast, noise=noise, seed=5)  # the next move's search, same tree
    grow(False, model, "44", 600, tree=reference, noise=noise, seed=5)
    assert snapshot(fast) == snapshot(reference)


def test_a_saved_and_loaded_tree_searches_the_same_and_stores_exact_counts(tmp_path) -> None:
    """Loaded nodes have no priors (they are evaluated again); the saved file holds the search's counts."""
    model = random_model(5)
    first = grow(True, model, "44", 1000)
    db = tmp_path / "c4.db"
    first.save(db)
    fast = grow(True, model, "445", 1000, tree=treelab.load(db))
    reference = grow(False, model, "445", 1000, tree=treelab.load(db))
    assert snapshot(fast) == snapshot(reference)
    fast.save(db)
    stored = treelab.load(db)
    assert [(r[0], r[2], r[3], r[4], r[5], r[7]) for r in snapshot(stored)] == \
           [(r[0], r[2], r[3], r[4], r[5], r[7]) for r in snapshot(fast)]
    sums = {node.sequence: node.value_sum for node in walk(fast.root)}
    for node in walk(stored.root):  # every stored path starts at the root
        assert node.nb_visit >= sum(kid.nb_visit for kid in node.children_view)
        assert abs(node.value_sum - sums[node.sequence]) < 1e-6


def test_features_built_in_c_are_the_games_own() -> None:
    game = treelab.find_game("connect4")
    rng = random.Random(1)
    for _ in range(200):
        state = game.initial()
        for _ in range(rng.randrange(0, 30)):
            if state.is_terminal:
                break
            state = state.play(rng.choice(state.legal_moves()))
        built = np.frombuffer(speedups.compiled.c4_features(state.cur, state.mask), dtype=np.float32)
        assert np.array_equal(built, state.features().reshape(-1))


def test_the_compiled_forward_pass_is_numpys_to_float_precision() -> None:
    model = random_model(2, hidden=(64, 48, 32))
    game = treelab.find_game("connect4")
    state = game.replay("4453")
    x = state.features().reshape(-1)
    raw, value = model.forward(x)
    out = np.array(speedups.compiled.mlp_forward(x, model.weights, model.biases), dtype=np.float32)
    assert np.allclose(out[:7], raw[0], atol=1e-5)
    assert np.isclose(np.clip((out[7] + 1) * 0.5, 0, 1), value[0], atol=1e-5)
    with pytest.raises(ValueError, match="float32"):
        speedups.compiled.mlp_forward(x.astype(np.float64), model.weights, model.biases)
