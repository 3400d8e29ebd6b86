"""``treelab diff`` and ``treelab.diff``: two trees of one game aligned by move path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from explorer_helpers import SAMPLE_TTT, digest

import treelab
from treelab.cli import cli
from treelab.mcts.choice import best_child


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("diff")
    a, b = folder / "a.db", folder / "b.db"
    treelab.train("connect4", a, games=6, iterations=80, opponent="heuristic", seed=1, progress=False)
    treelab.train("connect4", b, games=9, iterations=60, opponent="random", seed=2, progress=False)
    return a, b


def _paths(tree: treelab.Tree, moves: str = "") -> set[tuple[str, ...]]:
    """Every node's move path below (and including) the node at ``moves``, walked in memory."""
    if moves not in tree:
        return set()
    start = tree.find(moves)
    out, stack = set(), [start]
    while stack:
        node = stack.pop()
        out.add(node.moves)
        stack.extend(node.children_view)
    return out


@pytest.mark.parametrize("path", ["", "4", "44", "3"])
def test_diff_counts_match_an_in_memory_alignment(pair: tuple[Path, Path], path: str) -> None:
    a, b = pair
    ta, tb = treelab.load(a), treelab.load(b)
    pa, pb = _paths(ta, path), _paths(tb, path)
    if not pa and not pb:
        pytest.fail(f"pick a path held by one of the trees, not {path!r}")
    result = treelab.diff(a, b, path=path)
    assert (result.nodes_a, result.nodes_b) == (len(pa), len(pb))
    assert result.common == len(pa & pb)
    assert (result.only_in_a, result.only_in_b) == (len(pa - pb), len(pb - pa))
    na = ta.find(path).nb_visit if path in ta else 0
    nb = tb.find(path).nb_visit if path in tb else 0
    assert result.root_visit_delta == nb - na
    kids_a = {k.name: k for k in ta.find(path).children_view} if path in ta else {}
    kids_b = {k.name: k for k in tb.find(path).children_view} if path in tb else {}
    assert {m.move for m in result.children} == set(kids_a) | set(kids_b)
    for m in result.children:
        ka, kb = kids_a.get(m.move), kids_b.get(m.move)
        assert m.nb_visit_a == (ka.nb_visit if ka else 0) and m.nb_visit_b == (kb.nb_visit if kb else 0)
        assert m.mean_a == (ka.mean if ka and ka.nb_visit else None)
        assert m.mean_b == (kb.mean if kb and kb.nb_visit else None)
        assert (m.in_a, m.in_b) == (ka is not None, kb is not None)


def test_principal_variations_and_where_they_part(pair: tuple[Path, Path]) -> None:
    a, b = pair
    result = treelab.diff(a, b)
    for db, line in ((a, result.principal_variation_a), (b, result.principal_variation_b)):
        node = treelab.load(db).root
        for move in line:
            best = best_child(node)
            assert best is not None and best.name == move
            node = best
        assert best_child(node) is None or best_child(node).nb_visit == 0  # type: ignore[union-attr]
    k = result.pv_common
    assert result.principal_variation_a[:k] == result.principal_variation_b[:k]
    if k < min(len(result.principal_variation_a), len(result.principal_variation_b)):
        assert result.principal_variation_a[k] != result.principal_variation_b[k]


def test_a_tree_against_itself_has_no_differences(pair: tuple[Path, Path]) -> None:
    a, _ = pair
    result = treelab.diff(a, a)
    assert result.only_in_a == result.only_in_b == 0 and result.root_visit_delta == 0
    assert all(m.visit_delta == 0 and m.mean_delta == 0 for m in result.children)


def test_cli_json_contract_and_files_untouched(pair: tuple[Path, Path]) -> None:
    a, b = pair
    before = digest(a), digest(b)
    out = CliRunner().invoke(cli, ["diff", str(a), str(b), "--path", "4", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert {"only_in_a", "only_in_b", "root_visit_delta", "principal_variation_a", "principal_variation_b",
            "children"} <= set(data)
    for k in data["children"]:
        assert {"move", "nb_visit_a", "nb_visit_b", "mean_a", "mean_b"} <= set(k)
    assert data == json.loads(json.dumps(treelab.diff(a, b, "4").to_dict()))
    text = CliRunner().invoke(cli, ["diff", str(a), str(b)])
    assert text.exit_code == 0 and "principal variation A:" in text.output and "only in B" in text.output
    assert (digest(a), digest(b)) == before


def test_a_move_held_by_one_tree_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    ta = treelab.Tree("connect4")
    ta.record("4453", winner=1)
    ta.save(a)
    tb = treelab.Tree("connect4")
    tb.record("4412", winner=None)
    tb.record("3", winner=2)
    tb.save(b)
    result = treelab.diff(a, b, "44")
    rows = {m.move: m for m in result.children}
    assert rows["5"].in_a and not rows["5"].in_b and rows["5"].nb_visit_b == 0 and rows["5"].mean_b is None
    assert rows["1"].in_b and not rows["1"].in_a and rows["1"].mean_a is None
    assert rows["1"].mean_b == 0.5  # a draw
    assert result.only_in_a == 2 and result.only_in_b == 2 and result.common == 1
    whole = treelab.diff(a, b)
    assert whole.nodes_a == 5 and whole.nodes_b == 6 and whole.common == 3  # root, 4, 44
    assert whole.root_visit_delta == 1


@pytest.mark.parametrize("args, needle", [
    (["missing.db", "{b}"], "no such database"),
    (["{a}", "{ttt}"], "compare two trees of one game"),
    (["{a}", "{b}", "--path", "4x"], "'4x'"),
    (["{a}", "{b}", "--path", "1234567123"], "is in neither"),
    (["{notdb}", "{b}"], "not"),
])
def test_bad_input_is_one_line(pair: tuple[Path, Path], tmp_path: Path, args: list[str], needle: str) -> None:
    a, b = pair
    notdb = tmp_path / "notes.db"
    notdb.write_text("hello, not a database\n")
    names = {"a": a, "b": b, "ttt": SAMPLE_TTT, "notdb": notdb}
    out = CliRunner().invoke(cli, ["diff", *(x.format(**names) for x in args)])
    assert out.exit_code != 0
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0], out.output
    assert "Traceback" not in out.output
    assert notdb.read_text() == "hello, not a database\n"


def test_help_ends_with_an_example() -> None:
    for command in ("diff", "serve"):
        out = CliRunner().invoke(cli, [command, "--help"])
        assert out.exit_code == 0
        lines = out.output.rstrip().splitlines()
        assert lines[-2].strip() == "Example:" and lines[-1].strip().startswith(f"treelab {command} ")
