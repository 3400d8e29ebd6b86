"""The persistent tree: counts, structure, lookup, errors, anytree compatibility, UCB1."""

from __future__ import annotations

import math
import random
from collections import Counter

import anytree
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from reference_games import random_game, replay

import treelab
from treelab import SQRT2, Tree, TreeNode
from treelab.errors import IllegalMoveError, NotationError, PathNotFoundError
from treelab.games import find_game

# -- helpers ---------------------------------------------------------------------------------


def all_nodes(root: TreeNode) -> list[TreeNode]:
    """Every node below ``root``, found through anytree's public ``children`` (not Tree.__iter__)."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return found


def snapshot(tree: Tree) -> tuple:
    """Everything observable about the tree's contents."""
    nodes = sorted((node.moves, node.nb_visit, node.nb_win, node.nb_draw, node.proven) for node in all_nodes(tree.root))
    return (tree.size, list(tree.depth_counts), tree.root.nb_visit, tuple(nodes))


def spell(moves: list[int], form: int) -> object:
    """``moves`` in one of the accepted notations."""
    text = "".join(map(str, moves))
    return [
        text,
        ",".join(text),
        " ".join(text),
        "/root/" + "/".join(text),
        list(moves),
        [str(m) for m in moves],
    ][form % 6]


def check_structure(tree: Tree, expected_records: int | None = None) -> list[TreeNode]:
    """The invariants every tree must satisfy; returns its nodes."""
    game = tree.game
    nodes = all_nodes(tree.root)
    assert tree.size == len(nodes) == len(tree) == len(list(tree))
    assert {id(n) for n in tree} == {id(n) for n in nodes}
    histogram = Counter(node.depth for node in nodes)
    assert tree.depth_counts == [histogram[d] for d in range(max(histogram) + 1)]
    assert tree.root.name == "root" and tree.root.parent is None and tree.root.depth == 0
    if expected_records is not None:
        assert tree.root.nb_visit == expected_records
    for node in nodes:
        kids = node.children
        assert node.nb_visit >= sum(k.nb_visit for k in kids), node
        assert node.nb_win >= 0 and node.nb_draw >= 0
        assert node.nb_win + node.nb_draw <= node.nb_visit, node
        assert node.nb_loss == node.nb_visit - node.nb_win - node.nb_draw
        assert node.depth == len(node.moves) == len(node.path) - 1
        assert node.mover == (1 if node.depth % 2 else 2)
        assert tree.find(node.moves) is node
        assert tree.find("".join(node.moves)) is node
        names = [k.name for k in kids]
        assert len(names) == len(set(names)), f"duplicate children under {node}"
        for kid in kids:
            assert kid.parent is node
            assert isinstance(kid.name, str)
            assert kid.name == game.label(game.parse_move(kid.name))
        if not kids:  # a leaf: its whole path (so every prefix) is a legal move sequence
            game.replay(node.moves)
    return nodes


def record_count_model(records: list[tuple[tuple[str, ...], int | None]]) -> dict:
    """Independent bookkeeping: per path prefix, [visits, player-1 wins, player-2 wins, draws]."""
    model: dict[tuple[str, ...], list[int]] = {(): [0, 0, 0, 0]}  # the root is always there
    for moves, winner in records:
        for i in range(len(moves) + 1):
            counts = model.setdefault(moves[:i], [0, 0, 0, 0])
            counts[0] += 1
            counts[{1: 1, 2: 2, None: 3}[winner]] += 1
    return model


def check_against_model(tree: Tree, model: dict) -> None:
    nodes = all_nodes(tree.root)
    assert {node.moves for node in nodes} == set(model)
    for node in nodes:
        visits, wins1, wins2, draws = model[node.moves]
        assert node.nb_visit == visits, node
        assert node.nb_draw == draws, node
        # a node at odd depth was moved into by player 1: it counts player 1's wins
        assert node.nb_win == (wins1 if node.depth % 2 else wins2), node


# -- the state machine -------------------------------------------------------------------------


