"""The compiled random playouts (treelab._speedups) against the pure-Python rules.

Every compiled game is replayed move by move with the Python rules (each move
legal, the game ends exactly where the C code says, with the winner it says);
a Python transcription of the C generator must pick the very same moves; and
the distribution of results matches the pure-Python playouts on several
positions. Without the extension these tests are skipped, except the fallback
ones.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

import treelab
from treelab import speedups
from treelab.games import find_game
from treelab.games.connect4 import ConnectFourState

needs_compiled = pytest.mark.skipif(speedups.compiled is None, reason=speedups.describe())
C4 = find_game("connect4")
TTT = find_game("tictactoe")
MASK64 = (1 << 64) - 1


def random_positions(game, count: int, seed: int) -> list:
    """Non-terminal positions reached by random legal moves (all depths)."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        state = game.initial()
        stop = rng.randrange(game.num_moves * 6)
        for _ in range(stop):
            if state.is_terminal:
                break
            state = state.play(rng.choice(state.legal_moves()))
        if not state.is_terminal:
            found.append(state)
    return found


def compiled_trace(state, seed: int):
    assert speedups.compiled is not None
    if isinstance(state, ConnectFourState):
        return speedups.compiled.connect4_trace(state.cur, state.mask, state.ply, seed)
    return speedups.compiled.tictactoe_trace(state.x, state.o, state.ply, seed)


def splitmix64(seed: int):
    """The generator of treelab/_speedups.c, in Python (Steele, Lea & Flood 2014)."""
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def reference_moves(state, seed: int) -> list[int]:
    """The moves the C code must pick: open moves in a list with swap-remove, index (r >> 32) * k >> 32."""
    stream = splitmix64(seed)
    open_moves = state.legal_moves()
    if isinstance(state, ConnectFourState):
        room = {m: sum(1 for row in range(6) if not state.cell(m - 1, row)) for m in open_moves}
    else:
        room = dict.fromkeys(open_moves, 1)
    played = []
    while not state.is_terminal:
        i = ((next(stream) >> 32) * len(open_moves)) >> 32
        move = open_moves[i]
        played.append(move)
        state = state.play(move)
        room[move] -= 1
        if room[move] == 0:
            open_moves[i] = open_moves[-1]
            open_moves.pop()
    return played


@needs_compiled
@pytest.mark.parametrize("game", [C4, TTT], ids=["connect4", "tictactoe"])
def test_compiled_games_replay_with_the_python_rules(game):
    for k, state in enumerate(random_positions(game, 300, seed=7)):
        seed = random.Random(k).getrandbits(64)
        winner, moves = compiled_trace(state, seed)
        assert len(moves) >= 1
        end = state
        for move in moves:
            assert not end.is_terminal, "the compiled game went on after the end"
            end = end.play(move)  # raises IllegalMoveError on an illegal move
        assert end.is_terminal, "the compiled game stopped before the end"
        assert end.winner == winner
        assert list(moves) == reference_moves(state, seed)  # move for move, the documented generator


@needs_compiled
def test_same_seed_same_game_and_seeds_matter():
    state = C4.replay("4453")
    first = compiled_trace(state, 12345)
    assert all(compiled_trace(state, 12345) == first for _ in range(5))
    assert len({compiled_trace(state, s)[1] for s in range(50)}) > 45
    rng_a, rng_b = random.Random(3), random.Random(3)
    assert [C4.playout(state, rng_a) for _ in range(200)] == [C4.playout(state, rng_b) for _ in range(200)]


@needs_compiled
@pytest.mark.parametrize(
    ("game", "positions", "count"),
    [(C4, ["", "4", "4453", "3344556", "444444"], 12_000), (TTT, ["", "5", "51", "159"], 6_000)],
    ids=["connect4", "tictactoe"],
)
def test_compiled_and_python_playouts_have_the_same_distribution(game, positions, count):
    """Win/loss/draw frequencies agree within 4.5 standard errors (a false alarm is about 1 in 10^5)."""
    rng = random.Random(11)
    for moves in positions:
        state = game.replay(moves)
        fast = [game.playout(state, rng) for _ in range(count)]
        slow = [game.python_playout(state, rng) for _ in range(count)]
        for outcome in (1, 2, None):
            p, q = fast.count(outcome) / count, slow.count(outcome) / count
            pooled = (p + q) / 2
            stderr = max((2 * pooled * (1 - pooled) / count) ** 0.5, 1 / count)
            assert abs(p - q) <= 4.5 * stderr, (moves, outcome, p, q)


