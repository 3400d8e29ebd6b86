"""Graphviz diagrams: golden DOT files, UCB1 labels against stored counts, the real `dot`, size guards."""

from __future__ import annotations

import math
import os
import re
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from recorded import grow

import treelab
from treelab.errors import ExecutableNotFoundError, PathNotFoundError, RenderError, TooLargeError
from treelab.mcts.choice import best_child
from treelab.view.dot import render, run_dot, to_dot, to_svg
from treelab.view.jupyter import Diagram, draw, side_by_side
from treelab.view.loading import load_view
from treelab.view.subtree import select

GOLDEN = Path(__file__).parent / "golden"
REGOLD = os.environ.get("TREELAB_REGOLD") == "1"  # set to rewrite the golden files after a deliberate change
NODE = re.compile(r'^\s+"([^"]+)" \[id="([^"]+)", label=<(.*)>, tooltip=')
EDGE = re.compile(r'^\s+"([^"]+)" -> "([^"]+)" \[id="[^"]+", label=<.*?>([^<>]+)</(?:FONT|TD)>')
needs_dot = pytest.mark.skipif(os.environ.get("TREELAB_NO_DOT") == "1", reason="dot disabled")


@pytest.fixture(scope="module")
def c4() -> treelab.Tree:
    tree = grow("connect4", 600, seed=7, max_len=6)
    tree.find("4").proven = 1  # marks to draw (the renderer does not judge proofs)
    tree.find("44").proven = -1
    return tree


@pytest.fixture(scope="module")
def ttt() -> treelab.Tree:
    tree = grow("tictactoe", 400, seed=3, max_len=9)
    tree.find("5").proven = 0
    return tree


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGOLD:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"no golden file {name}: run with TREELAB_REGOLD=1 once and commit it"
    assert text == path.read_text(), f"{name} changed: rerun with TREELAB_REGOLD=1 if deliberate"


@pytest.mark.parametrize(
    ("name", "game", "options"),
    [
        ("c4_root_top3.dot", "c4", {"depth": 2, "top": 3}),
        ("c4_path4_min.dot", "c4", {"path": "4", "depth": 2, "min_visits": 8}),
        ("c4_pv.dot", "c4", {"depth": 4, "around_pv": True, "legend": False}),
        ("ttt_path5.dot", "ttt", {"path": "5", "depth": 2, "c": 0.5}),
        ("ttt_root_lr.dot", "ttt", {"depth": 1, "rankdir": "LR", "board": False}),
    ],
)
def test_golden_dot(request: pytest.FixtureRequest, name: str, game: str, options: dict) -> None:
    tree = request.getfixturevalue(game)
    text = to_dot(tree, **options)
    assert text == to_dot(tree, **options)  # deterministic
    check_golden(name, text)


def test_dot_does_not_depend_on_creation_order() -> None:
    a, b = treelab.Tree("tictactoe"), treelab.Tree("tictactoe")
    games = [("159", None)] * 3 + [("123", 1)] * 2 + [("951", 2), ("357", None)] * 2  # no visit ties
    for moves, winner in games:
        a.record(moves, winner)
    for moves, winner in reversed(games):
        b.record(moves, winner)
    assert to_dot(a, depth=3) == to_dot(b, depth=3)


def edges(text: str) -> list[tuple[str, str, str]]:
    return [m.groups() for line in text.splitlines() if (m := EDGE.match(line))]  # type: ignore[misc]


def test_node_ids_are_move_paths(c4: treelab.Tree) -> None:
    text = to_dot(c4, path="4", depth=2, top=4)
    ids = [m.group(1) for line in text.splitlines() if (m := NODE.match(line))]
    assert ids[0] == "4"
    for nid in ids:
        if nid.endswith("more"):
            continue
        node = c4.find(nid.split("/"))
        assert node.sequence == nid
    assert "root" in to_dot(c4, depth=0)


