"""Tables agree with the move they name: on a tree whose visits and selections disagree, `analyse --db`
and `stats` list the moves in the move-choice rule's order (treelab/mcts/choice.py), show the selected count that
decides it and say why visits differ; elapsed times never read 0.00s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import run

import treelab


@pytest.fixture
def disagreeing(tmp_path: Path) -> Path:
    """A tic-tac-toe tree searched a little from the start, then much from after move 1: the root's child 1 has
    by far the most visits (passed through by the deeper search) but few selections."""
    tree = treelab.Tree("tictactoe")
    treelab.search(tree, "", limit=treelab.Limit(iterations=90), rng=1)
    treelab.search(tree, "1", limit=treelab.Limit(iterations=600), rng=2)
    one = tree.find("1")
    assert one.nb_visit == max(k.nb_visit for k in tree.root.children_view)
    assert one.nb_select < max(k.nb_select for k in tree.root.children_view)
    db = tmp_path / "t.db"
    tree.save(db)
    return db


def _rows(text: str) -> list[list[str]]:
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["move", "selected"])
    return [line.split() for line in lines[head + 1:] if re.match(r"\s+\d\s", line)]


def test_analyse_db_lists_moves_as_the_best_move_is_chosen(disagreeing: Path) -> None:
    result = run("analyse", "tictactoe", "--db", str(disagreeing), "--iterations", "30", "--seed", "1")
    assert result.exit_code == 0, result.output
    best = re.search(r"best move (\d)", result.output)
    rows = _rows(result.output)
    assert best and rows[0][0] == best.group(1) != "1"
    selected = [int(r[1].replace(",", "")) for r in rows]
    assert selected == sorted(selected, reverse=True)
    visits = {r[0]: int(r[2].replace(",", "")) for r in rows}
    assert max(visits, key=visits.__getitem__) == "1"  # the most visited is not the first row: the note says why
    assert "selected: simulations that chose the move here" in result.output
    assert " in 0.00s" not in result.output and re.search(r"simulations in [\d.]+ ?m?s\b", result.output)


def test_analyse_json_orders_children_by_the_rule_and_keeps_its_keys(disagreeing: Path) -> None:
    result = run("analyse", "tictactoe", "--db", str(disagreeing), "--iterations", "30", "--seed", "1", "--json")
    data = json.loads(result.output)
    kids = data["children"]
    assert data["best_move"] == kids[0]["move"]
    assert all({"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven", "nb_select"} <= set(k) for k in kids)
    assert [k["nb_select"] for k in kids] == sorted((k["nb_select"] for k in kids), reverse=True)


def test_stats_table_starts_with_the_principal_variation(disagreeing: Path) -> None:
    text = run("stats", str(disagreeing)).output
    pv = re.search(r"principal variation: (\S+)", text)
    rows = _rows(text)
    assert pv and rows[0][0] == pv.group(1) != "1"
    assert "in the order the principal variation is chosen by" in text and "selected: simulations" in text
    facts = json.loads(run("stats", str(disagreeing), "--json").output)
    assert facts["children"][0]["move"] == facts["principal_variation"][0]


def test_render_top_keeps_the_principal_variation_and_shows_what_chose_it(disagreeing: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.dot"
    assert run("render", str(disagreeing), "--depth", "1", "--top", "2", "-o", str(out)).exit_code == 0
    dot = out.read_text()
    pv = json.loads(run("stats", str(disagreeing), "--json").output)["principal_variation"][0]
    assert f'"{pv}" [' in dot and 'color="#e66101"' in dot.split(f'"{pv}" [', 1)[1].split("\n", 1)[0]
    assert '"1" [' not in dot  # the most visited, rarely chosen move is not among the top 2 by the rule
    every = tmp_path / "all.dot"
    assert run("render", str(disagreeing), "--depth", "1", "-o", str(every)).exit_code == 0
    one = treelab.load(disagreeing).find("1")
    line = next(x for x in every.read_text().splitlines() if x.startswith('  "1" ['))
    assert f"{one.nb_win}/{one.nb_visit}" in line and f"chosen {one.nb_select}<" in line