@needs_compiled
def test_game_playout_runs_the_compiled_code_with_one_seed_per_game():
    state = C4.replay("4453")
    expected = compiled_trace(state, random.Random(5).getrandbits(64))[0]
    assert C4.playout(state, random.Random(5)) == expected
    state = TTT.replay("51")
    expected = compiled_trace(state, random.Random(5).getrandbits(64))[0]
    assert TTT.playout(state, random.Random(5)) == expected
    won = C4.replay("1212121")
    assert C4.playout(won, random.Random(1)) == won.winner == 1  # already over: no playout


@needs_compiled
def test_malformed_positions_are_refused():
    c = speedups.compiled
    assert c is not None
    with pytest.raises(ValueError):
        c.connect4(0, 0b101, 2, 1)  # a hole in column 1
    with pytest.raises(ValueError):
        c.connect4(0, 1 << 6, 1, 1)  # a sentinel bit
    with pytest.raises(ValueError):
        c.connect4(0, 0b11, 1, 1)  # ply does not count the discs
    with pytest.raises(ValueError):
        c.connect4(0b100, 0b11, 2, 1)  # cur outside mask
    with pytest.raises(ValueError):
        c.connect4(0, 0, 0, -1)  # seeds are 64-bit unsigned
    with pytest.raises(TypeError):
        c.connect4(0, 0, 0)
    with pytest.raises(ValueError):
        c.tictactoe(1, 1, 2, 1)  # one cell, two players
    with pytest.raises(ValueError):
        c.tictactoe(0, 0, 10, 1)
    full = C4.replay("1234567" * 2 + "2345671" * 2 + "1234567" * 2)
    assert full.is_terminal and full.winner is None
    assert c.connect4_trace(full.cur, full.mask, full.ply, 0) == (None, b"")  # nothing left to play