def test_every_ucb1_shown_matches_the_stored_counts(c4: treelab.Tree, tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    c4.save(db)
    out = render(db, tmp_path / "view.dot", path="4", depth=3, top=3, c=1.1)
    shown = edges(out.read_text())
    assert len(shown) >= 9
    conn = sqlite3.connect(db)

    def counts(path: str) -> tuple[int, int, int]:
        node = conn.execute("SELECT id, nb_visit, nb_win, nb_draw FROM nodes WHERE parent_id IS NULL").fetchone()
        for move in path.split("/"):
            node = conn.execute(
                "SELECT id, nb_visit, nb_win, nb_draw FROM nodes WHERE parent_id = ? AND move = ?", (node[0], move)
            ).fetchone()
        return node[1], node[2], node[3]

    for parent, child, label in shown:
        big_n = counts(parent)[0]
        n, w, d = counts(child)
        expected = (w + d / 2) / n + 1.1 * math.sqrt(math.log(big_n) / n)
        assert float(label) == pytest.approx(expected, abs=5e-4), (parent, child)
    conn.close()


def test_view_from_database_draws_exactly_the_in_memory_diagram(c4: treelab.Tree, tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    c4.save(db)
    for options in (
        {"depth": 2, "top": 3},
        {"path": "4", "depth": 2, "min_visits": 8},
        {"depth": 4, "around_pv": True},
        {"path": "44", "depth": 3, "top": 2},
        {"path": "4", "depth": 0},
        {"depth": 3, "max_nodes": 2000},
    ):
        tree, below = load_view(db, **options)
        assert to_dot(tree, counts_below=below, **options) == to_dot(c4, **options), options
        assert tree.size < c4.size / 2  # only the drawn part and its siblings were read
        assert render(db, tmp_path / "x.dot", **options).read_text() == to_dot(c4, **options)
        assert draw(db, **{"top": None, **options}).dot == to_dot(c4, **options)


def test_cut_children_are_summarised(c4: treelab.Tree) -> None:
    sel = select(c4.root, depth=1, top_k=2)
    hidden = sel.hidden[c4.root]
    others = sorted(c4.root.children_view, key=lambda k: -k.nb_visit)[2:]
    assert (hidden.count, hidden.visits) == (len(others), sum(k.nb_visit for k in others))
    text = to_dot(c4, depth=1, top=2)
    assert f"+{hidden.count} more moves<BR/>{hidden.visits:,} visits" in text
    assert '"more" [id="more"' in text
    below = sel.below[sel.children[c4.root][0]]
    assert f"▾ {below.count} moves, {below.visits:,} visits" in text


def test_proofs_pv_and_board_are_marked(c4: treelab.Tree, ttt: treelab.Tree) -> None:
    text = to_dot(c4, depth=2)
    line4 = next(line for line in text.splitlines() if line.startswith('  "4" ['))
    assert "proven win" in line4 and "peripheries=2" in line4
    assert "proven loss" in next(line for line in text.splitlines() if line.startswith('  "4/4" ['))
    pv = best_child(c4.root)
    assert pv is not None
    assert 'color="#e66101"' in next(line for line in text.splitlines() if line.startswith(f'  "root" -> "{pv.name}"'))
    root = next(line for line in text.splitlines() if line.startswith('  "root" ['))
    assert root.count('FIXEDSIZE="TRUE"') == 42  # a Connect Four board
    board = to_dot(ttt, path="5", depth=1).splitlines()
    assert "<B>X</B>" in next(line for line in board if line.startswith('  "5" ['))
    assert "proven draw" in next(line for line in board if line.startswith('  "5" ['))
    assert 'FIXEDSIZE' not in to_dot(ttt, path="5", depth=1, board=False)


def test_size_guard_refuses_quickly_and_names_the_options(c4: treelab.Tree) -> None:
    with pytest.raises(TooLargeError, match=r"--top.*--min-visits.*--max-nodes") as info:
        to_dot(c4, depth=6, max_nodes=50)
    assert str(info.value)[0].islower() and "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)
    assert to_dot(c4, depth=6, max_nodes=50, around_pv=True, top=3)


def test_bad_arguments_are_one_line_errors(c4: treelab.Tree, tmp_path: Path) -> None:
    with pytest.raises(PathNotFoundError):
        to_dot(c4, path="4444444")
    with pytest.raises(ValueError, match="depth -1"):
        to_dot(c4, depth=-1)
    with pytest.raises(ValueError, match="top 0"):
        to_dot(c4, top=0)
    with pytest.raises(RenderError, match="unknown diagram format 'txt'"):
        render(c4, tmp_path / "x.txt")
    with pytest.raises(TypeError):
        to_dot("not a tree")  # type: ignore[arg-type]


def test_a_bare_node_can_be_drawn(c4: treelab.Tree) -> None:
    node = c4.find("4")
    text = to_dot(node, path="4", depth=1)
    assert text.splitlines()[6].startswith('  "4/4" [')
    assert "FIXEDSIZE" not in text  # no game given: no board
    assert "FIXEDSIZE" in to_dot(node, depth=1, game="connect4")


def test_missing_dot_says_how_to_install(monkeypatch: pytest.MonkeyPatch, c4: treelab.Tree, tmp_path: Path) -> None:
    empty = tmp_path / "no-graphviz"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # the graphviz package finds no dot and raises ExecutableNotFound
    with pytest.raises(ExecutableNotFoundError, match="install Graphviz"):
        render(c4, tmp_path / "x.svg")
    assert not (tmp_path / "x.svg").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["no-graphviz"]
    assert isinstance(ExecutableNotFoundError("x"), FileNotFoundError)
    assert render(c4, tmp_path / "x.dot").read_text().startswith("digraph")  # .dot needs no dot
    assert "install Graphviz" in Diagram(c4)._repr_mimebundle_()["text/plain"]


@needs_dot
def test_real_dot_makes_svg_png_and_pdf(c4: treelab.Tree, tmp_path: Path) -> None:
    svg = render(c4, tmp_path / "t.svg", path="4", depth=2, top=3).read_text()
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    ids = {g.get("id") for g in root.iterfind(".//s:g[@class='node']", ns)}
    first = "4/" + best_child(c4.find("4")).name  # --top keeps the first moves by the move-choice rule
    assert {"4", first, "4/more"} <= ids and "4/4" not in ids  # 4/4 is proven lost: the rule ranks it last
    # every UCB1 label in the SVG matches the formula on the counts in the tree
    for g in root.iterfind(".//s:g[@class='edge']", ns):
        parent_id, _, child_id = (g.get("id") or "").partition("->")
        texts = [t.text for t in g.iterfind(".//s:text", ns) if t.text]
        if not texts:
            continue  # a dashed summary edge
        child = c4.find(child_id.split("/"))
        assert float(texts[0]) == pytest.approx(child.ucb1(c4.c), abs=5e-4)
        assert child.parent is c4.find(parent_id.split("/"))
    png = render(c4, tmp_path / "t.png", depth=1, dpi=72).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert 300 < width < 3000 and 150 < height < 1500
    sharp = render(c4, tmp_path / "t2.png", depth=1, dpi=144).read_bytes()
    assert int.from_bytes(sharp[16:20], "big") == pytest.approx(2 * width, rel=0.02)  # dpi reaches Graphviz
    assert render(c4, tmp_path / "t.pdf", depth=1).read_bytes()[:5] == b"%PDF-"


@needs_dot
def test_a_tree_or_node_shows_a_bounded_diagram_by_default(c4: treelab.Tree) -> None:
    from treelab.view.jupyter import DISPLAY_DEPTH, DISPLAY_TOP

    assert c4.size > 300 and len(c4.root.children_view) == 7
    for shown, start in ((c4, c4.root), (c4.find("4"), c4.find("4"))):
        svg = ET.fromstring(shown._repr_mimebundle_()["image/svg+xml"])
        ns = {"s": "http://www.w3.org/2000/svg"}
        ids = [g.get("id") or "" for g in svg.iterfind(".//s:g[@class='node']", ns)]
        drawn = [i for i in ids if not i.endswith("more")]
        expected = select(start, depth=DISPLAY_DEPTH, top_k=DISPLAY_TOP)
        assert len(drawn) == len(expected.nodes) <= 1 + DISPLAY_TOP + DISPLAY_TOP**2
        assert float((svg.get("width") or "").removesuffix("pt")) < 1100  # fits a notebook's width
    assert f"top={DISPLAY_TOP}" in repr(draw(c4)) and draw(c4, top=None).options["top"] is None


@needs_dot
def test_jupyter_display(c4: treelab.Tree) -> None:
    bundle = c4._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    diagram = draw(c4.find("4"), depth=1, game="connect4")
    assert "<svg" in diagram._repr_svg_()
    assert "image/svg+xml" in diagram._repr_mimebundle_()
    assert "depth=1" in repr(diagram)
    assert "<svg" in to_svg(c4, depth=1)
    with pytest.raises(RenderError, match="dot failed"):
        run_dot("digraph { this is not dot")
    row = side_by_side([draw(c4, depth=1), to_svg(c4, path="4", depth=1)], titles=["root", "after 4"])
    html = row._repr_html_()
    assert html.count("<svg") == 2 and "<?xml" not in html and "after 4" in html
    assert "flex-wrap:wrap" in html and "flex:1 1 0" not in html  # wraps; never squeezed into equal thirds
    with pytest.raises(ValueError, match="1 titles for 2 diagrams"):
        side_by_side([draw(c4), draw(c4)], titles=["one"])


def test_radial_layout_draws_the_same_nodes_on_rings(c4: treelab.Tree) -> None:
    tree_dot = to_dot(c4, path="4", depth=2, top=3)
    radial = to_dot(c4, path="4", depth=2, top=3, layout="radial")
    assert 'layout="twopi"' in radial and 'root="4"' in radial and "twopi" not in tree_dot

    def drawn(text: str) -> tuple[set[str], set[tuple[str, str]]]:
        lines = text.splitlines()
        nodes = {m.group(1) for m in map(NODE.match, lines) if m}
        edges = {(m.group(1), m.group(2)) for m in map(EDGE.match, lines) if m}
        return nodes, edges

    assert drawn(radial) == drawn(tree_dot) and drawn(radial)[0]  # the same nodes, edges and UCB1 labels
    assert "weight=0" not in radial  # twopi refuses weight 0 (summary edges get 1)
    with pytest.raises(ValueError, match="unknown layout 'spiral'"):
        to_dot(c4, layout="spiral")


@needs_dot
def test_real_twopi_draws_the_radial_layout(c4: treelab.Tree, tmp_path: Path) -> None:
    svg = render(c4, tmp_path / "r.svg", depth=2, top=3, layout="radial").read_text()
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    boxes = {}
    for g in root.iterfind(".//s:g[@class='node']", ns):
        shape = g.find(".//s:path", ns)  # the node's box (a rounded path), inside its tooltip link
        if shape is None:
            shape = g.find(".//s:polygon", ns)
        assert shape is not None
        numbers = [float(v) for v in re.findall(r"-?\d+\.?\d*", shape.get("d") or shape.get("points") or "")]
        xs, ys = numbers[0::2], numbers[1::2]
        boxes[g.get("id")] = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
    assert {"root", "4", "4/" + best_child(c4.find("4")).name} <= set(boxes)

    def distance(nid: str) -> float:
        (x0, y0), (x, y) = boxes["root"], boxes[nid]
        return math.hypot(x - x0, y - y0)

    # rings: every grandchild lies farther from the centre than the nearest child
    children = [n for n in boxes if n.count("/") == 0 and n not in ("root",) and not n.endswith("more")]
    grandchildren = [n for n in boxes if n.count("/") == 1 and not n.endswith("more")]
    assert children and grandchildren
    assert min(distance(n) for n in grandchildren) > min(distance(n) for n in children)
