"""Every score shown is the one the search selects by: a real graph-statistics file, read by every view.

The expected scores are computed here from the file's own rows (the children's ``nb_select``, the
``positions`` table by the game's position key), with the graph rule of :mod:`treelab.mcts.graph`; the
search's selection is checked to pick their best, and ``stats``, ``analyse``, ``render`` and the explorer
to show them, ``--choice ucb1`` to play by them.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import run

import treelab
from treelab.analysis.arrays import stats
from treelab.analysis.sqlstats import db_stats
from treelab.mcts.config import SearchConfig
from treelab.mcts.dispatch import traced_search
from treelab.mcts.graph import select_graph
from treelab.mcts.tracer import Tracer
from treelab.mcts.uct import Limit, search
from treelab.positions import PositionTable
from treelab.view.explorer.data import TreeFile

C = math.sqrt(2)


@pytest.fixture(scope="module")
def graph_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("scores") / "c4.db"
    treelab.train("connect4", db, games=6, iterations=150, seed=4, statistics="graph", progress=False)
    return db


def positions_table(db: Path) -> dict[str, tuple[int, int, int]]:
    """The file's ``positions`` rows: key -> (nb_visit, player 1's wins, nb_draw)."""
    conn = sqlite3.connect(db)
    try:
        return {k: (v, w, d) for k, v, w, d in conn.execute("SELECT key, nb_visit, nb_win, nb_draw FROM positions")}
    finally:
        conn.close()


def scores_at(tree: treelab.Tree, table: dict[str, tuple[int, int, int]], path: str
              ) -> dict[str, tuple[float, float | None]]:
    """Each child of ``path``: its position's value for its mover and its graph score (None: +inf), from the rows."""
    game = tree.game
    state = game.replay(path)
    kids = tree.find(path).children_view
    total = sum(k.nb_select for k in kids)
    out = {}
    for kid in kids:
        visits, ones, draws = table.get(game.position_key(state.play(game.parse_move(kid.name))), (0, 0, 0))
        wins = ones if state.to_move == 1 else visits - ones - draws
        value = (wins + draws / 2) / visits if visits else kid.mean
        s = kid.nb_select
        explore = None if s == 0 else (C * math.sqrt(math.log(total) / s) if total > 1 else 0.0)
        out[kid.name] = (value, None if explore is None else value + explore)
    return out


def expected(db: Path, path: str) -> dict[str, tuple[float, float | None]]:
    """:func:`scores_at` from the file ``db``."""
    return scores_at(treelab.load(db), positions_table(db), path)


def inf(score: float | None) -> float:
    """A score as a number (None, the JSON's +inf: ``math.inf``)."""
    return math.inf if score is None else score


def best(scores: dict[str, tuple[float, float | None]]) -> str:
    return max(scores, key=lambda m: inf(scores[m][1]))


def shown(children: list[dict[str, object]]) -> dict[str, float]:
    return {str(k["move"]): inf(k["ucb1"]) for k in children}  # type: ignore[arg-type]


def positions(db: Path) -> list[str]:
    """Stored positions with several selected children, the root first."""
    tree = treelab.load(db)
    found = [n for n in tree if sum(1 for k in n.children_view if k.nb_select) >= 3 and n.depth <= 4]
    return ["".join(n.moves) for n in sorted(found, key=lambda n: (n.depth, n.node_id))][:4]


def test_the_search_selects_the_best_of_these_scores(graph_db: Path) -> None:
    tree = treelab.load(graph_db)
    assert tree.statistics == "graph"
    table = PositionTable.of(tree)
    for path in positions(graph_db):
        scores = expected(graph_db, path)
        assert select_graph(table)(tree.find(path), C, False).name == best(scores), path


def test_stats_analyse_render_and_the_explorer_show_them(graph_db: Path, tmp_path: Path) -> None:
    paths = positions(graph_db)
    assert len(paths) >= 3
    explorer = TreeFile.open(graph_db)
    for path in paths:
        scores = expected(graph_db, path)
        result = run("stats", str(graph_db), "--path", path, "--json")
        assert result.exit_code == 0, result.output
        facts = json.loads(result.output)
        assert facts["statistics"] == "graph" and facts == {**stats(treelab.load(graph_db), path), "db": str(graph_db)}
        for views in (facts["children"], explorer.node(path)["children"]):
            assert shown(views) == pytest.approx({m: inf(s) for m, (_, s) in scores.items()})
        for kid in facts["children"]:
            assert kid["value"] == pytest.approx(scores[kid["move"]][0]) and kid["nb_select"] >= 0
        out = tmp_path / f"{path or 'root'}.dot"
        assert run("render", str(graph_db), "--path", path, "--depth", "1", "-o", str(out)).exit_code == 0
        edges = dict(re.findall(r'-> "(?:[^"]*/)?(\d)" \[[^\]]*?tooltip="graph score (\S+)', out.read_text()))
        assert edges.keys() == scores.keys()
        for move, (_, score) in scores.items():
            assert edges[move] == "∞" if score is None else float(edges[move]) == pytest.approx(score, abs=1e-4)
    copy = tmp_path / "copy.db"
    shutil.copy(graph_db, copy)
    result = run("analyse", "connect4", "--moves", paths[1], "--db", str(copy), "--iterations", "20",
                 "--statistics", "graph", "--seed", "1", "--json")
    assert result.exit_code == 0, result.output
    scores = expected(copy, paths[1])  # after the search the summary reports
    assert shown(json.loads(result.output)["children"]) == pytest.approx({m: inf(s) for m, (_, s) in scores.items()})


def test_choice_ucb1_plays_the_best_graph_score(graph_db: Path, tmp_path: Path) -> None:
    tree, table = treelab.load(graph_db), positions_table(graph_db)
    differ = []  # positions where the graph score and classic UCB1 pick different moves
    for node in tree:
        if sum(1 for k in node.children_view if k.nb_select) >= 2 and node.depth <= 6:
            scores = scores_at(tree, table, "".join(node.moves))
            if best(scores) != max(node.children_view, key=lambda k: k.ucb1(C)).name:
                differ.append("".join(node.moves))
    assert differ  # the test tells the two rules apart
    for path in differ[:3]:
        copy = tmp_path / f"{path}.db"
        shutil.copy(graph_db, copy)
        result = run("analyse", "connect4", "--moves", path, "--db", str(copy), "--iterations", "1",
                     "--statistics", "graph", "--choice", "ucb1", "--seed", "2", "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["best_move"] == best(expected(copy, path)), path


def test_db_stats_and_in_memory_stats_agree_on_a_graph_file(graph_db: Path) -> None:
    for path in positions(graph_db):
        assert db_stats(graph_db, path) == {**stats(treelab.load(graph_db), path), "db": str(graph_db)}


def test_a_traced_graph_search_is_the_graph_search(graph_db: Path) -> None:
    plain, traced = treelab.load(graph_db), treelab.load(graph_db)
    search(plain, "4", limit=Limit(iterations=60), rng=random.Random(7), select="graph")
    tracer = Tracer()
    traced_search(traced, "4", limit=Limit(iterations=60), search=SearchConfig(statistics="graph"),
                  rng=random.Random(7), tracer=tracer)
    assert [(n.sequence, n.nb_visit, n.nb_win, n.nb_select) for n in plain] == [
        (n.sequence, n.nb_visit, n.nb_win, n.nb_select) for n in traced]
    first = tracer.records[0]["levels"][0]
    assert traced.statistics == "graph" and first["why"] in ("best", "unvisited")
