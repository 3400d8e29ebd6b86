"""The render, stats, growth and shape commands (click's CliRunner, real files, the real `dot`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

from treelab.analysis.sqlstats import db_stats


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    from treelab.play.training import train

    path = tmp_path_factory.mktemp("view") / "c4.db"
    train("connect4", path, games=3, iterations=80, seed=2, progress=False)
    return str(path)


@pytest.mark.parametrize("command", ["render", "stats", "growth", "shape"])
def test_every_help_ends_with_an_example(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output and "treelab " + command in result.output.split("Example:")[1]


def test_render_writes_every_format(db: str, tmp_path: Path) -> None:
    for suffix, magic in ((".svg", b"<?xml"), (".png", b"\x89PNG"), (".pdf", b"%PDF"), (".dot", b"digraph")):
        out = tmp_path / f"tree{suffix}"
        result = run("render", db, "--depth", "2", "--top", "3", "-o", str(out))
        assert result.exit_code == 0, result.output
        assert out.read_bytes().startswith(magic)
    out = tmp_path / "pv.dot"
    result = run("render", db, "--path", "4", "--depth", "3", "--around-pv", "--no-legend", "--lr", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert 'rankdir="LR"' in text and "<TABLE BORDER=\"1\"" not in text and '"4" [id="4"' in text
    out = tmp_path / "radial.svg"
    result = run("render", db, "--depth", "2", "--top", "3", "--layout", "radial", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(b"<?xml") and 'class="node"' in out.read_text()


def test_render_errors_are_one_line(db: str, tmp_path: Path) -> None:
    out = str(tmp_path / "x.svg")
    assert_clean_error(run("render", db, "--depth", "9", "-o", out), "--top", "--max-nodes")
    assert_clean_error(run("render", db, "--path", "4x", "-o", out), "'4x'")
    assert_clean_error(run("render", db, "--path", "1111111", "-o", out), "not in")
    assert_clean_error(run("render", str(tmp_path / "missing.db"), "-o", out), "missing.db")
    assert_clean_error(run("render", db, "-o", str(tmp_path / "x.txt")), "suffix")
    assert_clean_error(run("render", db, "--layout", "spiral", "-o", out), "'spiral'")
    notdb = tmp_path / "notes.db"
    notdb.write_text("hello")
    assert_clean_error(run("render", str(notdb), "-o", out), "not a treelab database")
    assert notdb.read_text() == "hello"
    assert not Path(out).exists()


def test_stats_json_agrees_with_the_database(db: str) -> None:
    result = run("stats", db, "--json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.output)
    for key in ("nodes", "leaves", "max_depth", "depth_histogram", "principal_variation", "children"):
        assert key in facts
    conn = sqlite3.connect(db)
    assert facts["nodes"] == conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    assert facts["max_depth"] == conn.execute("SELECT max(depth) FROM nodes").fetchone()[0]
    assert facts["leaves"] == conn.execute(
        "SELECT count(*) FROM nodes n WHERE NOT EXISTS (SELECT 1 FROM nodes c WHERE c.parent_id = n.id)"
    ).fetchone()[0]
    assert facts["simulations"] == conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()[0]
    kids = {m: (n, w, d) for m, n, w, d in conn.execute(
        "SELECT move, nb_visit, nb_win, nb_draw FROM nodes WHERE depth = 1")}
    assert {r["move"]: (r["nb_visit"], r["nb_win"], r["nb_draw"]) for r in facts["children"]} == kids
    assert set(facts["children"][0]) == {"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven", "nb_select"}
    conn.close()
    sub = json.loads(run("stats", db, "--path", "4", "--json", "--c", "0.5").output)
    assert sub == {**db_stats(db, "4", c=0.5)}
    assert sub["path"] == "4" and sub["to_move"] == 2 and sub["depth_histogram"][0] == 1


def test_stats_tables(db: str) -> None:
    result = run("stats", db)
    assert result.exit_code == 0
    assert "principal variation:" in result.output and "depth  nodes  leaves  branching" in result.output
    assert_clean_error(run("stats", db, "--path", "99"), "99")


def test_growth_and_shape_pictures(db: str, tmp_path: Path) -> None:
    out = tmp_path / "growth.png"
    result = run("growth", db, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "3 games" in result.output and out.read_bytes()[:4] == b"\x89PNG"
    assert_clean_error(run("growth", db, "-o", str(tmp_path / "g.dot")), "suffix")
    for kind in ("icicle", "sunburst"):
        out = tmp_path / f"{kind}.png"
        result = run("shape", db, "--kind", kind, "--max-depth", "6", "-o", str(out))
        assert result.exit_code == 0, result.output
        assert out.read_bytes()[:4] == b"\x89PNG"
    assert_clean_error(run("shape", db, "--path", "1111111", "-o", str(tmp_path / "s.png")), "not in")
