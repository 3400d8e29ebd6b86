"""A fit's examples built over all rows at once (:mod:`treelab.learn.bulk`) are exactly the examples built one
node at a time (:func:`treelab.learn.dataset.reference_dataset`), on the trees a learning loop grows; rows the
bulk path does not expect go to the reference, whose answer (or error) stands."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import treelab
from treelab.errors import IllegalMoveError
from treelab.learn import dataset, fitting
from treelab.learn.dataset import Dataset, build_dataset, bulk_dataset, candidates, reference_dataset
from treelab.learn.fitting import FitConfig, fit
from treelab.store.rows import FitRows, read_fit_rows

SMALL = FitConfig(min_visits=5, hidden=(16,), epochs=3)
ARRAYS = ("features", "policy", "value", "legal", "groups", "visits", "nodes")


@pytest.fixture(scope="module")
def loop_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A learning loop's tree: fresh searches' tops, refits, the games' logged values and proofs."""
    folder = tmp_path_factory.mktemp("bulk")
    db = folder / "c4.db"
    treelab.learning_loop("connect4", db, folder / "m.npz", 16, refit_every=8, fitting=SMALL, iterations=80, seed=5,
                          progress=False)
    return db


def assert_same(a: Dataset, b: Dataset) -> None:
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x.dtype, x.shape) == (y.dtype, y.shape), name
        assert np.array_equal(x, y), name
    assert (a.proven, a.from_selections) == (b.proven, b.from_selections)


def both(rows: FitRows, **options: Any) -> tuple[Dataset, Dataset]:
    game = treelab.find_game("connect4")
    fast = bulk_dataset(game, rows, **options)
    assert fast is not None  # the bulk path built it: not a fallback
    return fast, reference_dataset(game, rows, **options)