class TreeMachine(RuleBasedStateMachine):
    """Random records (complete and partial games, every notation) and bad records against a model."""

    game_name = "tictactoe"

    def __init__(self):
        super().__init__()
        self.game = find_game(self.game_name)
        self.tree = Tree(self.game_name)
        self.records: list[tuple[tuple[str, ...], int | None]] = []

    def _random_moves(self, seed: int, length: int) -> tuple[list[int], object]:
        rng = random.Random(seed)
        if self.records and rng.random() < 0.5:  # continue from a stored path: deep sharing
            prefix = [int(m) for m in rng.choice(self.records)[0]]
            prefix = prefix[: rng.randrange(len(prefix) + 1)]
        else:
            prefix = []
        ref = replay(self.game_name, prefix)
        while not ref.is_terminal and len(ref.moves) < length:
            ref.play(rng.choice(ref.legal_moves()))
        return ref.moves, ref

    @rule(
        seed=st.integers(0, 2**32),
        length=st.integers(0, 42),
        form=st.integers(0, 5),
        winner=st.sampled_from([1, 2, None]),
    )
    def record_game(self, seed, length, form, winner):
        moves, ref = self._random_moves(seed, length)
        if ref.is_terminal:
            winner = ref.winner
        node = self.tree.record(spell(moves, form), winner)
        labels = tuple(map(str, moves))
        self.records.append((labels, winner))
        assert node.moves == labels
        assert node is self.tree.find(labels)

    @rule(seed=st.integers(0, 2**32), form=st.integers(0, 5), wrong=st.sampled_from([1, 2, None]))
    def record_finished_game_with_wrong_winner(self, seed, form, wrong):
        moves, ref = self._random_moves(seed, 99)
        assert ref.is_terminal
        before = snapshot(self.tree)
        if wrong == ref.winner:
            wrong = {1: 2, 2: None, None: 1}[wrong]
        with pytest.raises(ValueError):
            self.tree.record(spell(moves, form), wrong)
        assert snapshot(self.tree) == before

    @rule(seed=st.integers(0, 2**32), length=st.integers(0, 42), form=st.integers(0, 5))
    def record_illegal_sequence(self, seed, length, form):
        moves, ref = self._random_moves(seed, length)
        illegal = [m for m in range(1, self.game.num_moves + 1) if m not in ref.legal_moves()]
        if not illegal:
            return
        bad = [*moves, random.Random(seed).choice(illegal)]
        before = snapshot(self.tree)
        with pytest.raises(IllegalMoveError):
            self.tree.record(spell(bad, form), None)
        assert snapshot(self.tree) == before

    @rule(
        seed=st.integers(0, 2**32),
        length=st.integers(0, 42),
        junk=st.sampled_from(["0", "x", "10", "-1", ""]),
    )
    def record_bad_notation(self, seed, length, junk):
        moves, _ = self._random_moves(seed, length)
        text = ",".join(map(str, moves))
        bad = f"{text},{junk}" if junk else f"{text},,9,,99"
        before = snapshot(self.tree)
        with pytest.raises(NotationError):
            self.tree.record(bad, None)
        assert snapshot(self.tree) == before

    @rule(seed=st.integers(0, 2**32), length=st.integers(0, 42), winner=st.sampled_from([0, 3, -1, "1", 1.5]))
    def record_bad_winner(self, seed, length, winner):
        moves, _ = self._random_moves(seed, length)
        before = snapshot(self.tree)
        with pytest.raises(ValueError):
            self.tree.record(moves, winner)
        assert snapshot(self.tree) == before

    @rule(seed=st.integers(0, 2**32), length=st.integers(1, 42))
    def find_missing_path(self, seed, length):
        moves, _ = self._random_moves(seed, length)
        labels = tuple(map(str, moves))
        stored = any(labels == r[: len(labels)] for r, _ in self.records)
        if stored:
            assert self.tree.find(labels).moves == labels
            assert labels in self.tree
            return
        before = snapshot(self.tree)
        with pytest.raises(PathNotFoundError) as info:
            self.tree.find(labels)
        message = str(info.value)
        assert "\n" not in message and "".join(labels) in message
        assert self.tree.get(labels) is None
        assert labels not in self.tree
        assert snapshot(self.tree) == before

    @invariant()
    def structure_and_counts(self):
        check_structure(self.tree, expected_records=len(self.records))
        check_against_model(self.tree, record_count_model(self.records))


