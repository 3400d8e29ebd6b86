"""A sampled fit reads only the positions it samples (with their children and ancestors), and learns exactly
what it would learn from a read of every well-visited node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import treelab
from treelab.learn.dataset import build_dataset, candidates
from treelab.learn.fitting import FitConfig, fit
from treelab.store.rows import read_fit_rows


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("sample") / "c4.db"
    treelab.train("connect4", db, 12, iterations=150, seed=3, progress=False)
    return db


@pytest.mark.parametrize("max_depth", [None, 6])
def test_the_positions_a_sample_reads_give_the_examples_a_whole_read_gives(grown: Path, max_depth: int | None) -> None:
    game = treelab.find_game("connect4")
    whole = read_fit_rows(grown, min_visits=5, max_depth=max_depth)
    pool = candidates(whole, min_visits=5, max_depth=max_depth)
    seen: list[list[tuple[int, int | None]]] = []
    rng = np.random.default_rng(0)
    wanted = sorted(int(i) for i in rng.choice([nid for nid, _ in pool], size=len(pool) // 3, replace=False))

    def pick(found: list[tuple[int, int | None]]) -> list[int]:
        seen.append(found)
        return wanted

    part = read_fit_rows(grown, min_visits=5, max_depth=max_depth, pick=pick)
    assert seen == [pool]  # the same candidates, in the same order
    assert len(part.rows) < len(whole.rows) / 2
    a = build_dataset(game, whole, min_visits=5, max_depth=max_depth, only=set(wanted))
    b = build_dataset(game, part, min_visits=5, max_depth=max_depth, only=set(wanted))
    assert len(a) == len(b) > 100
    for name in ("features", "policy", "value", "legal", "groups", "visits", "nodes"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("shares", [{}, {"outcome": 0.5}, {"root_value": 0.3, "outcome": 0.25}])
def test_a_sampled_fit_makes_the_model_a_whole_read_makes(grown: Path, shares: dict[str, float],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Also with the logged games' outcomes and values in the targets: the games' paths down to the sampled
    positions are among the rows read (their ancestors)."""
    import treelab.learn.fitting as fitting

    config = FitConfig(min_visits=5, hidden=(16,), epochs=3, sample=300, **shares)
    assert fitting._reads_sample_only(config)
    seen: list[int] = []
    reader = fitting.read_fit_rows

    def counted(*args: object, **kwargs: object) -> object:
        rows = reader(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(len(rows.rows))
        return rows

    monkeypatch.setattr(fitting, "read_fit_rows", counted)
    partial = fit(grown, None, fitting=config)
    monkeypatch.setattr(fitting, "_reads_sample_only", lambda cfg: False)  # the whole well-visited tree
    whole = fit(grown, None, fitting=config)
    assert seen[0] < seen[1] / 2  # the sample's read is the smaller
    assert partial.info["candidates"] == whole.info["candidates"] > 300
    assert partial.info["positions"] == whole.info["positions"]
    for x, y in zip(partial.weights + partial.biases, whole.weights + whole.biases, strict=True):
        assert np.array_equal(x, y)


def test_a_sample_reads_every_ancestor_even_one_whose_counts_break_the_rule(grown: Path, tmp_path: Path) -> None:
    """The ancestors come from the candidates' parents; one that is no candidate (fewer visits than its
    descendant: a damaged or hand-edited file) is read from the file all the same."""
    import shutil
    import sqlite3

    db = tmp_path / "odd.db"
    shutil.copy(grown, db)
    with sqlite3.connect(db) as conn:  # a depth-2 node with a well-visited child, its visits set below min_visits
        (node,) = conn.execute("SELECT p.id FROM nodes AS p JOIN nodes AS c ON c.parent_id = p.id "
                               "WHERE p.depth = 2 AND c.nb_visit >= 5 ORDER BY c.nb_visit DESC LIMIT 1").fetchone()
        conn.execute("UPDATE nodes SET nb_visit = 1 WHERE id = ?", (node,))
        deep = [i for (i,) in conn.execute("SELECT c.id FROM nodes AS c JOIN nodes AS k ON k.parent_id = c.id "
                                           "WHERE c.parent_id = ? AND c.nb_visit >= 5", (node,))]
    assert deep
    part = read_fit_rows(db, min_visits=5, max_depth=None, pick=lambda found: deep[:1])
    ids = {row[0] for row in part.rows}
    parents = {row[0]: row[1] for row in part.rows}
    assert node in ids and all(p is None or p in ids for p in parents.values())  # every path whole
    assert [row[3] for row in part.rows] == sorted(row[3] for row in part.rows)  # parents first
