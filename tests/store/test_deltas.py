"""Workers' deltas written straight into the file (treelab.store.deltas): exact sums, merges by path, proofs."""

from __future__ import annotations

import random
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import treelab
from tests.store.test_merge import by_path, random_tree, saved
from treelab import speedups
from treelab.errors import DatabaseBusyError, ProofConflictError, StoreError
from treelab.mcts.uct import Limit, search
from treelab.nodes import Proof
from treelab.store import deltas
from treelab.store import values as node_columns
from treelab.store.binding import binding_of
from treelab.store.deltas import LOCAL, AssignedIds, renumber, share_top, stamp, start, take
from treelab.store.values import columns
from treelab.store.writer import DeltaWriter
from treelab.tree import Tree


def counts_by_path(tree: Tree) -> dict[str, tuple[Any, ...]]:
    """A tree in memory as :func:`by_path` reads a file: counts in COUNTS order, and the proof."""
    return {"/".join(("", *n.moves)) if n.moves else "": (n.nb_draw, n.nb_select, n.nb_visit, n.nb_win,
                                                          None if n.proven is None else int(n.proven))
            for n in tree}


def plus(total: dict[str, tuple[Any, ...]], base: dict[str, tuple[Any, ...]],
         grown: Tree | dict[str, tuple[Any, ...]]) -> None:
    """Add what ``grown`` (a tree, or its :func:`counts_by_path`) gained over ``base`` (its snapshot) to ``total``."""
    for path, (*counts, proven) in (counts_by_path(grown) if isinstance(grown, Tree) else grown).items():
        old = base.get(path, (0, 0, 0, 0, None))
        row = list(total.get(path, (0, 0, 0, 0, None)))
        for i, n in enumerate(counts):
            row[i] += n - old[i]
        row[-1] = proven if proven is not None else row[-1]
        total[path] = tuple(row)


def test_two_copies_add_up_exactly_on_every_path(tmp_path: Path) -> None:
    """Two workers' copies grow the same openings; their deltas, in any order, sum exactly along move paths."""
    db = saved(random_tree("connect4", 1, 30), tmp_path / "c4.db")
    writer = DeltaWriter(db, "connect4")
    expected = by_path(db)
    copies = [start(treelab.load(db)), start(treelab.load(db))]
    bases = [counts_by_path(c) for c in copies]
    seen = binding_of(copies[0]).generation  # type: ignore[union-attr]  # lookups only under rows grown since: the writer's log is used
    rng = random.Random(3)
    for round_ in range(4):
        order = [0, 1] if round_ % 2 == 0 else [1, 0]
        for k in order:
            tree = copies[k]
            before = counts_by_path(tree)
            search(tree, "44", limit=Limit(iterations=300), rng=rng.randrange(1 << 30))
            delta, new = take(tree, seen=seen)
            assert all(node.node_id >= LOCAL for node in new) and len(delta.moves) == len(new)
            plus(expected, before, tree)
            _, [ids] = writer.store([(f"worker {k + 1}", None, delta)])
            assert ids is not None and len(ids) == len(new)
            renumber(new, ids)
            assert all(node.node_id < LOCAL for node in tree)
    writer.close()
    assert by_path(db) == expected  # the serial replay of both copies' searches, summed path by path
    assert bases[0] == bases[1]


def test_the_same_new_nodes_from_two_copies_merge_into_one_row(tmp_path: Path) -> None:
    db = saved(Tree("tictactoe"), tmp_path / "t.db")
    writer = DeltaWriter(db, "tictactoe")
    a, b = start(treelab.load(db)), start(treelab.load(db))
    for tree in (a, b):
        tree.record("159", winner=1)
        tree.record("15", winner=None)
    for tree in (a, b):
        delta, new = take(tree)
        _, [ids] = writer.store([("w", None, delta)])
        renumber(new, ids)
    assert [n.node_id for n in a] == [n.node_id for n in b]  # b's nodes were added to a's rows
    rows = by_path(db)
    assert len(rows) == 4 and rows["/1/5/9"][2] == 2 and rows[""][2] == 4 and rows["/1/5"][2] == 4
    b.record("1597", winner=1)  # under a row b learned by merging: looked up, not taken for new
    a.record("1597", winner=1)
    for tree in (b, a):
        delta, new = take(tree, seen=1)
        _, [ids] = writer.store([("w", None, delta)])
        renumber(new, ids)
    writer.close()
    assert by_path(db)["/1/5/9/7"][2] == 2 and len(by_path(db)) == 5