class ConnectFourTreeMachine(TreeMachine):
    game_name = "connect4"


MACHINE_SETTINGS = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestTicTacToeTree = TreeMachine.TestCase
TestTicTacToeTree.settings = MACHINE_SETTINGS
TestConnectFourTree = ConnectFourTreeMachine.TestCase
TestConnectFourTree.settings = MACHINE_SETTINGS


# -- a bigger tree, built once -----------------------------------------------------------------


def build_tree(records: int, seed: int) -> tuple[Tree, list]:
    """A Connect Four tree from random records (complete and partial games), and the records."""
    rng = random.Random(seed)
    tree = Tree("connect4")
    stored = []
    for _ in range(records):
        ref = random_game("connect4", rng, max_moves=rng.choice([4, 8, 12, 42]))
        winner = ref.winner if ref.is_terminal else rng.choice([1, 2, None])
        tree.record(ref.moves, winner)
        stored.append((tuple(map(str, ref.moves)), winner))
    return tree, stored


@pytest.fixture(scope="module")
def big_tree() -> tuple[Tree, list]:
    """3,000 records: read-only (tests that change a tree build their own)."""
    return build_tree(3000, seed=31)


def test_big_tree_structure_and_counts(big_tree):
    tree, records = big_tree
    assert tree.size > 10_000
    check_structure(tree, expected_records=len(records))
    check_against_model(tree, record_count_model(records))


def test_find_touches_only_the_path(monkeypatch):
    """Child lookup walks down the path: one ``child`` call per move, each on a node of the path."""
    tree, records = build_tree(1500, seed=7)
    assert tree.size > 5000
    calls: list[tuple[TreeNode, str]] = []
    real_child = TreeNode.child

    def counting_child(self, label):
        calls.append((self, label))
        return real_child(self, label)

    def no_scanning(*args, **kwargs):
        raise AssertionError("the tree was scanned")

    monkeypatch.setattr(TreeNode, "child", counting_child)
    monkeypatch.setattr(Tree, "__iter__", no_scanning)
    monkeypatch.setattr(anytree.iterators.AbstractIter, "__init__", no_scanning)  # every anytree iterator
    for name in ("findall", "findall_by_attr", "find", "find_by_attr"):
        monkeypatch.setattr(anytree.search, name, no_scanning)
        monkeypatch.setattr(anytree, name, no_scanning)
    for moves, _ in records[::37]:
        path_nodes = [tree.root]
        for label in moves:  # the expected path, walked through the children lists directly
            path_nodes.append(next(k for k in path_nodes[-1].children_view if k.name == label))
        calls.clear()
        assert tree.find(moves) is path_nodes[-1]
        assert [label for _, label in calls] == list(moves)
        assert [node for node, _ in calls] == path_nodes[:-1]
        calls.clear()
        assert moves in tree
        assert len(calls) == len(moves)
        # recording also walks the path only (a bounded number of lookups per move)
        calls.clear()
        before = tree.size
        ref = replay("connect4", [int(m) for m in moves])
        node = tree.record(moves, ref.winner if ref.is_terminal else None)
        assert node is path_nodes[-1] and tree.size == before
        assert len(calls) <= 2 * len(moves) + 1
        assert all(any(n is p for p in path_nodes) for n, _ in calls)
    monkeypatch.undo()
    check_structure(tree, expected_records=len(records) + len(records[::37]))


def test_nodes_have_no_dict(big_tree):
    tree, _ = big_tree
    node = tree.find(tree.root.children[0].moves)
    assert not hasattr(node, "__dict__")
    assert not hasattr(tree.root, "__dict__")
    for cls in type(node).__mro__[:-1]:  # every class but object declares __slots__
        assert "__slots__" in vars(cls), cls
    with pytest.raises(AttributeError):
        node.some_new_attribute = 1  # type: ignore[attr-defined]


