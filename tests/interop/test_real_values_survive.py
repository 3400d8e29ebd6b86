"""Value sums and priors survive every path an imported real-valued tree takes: save, load, the streamed
import (twice), merge, export, the arrays and the streamed shape plot, the in-memory increments, a worker's
refresh of its copy and the position table."""

from __future__ import annotations

import random
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_clean_error, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recorded import valued_tree

import treelab
from treelab.analysis.arrays import TreeArrays
from treelab.analysis.shape import levels, stream_levels
from treelab.interop import streaming
from treelab.interop.rows import from_rows, tree_rows, write_rows
from treelab.interop.transfer import export, import_file
from treelab.positions import PositionTable, counts_of_nodes
from treelab.store import merging as increments
from treelab.store import positiontable
from treelab.store.deltas import share_top, start


def by_path(db: Path) -> dict[str, tuple[Any, ...]]:
    """Every stored node by path: counts, value sum, prior, proof."""
    conn = sqlite3.connect(db)
    try:
        paths: dict[int, str] = {}
        out = {}
        for nid, pid, move, *rest in conn.execute("SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, nb_select, "
                                                  "value_sum, prior, proven FROM nodes ORDER BY id"):
            paths[nid] = "" if pid is None else f"{paths[pid]}/{move}"
            out[paths[nid]] = tuple(rest)
        return out
    finally:
        conn.close()


def positions(db: Path) -> dict[str, list[Any]] | None:
    """The file's ``positions`` table (None: a file that does not keep it, :func:`positiontable.keeps`)."""
    conn = sqlite3.connect(db)
    try:
        if not positiontable.exists(conn):
            return None
        return {k: [v, w, d, p, s] for k, v, w, d, p, s in conn.execute(
            "SELECT key, nb_visit, nb_win, nb_draw, nb_path, value_sum FROM positions")}
    finally:
        conn.close()


def close(a: dict[str, list[Any]] | None, b: dict[str, list[Any]] | None) -> bool:
    """The same rows, value sums equal up to the order they were added in."""
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], abs=1e-9) for k in a)


def graph_file(db: Path, tree: treelab.Tree) -> None:
    """Save ``tree`` to ``db`` as a file that keeps the ``positions`` table (graph statistics)."""
    tree.statistics = "graph"
    tree.save(db)


def times(rows: dict[str, tuple[Any, ...]], k: int) -> dict[str, tuple[Any, ...]]:
    """``rows`` added up ``k`` times: counts and value sums times ``k``, priors and proofs as they were."""
    return {p: (*(k * x for x in r[:5]), r[5], r[6]) for p, r in rows.items()}


def same(a: dict[str, tuple[Any, ...]], b: dict[str, tuple[Any, ...]]) -> bool:
    return a.keys() == b.keys() and all(x[:4] == y[:4] and x[4] == pytest.approx(y[4], abs=1e-9) and x[5:] == y[5:]
                                        for k in a for x, y in ((a[k], b[k]),))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(["tictactoe", "connect4"]), seed=st.integers(0, 10**6), simulations=st.integers(1, 80))
def test_value_sums_and_priors_survive_every_path(game: str, seed: int, simulations: int) -> None:
    tree = valued_tree(game, seed, simulations)
    assert tree.valued or not any(n.value_sum for n in tree)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        a, b, rows = folder / "a.db", folder / "b.db", folder / "a.jsonl"
        graph_file(a, tree)  # files that keep the positions table, value sums in it
        graph_file(b, treelab.Tree(game))
        want = by_path(a)
        loaded = treelab.load(a)
        assert [(n.value_sum, loaded.priors.get(n)) for n in loaded] == [(n.value_sum, tree.priors.get(n))
                                                                        for n in tree]
        with rows.open("w") as out:
            export(a, "rows", out)
        import_file(rows, "rows", game, b)  # streamed into the file, then added
        assert by_path(b) == want
        import_file(rows, "rows", game, b)
        assert same(by_path(b), times(want, 2))
        assert close(positions(b), counts_of_nodes(treelab.load(b)))  # added to as the rows were written
        treelab.merge(b, a)
        assert same(by_path(b), times(want, 3))
        # the position table: stored as the nodes give it, value sums included
        assert close(positions(b), counts_of_nodes(treelab.load(b)))
        assert close(positions(a), counts_of_nodes(tree))
        again = treelab.load(b)
        assert close(PositionTable.of(again).rows, {k: [*v[:3], v[4]] for k, v in counts_of_nodes(again).items()})
        # the arrays and the shape plot: the mean with the value sums (treelab.nodes.mean_reward)
        whole, stored = TreeArrays.from_tree(loaded), TreeArrays.from_db(a)
        order = sorted(loaded, key=lambda n: (n.depth, n.node_id))
        assert np.array_equal(whole.mean, np.array([n.mean for n in order]))
        assert np.array_equal(stored.mean, whole.mean)
        for got, expected in zip(stream_levels(a), levels(stored), strict=True):
            assert np.array_equal(got.mean, expected.mean, equal_nan=True)
        # the in-memory increments (a Ray worker's copy): read from the file, added to a fresh tree
        conn = sqlite3.connect(a)
        try:
            inc = increments.read(conn)
        finally:
            conn.close()
        copy = treelab.Tree(game)
        increments.add(copy, inc)
        assert sorted(tree_rows(copy), key=lambda r: r["path"]) == sorted(tree_rows(tree), key=lambda r: r["path"])