def test_a_contradicting_proof_writes_nothing(tmp_path: Path) -> None:
    db = saved(Tree("tictactoe"), tmp_path / "t.db")
    writer = DeltaWriter(db, "tictactoe")
    a, b = start(treelab.load(db)), start(treelab.load(db))
    a.record("12", winner=1)
    b.record("12", winner=1)
    a.find("12").proven = Proof.of(1)
    b.find("12").proven = Proof.of(-1)
    writer.store([("a", None, take(a)[0])])
    before = by_path(db)
    conflict = r"holds proof 'win' for '[0-9/]+' \(node id \d+\) but this tree proved 'loss'"
    with pytest.raises(ProofConflictError, match=conflict):
        writer.store([("b", None, take(b)[0])])
    writer.close()
    assert by_path(db) == before


def test_a_game_logged_before_is_skipped(tmp_path: Path) -> None:
    db = saved(Tree("tictactoe"), tmp_path / "t.db", games=0)
    writer = DeltaWriter(db, "tictactoe")
    tree = start(treelab.load(db))
    tree.record("123", winner=None)
    row = {"id": 1, "moves": "123", "winner": None}
    delta, _ = take(tree)
    rows, [ids] = writer.store([("w", row, delta)])
    assert rows == [row] and ids is not None
    again, [skipped] = writer.store([("w", row, delta)])  # a retried batch
    writer.close()
    assert again == [] and skipped is None and by_path(db)[""][2] == 1
    assert writer.stats() == (4, 1, 1)


def test_share_top_gives_a_copy_the_other_workers_counts_without_handing_them_on(tmp_path: Path) -> None:
    db = saved(random_tree("connect4", 2, 20), tmp_path / "c4.db")
    writer = DeltaWriter(db, "connect4")
    mine, theirs = start(treelab.load(db)), start(treelab.load(db))
    search(theirs, limit=Limit(iterations=400), rng=5)
    writer.store([("w", None, take(theirs)[0])])
    writer.close()
    file_rows = by_path(db)
    shared = share_top(db, mine, 2)
    assert shared == sum(1 for n in mine if n.depth <= 2)
    for node in mine:  # the top has the file's counts (theirs included); deeper, the copy's own
        path = "/".join(("", *node.moves)) if node.moves else ""
        if node.depth <= 2:
            assert (node.nb_visit, node.nb_win) == (file_rows[path][2], file_rows[path][3])
    assert mine.root.nb_visit == theirs.root.nb_visit
    assert not mine.baselines and not mine.new_nodes  # nothing to hand on: the file has it already
    mine.record("4", winner=1)
    with pytest.raises(StoreError, match="take"):
        share_top(db, mine, 2)


