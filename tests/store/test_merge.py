"""Adding trees along move paths (treelab.merge, ``treelab merge``) on real SQLite files."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_games import random_game

import treelab
from treelab.cli import cli
from treelab.errors import GameMismatchError, ProofConflictError, StoreError
from treelab.mcts.uct import Limit, search
from treelab.store.merging import COUNTS, SOURCES
from treelab.tree import Tree


def by_path(db: Path) -> dict[str, tuple[Any, ...]]:
    """Every node of a database file by its move path: its counts (in COUNTS order) and proof."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(f"SELECT id, parent_id, move, proven, {', '.join(COUNTS)} FROM nodes ORDER BY id")
        paths: dict[int, str] = {}
        out = {}
        for nid, pid, move, proven, *counts in rows:
            paths[nid] = "" if pid is None else f"{paths[pid]}/{move}"
            out[paths[nid]] = (*counts, proven)
    return out


def summed(*dbs: Path) -> dict[str, tuple[Any, ...]]:
    """The sum of the files' trees on every path, computed from their rows alone."""
    total: dict[str, list[Any]] = {}
    for db in dbs:
        for path, (*counts, proven) in by_path(db).items():
            row = total.setdefault(path, [0] * len(COUNTS) + [None])
            for i, n in enumerate(counts):
                row[i] += n
            if proven is not None:
                row[-1] = proven
    return {path: tuple(row) for path, row in total.items()}


def random_tree(game: str, seed: int, games: int, searches: int = 0) -> Tree:
    """A tree of random recorded games (some cut short) and a few UCT searches with proofs."""
    rng = random.Random(seed)
    tree = Tree(game)
    for _ in range(games):
        moves, winner = random_game(tree.game, rng)
        if rng.random() < 0.3:
            moves = moves[: rng.randrange(len(moves))]
            tree.record(moves, rng.choice([1, 2, None]))
        else:
            tree.record(moves, winner)
    for _ in range(searches):
        search(tree, limit=Limit(iterations=rng.randrange(20, 200)), solver=True, rng=rng)
    return tree


def saved(tree: Tree, db: Path, games: int = 2) -> Path:
    """``tree`` saved to ``db`` with ``games`` game rows (one-move placeholders: merge copies rows as they are)."""
    treelab.save(tree, db, games=[{"moves": tree.game.notation([m]), "winner": None} for m in range(1, games + 1)])
    return db


def test_three_trees_sum_on_every_path(tmp_path: Path) -> None:
    dbs = [saved(random_tree("connect4", seed, 60, searches=3), tmp_path / f"in{seed}.db") for seed in range(3)]
    out = tmp_path / "out.db"
    summary = treelab.merge(out, *dbs)
    assert by_path(out) == summed(*dbs)
    expected_root = sum(by_path(db)[""][COUNTS.index("nb_visit")] for db in dbs)
    assert summary.simulations == expected_root == treelab.load(out).root.nb_visit
    assert summary.nodes == len(summed(*dbs)) == treelab.info(out)["nodes"]
    games = treelab.read_games(out)
    assert len(games) == 6 and [g["id"] for g in games] == list(range(1, 7))
    with sqlite3.connect(out) as conn:
        sources = dict(conn.execute(f"SELECT game_id, source FROM {SOURCES}"))
    assert sources[1] == f"{dbs[0]}#1" and sources[6] == f"{dbs[2]}#2"
    # the merged file is an ordinary tree: it loads, grows and saves again
    tree = treelab.load(out)
    search(tree, limit=Limit(iterations=50), rng=1)
    tree.save(out)
    assert treelab.load(out).root.nb_visit == expected_root + 50


def test_existing_out_is_a_summand(tmp_path: Path) -> None:
    a = saved(random_tree("tictactoe", 1, 40, searches=2), tmp_path / "a.db")
    b = saved(random_tree("tictactoe", 2, 40, searches=2), tmp_path / "b.db")
    expected = summed(a, b)
    treelab.merge(a, b)
    assert by_path(a) == expected
    assert len(treelab.read_games(a)) == 4


