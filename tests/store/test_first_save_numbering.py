"""The first save's breadth-first numbering (treelab.store.bulk), compiled and in Python.

A first save numbers the nodes breadth-first, children in their list order,
so the file's ``id`` order is also its ``parent_id`` order. The compiled
functions must give exactly the Python reference's answers; the tree takes
the new ids only once the file is committed.
"""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import treelab
from treelab import speedups
from treelab.store import bulk
from treelab.store import persistence as store
from treelab.tree import TreeNode

needs_compiled = pytest.mark.skipif(speedups.compiled is None, reason=speedups.describe())


@pytest.fixture(scope="module")
def grown() -> treelab.Tree:
    tree = treelab.Tree("connect4")
    treelab.search(tree, "", limit=treelab.Limit(iterations=3000), rng=5, solver=True)
    return tree


def ids(tree: treelab.Tree) -> dict[tuple[str, ...], int]:
    return {tuple(n.moves): n.node_id for n in tree}


def test_breadth_first_order_and_parent_positions(grown: treelab.Tree) -> None:
    nodes, parents = bulk.breadth_first(grown.root)
    where = memoryview(parents).cast("q")
    assert len(nodes) == len(where) == grown.size and nodes[0] is grown.root and where[0] == -1
    assert [n.depth for n in nodes] == sorted(n.depth for n in nodes)  # level by level
    for i, node in enumerate(nodes[1:], 1):
        assert nodes[where[i]] is node.parent and where[i] < i
    assert list(where) == sorted(where)  # so parent_id order follows id order
    for node in nodes:  # siblings keep their order
        kids = [n for n in nodes if n.parent is node]
        assert kids == list(node.children_view)
        if len(kids) > 3:
            break


@needs_compiled
def test_compiled_rows_match_the_python_reference(grown: treelab.Tree) -> None:
    c = speedups.compiled
    assert c is not None
    nodes, parents = bulk.breadth_first(grown.root)
    py_nodes, py_parents = bulk._breadth_first(grown.root)
    assert py_parents == parents and all(a is b for a, b in zip(py_nodes, nodes, strict=True))
    spans = [(0, 10, 1), (0, len(nodes), 1), (17, 400, 100), (len(nodes) - 3, len(nodes) + 50, 7)]
    for (start, stop, first), width in itertools.product(spans, [1, 3, 50]):
        flat = c.rows(nodes, parents, start, stop, first, width)
        assert flat == bulk._rows(nodes, parents, start, stop, first, width)
        size = bulk.ROW * width
        assert [len(t) for t in flat[:-1]] == [size] * (len(flat) - 1) and 0 < len(flat[-1]) <= size
    root_row = c.rows(nodes, parents, 0, 1, 1, 1)[0]
    assert root_row[:4] == (1, None, "root", 0) and root_row[4] == grown.root.nb_visit


@needs_compiled
def test_compiled_rows_read_properties_too() -> None:
    """A node class whose counts are properties, not slots, gets the same rows."""

    class Scaled(TreeNode):
        __slots__ = ("_visits",)

        @property  # type: ignore[override]
        def nb_visit(self) -> int:
            return self._visits * 10

        @nb_visit.setter
        def nb_visit(self, value: int) -> None:
            self._visits = value

    root = Scaled("root")
    for label in "312":
        Scaled(label, Scaled(label, root))
    for n in root.descendants:
        n.nb_visit = len(n.name) + n.depth
    nodes, parents = bulk.breadth_first(root)
    assert [n.name for n in nodes] == ["root", "3", "1", "2", "3", "1", "2"]
    assert speedups.compiled.rows(nodes, parents, 0, 9, 1, 2) == bulk._rows(nodes, parents, 0, 9, 1, 2)  # type: ignore[union-attr]
    speedups.compiled.renumber(nodes, 41)  # type: ignore[union-attr]
    assert [n.node_id for n in nodes] == list(range(41, 48))


@needs_compiled
def test_compiled_rows_refuse_bad_arguments(grown: treelab.Tree) -> None:
    c = speedups.compiled
    assert c is not None
    nodes, parents = bulk.breadth_first(grown.root)
    with pytest.raises(IndexError, match="outside"):
        c.rows(nodes, parents[:80], 0, 11, 1, 1)  # more nodes than parent positions
    with pytest.raises(IndexError, match="width"):
        c.rows(nodes, parents, 0, 11, 1, 0)
    with pytest.raises(TypeError):
        c.rows(tuple(nodes), parents, 0, 1, 1, 1)
    with pytest.raises(TypeError, match="children"):
        c.breadth_first(object())


@pytest.mark.parametrize(
    ("compiled", "width", "chunk"),
    [(True, bulk.WIDTH, bulk.CHUNK), (False, bulk.WIDTH, bulk.CHUNK), (True, 7, 98), (False, 3, 12)],
    ids=["compiled-if-built", "python", "compiled-small-chunks", "python-small-chunks"],
)
def test_a_first_save_numbers_the_file_breadth_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled: bool, width: int, chunk: int
) -> None:
    if not compiled:
        monkeypatch.setattr(bulk, "compiled", None)
    monkeypatch.setattr(bulk, "WIDTH", width)  # chunks of whole statements, and a shorter last one
    monkeypatch.setattr(bulk, "CHUNK", chunk)
    tree = treelab.Tree("connect4")
    treelab.search(tree, "", limit=treelab.Limit(iterations=500), rng=9)
    by_path = {tuple(n.moves): (n.nb_visit, n.nb_win, n.nb_draw) for n in tree}
    db = tmp_path / "t.db"
    assert treelab.save(tree, db) == tree.size
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, parent_id, depth FROM nodes ORDER BY id").fetchall()
    conn.close()
    assert [r[0] for r in rows] == list(range(1, tree.size + 1))
    assert [r[1] for r in rows[1:]] == sorted(r[1] for r in rows[1:])
    assert [r[2] for r in rows] == sorted(r[2] for r in rows)
    # the tree took the file's ids; the same nodes hold the same counts
    assert sorted(n.node_id for n in tree) == list(range(1, tree.size + 1))
    assert {tuple(n.moves): (n.nb_visit, n.nb_win, n.nb_draw) for n in tree} == by_path
    back = treelab.load(db)
    assert ids(back) == ids(tree)
    assert [[k.name for k in n.children_view] for n in back] == [[k.name for k in n.children_view] for n in tree]
    # and it keeps growing with fresh ids, saved incrementally
    treelab.search(tree, "44", limit=treelab.Limit(iterations=50), rng=1)
    changed = tree.unsaved
    assert 0 < changed < tree.size and treelab.save(tree, db) == changed
    assert ids(treelab.load(db)) == ids(tree)


def test_a_failed_first_save_keeps_the_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = treelab.Tree("connect4")
    treelab.search(tree, "", limit=treelab.Limit(iterations=300), rng=3)
    before = ids(tree)

    def crash(*args: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "_log_games", crash)
    with pytest.raises(OSError):
        treelab.save(tree, tmp_path / "t.db")
    assert ids(tree) == before and tree.unsaved == tree.size