def test_a_delta_taken_before_the_last_was_stored_names_its_nodes_by_local_id(tmp_path: Path) -> None:
    """The pipeline of a training run's writer: take game N+1's delta, then store game N's; every sum is exact."""
    db = saved(random_tree("connect4", 5, 20), tmp_path / "c4.db")
    writer = DeltaWriter(db, "connect4")
    tree = start(treelab.load(db))
    expected = by_path(db)
    rng = random.Random(8)
    earlier, held = None, None  # the stored delta's AssignedIds; the delta and nodes awaiting their ids
    for _ in range(5):
        before = counts_by_path(tree)
        search(tree, limit=Limit(iterations=250), rng=rng.randrange(1 << 30))  # reaches the last game's nodes
        plus(expected, before, tree)
        delta, new = take(tree, seen=-1)
        if held is not None:
            assert (delta.known >= LOCAL).any()  # nodes of the game not stored yet, changed again
            (old_delta, old_new) = held
            _, [ids] = writer.store([(None, None, old_delta)], earlier=earlier)
            earlier = AssignedIds(old_delta.first, np.array(ids, dtype=np.int64))
            renumber(old_new, ids)
        held = (delta, new)
    _, [ids] = writer.store([(None, None, held[0])], earlier=earlier)
    renumber(held[1], ids)
    assert by_path(db) == expected
    assert counts_by_path(treelab.load(db)) == counts_by_path(tree)
    with pytest.raises(StoreError, match="not stored"):  # without the mapping, the local ids name nothing
        delta, _ = take(tree)
        search(tree, limit=Limit(iterations=50), rng=1)
        bad, _ = take(tree)
        writer.store([(None, None, replace(bad, known=np.array([LOCAL + 10**6], dtype=np.int64),
                                           known_counts=np.ones((1, 4), dtype=np.int64)))])
    writer.close()


def test_a_chained_batch_of_games_held_unwritten_adds_up_exactly_and_renumbers_the_copy(tmp_path: Path) -> None:
    """A worker that found the file busy holds its games: their deltas (each naming the nodes of those before it
    by local id) go in one transaction, and its copy keeps every node's row id for the next game."""
    db = saved(random_tree("connect4", 5, 20), tmp_path / "c4.db")
    writer = DeltaWriter(db, "connect4")
    tree = start(treelab.load(db))
    expected = by_path(db)
    rng = random.Random(9)
    for _ in range(2):  # two rounds: the second names the first round's nodes by their row ids
        batch, pending = [], []
        for _ in range(3):
            before = counts_by_path(tree)
            search(tree, limit=Limit(iterations=200), rng=rng.randrange(1 << 30))
            plus(expected, before, tree)
            delta, new = take(tree, seen=-1)
            batch.append((None, None, delta))
            pending += new
        assert any((d.known >= LOCAL).any() for _, _, d in batch[1:])  # held games' nodes, changed again
        _, stored = writer.store(batch, chained=True)
        renumber(pending, [i for ids in stored if ids is not None for i in ids])
        assert by_path(db) == expected
    assert counts_by_path(treelab.load(db)) == counts_by_path(tree)
    with pytest.raises(StoreError, match="not consecutive"):  # deltas of two copies cannot be chained
        other = start(treelab.load(db))
        search(tree, limit=Limit(iterations=20), rng=2)
        search(other, limit=Limit(iterations=20), rng=3)
        writer.store([(None, None, take(tree)[0]), (None, None, take(other)[0])], chained=True)
    assert counts_by_path(treelab.load(db)) == {**counts_by_path(treelab.load(db))} and by_path(db) == expected
    writer.close()


def test_a_writer_that_will_not_wait_is_told_the_file_is_busy_and_writes_nothing(tmp_path: Path) -> None:
    db = saved(random_tree("connect4", 5, 20), tmp_path / "c4.db")
    writer = DeltaWriter(db, "connect4")
    tree = start(treelab.load(db))
    search(tree, limit=Limit(iterations=100), rng=4)
    delta, new = take(tree)
    before = by_path(db)
    other = sqlite3.connect(db)
    other.execute("BEGIN IMMEDIATE")  # another process's write under way
    try:
        with pytest.raises(DatabaseBusyError, match="being written by another process"):
            writer.store([(None, None, delta)], wait=False)
    finally:
        other.rollback()
        other.close()
    assert by_path(db) == before
    _, [ids] = writer.store([(None, None, delta)], wait=False)  # free again: written at once
    renumber(new, ids)
    assert counts_by_path(treelab.load(db)) == counts_by_path(tree)
    writer.close()


