"""The children slot's three shapes: nothing for a leaf, the one child itself, a list (or a load's tuple).

anytree's public API must not see the difference: the same children tuples,
parents, leaves, heights, iterators and renderings as plain anytree ``Node`` s
(a Hypothesis test over random attach/detach/re-parent sequences), and trees of
recorded games (mostly one-child chains) save, load, search, merge and roll back
as before, on real SQLite files, through the compiled and the Python code alike.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anytree
import pytest
from anytree import LevelOrderIter, Node, PreOrderIter, RenderTree
from hypothesis import given, settings
from hypothesis import strategies as st
from random_games import random_game

import treelab
from treelab import (
    Tree,  # the front door: it wires Tree.save to the store
    speedups,
)
from treelab.errors import TreelabError
from treelab.nodes import CHILDREN_SLOT, TreeNode, children_of, link, unlink


class Movable(TreeNode):
    """A TreeNode that anytree may move (TreeNode itself refuses: its place is its move sequence)."""

    __slots__ = ()

    def _pre_attach(self, parent: TreeNode) -> None:
        pass

    def _pre_detach(self, parent: TreeNode) -> None:
        pass


def shape_ok(node: TreeNode) -> bool:
    """The slot holds nothing for a leaf, the child itself for one, a list/tuple for two or more."""
    raw = getattr(node, CHILDREN_SLOT, None)
    n = len(children_of(node))
    if n == 0:
        return raw is None
    if n == 1:
        return isinstance(raw, TreeNode)
    return type(raw) in (list, tuple)


def slot_shapes(tree: Tree) -> dict[str, int]:
    """How many nodes of ``tree`` hold each shape: none, one (the node itself), list, tuple."""
    shapes = {"none": 0, "one": 0, "list": 0, "tuple": 0}
    for node in tree:
        raw = getattr(node, CHILDREN_SLOT, None)
        key = "none" if raw is None else "one" if isinstance(raw, TreeNode) else type(raw).__name__
        shapes[key] += 1
        assert shape_ok(node), node
    return shapes


def recorded(game: str, games: int, seed: int) -> Tree:
    """A tree of ``games`` whole random games recorded with their results (long one-child chains)."""
    rng = random.Random(seed)
    tree = Tree(game)
    for _ in range(games):
        tree.record(*random_game(tree.game, rng))
    return tree


def rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM nodes ORDER BY id").fetchall()


def snapshot(tree: Tree) -> list[tuple[Any, ...]]:
    """Every node's path and counts, its children's names in order: what a save or load must keep."""
    return [(n.sequence, n.depth, n.nb_visit, n.nb_win, n.nb_draw, n.nb_select, n.proven, n.node_id,
             tuple(k.name for k in n.children), n.is_leaf) for n in tree]


ops = st.lists(st.tuples(st.integers(0, 7), st.integers(-1, 7)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(ops)
def test_moves_keep_the_same_children_as_plain_anytree_nodes(moves: list[tuple[int, int]]) -> None:
    """Random attach/detach/re-parent sequences (-1: detach) on both kinds of node; loops refused alike."""
    ours = [Movable(str(i)) for i in range(8)]
    theirs = [Node(str(i)) for i in range(8)]
    for child, parent in moves:
        def attach(nodes: list[Any], child: int = child, parent: int = parent) -> None:
            nodes[child].parent = None if parent < 0 else nodes[parent]

        _same_outcome(attach, ours, theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert [k.name for k in a.children] == [k.name for k in b.children]
            assert (a.parent and a.parent.name) == (b.parent and b.parent.name)
            assert a.is_leaf == b.is_leaf and a.height == b.height
            assert [s.name for s in a.siblings] == [s.name for s in b.siblings]
            assert [p.name for p in a.path] == [p.name for p in b.path]
            assert shape_ok(a)
    for a, b in zip(ours, theirs, strict=True):
        assert [n.name for n in PreOrderIter(a)] == [n.name for n in PreOrderIter(b)]
        assert [n.name for n in LevelOrderIter(a)] == [n.name for n in LevelOrderIter(b)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6), max_size=6), max_size=8))
def test_children_assignment_matches_plain_anytree(assignments: list[list[int]]) -> None:
    """``node.children = [...]`` and ``del node.children`` on a node, as anytree does it."""
    ours = [Movable(str(i)) for i in range(7)]
    theirs = [Node(str(i)) for i in range(7)]
    for step, picks in enumerate(assignments):
        owner = step % 7
        def assign(nodes: list[Any], owner: int = owner, picks: list[int] = picks) -> None:
            nodes[owner].children = [nodes[i] for i in dict.fromkeys(picks) if i != owner]

        _same_outcome(assign, ours, theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert [k.name for k in a.children] == [k.name for k in b.children]
            assert shape_ok(a)
    for nodes in (ours, theirs):
        del nodes[0].children
    assert ours[0].children == () and theirs[0].children == () and getattr(ours[0], CHILDREN_SLOT, None) is None


def test_tree_nodes_still_refuse_to_move_and_stay_put() -> None:
    tree = Tree("connect4")
    tree.record("4453", winner=1)
    tree.record("42", winner=None)
    four, leaf = tree.find("4"), tree.find("4453")
    before = snapshot(tree)
    with pytest.raises(TreelabError, match="cannot be moved"):
        leaf.parent = tree.root
    with pytest.raises(TreelabError, match="cannot be moved"):
        four.parent = None
    with pytest.raises(TreelabError, match="cannot be moved"):
        tree.root.children = []
    with pytest.raises(anytree.TreeError, match="multiple times"):
        tree.root.children = [four, four]
    assert snapshot(tree) == before


def test_anytree_views_of_a_recorded_tree() -> None:
    tree = Tree("connect4")
    tree.record("4453", winner=1)
    tree.record("4412", winner=2)
    root = tree.root
    assert [n.sequence for n in PreOrderIter(root)] == ["root", "4", "4/4", "4/4/5", "4/4/5/3", "4/4/1", "4/4/1/2"]
    assert [n.sequence for n in LevelOrderIter(root)] == ["root", "4", "4/4", "4/4/5", "4/4/1", "4/4/5/3",
                                                          "4/4/1/2"]
    assert [n.name for n in anytree.search.findall(root, filter_=lambda n: n.is_leaf)] == ["3", "2"]
    assert anytree.search.find(root, lambda n: n.sequence == "4/4/1").name == "1"
    assert [n.name for n in tree.find("445").siblings] == ["1"] and tree.find("4").siblings == ()
    assert [n.name for n in tree.find("4453").path] == ["root", "4", "4", "5", "3"]
    assert root.height == 4 and tree.find("44").height == 2 and tree.find("4412").is_leaf
    assert [n.name for n in root.leaves] == ["3", "2"] and root.size == 7
    drawn = RenderTree(root).by_attr("name")
    assert drawn.splitlines() == ["root", "└── 4", "    └── 4", "        ├── 5", "        │   └── 3", "        └── 1",
                                  "            └── 2"]
    assert tree.find("4").children == (tree.find("44"),) and isinstance(tree.find("4").children, tuple)
    assert slot_shapes(tree) == {"none": 2, "one": 4, "list": 1, "tuple": 0}


def test_link_and_unlink_move_between_the_shapes() -> None:
    root = TreeNode("root")
    kids = [TreeNode(str(i)) for i in range(4)]
    for n, kid in enumerate(kids, 1):
        link(kid, root)
        assert list(children_of(root)) == kids[:n] and shape_ok(root) and kid.parent is root
    setattr(root, CHILDREN_SLOT, tuple(kids))  # as a load leaves it
    extra = TreeNode("9")
    link(extra, root)
    assert type(getattr(root, CHILDREN_SLOT)) is list and list(children_of(root)) == [*kids, extra]
    for gone in [kids[1], extra, kids[0], kids[3]]:
        unlink(gone)
        assert gone.parent is None and gone not in children_of(root) and shape_ok(root)
    assert getattr(root, CHILDREN_SLOT) is kids[2]
    unlink(kids[2])
    assert children_of(root) == () and root.is_leaf and getattr(root, CHILDREN_SLOT, None) is None
    unlink(root)  # a root: nothing to do
    assert root.parent is None


@pytest.fixture(params=["compiled", "python"])
def builder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test with the compiled code (when built) and with the pure-Python reference."""
    if request.param == "compiled" and speedups.compiled is None:
        pytest.skip("the compiled code is not built")
    if request.param == "python":
        monkeypatch.setattr(speedups, "compiled", None)
    return str(request.param)