def test_a_workers_refresh_brings_the_files_value_sums_and_priors(tmp_path: Path) -> None:
    tree = valued_tree("connect4", 5, 60)
    db = tmp_path / "a.db"
    tree.save(db)
    mine = start(treelab.load(db))
    more = valued_tree("connect4", 6, 60)
    for kid in more.root.children_view:
        more.priors[kid] = 0.25
    streaming.import_tree(more, db)
    share_top(db, mine, 1)
    stored = by_path(db)
    for node in mine:
        if node.depth <= 1:
            path = "".join(f"/{m}" for m in node.moves)
            assert (node.nb_visit, node.value_sum) == (stored[path][0], stored[path][4])
            assert mine.priors.get(node) == stored[path][5]
    assert not mine.baselines and not mine.value_baselines  # nothing to hand on


def test_a_fitted_models_value_targets_are_the_means_with_the_value_sums(tmp_path: Path) -> None:
    from treelab.games import find_game
    from treelab.learn.dataset import build_dataset
    from treelab.store.rows import read_fit_rows

    recorder = treelab.Recorder("tictactoe")
    for value in (0.5, -0.25, 1.0):  # X's values through 5: X's mean there (1 + 1.25 / 3) / 2
        recorder.simulation("5", value=value, player=1)
    recorder.simulation("1", winner=2)
    db = tmp_path / "t.db"
    recorder.tree.save(db)
    game = find_game("tictactoe")
    data = build_dataset(game, read_fit_rows(db, min_visits=1, max_depth=None), min_visits=1, max_depth=None)
    at = np.flatnonzero((data.features == game.replay("").features().reshape(-1)).all(axis=1))
    assert len(at) == 1  # the root, X to move: X's mean over its four simulations
    assert data.value[at[0]] == pytest.approx((0 + 0.5 * 3 + 0.5 * 1.25) / 4)


def test_the_history_and_a_replay_carry_the_roots_children_value_sums(tmp_path: Path) -> None:
    from treelab.analysis.growth import tree_at
    from treelab.view.explorer.data import Replay, TreeFile

    recorder = treelab.Recorder("tictactoe")
    recorder.simulation("5", value=0.5, player=1)
    recorder.simulation("1", value=-0.75, player=1)
    db = tmp_path / "t.db"
    recorder.tree.save(db, games=[{"moves": "5"}])
    then = {k.name: k.mean for k in recorder.tree.root.children_view}
    recorder.simulation("5", value=-1.0, player=1)
    recorder.tree.save(db, games=[{"moves": "5"}])
    past = tree_at(db, 1)
    assert {k.name: k.mean for k in past.root.children_view} == then == {"5": 0.75, "1": 0.125}
    assert past.root.value_sum == -0.5 + 0.75 and past.root.mean == pytest.approx(1 - (1 + (0.5 - 0.75) / 2) / 2)
    shown = TreeFile.open(db).node("", Replay(game=1))
    assert {k["move"]: k["mean"] for k in shown["children"]} == then
    assert treelab.load(db).find("5").mean == (2 + 0.5 - 1.0) / 2 / 2