@pytest.mark.parametrize(("outcome", "root_value"), [(0.0, 0.0), (0.5, 0.0), (0.0, 0.3), (0.25, 0.7)])
@pytest.mark.parametrize(("min_visits", "max_depth"), [(5, None), (1, None), (20, 6)])
def test_the_bulk_examples_of_a_whole_read_are_the_reference_examples(
        loop_tree: Path, min_visits: int, max_depth: int | None, outcome: float, root_value: float) -> None:
    rows = read_fit_rows(loop_tree, min_visits=min_visits, max_depth=max_depth)
    fast, slow = both(rows, min_visits=min_visits, max_depth=max_depth, outcome=outcome, root_value=root_value)
    assert len(slow) > 50 and slow.proven > 0 and 0 < slow.from_selections < len(slow)
    assert_same(fast, slow)
    if outcome == 0.0 and root_value == 0.0:
        assert 0 < (slow.policy.max(axis=1) == 1.0).sum() < len(slow)  # proofs' targets and counted ones


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("outcome", "root_value"), [(0.0, 0.0), (0.5, 0.5)])
def test_the_bulk_examples_of_a_sample_are_the_reference_examples(loop_tree: Path, seed: int, outcome: float,
                                                                   root_value: float) -> None:
    whole = read_fit_rows(loop_tree, min_visits=5, max_depth=None)
    pool = candidates(whole, min_visits=5, max_depth=None)
    rng = np.random.default_rng(seed)
    wanted = {int(i) for i in rng.choice([nid for nid, _ in pool], size=len(pool) // 3, replace=False)}
    part = read_fit_rows(loop_tree, min_visits=5, max_depth=None, pick=lambda found: sorted(wanted))
    for rows in (whole, part):
        fast, slow = both(rows, min_visits=5, max_depth=None, only=wanted, outcome=outcome, root_value=root_value)
        assert len(slow) > 30
        assert_same(fast, slow)


@pytest.mark.parametrize("options", [{}, {"outcome": 0.5}, {"root_value": 0.5, "min_selections": 10}])
def test_a_sampled_refit_learns_the_same_model_either_way(loop_tree: Path, options: dict[str, Any],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    config = dataclasses.replace(SMALL, sample=200, **options)
    fast = fit(loop_tree, None, fitting=config, since=8, seed=2)
    monkeypatch.setattr(dataset, "bulk_dataset", lambda *args, **kwargs: None)  # build_dataset falls back
    slow = fit(loop_tree, None, fitting=config, since=8, seed=2)
    assert fast.info["positions"] == slow.info["positions"] > 100
    assert fast.info["policy_from_selections"] == slow.info["policy_from_selections"]
    for x, y in zip(fast.weights + fast.biases, slow.weights + slow.biases, strict=True):
        assert np.array_equal(x, y)


def test_rows_the_bulk_path_does_not_expect_go_to_the_reference(loop_tree: Path) -> None:
    game = treelab.find_game("connect4")
    rows = read_fit_rows(loop_tree, min_visits=5, max_depth=None)
    options: dict[str, Any] = {"min_visits": 5, "max_depth": None}
    # a root's child played twice (two children with one move): the reference's answer stands
    twice = list(rows.rows)
    first = next(i for i, r in enumerate(twice) if r[3] == 1)
    twice.append((10**9, *twice[first][1:]))
    doubled = dataclasses.replace(rows, rows=twice)
    assert bulk_dataset(game, doubled, **options) is None
    assert_same(build_dataset(game, doubled, **options), reference_dataset(game, doubled, **options))
    # a move on a full column, below an example: the reference's error stands
    column = next(r for r in rows.rows if r[3] == 1 and r[4] >= 5)
    line = [column]
    for depth in range(2, 9):  # seven discs in one column and one more move, each with the visits of an example
        line.append((10**9 + depth, line[-1][0], column[2], depth, 50, 25, 0, None, 50, None, 0.0))
    full = dataclasses.replace(rows, rows=sorted([*rows.rows, *line[1:]], key=lambda r: (r[3], r[0])))
    assert bulk_dataset(game, full, **options) is None
    with pytest.raises(IllegalMoveError):
        build_dataset(game, full, **options)
    with pytest.raises(IllegalMoveError):
        reference_dataset(game, full, **options)


def test_other_games_are_built_by_the_reference(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 20, iterations=60, seed=1, progress=False)
    game = treelab.find_game("tictactoe")
    rows = read_fit_rows(db, min_visits=3, max_depth=None)
    assert bulk_dataset(game, rows, min_visits=3, max_depth=None) is None
    data = build_dataset(game, rows, min_visits=3, max_depth=None)
    assert len(data) > 10
    assert_same(data, reference_dataset(game, rows, min_visits=3, max_depth=None))



@pytest.mark.parametrize("size", [0, 1, 9, 300, 5000])
@pytest.mark.parametrize(("sample", "heldout", "since"), [(8, 0.1, None), (100, 0.1, 40), (4000, 0.0, 10),
                                                           (250, 0.3, 90), (100, 0.1, 1000)])
def test_a_sample_picks_the_positions_the_one_by_one_rule_picks(size: int, sample: int, heldout: float,
                                                                 since: int | None) -> None:
    maker = np.random.default_rng(size)
    pool = [(int(nid), None if made < 0 else int(made))
            for nid, made in zip(maker.permutation(10 * size + 1)[:size] + 1, maker.integers(-5, 100, size),
                                 strict=True)]
    chosen = fitting._pick(pool, sample, heldout, since, np.random.default_rng(7))
    assert chosen == fitting.reference_pick(pool, sample, heldout, since, np.random.default_rng(7))
    assert all(type(nid) is int for nid in chosen[0] + chosen[1])


@pytest.mark.parametrize("seed", [11, 12])
def test_the_bulk_examples_of_other_trees_are_the_reference_examples(tmp_path: Path, seed: int) -> None:
    db = tmp_path / "c4.db"  # a tree of plain UCT searches, each game searched on the one tree
    treelab.train("connect4", db, 6, iterations=150 + 50 * seed, seed=seed, progress=False)
    for min_visits, max_depth in ((1, None), (3, 4), (10**9, None)):  # the last: no example at all
        rows = read_fit_rows(db, min_visits=min_visits, max_depth=max_depth)
        fast, slow = both(rows, min_visits=min_visits, max_depth=max_depth, outcome=0.5, root_value=0.5)
        assert (len(slow) > 20) == (min_visits < 10**9)
        assert_same(fast, slow)