def test_anytree_features_work(big_tree):
    tree, _ = big_tree
    root = tree.root
    node = max(all_nodes(root), key=lambda n: (n.depth, n.nb_visit))
    assert node.path[0] is root and node.path[-1] is node
    assert [n.name for n in node.path[1:]] == list(node.moves)
    assert node.ancestors == node.path[:-1]
    assert node.is_leaf and not node.is_root and root.is_root
    assert node.parent.children.count(node) == 1
    assert isinstance(root.children, tuple)
    assert node.depth == sum(1 for _ in node.iter_path_reverse()) - 1
    assert sum(1 for _ in anytree.PreOrderIter(root)) == tree.size
    assert root.size == tree.size
    assert root.height == tree.max_depth
    assert set(anytree.PreOrderIter(root)) == set(tree)
    assert len(root.descendants) == tree.size - 1
    assert anytree.Resolver("name").get(root, "/".join(node.moves)) is node
    assert anytree.search.find_by_attr(root, "/".join(node.moves), name="sequence") is node
    small = tree.find(node.moves[:3])
    lines = str(anytree.RenderTree(small)).splitlines()
    assert len(lines) == small.size
    assert lines[0].startswith("TreeNode(") and "/".join(node.moves[:3]) in lines[0]
    assert {s.name for s in node.siblings} | {node.name} == {k.name for k in node.parent.children}


def test_ucb1_from_counts(big_tree):
    tree, _ = big_tree
    for node in all_nodes(tree.root)[::7]:
        if node.parent is None:
            continue
        n, big_n = node.nb_visit, node.parent.nb_visit
        mean = (node.nb_win + 0.5 * node.nb_draw) / n
        assert node.mean == pytest.approx(mean)
        for c in (SQRT2, 0.5, 0.0):
            expected = mean + c * math.sqrt(math.log(big_n) / n)
            assert node.ucb1(c) == pytest.approx(expected, rel=1e-12, abs=1e-12)
            assert node.exploration(c) == pytest.approx(c * math.sqrt(math.log(big_n) / n), abs=1e-12)
        assert node.ucb1() == pytest.approx(mean + SQRT2 * math.sqrt(math.log(big_n) / n))


def test_ucb1_is_infinite_for_unvisited_children():
    tree = Tree("connect4")
    tree.record("44", winner=1)
    nodes, _ = tree.path("445")  # creates the node without visiting it
    fresh = nodes[-1]
    assert fresh.nb_visit == 0 and fresh.nb_win == 0 and fresh.nb_draw == 0
    assert fresh.ucb1() == math.inf and fresh.ucb1(0.1) == math.inf
    assert fresh.exploration() == math.inf
    assert fresh.mean == 0.5
    assert tree.root.nb_visit == 1
    check_structure(tree, expected_records=1)
    # one visit to the parent's parent: ln(1) = 0, so UCB1 is the mean
    node = tree.find("4")
    assert node.ucb1() == pytest.approx(node.mean) == pytest.approx(1.0)


# -- explicit cases ----------------------------------------------------------------------------


@pytest.mark.parametrize(("winner", "odd", "even"), [(1, 1, 0), (2, 0, 1), (None, 0, 0)])
def test_nb_win_counts_the_mover_of_each_node(winner, odd, even):
    tree = Tree("connect4")
    tree.record("4453", winner)
    for depth, node in enumerate(tree.find("4453").path):
        assert node.depth == depth and node.nb_visit == 1
        assert node.nb_win == (odd if depth % 2 else even), node
        assert node.nb_draw == (1 if winner is None else 0)
        assert node.mean == (0.5 if winner is None else node.nb_win)


def test_counts_add_up_over_records():
    tree = Tree("tictactoe")
    tree.record("5", 1)
    tree.record("51", 2)
    tree.record("51", None)
    tree.record("59", 1)
    tree.record("", None)
    assert tree.root.nb_visit == 5
    assert (tree.root.nb_win, tree.root.nb_draw) == (1, 2)  # the root counts player 2's wins
    five = tree.find("5")
    assert (five.nb_visit, five.nb_win, five.nb_draw) == (4, 2, 1)
    one = tree.find("51")
    assert (one.nb_visit, one.nb_win, one.nb_draw) == (2, 1, 1)
    assert [k.name for k in five.children] == ["1", "9"]
    assert tree.size == 4 and tree.depth_counts == [1, 1, 2]