def test_fallback_without_the_extension_replays_exactly():
    """TREELAB_PURE_PYTHON=1 runs the Python playouts; the same seed still grows the same tree."""
    script = (
        "import json, treelab\n"
        "from treelab import speedups\n"
        "r = [treelab.analyse('connect4', '44', iterations=300, seed=9).to_dict() for _ in range(2)]\n"
        "print(json.dumps([speedups.ACTIVE, speedups.describe(), r[0] == r[1], r[0]['children']]))\n"
    )
    env = {**os.environ, "TREELAB_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    active, described, same, children = json.loads(out.stdout)
    assert active == "python" and "TREELAB_PURE_PYTHON" in described
    assert same
    assert sum(ch["nb_visit"] for ch in children) == 300


def test_a_missing_extension_falls_back_with_a_reason():
    script = (
        "import sys\n"
        "sys.modules['treelab._speedups'] = None  # as if no compiler had been found at install time\n"
        "import treelab\n"
        "from treelab import speedups\n"
        "print(speedups.ACTIVE, treelab.analyse('tictactoe', '', iterations=200, seed=1).iterations)\n"
        "print(speedups.describe())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TREELAB_PURE_PYTHON"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    first, second = out.stdout.splitlines()
    assert first == "python 200"
    assert "not built" in second


def test_speedups_reports_what_runs():
    assert speedups.ACTIVE in ("compiled", "python")
    assert (speedups.compiled is not None) == (speedups.ACTIVE == "compiled")
    assert speedups.describe().split()[0] in ("compiled", "pure-Python")
    tree = treelab.Tree("tictactoe")
    assert treelab.search(tree, "", limit=treelab.Limit(iterations=50), rng=1) == 50


def test_python_playouts_stay_the_reference():
    """The pure-Python playouts play legal games to the end with the right winner (any build)."""
    for game in (C4, TTT):
        for state in random_positions(game, 50, seed=3):
            winner = game.python_playout(state, random.Random(1))
            assert winner in (1, 2, None)


# -- the compiled tree walk (descend / select / backup) against the Python one ------------------


def grown_tree(game: str, moves: str = "", iterations: int = 3000, seed: int = 1) -> treelab.Tree:
    tree = treelab.Tree(game)
    treelab.search(tree, moves, limit=treelab.Limit(iterations=iterations), c=0.9, rng=seed)
    return tree


def snapshot(tree: treelab.Tree) -> list[tuple]:
    return [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw, None if n.proven is None else int(n.proven)) for n in tree]


@needs_compiled
def test_compiled_select_and_descend_pick_the_python_children():
    from treelab.mcts.selection import descend as _descend
    from treelab.mcts.selection import select_ucb1 as _select

    c_walk = speedups.compiled
    assert c_walk is not None
    rng = random.Random(4)
    for game in ("connect4", "tictactoe"):
        tree = grown_tree(game)
        nodes = [n for n in tree if n.children_view]
        for node in nodes[:: max(1, len(nodes) // 400)]:
            for kid in node.children_view:  # some proofs, sometimes all of them, for the solver rule
                kid.proven = rng.choice([None, None, -1, 0, 1]) if rng.random() < 0.3 else None
            if rng.random() < 0.05:
                for kid in node.children_view:
                    kid.proven = -1
            for c in (0.0, 0.7071, 1.4142, 5.0):
                for solver in (False, True):
                    assert c_walk.select(node, c, solver) is _select(node, c, solver)
                    max_moves = tree.game.num_moves
                    p1, p2 = [node], [node]
                    assert c_walk.descend(node, p1, c, solver, max_moves) is _descend(node, p2, c, solver, max_moves)
                    assert p1 == p2


@needs_compiled
def test_compiled_backup_counts_like_the_python_one():
    from treelab.tree import backup as _backup

    a, b = grown_tree("connect4", iterations=500), grown_tree("connect4", iterations=500)
    assert snapshot(a) == snapshot(b)
    paths_a = [list(n.path) for n in a if n.depth >= 2][:200]
    paths_b = [list(n.path) for n in b if n.depth >= 2][:200]
    for k, (pa, pb) in enumerate(zip(paths_a, paths_b, strict=True)):
        first_win = (None, 0, 1)[k % 3]  # the C rule's argument: the first index on path that won
        winner = None if first_win is None else pa[first_win].mover
        speedups.compiled.backup(pa, first_win)  # type: ignore[union-attr]
        _backup(pb, winner)
    assert snapshot(a) == snapshot(b)
    with pytest.raises(TypeError):
        speedups.compiled.backup(tuple(paths_a[0]), None)  # type: ignore[union-attr]


@needs_compiled
@pytest.mark.parametrize(
    ("game", "moves", "solver"),
    [("connect4", "", False), ("connect4", "4453", True), ("tictactoe", "", True), ("tictactoe", "51", False)],
)
def test_searches_grow_the_same_tree_with_either_walk(monkeypatch, game, moves, solver):
    """With the same playouts, the compiled walk and the Python walk grow identical trees."""
    the_game = find_game(game)

    def playout(state, rng):
        return the_game.python_playout(state, rng)  # the same random stream for both walks

    trees = []
    for walk in (speedups.compiled, None):
        monkeypatch.setattr(speedups, "compiled", walk)
        tree = treelab.Tree(game)
        treelab.search(tree, moves, limit=treelab.Limit(iterations=1500), c=1.1, solver=solver, playout=playout,
                       rng=21)
        trees.append(snapshot(tree))
    assert trees[0] == trees[1]
    assert trees[0][0][1] == 1500 or solver  # the root counts every simulation (a solver may stop early)


@needs_compiled
def test_compiled_walk_falls_back_to_getattr_for_other_node_classes():
    """A node class whose counts are properties, not slots, still gets the Python rule's answers."""
    from treelab.mcts.selection import select_ucb1 as _select
    from treelab.tree import TreeNode

    class Scaled(TreeNode):
        __slots__ = ("_visits",)

        @property  # type: ignore[override]
        def nb_visit(self) -> int:
            return self._visits

        @nb_visit.setter
        def nb_visit(self, value: int) -> None:
            self._visits = value

    root = Scaled("root")
    root.nb_visit = 30
    for label, (n, w) in zip("123", [(10, 4), (12, 7), (8, 2)], strict=True):
        kid = Scaled(label, root)
        kid.nb_visit, kid.nb_win = n, w
    for c in (0.0, 1.0, 3.0):
        assert speedups.compiled.select(root, c, False) is _select(root, c, False)  # type: ignore[union-attr]
    path = [root, *root.children_view]
    speedups.compiled.backup(path, 1)  # type: ignore[union-attr]
    assert [n.nb_visit for n in path] == [31, 11, 13, 9]
    assert [n.nb_win for n in path] == [0, 5, 7, 3]


def _digest(tree: treelab.Tree) -> str:
    import hashlib

    return hashlib.sha1(repr(sorted(snapshot(tree))).encode()).hexdigest()[:12]


@pytest.mark.parametrize(
    ("game", "moves", "solver", "iterations", "digest"),
    [
        ("connect4", "", False, 3000, "e76444ebfec0"),
        ("connect4", "4453", True, 2000, "5a4e5f8e6f04"),
        ("tictactoe", "5", False, 1500, "8693979f68bc"),
    ],
)
def test_the_python_search_grows_the_trees_of_the_original_loop(monkeypatch, game, moves, solver, iterations,
                                                                 digest):
    """With Python playouts and walk, the same seed grows exactly the tree the search grew before the
    frontier cache, batched ancestors and compiled walk (digests computed with commit 27d18ce), also
    when the frontier cache is capped very low."""
    search_module = sys.modules["treelab.mcts.uct_phases"]  # where UCT's phases and their frontier cap live

    def playout(state, rng):
        return state.game.python_playout(state, rng)

    monkeypatch.setattr(speedups, "compiled", None)
    for cap in (search_module._FRONTIER_CAP, 7):
        monkeypatch.setattr(search_module, "_FRONTIER_CAP", cap)
        tree = treelab.Tree(game)
        treelab.search(tree, moves, limit=treelab.Limit(iterations=iterations), c=1.1, solver=solver,
                       playout=playout, rng=7)
        assert _digest(tree) == digest


def _loop(state, moves):
    for move in moves:
        state = state.play(move)
    return state


def _outcome(fn, *args):
    try:
        state = fn(*args)
    except (treelab.IllegalMoveError, treelab.GameOverError) as exc:
        return type(exc), str(exc)
    return type(state), state.key(), state.ply, state.winner, state.to_move, state.is_terminal


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled-if-built", "python"])
@pytest.mark.parametrize("game", [C4, TTT], ids=["connect4", "tictactoe"])
def test_play_all_is_play_move_by_move(game, compiled, monkeypatch):
    """Random sequences from random positions, legal or not: the same position, or the same error."""
    if not compiled:
        monkeypatch.setattr(type(game), "compiled_replay", None)
    rng = random.Random(11)
    starts = [game.initial(), *random_positions(game, 150, seed=3)]
    for k, state in enumerate(starts * 3):
        legal = []
        end = state
        while not end.is_terminal and rng.random() < 0.9:
            move = rng.choice(end.legal_moves())
            legal.append(move)
            end = end.play(move)
        moves = list(legal)
        if k % 3 == 1:  # then something illegal: a move after the end, a full or taken spot, no move at all
            moves.append(rng.choice([0, 1, 4, game.num_moves, game.num_moves + 1, 300, -2]))
        assert _outcome(state.play_all, moves) == _outcome(_loop, state, moves)
        if not moves or k % 3 != 1:
            assert state.play_all(moves) == end


@needs_compiled
def test_compiled_replays_refuse_bad_input():
    c = speedups.compiled
    assert c is not None
    assert c.connect4_replay(0, 0, 0, b"") == (0, 0, 0, None)
    with pytest.raises(ValueError, match=r"move 7 \(4\) cannot be played: the column is full"):
        c.connect4_replay(0, 0, 0, bytes([4] * 7))
    with pytest.raises(ValueError, match="the game is over"):
        c.connect4_replay(0, 0, 0, bytes([1, 2, 1, 2, 1, 2, 1, 2]))
    with pytest.raises(ValueError, match="not a column"):
        c.connect4_replay(0, 0, 0, bytes([8]))
    with pytest.raises(ValueError, match="not a Connect Four position"):
        c.connect4_replay(1, 0, 0, b"4")
    with pytest.raises(TypeError):
        c.connect4_replay(0, 0, 0, [4])
    with pytest.raises(ValueError, match="the cell is taken"):
        c.tictactoe_replay(0, 0, 0, bytes([5, 5]))
    with pytest.raises(ValueError, match="the game is over"):
        c.tictactoe_replay(0b111, 0b11000, 5, bytes([9]))  # X already has the top row


@needs_compiled
def test_compiled_child_is_the_python_node():
    """Tree.add_child's compiled node maker fills the very slots TreeNode.__init__ fills."""
    from treelab.tree import TreeNode

    c = speedups.compiled
    assert c is not None
    slots = ("name", "depth", "nb_visit", "nb_win", "nb_draw", "proven", "node_id", "created_game")
    for make in (c.child, lambda cls, parent, name, nid, game: cls(name, parent, node_id=nid, created_game=game)):
        root = TreeNode("root", node_id=1)
        first = make(TreeNode, root, "4", 2, None)
        second = make(TreeNode, root, "3", 3, 7)
        deep = make(TreeNode, first, "4", 4, 7)
        got = [tuple(getattr(n, s) for s in slots) for n in (first, second, deep)]
        assert got == [("4", 1, 0, 0, 0, None, 2, None), ("3", 1, 0, 0, 0, None, 3, 7), ("4", 2, 0, 0, 0, None, 4, 7)]
        assert list(root.children_view) == [first, second] and deep.parent is first
        assert list(first.children_view) == [deep]
        assert not hasattr(first, "__dict__") and deep.path == (root, first, deep)
    for make in (c.child, lambda cls, parent, name, nid, game: cls(name, parent, node_id=nid, created_game=game)):
        with pytest.raises(AttributeError, match="depth"):  # not a node, as TreeNode itself says
            make(TreeNode, object(), "4", 2, None)
