"""Flat arrays, statistics (in memory and by SQL), growth history and whole-tree shape."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from recorded import grow

import treelab
from treelab.analysis.arrays import TreeArrays, child_rows, gini, normalised_entropy, stats
from treelab.analysis.growth import growth_data, plot_growth, tree_at
from treelab.analysis.shape import layout, p1_mean, plot_shape
from treelab.analysis.sqlstats import db_stats
from treelab.mcts.summary import summarize


@pytest.fixture(scope="module")
def c4() -> treelab.Tree:
    tree = grow("connect4", 1500, seed=11, max_len=7)
    tree.find("3").proven = -1
    return tree


@pytest.fixture(scope="module")
def c4_db(c4: treelab.Tree, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("analysis") / "c4.db"
    c4.save(db)
    return db


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real trained tree with a games log and history (a few small games)."""
    from treelab.play.training import train

    db = tmp_path_factory.mktemp("growth") / "ttt.db"
    train("tictactoe", db, games=12, iterations=60, seed=5, progress=False)
    return db


def test_arrays_match_the_tree(c4: treelab.Tree, c4_db: Path) -> None:
    a = TreeArrays.from_tree(c4)
    assert len(a) == c4.size
    assert a.depth_histogram() == c4.depth_counts
    assert (a.parent[1:] < np.arange(1, len(a))).all()  # parents come first
    nodes = list(c4)
    assert int(a.visits.sum()) == sum(n.nb_visit for n in nodes)
    assert int(a.is_leaf.sum()) == sum(1 for n in nodes if not n.children_view)
    b = TreeArrays.from_db(c4_db)
    for name in ("parent", "depth", "visits", "wins", "draws", "proven", "created"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert list(a.moves) == list(b.moves)
    sub = TreeArrays.from_db(c4_db, "44", max_depth=2)
    assert sub.root_depth == 2 and sub.depth.max() == 2
    top = c4.find("44").children_view
    assert len(sub) == 1 + len(top) + sum(len(k.children_view) for k in top)


def test_concentration_matches_plain_python(c4: treelab.Tree) -> None:
    a = TreeArrays.from_tree(c4)
    entropy, g = a.concentration()
    ordered = sorted(_bfs(c4.root), key=lambda n: (n.depth, n.node_id))  # the arrays' order
    for i, node in enumerate(ordered[:400]):
        visits = [k.nb_visit for k in node.children_view]
        e, gg = normalised_entropy(visits), gini(visits)
        assert (math.isnan(entropy[i]) if e is None else entropy[i] == pytest.approx(e)), node
        assert (math.isnan(g[i]) if gg is None else g[i] == pytest.approx(gg)), node
    assert gini([5, 5, 5]) == pytest.approx(0.0)
    assert gini([0, 0, 9]) == pytest.approx(2 / 3)  # one of three takes all: (k-1)/k
    assert normalised_entropy([3, 3]) == pytest.approx(1.0)
    assert normalised_entropy([7]) is None


def _bfs(root: treelab.TreeNode) -> list[treelab.TreeNode]:
    out = [root]
    for node in out:
        out.extend(node.children_view)
    return out


def test_asymmetry_index() -> None:
    even = treelab.Tree("tictactoe")
    for move in "123456789":
        even.record(move, None)
    assert TreeArrays.from_tree(even).asymmetry() == pytest.approx(0.0)
    lopsided = treelab.Tree("tictactoe")
    for _ in range(50):
        lopsided.record("59", None)
    for move in "1234":
        lopsided.record(move, None)
    assert TreeArrays.from_tree(lopsided).asymmetry() > 0.5


def test_stats_in_memory_and_from_sql_agree(c4: treelab.Tree, c4_db: Path) -> None:
    for path in (None, "4", "44", "3"):
        mem = stats(c4, path)
        sql = db_stats(c4_db, path)
        assert sql.pop("db") == str(c4_db)
        assert mem.keys() == sql.keys()
        for key in mem:
            if key == "asymmetry":
                assert mem[key] == pytest.approx(sql[key], abs=2e-6)
            else:
                assert mem[key] == sql[key], (path, key)


def test_stats_agree_with_the_database(c4_db: Path) -> None:
    facts = db_stats(c4_db)
    conn = sqlite3.connect(c4_db)
    assert facts["nodes"] == conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    leaves = conn.execute("SELECT count(*) FROM nodes WHERE id NOT IN (SELECT parent_id FROM nodes "
                          "WHERE parent_id IS NOT NULL)").fetchone()[0]
    assert facts["leaves"] == leaves
    assert facts["max_depth"] == conn.execute("SELECT max(depth) FROM nodes").fetchone()[0]
    hist = dict(conn.execute("SELECT depth, count(*) FROM nodes GROUP BY depth"))
    assert facts["depth_histogram"] == [hist[d] for d in range(len(hist))]
    # principal variation: a proven win, never a proven loss while a sibling is not, then the most
    # selected child (then the most visited, then the first created) at each level
    node = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()[0]
    for move in facts["principal_variation"]:
        kids = conn.execute("SELECT id, move, nb_visit, proven, nb_select FROM nodes WHERE parent_id = ? ORDER BY id",
                            (node,)).fetchall()
        best = max(kids, key=lambda r: (2 if r[3] == 1 else 0 if r[3] == -1 else 1, r[4], r[2], -r[0]))
        assert best[1] == move
        node = best[0]
    root_n = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()[0]
    for row in facts["children"]:
        n, w, d, proven = conn.execute(
            "SELECT nb_visit, nb_win, nb_draw, proven FROM nodes WHERE depth = 1 AND move = ?", (row["move"],)
        ).fetchone()
        assert (row["nb_visit"], row["nb_win"], row["nb_draw"]) == (n, w, d)
        assert row["ucb1"] == pytest.approx((w + d / 2) / n + math.sqrt(2) * math.sqrt(math.log(root_n) / n))
        assert row["proven"] == {None: None, 1: "win", 0: "draw", -1: "loss"}[proven]
    # the table is in the order of the move-choice rule, so its first row is the principal variation's move
    ranks = [(2 if r["proven"] == "win" else 0 if r["proven"] == "loss" else 1, r["nb_select"], r["nb_visit"])
             for r in facts["children"]]
    assert ranks == sorted(ranks, reverse=True)
    assert facts["children"][0]["move"] == facts["principal_variation"][0]
    conn.close()
    assert json.loads(json.dumps(facts)) == facts  # plain JSON: no inf or nan


def test_children_table_is_the_analyse_table(c4: treelab.Tree) -> None:
    node = c4.find("4")
    kids = [(k.name, k.nb_visit, k.nb_win, k.nb_draw, k.proven, k.value_sum, None, k.nb_select)
            for k in node.children_view]
    ours = child_rows(node.nb_visit, kids, c4.c)
    theirs = summarize(c4, "4", iterations=0, c=c4.c).to_dict()["children"]
    assert ours == theirs


def test_shape_layout_nests_children_inside_parents(c4: treelab.Tree) -> None:
    a = TreeArrays.from_tree(c4)
    x0, width = layout(a)
    assert (x0[0], width[0]) == (0.0, 1.0)
    p = a.parent[1:]
    assert (x0[1:] >= x0[p] - 1e-12).all()
    assert (x0[1:] + width[1:] <= x0[p] + width[p] + 1e-12).all()
    assert width[1:] == pytest.approx(width[p] * a.visits[1:] / a.visits[p])
    m = p1_mean(a)
    first = a.children_of(0)
    assert m[first] == pytest.approx(a.mean[first])  # player 1 moved into depth 1
    assert m[a.depth == 2] == pytest.approx(1 - a.mean[a.depth == 2])


def test_shape_pictures(c4_db: Path, tmp_path: Path) -> None:
    a = TreeArrays.from_db(c4_db)
    for kind in ("icicle", "sunburst"):
        out = tmp_path / f"{kind}.png"
        plot_shape(a, out, kind=kind)
        assert out.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="unknown shape"):
        plot_shape(a, kind="pie")


