"""Self-play on fresh trees: each move searched on a tree of its own, the top of each search added to the
stored tree (the learning loop's games, ``train --searches fresh``)."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run
from logged_games import explorations

import treelab
from treelab.errors import UnknownOptionError
from treelab.mcts.config import SearchConfig
from treelab.mcts.dispatch import run_search
from treelab.mcts.loop import Limit
from treelab.nodes import children_of
from treelab.play.players import MCTSPlayer, add_search_top
from treelab.play.training.config import TrainingConfig
from treelab.store.persistence import reusing_trees
from treelab.tree import Tree

SLOTS = ("nb_visit", "nb_win", "nb_draw", "nb_select", "value_sum", "proven")


def _numbers(node: treelab.TreeNode) -> tuple[object, ...]:
    return tuple(getattr(node, slot) for slot in SLOTS)


def _search(moves: str, seed: int) -> Tree:
    tree = Tree("connect4")
    run_search(tree, moves, SearchConfig(algorithm="puct", evaluator="heuristic"), Limit(iterations=150),
                       rng=seed)
    return tree


def test_the_top_of_a_search_is_its_path_its_position_and_their_moves_with_their_numbers() -> None:
    search = _search("4453", seed=1)
    kept = Tree("connect4")
    made = add_search_top(search, [4, 4, 5, 3], kept)
    position = search.find("4453")
    kids = children_of(position)
    assert made == 4 + len(kids) and kept.size == 5 + len(kids)  # the path below the root, the moves tried
    for moves in ("", "4", "44", "445", "4453"):
        assert _numbers(kept.find(moves)) == _numbers(search.find(moves))
    for kid in kids:
        assert _numbers(kept.find("4453" + kid.name)) == _numbers(kid)
        assert not children_of(kept.find("4453" + kid.name))  # deeper nodes are left out, as a playout's
    assert kept.root.nb_visit == position.nb_visit == 150  # every simulation backed up to the start
    assert sum(k.nb_select for k in kids) == 149  # the first evaluated the position itself


def test_tops_add_up_in_the_stored_tree() -> None:
    first, second = _search("44", seed=1), _search("44", seed=2)
    kept = Tree("connect4")
    add_search_top(first, [4, 4], kept)
    add_search_top(second, [4, 4], kept)
    for moves in ("", "4", "44"):
        a, b, k = first.find(moves), second.find(moves), kept.find(moves)
        assert k.nb_visit == a.nb_visit + b.nb_visit and k.nb_select == a.nb_select + b.nb_select
        assert k.value_sum == pytest.approx(a.value_sum + b.value_sum)
    moves_tried = {kid.name for kid in children_of(first.find("44"))} | {
        kid.name for kid in children_of(second.find("44"))}
    assert {kid.name for kid in children_of(kept.find("44"))} == moves_tried


def _nodes(db: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, nb_select, value_sum, proven "
                            "FROM nodes ORDER BY id").fetchall()
    finally:
        conn.close()


def test_self_play_on_fresh_trees_stores_the_games_positions_and_their_moves_and_replays(tmp_path: Path) -> None:
    dbs = [tmp_path / "a.db", tmp_path / "b.db"]
    for db in dbs:
        summary = treelab.train("connect4", db, 3, iterations=60, algorithm="puct", evaluator="heuristic",
                                searches="fresh", seed=5, progress=False)
        assert summary.games == 3
    assert _nodes(dbs[0]) == _nodes(dbs[1])  # a seed replays the run
    rows = explorations(dbs[0])
    assert [row["searches"] for row in rows] == ["fresh"] * 3
    conn = sqlite3.connect(dbs[0])
    games = [moves for (moves,) in conn.execute("SELECT moves FROM games ORDER BY id")]
    conn.close()
    tree = treelab.load(dbs[0])
    lines = {g[:i] for g in games for i in range(len(g) + 1)}  # every position a game passed through
    for node in tree:
        line = "".join(n.name for n in node.path[1:])  # the moves from the start (Connect Four's are one digit)
        on_line = line in lines
        assert on_line or line[:-1] in lines  # else a move tried at a position a game passed through
        if not on_line:
            assert not children_of(node)
    searched = [tree.find(g[:i]) for g in games for i in range(len(g))]
    # each position a game moved from: its search's simulations but the first chose one of its moves (a search
    # that proved its position at once chose none)
    assert all(sum(k.nb_select for k in children_of(n)) <= 59 * len(games) for n in searched)
    assert all(sum(k.nb_select for k in children_of(n)) > 0 for n in searched if n.proven is None)
    # every simulation backed up to the start; each game's first search began by evaluating the empty board
    assert tree.root.nb_visit == sum(k.nb_visit for k in children_of(tree.root)) + len(games)
    assert tree.root.nb_visit <= 60 * sum(len(g) for g in games)  # searches that proved their position stop early


def test_the_searches_option_names_its_values(tmp_path: Path) -> None:
    with pytest.raises(UnknownOptionError, match="unknown searches 'deep'"):
        TrainingConfig(searches="deep")  # type: ignore[arg-type]
    with pytest.raises(UnknownOptionError, match="give tree"):
        MCTSPlayer(tree=Tree("tictactoe"), record=Tree("tictactoe"))
    result = run("train", "tictactoe", "--db", str(tmp_path / "t.db"), "--searches", "deep")
    assert_clean_error(result, "deep", "tree", "fresh")
    assert not (tmp_path / "t.db").exists()


def test_a_fresh_search_tree_is_freed_after_its_game_not_kept_frozen(tmp_path: Path) -> None:
    # Each move's fresh tree is cyclic garbage once its top is stored; train freezes what lives on after every
    # game (gc.freeze), which kept those trees for good (session 18's hour: 12.8 GB). Right after train returns
    # no collection has run since its last game: every TreeNode alive is one of the stored tree's, or of the last
    # move's search (at most 81 nodes for each of the two players, dropped as train returns: garbage not frozen).
    db = tmp_path / "c.db"
    gc.collect()
    before = sum(isinstance(o, treelab.TreeNode) for o in gc.get_objects())
    with reusing_trees():
        treelab.train("connect4", db, 6, iterations=80, algorithm="puct", evaluator="heuristic",
                      training=TrainingConfig(searches="fresh", seed=3, progress=False))
        alive = sum(isinstance(o, treelab.TreeNode) for o in gc.get_objects()) - before
        stored = treelab.info(db)["nodes"]
    assert stored > 100 and alive <= stored + 2 * 81 + 20  # before the fix: 5,709 alive for 946 stored