@pytest.mark.skipif(speedups.compiled is None, reason=speedups.describe())
def test_compiled_columns_match_the_python_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = start(Tree("connect4"))
    search(tree, limit=Limit(iterations=400), solver=True, rng=2)
    new = list(tree.new_nodes)
    new[3].proven = Proof.WIN
    fields = ("parent.node_id", "depth", "nb_visit", "nb_win", "nb_draw", "nb_select", "node_id")
    nodes = [tree.root, *new]  # the root has no parent: -1
    compiled = [columns(nodes, fields), columns(nodes, ("proven",), none=-9),
                deltas._baselines(tree.baselines, nodes)]
    delta, _ = take(tree)
    monkeypatch.setattr(deltas, "compiled", None)
    monkeypatch.setattr(node_columns, "compiled", None)
    python = [columns(nodes, fields), columns(nodes, ("proven",), none=-9),
              deltas._baselines({n: b for n, b in zip(nodes, compiled[2].tolist(), strict=True)}, nodes)]
    for a, b in zip(compiled, python, strict=True):
        assert a.dtype == b.dtype == np.int64 and a.tolist() == b.tolist()
    assert compiled[0][0, 0] == -1 and compiled[1][4, 0] == int(Proof.WIN)  # the root; new[3]
    assert (len(delta.known) + 3, int(Proof.WIN)) in delta.proofs
    with pytest.raises(TypeError, match="None"):  # a None without a stand-in is an error, never a number
        speedups.compiled.columns([tree.root], ("created_game",))  # type: ignore[union-attr]


def _race(db: str, snapshot: str, seed: int) -> tuple[dict[str, tuple[Any, ...]], dict[str, tuple[Any, ...]]]:
    """A worker process: grow a copy of the file's tree as it was (``snapshot``) and write every few searches."""
    tree = start(treelab.load(snapshot))  # the same copy for both workers, whoever starts writing first
    base = counts_by_path(tree)
    writer = DeltaWriter(db, "connect4")
    rng = random.Random(seed)
    for _ in range(12):
        search(tree, "4", limit=Limit(iterations=150), rng=rng.randrange(1 << 30))
        delta, new = take(tree, seen=-1)  # -1: it knows nothing of the other's saves
        _, [ids] = writer.store([(f"worker {seed}", None, delta)])
        renumber(new, ids)
    writer.close()
    return base, counts_by_path(tree)


def test_two_worker_processes_writing_the_same_new_nodes_at_once_add_up_exactly(tmp_path: Path) -> None:
    """Two processes, each with its own writer, race to store the same new (parent, move) rows: one row each, summed."""
    import multiprocessing

    db = saved(random_tree("connect4", 2, 10), tmp_path / "c4.db")
    snapshot = tmp_path / "snapshot.db"
    shutil.copyfile(db, snapshot)
    expected = by_path(db)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        results = pool.starmap(_race, [(str(db), str(snapshot), 1), (str(db), str(snapshot), 2)])
    for base, grown in results:
        plus(expected, base, grown)
    assert by_path(db) == expected  # no path twice (the unique index would refuse it), every count the sum
    assert results[0][0] == results[1][0]  # one snapshot
    shared = (set(results[0][1]) & set(results[1][1])) - set(results[0][0])
    assert len(shared) > 50  # both grew many of the same new nodes: the second to write merged them


