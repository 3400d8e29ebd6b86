"""A loaded tree costs at most 200 bytes a node: a UCT tree, and a PUCT tree grown with a model (priors and value
sums on its nodes), both made by ``treelab train`` and loaded by ``treelab.load`` (``benchmarks/tree_memory.py``
measures million-node trees the same way, and by RSS in fresh processes)."""

from __future__ import annotations

import itertools
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run

import treelab
from treelab import speedups
from treelab.learn.model import Model
from treelab.nodes import walk

BOUND = 200
"""Bytes a node of a loaded tree may cost."""

compiled_only = pytest.mark.skipif(
    speedups.compiled is None,
    reason="the C extension is not built (TREELAB_PURE_PYTHON or no compiler): node ids and values are objects",
)


def allocated(size: int) -> int:
    """The bytes Python's allocator takes for a request of ``size``: blocks of up to 512 bytes come in steps of 16."""
    return (size + 15) // 16 * 16 if size <= 512 else size


def bytes_per_node(db: Path) -> tuple[float, treelab.Tree]:
    """Bytes a node of ``treelab.load(db)`` keeps alive, as allocated (each traced block rounded up as the
    allocator rounds it), after a first load has imported and cached whatever a load needs."""
    treelab.load(db)  # imports and caches: not the tree's cost
    tracemalloc.start(1)
    try:
        tree = treelab.load(db)
        snapshot = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    total = sum(allocated(trace.size) for trace in snapshot.traces)
    return total / len(tree), tree


def random_model(path: Path) -> Path:
    """A Connect Four model file with random weights (arbitrary priors and values)."""
    game = treelab.find_game("connect4")
    rng = np.random.default_rng(7)
    sizes = [int(np.prod(game.feature_shape)), 32, 16, game.num_moves + 1]
    weights = tuple(rng.normal(0, 0.1, (a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes))
    biases = tuple(rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:])
    Model("connect4", game.encoding, tuple(game.feature_shape), game.first_move, game.num_moves, weights,
          biases).save(path)
    return path


@compiled_only
def test_a_loaded_uct_tree_is_at_most_200_bytes_a_node(tmp_path: Path) -> None:
    db = tmp_path / "uct.db"
    result = run("train", "connect4", "--db", str(db), "--games", "3", "--seed", "1", "--quiet")
    assert result.exit_code == 0, result.output
    per_node, tree = bytes_per_node(db)
    assert len(tree) > 15_000
    assert per_node <= BOUND, f"{per_node:.0f} bytes a node"
    node = tree.find("4")  # the numbers read back as Python ints and floats
    assert type(node.node_id) is int and node.node_id > 1 and node.prior is None and node.value_sum == 0.0


@compiled_only
def test_a_loaded_puct_tree_grown_with_a_model_is_at_most_200_bytes_a_node(tmp_path: Path) -> None:
    db, model = tmp_path / "puct.db", random_model(tmp_path / "m.npz")
    result = run("train", "connect4", "--db", str(db), "--games", "3", "--seed", "1", "--quiet",
                 "--algorithm", "puct", "--model", str(model))
    assert result.exit_code == 0, result.output
    per_node, tree = bytes_per_node(db)
    assert len(tree) > 15_000
    assert per_node <= BOUND, f"{per_node:.0f} bytes a node"
    nodes = list(walk(tree.root))
    with_prior = sum(1 for node in nodes if tree.priors.get(node) is not None)
    valued = sum(1 for node in nodes if node.value_sum)
    assert with_prior > 0.9 * len(nodes) and valued > 0.5 * len(nodes)  # what made such trees cost ~280 bytes
    assert len(tree.priors) == with_prior


@compiled_only
def test_the_measure_counts_what_a_node_holds(tmp_path: Path) -> None:
    """The measure is fair: a tree whose nodes each hold one more float (32 bytes as allocated) measures more."""
    db = tmp_path / "uct.db"
    assert run("train", "connect4", "--db", str(db), "--games", "1", "--seed", "2", "--quiet").exit_code == 0
    per_node, tree = bytes_per_node(db)
    tracemalloc.start(1)
    try:
        extra = [float(i) + 0.5 for i in range(len(tree))]
        snapshot = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    held = sum(allocated(trace.size) for trace in snapshot.traces) / len(tree)
    assert 38 <= held <= 44 and len(extra) == len(tree)  # a float (32) and its pointer in the list (8), as allocated
    assert per_node >= sys.getsizeof(tree.root)  # at least the node object itself


def test_priors_behave_as_the_dict_they_were() -> None:
    """``tree.priors`` keeps each prior in its node's slot, and reads and writes as a dict by node did."""
    tree = treelab.Tree("connect4")
    a, b = tree.path("4")[0][-1], tree.path("3")[0][-1]
    priors = tree.priors
    assert not priors and len(priors) == 0 and priors.get(a) is None and priors.get(a, 0.0) == 0.0 and a not in priors
    priors[a], priors[b] = 0.0, 0.625  # a prior of 0 is a prior
    assert priors and len(priors) == 2 and set(priors) == {a, b} and dict(priors.items()) == {a: 0.0, b: 0.625}
    assert priors[a] == 0.0 and priors.get(a, 0.5) == 0.0 and a in priors and a.prior == 0.0 and b.prior == 0.625
    assert priors.pop(a) == 0.0 and a not in priors and priors.pop(a, None) is None and a.prior is None
    with pytest.raises(KeyError):
        priors[a]
    with pytest.raises(KeyError):
        del priors[a]
    with pytest.raises(ValueError, match="not a probability"):
        priors[a] = -0.5
    assert priors.setdefault(b, 0.1) == 0.625 and priors.setdefault(a, 0.125) == 0.125
    priors.update({b: 1.0})
    assert priors[b] == 1.0 and "4" not in priors
    priors.clear()
    assert not priors and a.prior is None and b.prior is None and list(priors) == []
