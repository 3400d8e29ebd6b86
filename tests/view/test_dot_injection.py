"""A crafted database cannot steer Graphviz: move labels are data, drawn literally.

The database is real (saved by treelab, then edited with sqlite3 as an attacker would), the
command is the real `treelab render`, and the DOT text is read back by Graphviz itself
(``-Tjson0``), so these tests see exactly the nodes and attributes that Graphviz sees.
"""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import run

import treelab
from treelab.view.dot import run_dot, to_dot

IMAGE_LABEL = '<a>, image="{image}", label="pwned", x=<b>'
NODE_LABEL = '<a>]; "INJECTED" [shape=star]; x [y=<b>'
ODD_LABEL = 'q"\\N\\G\nline2 </B><FONT COLOR="red">'
"""Quotes, Graphviz's escString backslash codes, a line break and HTML-like markup."""
SVG = {"s": "http://www.w3.org/2000/svg"}


@pytest.fixture
def crafted(tmp_path: Path) -> tuple[Path, Path]:
    """A Connect Four database whose first moves 1, 3 and 7 were renamed to hostile labels, and a real image."""
    image = tmp_path / "local.png"
    image.write_bytes(run_dot('digraph { a [shape=box, width=1, height=40, style=filled, fillcolor=red] }', "png"))
    tree = treelab.Tree("connect4")
    for moves, winner in (("4453", 1), ("1122", 2), ("3344", None), ("7766", 1), ("4412", 2)):
        tree.record(moves, winner=winner)
    db = tmp_path / "crafted.db"
    tree.save(db)
    conn = sqlite3.connect(db)
    with conn:
        for old, new in (("1", NODE_LABEL), ("3", IMAGE_LABEL.format(image=image)), ("7", ODD_LABEL)):
            conn.execute("UPDATE nodes SET move = ? WHERE depth = 1 AND move = ?", (new, old))
    conn.close()
    return db, image


def labels(image: Path) -> dict[str, str]:
    """The crafted first moves, by the move they replaced."""
    return {"1": NODE_LABEL, "3": IMAGE_LABEL.format(image=image), "7": ODD_LABEL}


def raw(text: str) -> str:
    """``text`` as Graphviz keeps a quoted DOT string before drawing it (escString: ``\\\\`` and ``\\n``)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def graphviz_view(dot: str) -> list[dict[str, str]]:
    """The nodes of ``dot`` as Graphviz parses them: name and attributes."""
    return [o for o in json.loads(run_dot(dot, "json0"))["objects"] if "nodes" not in o]


def test_render_dot_keeps_each_crafted_label_one_node_with_its_own_attributes(
    crafted: tuple[Path, Path], tmp_path: Path
) -> None:
    db, image = crafted
    out = tmp_path / "view.dot"
    result = run("render", str(db), "--depth", "2", "-o", str(out))
    assert result.exit_code == 0, result.output
    nodes = graphviz_view(out.read_text())
    names = {n["name"] for n in nodes}
    crafted_paths = {label: f"{label}/{move}" for move, label in labels(image).items()}  # 1 -> 1, 3 -> 3, 7 -> 7
    assert names == {"root", "4", "4/4"} | {raw(p) for pair in crafted_paths.items() for p in pair}
    assert "INJECTED" not in names and "x" not in names  # no node added
    for node in nodes:
        assert "image" not in node and "y" not in node and node.get("shape") == "box", node  # no attribute added
        assert node["id"] == node["name"]  # the id is the move path, literally
        assert "pwned" not in node["label"] or "&lt;a&gt;" in node["label"]  # the label is our HTML, text escaped


def test_render_svg_draws_the_labels_literally(crafted: tuple[Path, Path], tmp_path: Path) -> None:
    db, image = crafted
    out = tmp_path / "view.svg"
    result = run("render", str(db), "--depth", "1", "-o", str(out))
    assert result.exit_code == 0, result.output
    root = ET.fromstring(out.read_text())
    assert root.find(".//s:image", SVG) is None  # the local image is not embedded
    drawn = {g.get("id"): " ".join(t.text or "" for t in g.iterfind(".//s:text", SVG))
             for g in root.iterfind(".//s:g[@class='node']", SVG)}
    ids = {label.replace("\n", "\\n"): label for label in labels(image).values()}  # a line break in an id: \n
    assert set(drawn) == {"root", "4", *ids}
    drawn = {ids.get(key, key): text for key, text in drawn.items()}
    for label in (NODE_LABEL, IMAGE_LABEL.format(image=image)):
        assert drawn[label].startswith(label + " ")  # the move label as written, then wins/visits
    assert drawn[ODD_LABEL].startswith(ODD_LABEL.replace("\n", " ") + " ")  # the line break drawn as one


def test_render_png_embeds_no_local_image(crafted: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = crafted
    png = tmp_path / "view.png"
    svg = tmp_path / "view.svg"
    for out in (png, svg):
        result = run("render", str(db), "--depth", "1", "--dpi", "72", "-o", str(out))
        assert result.exit_code == 0, result.output
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    root = ET.fromstring(svg.read_text())
    assert root.find(".//s:image", SVG) is None
    svg_w, svg_h = (float(root.get(k, "0").removesuffix("pt")) for k in ("width", "height"))
    assert width == pytest.approx(svg_w, abs=2) and height == pytest.approx(svg_h, abs=2)  # the same layout
    assert height < 1000  # the 40-inch-tall image (2,880 points) would not fit


def test_to_dot_quotes_every_value_from_the_tree(crafted: tuple[Path, Path]) -> None:
    db, image = crafted
    tree = treelab.load(db)
    text = to_dot(tree, depth=2, legend=False)
    for label in labels(image).values():
        for line in text.splitlines():
            if line.startswith("  ") and label.split("\n")[0] in line:
                assert f"id={label}" not in line and "id=<" not in line
    assert not [line for line in text.splitlines() if "\n" in line]
    assert len(graphviz_view(text)) == len([line for line in text.splitlines() if line.startswith('  "')
                                            and "->" not in line])