@pytest.mark.skipif(speedups.compiled is None, reason=speedups.describe())
def test_compiled_delta_rows_match_the_python_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = start(Tree("tictactoe"))
    search(tree, limit=Limit(iterations=300), rng=4)
    stamp(tree, 7)
    for node, proof in zip(tree.new_nodes[5:40:9], (Proof.WIN, Proof.LOSS, Proof.DRAW, Proof.WIN), strict=True):
        node.proven = proof
    delta, _ = take(tree)
    n = len(delta.moves)
    ids = np.arange(100, 100 + n, dtype=np.int64)
    pids = np.where(delta.parents >= LOCAL, ids[np.maximum(delta.parents - delta.first, 0)], delta.parents)
    proven = [None] * n
    for pos, proof in delta.proofs:
        if pos >= len(delta.known):
            proven[pos - len(delta.known)] = proof
    assert any(p is not None for p in proven) and n > 120  # proofs, and more than two statements' worth
    keep = np.ones(n, dtype=bool)
    keep[::7] = False
    sums = np.linspace(-1.0, 1.0, n)
    priors = np.where(np.arange(n) % 3 == 0, np.nan, np.linspace(0.0, 1.0, n))  # NaN: no prior (NULL)
    cases = [(proven, True, None), (None, False, keep), (proven, True, keep), (proven, True, keep, (sums, priors)),
             (None, False, None, (sums, priors))]
    compiled = [deltas._new_rows(ids, pids, delta, *case) for case in cases]
    monkeypatch.setattr(deltas, "compiled", None)
    python = [deltas._new_rows(ids, pids, delta, *case) for case in cases]
    assert compiled == python
    assert compiled[0][0][:10] == (100, int(pids[0]), delta.moves[0], int(delta.depths[0]),
                                   *map(int, delta.counts[0, :3]), proven[0], 7, int(delta.counts[0, 3]))
    assert sum(len(group) for group in compiled[1]) == 10 * int(keep.sum())
    assert sum(len(group) for group in compiled[3]) == 12 * int(keep.sum())  # each row ends with value_sum, prior
    assert compiled[4][0][10:12] == (-1.0, None) and compiled[4][0][22:24] == (float(sums[1]), float(priors[1]))
    with pytest.raises(ValueError, match="different lengths"):
        speedups.compiled.delta_rows(ids[:-1], pids, delta.depths, delta.counts, list(delta.moves),  # type: ignore[union-attr]
                                     None, None, None, 50)


def test_new_nodes_take_their_value_sums_and_priors_in_their_insert_also_where_another_tree_stored_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A delta's fresh rows get their value sums and priors in their INSERT, the rest (stored rows, and new nodes
    another worker stored first) by the one adding UPDATE: the file ends as when every row had the UPDATE."""
    from tests.core.test_node_memory import random_model
    from treelab.learn.model import load_model
    from treelab.mcts.dispatch import puct_search
    from treelab.mcts.evaluators import ModelEvaluator

    db = saved(random_tree("connect4", 2, 10), tmp_path / "c4.db")
    model = load_model(random_model(tmp_path / "m.npz"))
    trees = [start(treelab.load(db)) for _ in range(2)]
    for seed, tree in enumerate(trees):
        puct_search(tree, "4", limit=Limit(iterations=300), evaluator=ModelEvaluator(model), rng=seed)
    taken = [take(tree, seen=-1) for tree in trees]  # neither knows of the other's rows
    assert all(delta.values is not None and len(delta.values) > 100 for delta, _ in taken)
    shared = {n.sequence for n in taken[0][1]} & {n.sequence for n in taken[1][1]}
    assert len(shared) > 20  # new in both: the second delta's are added to the first's rows

    def written(copy: Path) -> dict[str, tuple[int, float, float | None]]:
        shutil.copyfile(db, copy)
        writer = DeltaWriter(str(copy), "connect4")
        for i, (delta, _) in enumerate(taken):
            writer.store([(f"worker {i}", None, delta)])
        writer.close()
        return {n.sequence: (n.nb_visit, n.value_sum, n.prior) for n in treelab.load(copy)}

    now = written(tmp_path / "now.db")
    monkeypatch.setattr(deltas, "_inserted_values", lambda values, known, fresh: (None, values))  # UPDATE them all
    assert now == written(tmp_path / "updated.db")
    assert sum(1 for _, value, prior in now.values() if value and prior is not None) > 200
