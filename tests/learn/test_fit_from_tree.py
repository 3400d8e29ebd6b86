"""A fit given the file's tree in memory (the learning loop's refit beside the games) takes the nodes from it and
makes the model a fit of the file makes, sampled or whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import treelab
from treelab.learn.fitting import FitConfig, fit
from treelab.store.persistence import kept_tree, reusing_trees
from treelab.store.rows import read_fit_rows
from treelab.tree import Tree


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Tree]:
    """A Connect Four file grown as the loop grows it (fresh trees, then PUCT with a fitted model), and its tree."""
    folder = tmp_path_factory.mktemp("fit-from-tree")
    db, model = folder / "c4.db", folder / "m.npz"
    with reusing_trees():
        treelab.train("connect4", db, 8, iterations=60, searches="fresh", seed=1, progress=False)
        treelab.fit(db, model, min_visits=5, hidden=(16,), epochs=3, seed=0)
        treelab.train("connect4", db, 8, iterations=60, searches="fresh", algorithm="puct", model=str(model),
                      mix=0.5, seed=2, progress=False)
        tree = kept_tree(db)
    assert tree is not None
    return db, tree


@pytest.mark.parametrize("sample", [100, None])
def test_a_fit_from_the_tree_in_memory_makes_the_model_a_fit_of_the_file_makes(grown: tuple[Path, Tree],
                                                                               sample: int | None) -> None:
    db, tree = grown
    values = {node.node_id: node.value_sum for node in tree}
    stored = {row[0]: row[10] for row in read_fit_rows(db, min_visits=1, max_depth=None).rows}
    assert values == stored and any(stored.values())  # the premise: the value sums agree to the bit here
    config = FitConfig(min_visits=4, hidden=(16,), epochs=3, sample=sample)
    from_file, from_tree = fit(db, None, fitting=config), fit(db, None, fitting=config, tree=tree)
    assert (from_file.info["source_read"], from_tree.info["source_read"]) == ("file", "tree")
    for key in ("positions", "candidates", "source_nodes", "source_simulations"):
        assert from_file.info[key] == from_tree.info[key], key
    for x, y in zip(from_file.weights + from_file.biases, from_tree.weights + from_tree.biases, strict=True):
        assert np.array_equal(x, y)