def test_growth_from_history_and_from_stamps(trained: Path, tmp_path: Path) -> None:
    data = growth_data(trained)
    assert data.source == "history"
    assert list(data.games) == list(range(1, 13))
    info = treelab.info(trained)
    assert data.nodes[-1] == info["nodes"] and data.root_visits is not None
    assert data.root_visits[-1] == info["simulations"]
    assert (np.diff(data.nodes) >= 0).all()
    assert (data.depth_counts.sum(axis=1) == data.nodes).all()
    shares = data.shares()
    assert np.allclose(np.sum(list(shares.values()), axis=0), 1.0)
    # without history rows, the node counts are rebuilt from created_game stamps
    copy = tmp_path / "nohistory.db"
    shutil.copy(trained, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute("DELETE FROM history")
    rebuilt = growth_data(copy)
    assert rebuilt.source == "created_game" and not rebuilt.root_children
    assert np.array_equal(rebuilt.nodes, data.nodes)
    assert np.array_equal(rebuilt.depth_counts[:, : data.depth_counts.shape[1]], data.depth_counts)
    out = plot_growth(data, tmp_path / "growth.png")
    assert (tmp_path / "growth.png").read_bytes()[:4] == b"\x89PNG" and out is not None
    plot_growth(rebuilt, tmp_path / "rebuilt.png")


def test_tree_as_it_was_after_a_game(trained: Path) -> None:
    data = growth_data(trained)
    conn = sqlite3.connect(trained)
    for g in (1, 6, 12):
        old = tree_at(trained, g)
        assert old.size == data.nodes[g - 1]
        assert old.size == conn.execute(
            "SELECT count(*) FROM nodes WHERE created_game IS NULL OR created_game <= ?", (g,)
        ).fetchone()[0]
        assert old.root.nb_visit == data.root_visits[g - 1]
        kids = old.root.children_view
        assert {k.name: k.nb_visit for k in kids} == {m: int(v[g - 1]) for m, v in data.root_children.items()
                                                      if v[g - 1] or m in {k.name for k in kids}}
        assert old.depth_counts == [int(x) for x in data.depth_counts[g - 1] if x]
    conn.close()
    assert tree_at(trained, 12).size == treelab.load(trained).size