def test_chains_save_and_load_with_one_child_kept_without_a_list(builder: str, tmp_path: Path) -> None:
    tree = recorded("connect4", 40, seed=5)
    shapes = slot_shapes(tree)
    assert shapes["one"] > shapes["list"] * 5 and shapes["tuple"] == 0  # a recorded tree is mostly chains
    db = tmp_path / "chains.db"
    tree.save(db)
    loaded = treelab.load(db)
    assert snapshot(loaded) == snapshot(tree)
    got = slot_shapes(loaded)
    assert got["none"] == shapes["none"] and got["one"] == shapes["one"]
    assert got["tuple"] == shapes["list"] and got["list"] == 0  # a load seals exact-size tuples
    # grow the loaded tree: a tuple becomes a list, a single child a list, a leaf a single child
    for moves in ("444444", "1234567", "7777"):
        loaded.record(moves, winner=None)
    treelab.search(loaded, "", limit=treelab.Limit(iterations=300), rng=3)
    slot_shapes(loaded)
    loaded.save(db)
    again = treelab.load(db)
    assert snapshot(again) == snapshot(loaded)
    assert rows(db)[0][1] is None and len(rows(db)) == len(loaded)


def test_partial_loads_of_chains(builder: str, tmp_path: Path) -> None:
    tree = recorded("connect4", 25, seed=9)
    db = tmp_path / "c4.db"
    tree.save(db)
    line = max(tree, key=lambda n: (n.depth, n.sequence))  # the end of the longest recorded game
    moves = "".join(line.moves[:6])
    part = treelab.load(db, path=moves, depth=3)
    top = part.find(moves)
    expected = [n.sequence for n in PreOrderIter(tree.find(moves), maxlevel=4)]
    assert [n.sequence for n in PreOrderIter(top)] == expected
    assert [n.name for n in part.root.path] == ["root"] and len(part.root.children) == 1
    for node in part:
        assert shape_ok(node)
        original = tree.find("".join(node.moves))
        assert (node.nb_visit, node.nb_win, node.nb_draw, node.node_id) == (
            original.nb_visit, original.nb_win, original.nb_draw, original.node_id)
    assert [n.sequence for n in PreOrderIter(treelab.load(db, depth=2).root)] == [
        n.sequence for n in PreOrderIter(tree.root, maxlevel=3)]