def test_a_stored_players_revert_and_the_explorers_copy_keep_value_sums(tmp_path: Path) -> None:
    from treelab.mcts.evaluators import Evaluation, uniform_priors
    from treelab.play.explorer import _snapshot
    from treelab.play.stored import revert

    def evaluate(state: treelab.State, rng: random.Random) -> Evaluation:
        return Evaluation(uniform_priors(state), 0.3 + 0.05 * len(state.legal_moves()) / 9)  # never 0, 1/2 or 1

    db = tmp_path / "t.db"
    tree = treelab.Tree("tictactoe")
    treelab.puct_search(tree, "", limit=treelab.Limit(iterations=80), evaluator=evaluate, solver=False, rng=1)
    tree.save(db)
    saved = {n.moves: (n.nb_visit, n.value_sum) for n in tree}
    copy = treelab.load(_snapshot(tree))  # what the explorer opens for a tree in memory
    assert {n.moves: (n.nb_visit, n.value_sum, copy.priors.get(n)) for n in copy} == {
        n.moves: (n.nb_visit, n.value_sum, tree.priors.get(n)) for n in tree}
    treelab.puct_search(tree, "5", limit=treelab.Limit(iterations=80), evaluator=evaluate, solver=False, rng=2)
    assert {n.moves: (n.nb_visit, n.value_sum) for n in tree} != saved
    revert(tree)
    assert {n.moves: (n.nb_visit, n.value_sum) for n in tree} == saved


# -- the streamed import ----------------------------------------------------------------------------------------


def reference(rows: Path, game: str, out: Path) -> None:
    """What an import did before it streamed: the whole tree built, saved aside, merged in."""
    aside = out.with_name("aside.db")
    from_rows(rows, game).save(aside)
    treelab.merge(out, aside)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), chunk=st.sampled_from([1, 2, 7, 50_000]), into_existing=st.booleans(),
       shuffled=st.booleans())
def test_a_streamed_import_writes_what_building_the_tree_and_merging_wrote(seed: int, chunk: int,
                                                                           into_existing: bool, shuffled: bool) -> None:
    tree = valued_tree("connect4", seed, 50)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(streaming, "CHUNK", chunk)
        folder = Path(tmp)
        rows = folder / "t.jsonl"
        listed = list(tree_rows(tree))
        if shuffled:  # any order is imported (sorted in memory first)
            random.Random(seed).shuffle(listed)
        with rows.open("w") as out:
            write_rows(listed, out, "connect4")
        outs = [folder / "ref" / "out.db", folder / "new" / "out.db"]
        for out_db in outs:
            out_db.parent.mkdir()
            if into_existing:  # a file that keeps the positions table: added to as the rows are read
                graph_file(out_db, valued_tree("connect4", seed + 1, 30))
        reference(rows, "connect4", outs[0])
        summary = import_file(rows, "rows", "connect4", outs[1])
        assert summary.nodes == len(tree) and summary.total == len(by_path(outs[1]))
        assert by_path(outs[1]) == by_path(outs[0])
        assert close(positions(outs[1]), positions(outs[0]))  # added as read, not rebuilt: sums in another order
        treelab.load(outs[1])  # an ordinary tree file


def test_a_bad_row_in_a_later_chunk_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "CHUNK", 2)
    tree = valued_tree("tictactoe", 3, 40)
    db = tmp_path / "t.db"
    tree.save(db)
    before = db.read_bytes()
    lines = list(tree_rows(tree))
    last = lines[-1]["path"]
    bad = tmp_path / "bad.jsonl"
    with bad.open("w") as out:  # the last node's move again: a cell taken
        write_rows([*lines, {"path": f"{last},{last.split(',')[-1]}", "visits": 1}], out, "tictactoe")
    result = run("import", "rows", str(bad), "--game", "tictactoe", "--db", str(db))
    assert_clean_error(result, f"row {len(lines) + 2} (path '{last},")
    assert db.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "t.db"]
    fresh = tmp_path / "new.db"
    assert_clean_error(run("import", "rows", str(bad), "--game", "tictactoe", "--db", str(fresh)), "row ")
    assert not fresh.exists()


def test_growth_of_an_imported_tree_says_it_has_no_games(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    valued_tree("tictactoe", 1, 30).save(db)
    result = run("growth", str(db), "-o", str(tmp_path / "g.png"))
    assert result.exit_code == 0 and "logs no training games" in result.output and (tmp_path / "g.png").exists()