def test_different_games_refused_leaving_no_out(tmp_path: Path) -> None:
    a = saved(random_tree("connect4", 1, 5), tmp_path / "a.db")
    b = saved(random_tree("tictactoe", 1, 5), tmp_path / "b.db")
    out = tmp_path / "out.db"
    with pytest.raises(GameMismatchError, match="holds a tictactoe tree, not connect4"):
        treelab.merge(out, a, b)
    assert not out.exists()
    result = CliRunner().invoke(cli, ["merge", str(out), str(a), str(b)])
    assert result.exit_code != 0 and not out.exists()
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    before = by_path(b)
    with pytest.raises(GameMismatchError):
        treelab.merge(b, a)  # OUT of another game: unchanged
    assert by_path(b) == before


def test_named_twice_and_missing_refused(tmp_path: Path) -> None:
    a = saved(random_tree("tictactoe", 1, 5), tmp_path / "a.db")
    with pytest.raises(StoreError, match="named twice"):
        treelab.merge(a, a)
    with pytest.raises(StoreError, match="no such database"):
        treelab.merge(tmp_path / "out.db", tmp_path / "missing.db")
    assert not (tmp_path / "out.db").exists()


def test_contradicting_proofs_refused_and_nothing_written(tmp_path: Path) -> None:
    a_tree, b_tree = Tree("tictactoe"), Tree("tictactoe")
    a_tree.record("1", None)
    b_tree.record("1", 1)
    b_tree.record("2", 1)
    a_tree.find("1").proven = 1
    b_tree.find("1").proven = -1  # one of them is wrong
    a, b = saved(a_tree, tmp_path / "a.db"), saved(b_tree, tmp_path / "b.db")
    before = by_path(a)
    with pytest.raises(ProofConflictError, match=r"proofs disagree merging '.*b\.db'.* for '1'"):
        treelab.merge(a, b)
    assert by_path(a) == before
    result = CliRunner().invoke(cli, ["merge", str(tmp_path / "c.db"), str(a), str(b)])
    assert result.exit_code == 1 and "proofs disagree" in result.output and not (tmp_path / "c.db").exists()


def test_cli_merge(tmp_path: Path) -> None:
    dbs = [saved(random_tree("connect4", seed, 20), tmp_path / f"r{seed}.db") for seed in range(3)]
    out = tmp_path / "all.db"
    result = CliRunner().invoke(cli, ["merge", str(out), *map(str, dbs)])
    assert result.exit_code == 0, result.output
    assert "merged 3 connect4 trees" in result.output
    assert by_path(out) == summed(*dbs)
    help_text = CliRunner().invoke(cli, ["merge", "--help"]).output
    assert help_text.rstrip().endswith("treelab merge all.db run1.db run2.db run3.db")


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(seeds=st.lists(st.integers(0, 10_000), min_size=1, max_size=3),
       sizes=st.lists(st.integers(0, 25), min_size=3, max_size=3), out_exists=st.booleans())
def test_merge_is_the_sum_hypothesis(tmp_path_factory: pytest.TempPathFactory, seeds: list[int],
                                     sizes: list[int], out_exists: bool) -> None:
    folder = tmp_path_factory.mktemp("merge")
    dbs = [saved(random_tree("tictactoe", seed, size, searches=size % 3), folder / f"{i}.db", games=i)
           for i, (seed, size) in enumerate(zip(seeds, sizes, strict=False))]
    out = folder / "out.db"
    if out_exists:
        saved(random_tree("tictactoe", 99, sizes[-1]), out, games=1)
    summands = [out, *dbs] if out_exists else dbs
    expected, games = summed(*summands), sum(len(treelab.read_games(db)) for db in summands)
    treelab.merge(out, *dbs)
    assert by_path(out) == expected
    assert len(treelab.read_games(out)) == games
