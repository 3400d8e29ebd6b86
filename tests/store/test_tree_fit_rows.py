"""The rows a fit learns from, built from the learning loop's tree in memory (``tree_fit_rows``), are the rows
``read_fit_rows`` reads from the file: the same rows in the same order with the same Python types, value sums
within 1e-9; a tree that is not the file's (behind it, or with unsaved growth) is not read: the file is."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import treelab
from treelab.store.persistence import kept_tree, open_tree, reusing_trees, save
from treelab.store.rows import FitRows, read_fit_rows
from treelab.store.treerows import tree_fit_rows
from treelab.tree import Tree


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Tree]:
    """A Connect Four file grown as the learning loop grows it (a fresh tree every move, the top added to the
    stored one; then PUCT with a fitted model, whose values make value sums), and the tree the loop keeps."""
    folder = tmp_path_factory.mktemp("treerows")
    db, model = folder / "c4.db", folder / "m.npz"
    with reusing_trees():
        treelab.train("connect4", db, 12, iterations=60, searches="fresh", seed=1, progress=False)
        treelab.fit(db, model, min_visits=5, hidden=(16,), epochs=3, seed=0)
        treelab.train("connect4", db, 12, iterations=60, searches="fresh", algorithm="puct", model=str(model),
                      mix=0.5, seed=2, progress=False)
        tree = kept_tree(db)
    assert tree is not None
    return db, tree


def _same(file: FitRows, memory: FitRows) -> None:
    assert memory.source == "tree" and file.source == "file"
    assert (memory.game, memory.nodes, memory.simulations, memory.games) == (
        file.game, file.nodes, file.simulations, file.games)
    assert len(memory.rows) == len(file.rows) > 0
    for a, b in zip(file.rows, memory.rows, strict=True):
        assert a[:10] == b[:10]
        assert [type(x) for x in a] == [type(x) for x in b], (a, b)
        assert abs(a[10] - b[10]) <= 1e-9, (a, b)


@pytest.mark.parametrize("max_depth", [None, 5])
def test_the_rows_from_the_tree_in_memory_are_the_rows_read_from_the_file(grown: tuple[Path, Tree],
                                                                          max_depth: int | None) -> None:
    db, tree = grown
    file = read_fit_rows(db, min_visits=4, max_depth=max_depth)
    memory = tree_fit_rows(tree, db, min_visits=4, max_depth=max_depth)
    _same(file, memory)
    assert any(row[10] != 0.0 for row in memory.rows)  # the model's values made value sums
    assert any(row[7] is not None for row in memory.rows) or max_depth is not None  # proofs read as ints


@pytest.mark.parametrize("max_depth", [None, 5])
def test_a_pick_from_the_tree_sees_the_file_s_candidates_and_gets_its_rows(grown: tuple[Path, Tree],
                                                                           max_depth: int | None) -> None:
    db, tree = grown
    for seed in range(3):
        pools: list[list[tuple[int, Any]]] = []

        def pick(pool: list[tuple[int, Any]], seed: int = seed, pools: list[Any] = pools) -> list[int]:
            pools.append(pool)
            chosen = random.Random(seed).sample(pool, len(pool) // 4)
            return [nid for nid, _ in chosen]

        file = read_fit_rows(db, min_visits=4, max_depth=max_depth, pick=pick)
        memory = tree_fit_rows(tree, db, min_visits=4, max_depth=max_depth, pick=pick)
        assert pools[0] == pools[1] and len(pools[0]) > 20  # the same candidates, in the same order
        assert any(created is not None for _, created in pools[1])
        _same(file, memory)


def test_a_pick_of_ids_that_are_no_candidates_reads_them_as_the_file_does(grown: tuple[Path, Tree]) -> None:
    db, tree = grown
    leaves = [row[0] for row in read_fit_rows(db, min_visits=1, max_depth=None).rows[-3:]]

    def pick(pool: list[tuple[int, Any]]) -> list[int]:
        return [*leaves, 10**9, pool[-1][0]]  # leaves, an id of no node, a candidate

    _same(read_fit_rows(db, min_visits=4, max_depth=None, pick=pick),
          tree_fit_rows(tree, db, min_visits=4, max_depth=None, pick=pick))


def test_a_tree_that_is_not_the_file_s_is_not_read_the_file_is(grown: tuple[Path, Tree], tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    shutil.copy(grown[0], db)
    tree, other = open_tree(db, "connect4"), open_tree(db, "connect4")
    other.record("1111112222223", None)
    save(other, db)  # another tree's save: the first is behind the file
    behind = tree_fit_rows(tree, db, min_visits=4, max_depth=None)
    assert behind.source == "file" and behind == read_fit_rows(db, min_visits=4, max_depth=None)
    ahead = open_tree(db, "connect4")
    ahead.record("7777776666665", None)  # grown in memory, not saved: new nodes with ids the file does not have
    assert ahead.new_nodes
    assert tree_fit_rows(ahead, db, min_visits=4, max_depth=None).source == "file"
    save(ahead, db)  # saved: the file's again
    assert tree_fit_rows(ahead, db, min_visits=4, max_depth=None).source == "tree"