@pytest.mark.openspiel
def test_mover_nodes_of_an_openspiel_game(builder: str, tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    from treelab.tree import MoverNode

    tree = recorded("openspiel:dots_and_boxes(num_rows=1,num_cols=2)", 15, seed=2)
    assert type(tree.root) is MoverNode and slot_shapes(tree)["one"] > 0
    db = tmp_path / "dots.db"
    tree.save(db)
    loaded = treelab.load(db)
    assert type(loaded.root) is MoverNode
    assert snapshot(loaded) == snapshot(tree)
    assert [n.mover for n in loaded] == [n.mover for n in tree]
    treelab.search(loaded, "", limit=treelab.Limit(iterations=200), rng=1)
    slot_shapes(loaded)
    loaded.save(db)
    assert snapshot(treelab.load(db)) == snapshot(loaded)


def test_rolling_back_new_nodes_of_chains(builder: str, tmp_path: Path) -> None:
    from treelab.play.stored import revert

    tree = recorded("connect4", 10, seed=4)
    db = tmp_path / "c4.db"
    tree.save(db)
    before = snapshot(tree)
    for moves in ("4444", "11111", "4"):
        tree.record(moves, winner=1)
    treelab.search(tree, "", limit=treelab.Limit(iterations=100), rng=2)
    revert(tree)
    assert snapshot(tree) == before
    slot_shapes(tree)


def test_merge_of_chain_trees_loads_with_the_same_shapes(builder: str, tmp_path: Path) -> None:
    dbs = []
    for seed in (1, 2, 3):
        db = tmp_path / f"in{seed}.db"
        recorded("connect4", 15, seed).save(db)
        dbs.append(db)
    out = tmp_path / "out.db"
    treelab.merge(out, *dbs)
    merged = treelab.load(out)
    slot_shapes(merged)
    parts = [treelab.load(db) for db in dbs]
    for node in merged:
        seq = "".join(node.moves)
        assert node.nb_visit == sum(p.find(seq).nb_visit for p in parts if seq in p)
        assert sorted(k.name for k in node.children) == sorted(
            {k.name for p in parts if seq in p for k in p.find(seq).children})


def test_the_explorer_replay_cuts_late_children_of_every_shape(tmp_path: Path) -> None:
    """A growth replay drops the nodes created after its game, whether a parent held one child or a tuple."""
    from treelab.view.explorer.data import Replay
    from treelab.view.explorer.diagram import _prune

    tree = Tree("connect4")
    for game, moves in enumerate(["4453", "4412", "4417", "3"], 1):
        for node in tree.path(moves)[0][1:]:
            node.created_game = node.created_game or game
        tree.record(moves, winner=1)
    db = tmp_path / "c4.db"
    tree.save(db)
    view = treelab.load(db)
    assert type(getattr(view.find("441"), CHILDREN_SLOT)) is tuple
    assert isinstance(getattr(view.find("445"), CHILDREN_SLOT), TreeNode)
    _prune(view, Replay(game=2))
    assert [n.sequence for n in PreOrderIter(view.root)] == ["root", "4", "4/4", "4/4/5", "4/4/5/3", "4/4/1",
                                                             "4/4/1/2"]
    _prune(view, Replay(game=1))
    assert [n.sequence for n in PreOrderIter(view.root)] == ["root", "4", "4/4", "4/4/5", "4/4/5/3"]
    slot_shapes(view)


def _same_outcome(change: Callable[[list[Any]], None], ours: list[Any], theirs: list[Any]) -> None:
    """Make ``change`` to both node lists: both succeed, or both refuse with anytree's ``LoopError``."""
    outcomes = []
    for nodes in (ours, theirs):
        try:
            change(nodes)
            outcomes.append(None)
        except anytree.LoopError:
            outcomes.append("loop")
    assert outcomes[0] == outcomes[1]
