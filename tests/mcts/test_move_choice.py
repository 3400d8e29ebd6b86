"""The selected count (``nb_select``) and the one move-choice rule: players, analyse, stats, diagrams."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

import treelab
from treelab import speedups
from treelab.analysis.arrays import stats
from treelab.analysis.sqlstats import db_stats
from treelab.errors import SpecError
from treelab.games import find_game
from treelab.mcts.choice import best_child, best_index, choose_move, principal_variation
from treelab.mcts.summary import summarize
from treelab.store import schema
from treelab.store.persistence import load, save
from treelab.tree import Tree, TreeNode
from treelab.view.loading import load_view
from treelab.view.subtree import select

needs_compiled = pytest.mark.skipif(speedups.compiled is None, reason="the C extension is not built")


def counts(tree: Tree) -> list[tuple[str, int, int, int, int, int | None]]:
    return [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw, n.nb_select, n.proven) for n in tree]


# -- the selected count ------------------------------------------------------------------


@pytest.mark.parametrize("walk", ["compiled", "python"])
def test_a_search_rooted_mid_game_selects_only_below_its_start(monkeypatch: pytest.MonkeyPatch, walk: str) -> None:
    if walk == "compiled" and speedups.compiled is None:
        pytest.skip("the C extension is not built")
    if walk == "python":
        monkeypatch.setattr(speedups, "compiled", None)
    tree = Tree("connect4")
    treelab.search(tree, "", limit=treelab.Limit(iterations=300), rng=1)
    before = {n.sequence: n.nb_select for n in tree}
    treelab.search(tree, "44", limit=treelab.Limit(iterations=200), rng=2)
    root, four, start = tree.root, tree.find("4"), tree.find("44")
    assert root.nb_visit == 500 and root.nb_select == 0
    assert four.nb_select == before["4"] and start.nb_select == before.get("4/4", 0)  # passed through only
    earlier = sum(v for seq, v in before.items() if seq.startswith("4/4/") and seq.count("/") == 2)
    assert sum(k.nb_select for k in start.children_view) == earlier + 200
    for node in tree:  # a node is selected at most as often as it is visited, and only by simulations through it
        assert 0 <= node.nb_select <= node.nb_visit
        assert sum(k.nb_select for k in node.children_view) <= node.nb_visit


@needs_compiled
@pytest.mark.parametrize(("game", "moves", "solver"), [("connect4", "35", False), ("tictactoe", "5", True)])
def test_either_walk_keeps_the_same_selected_counts(monkeypatch: pytest.MonkeyPatch, game: str, moves: str,
                                                    solver: bool) -> None:
    the_game = find_game(game)

    def playout(state: treelab.State, rng: random.Random) -> int | None:
        return the_game.python_playout(state, rng)

    grown = []
    for walk in (speedups.compiled, None):
        monkeypatch.setattr(speedups, "compiled", walk)
        tree = Tree(game)
        treelab.search(tree, "", limit=treelab.Limit(iterations=400), playout=playout, rng=3)
        treelab.search(tree, moves, limit=treelab.Limit(iterations=600), solver=solver, playout=playout, rng=4)
        grown.append(counts(tree))
    assert grown[0] == grown[1]


def test_puct_and_record_keep_the_selected_count() -> None:
    tree = Tree("tictactoe")
    tree.record("159", winner=1)
    assert [n.nb_select for n in tree.path("159")[0]] == [0, 1, 1, 1]
    treelab.puct_search(tree, "15", limit=treelab.Limit(iterations=50), rng=1)
    assert tree.find("15").nb_select == 1 and tree.find("1").nb_select == 1
    assert sum(k.nb_select for k in tree.find("15").children_view) == 50 + 1


def test_the_selected_count_is_saved_and_loaded(tmp_path: Path) -> None:
    tree = Tree("connect4")
    treelab.search(tree, "", limit=treelab.Limit(iterations=200), rng=5)
    db = tmp_path / "c4.db"
    save(tree, db)
    treelab.search(tree, "4", limit=treelab.Limit(iterations=100), rng=6)  # changes old nodes, adds new ones
    save(tree, db)
    for loaded in (load(db), load(db, path="4", depth=2)):
        for node in loaded:
            assert node.nb_select == tree.find(node.moves).nb_select, node.sequence
    view, _ = load_view(db, path="4", depth=2)
    assert all(n.nb_select == tree.find(n.moves).nb_select for n in view)


def _v1_file(db: Path) -> None:
    """A database as treelab wrote it before the selected count (schema version 1)."""
    import sqlite_utils

    conn = sqlite3.connect(db)
    schema._create_v1(sqlite_utils.Database(conn))
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("schema_version", "1"), ("game", "tictactoe"),
                                                        ("c", "1.4142135623730951"), ("treelab_version", "0.1"),
                                                        ("tree_id", "0123456789abcdef"), ("generation", "1")])
    conn.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (1, None, "root", 0, 10, 4, 2, None, None), (2, 1, "5", 1, 7, 3, 2, None, 1),
        (3, 1, "1", 1, 3, 1, 0, None, 1), (4, 2, "1", 2, 7, 2, 2, None, 1)])
    conn.execute("INSERT INTO games (id, moves, winner) VALUES (1, '51', NULL)")
    conn.commit()
    conn.close()


def test_an_old_database_reads_and_migrates(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _v1_file(db)
    before = db.read_bytes()
    tree = load(db)  # read-only: visits stand in for the unknown selected counts
    assert [(n.sequence, n.nb_select) for n in tree] == [("root", 0), ("5", 7), ("5/1", 7), ("1", 3)]
    assert db_stats(db)["principal_variation"] == ["5", "1"]
    assert db.read_bytes() == before
    tree.record("19", winner=1)
    save(tree, db)  # the first write migrates
    conn = sqlite3.connect(db)
    version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == (str(schema.SCHEMA_VERSION),)
    assert conn.execute("SELECT nb_select FROM nodes WHERE move = '1' AND depth = 1").fetchone() == (4,)
    assert "exploration" in {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    conn.close()


def test_a_node_stays_small() -> None:
    """The slot costs 8 bytes: a node object (thirteen slots, the id, value sum and prior native numbers where the
    extension is built) stays in the 144-byte pymalloc class; what a loaded node costs in all, under 200 bytes, is
    held by tests/core/test_node_memory.py."""
    import sys

    assert sys.getsizeof(TreeNode("4")) <= 144


# -- the one rule ------------------------------------------------------------------------


def _kid(parent: TreeNode, name: str, visits: int, selected: int, proven: int | None = None) -> TreeNode:
    return TreeNode(name, parent, nb_visit=visits, nb_select=selected, proven=proven, nb_win=visits // 2)


def test_moves_are_chosen_from_the_simulations_that_selected() -> None:
    root = TreeNode("root", nb_visit=1000)
    passed = _kid(root, "2", 900, 40)  # mostly pass-through visits of deeper searches
    chosen = _kid(root, "4", 100, 95)
    assert best_child(root) is chosen and choose_move(root) is chosen
    lost = _kid(root, "5", 10, 500, proven=-1)
    assert best_child(root) is chosen  # never a proven loss while a sibling is not proven lost
    won = _kid(root, "6", 1, 1, proven=1)
    assert best_child(root) is won and choose_move(root, temperature=5.0, rng=random.Random(1)) is won
    assert best_index([(-1, 9, 9), (-1, 3, 3)]) == 0 and best_index([]) is None
    assert best_index([(None, 3, 5), (None, 3, 7), (0, 3, 7)]) == 1  # ties: visits, then the first
    del passed, lost


def test_temperature_samples_in_proportion_to_selections() -> None:
    root = TreeNode("root", nb_visit=400)
    kids = [_kid(root, str(i), 300, s) for i, s in enumerate([100, 300, 0], 1)]
    rng = random.Random(7)
    picks = [choose_move(root, temperature=1.0, rng=rng) for _ in range(4000)]
    share = picks.count(kids[1]) / len(picks)
    assert 0.72 < share < 0.78 and kids[2] not in picks  # 300 / 400; never a move nothing selected
    with pytest.raises(treelab.BudgetError, match="temperature -1"):
        choose_move(root, temperature=-1)


@pytest.fixture(scope="module")
def solved_ttt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tree, Path]:
    db = tmp_path_factory.mktemp("ttt") / "ttt.db"
    treelab.train("tictactoe", db, games=40, iterations=300, solver=True, seed=3, progress=False)
    return load(db), db


def _bad_pv_start(node: TreeNode, first: str | None) -> bool:
    """True if the line starts with a proven loss while a sibling is not proven lost."""
    if first is None:
        return False
    kid = node.child(first)
    assert kid is not None
    return kid.proven == -1 and any(k.proven != -1 for k in node.children_view)


def test_no_principal_variation_starts_with_a_proven_loss(solved_ttt: tuple[Tree, Path]) -> None:
    tree, db = solved_ttt
    checked = proven_losses = 0
    for node in tree:
        if node.depth > 3 or not node.children_view:
            continue
        checked += 1
        proven_losses += any(k.proven == -1 for k in node.children_view)
        moves = "".join(node.moves)
        in_memory = stats(tree, moves)["principal_variation"]
        from_sql = db_stats(db, moves)["principal_variation"]
        drawn = [n.name for n in select(node, depth=3, around_pv=True).pv]
        by_view = [n.name for n in principal_variation(node)]
        summary = summarize(tree, moves, iterations=0)
        assert in_memory == from_sql == by_view, moves
        assert drawn == by_view[:3]
        if summary.best_move is not None:
            assert summary.best_move == (in_memory or [None])[0]
        assert not _bad_pv_start(node, in_memory[0] if in_memory else None), moves
    assert checked > 100 and proven_losses > 10  # the test met many proven-lost moves


def test_the_arena_player_does_not_write_a_stored_tree_unless_asked(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, games=3, iterations=50, seed=1, progress=False)
    before = db.read_bytes()
    from treelab.play.arena import make_player

    game = find_game("tictactoe")
    stored = load(db)
    reader = make_player(f"uct:iterations=30,db={db}", game, rng=1)
    for _ in range(3):
        reader.new_game(game)  # every game starts from the stored tree again
        assert counts(reader.tree) == counts(stored)  # type: ignore[attr-defined]
        for moves in ([], [5], [5, 1]):
            reader.choose(game.replay(moves), moves)
        assert reader.tree.root.nb_visit == stored.root.nb_visit + 90  # type: ignore[attr-defined]
    assert db.read_bytes() == before
    learner = make_player(f"uct:iterations=30,db={db},learn=1", game, rng=1)
    learner.new_game(game)
    learner.choose(game.initial(), [])
    assert load(db).root.nb_visit == stored.root.nb_visit + 30
    with pytest.raises(SpecError, match="learn=1"):
        make_player("uct:iterations=30,learn=1", game)