@pytest.mark.parametrize(
    ("game", "moves", "winner"),
    [
        ("connect4", "1212121", 1),
        ("connect4", "71212121", 2),
        ("tictactoe", "14253", 1),
        ("tictactoe", "132547", 2),
        ("tictactoe", "519328467", None),
    ],
)
def test_record_finished_games(game, moves, winner):
    assert replay(game, [int(m) for m in moves]).winner == winner
    tree = Tree(game)
    for wrong in {1, 2, None} - {winner}:
        with pytest.raises(IllegalMoveError) as info:
            tree.record(moves, wrong)
        assert "\n" not in str(info.value) and moves in str(info.value)
        assert tree.size == 1 and tree.root.nb_visit == 0
    node = tree.record(moves, winner)
    assert node.moves == tuple(moves) and node.nb_visit == 1
    assert tree.size == len(moves) + 1


@pytest.mark.parametrize(
    ("game", "moves", "error"),
    [
        ("connect4", "4444444", IllegalMoveError),
        ("connect4", "12121213", IllegalMoveError),  # after the end
        ("connect4", "448", NotationError),
        ("connect4", "44x", NotationError),
        ("tictactoe", "55", IllegalMoveError),
        ("tictactoe", "142536", IllegalMoveError),
        ("tictactoe", "0", NotationError),
    ],
)
def test_illegal_records_leave_the_tree_unchanged(game, moves, error):
    tree = Tree(game)
    tree.record("12", None)
    before = snapshot(tree)
    with pytest.raises(error):
        tree.record(moves, None)
    assert snapshot(tree) == before
    assert tree.size == 3 and tree.root.nb_visit == 1


def test_find_accepts_every_notation():
    tree = Tree("connect4")
    node = tree.record("4453", None)
    for form in (
        "4453",
        "4,4,5,3",
        "4 4 5 3",
        "/root/4/4/5/3",
        [4, 4, 5, 3],
        ["4", "4", "5", "3"],
        ("4", 4, 5, 3),
    ):
        assert tree.find(form) is node
    for root in ("", None, "root", "/root", []):
        assert tree.find(root) is tree.root
    assert "445" in tree and "4,4,5,3" in tree
    assert "4454" not in tree and "x" not in tree and "9" not in tree
    with pytest.raises(PathNotFoundError) as info:
        tree.find("4454")
    assert isinstance(info.value, KeyError) and isinstance(info.value, treelab.TreelabError)
    assert str(info.value).startswith("path '4454'")
    with pytest.raises(NotationError):
        tree.find("44x")


def test_tree_takes_a_game_object_and_names():
    game = find_game("tictactoe")
    assert Tree(game).game is game
    assert Tree("ttt").game is game
    assert repr(Tree("connect4")).startswith("Tree('connect4'")


def test_iterators_of_moves_are_read_once():
    """record/find/path/get parse their moves once, so iterators and generators work (was a bug)."""
    tree = Tree("connect4")
    node = tree.record(iter([4, 4, 5]), None)
    assert node.moves == ("4", "4", "5")
    assert tree.size == 4 and tree.root.nb_visit == 1
    assert tree.find(m for m in (4, 4, 5)) is node
    assert tree.get(iter("445")) is node
    nodes, state = tree.path(iter([4, 4, 5, 3]))
    assert [n.name for n in nodes] == ["root", "4", "4", "5", "3"] and state.ply == 4
    with pytest.raises(PathNotFoundError) as info:
        tree.find(iter([4, 4, 6]))
    assert "'446'" in str(info.value)
    with pytest.raises(IllegalMoveError) as info:
        tree.record(iter([1, 2, 1, 2, 1, 2, 1]), 2)
    assert "'1212121'" in str(info.value)
