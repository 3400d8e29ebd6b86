"""The explorer's lean ``dot``: the same diagram as a plain ``dot``, from only the SVG plugins, with a safe fallback.

Real Graphviz, real database files; speed is measured in ``benchmarks/explorer.py``, never asserted here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from treelab import Limit, Tree, load, search
from treelab.errors import RenderError
from treelab.view.dot import run_dot, source_dot
from treelab.view.explorer import diagram
from treelab.view.explorer import svgdot as lean
from treelab.view.explorer.data import TreeFile
from treelab.view.explorer.diagram import draw

_NODE = re.compile(r'<g id="([^"]+)" class="node">')


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = Tree("connect4")
    search(tree, limit=Limit(iterations=3000), rng=7)
    path = tmp_path_factory.mktemp("lean") / "c4.db"
    tree.save(path)
    return path


def test_the_private_plugin_directory_holds_only_the_svg_plugins() -> None:
    folder = lean.plugin_dir()
    assert folder is not None  # this machine's Graphviz has the plugins: the lean path is tested for real
    libraries = sorted(p.name.split(".")[0] for p in folder.glob("libgvplugin_*"))
    assert libraries == sorted(f"libgvplugin_{name}" for name in lean.PLUGINS)
    assert any(folder.glob("config*"))  # written by `dot -c` for these alone
    assert lean.plugin_dir() == folder  # made once a process


@pytest.mark.parametrize(("depth", "top", "radial"), [(2, 3, False), (3, 2, False), (2, 4, True)])
def test_lean_and_plain_dot_draw_the_same_nodes_and_edges(db: Path, depth: int, top: int, radial: bool) -> None:
    text = source_dot(db, path="4", depth=depth, top=top, layout="radial" if radial else "tree")
    assert ('layout="twopi"' in text or "layout=twopi" in text) is radial  # twopi: the neato plugin
    lean_svg, plain = lean.lean_svg(text), run_dot(text, "svg").decode()
    assert lean_svg.startswith("<?xml") and lean_svg.rstrip().endswith("</svg>")
    assert _NODE.findall(lean_svg) == _NODE.findall(plain) and len(_NODE.findall(plain)) > 3
    assert lean_svg.count('class="edge"') == plain.count('class="edge"')
    assert re.findall(r"<title>(.*?)</title>", lean_svg) == re.findall(r"<title>(.*?)</title>", plain)


def test_the_explorer_diagram_is_the_lean_one(db: Path) -> None:
    source = TreeFile.open(db)
    svg, kids = draw(source, "4", depth=2, top=3, replay=None)
    assert svg == lean.lean_svg(source_dot(db, path="4", depth=2, top=3))
    node = load(db).find("4")
    assert kids == [f"4{k.name}" for k in sorted(node.children_view, key=lambda k: -k.nb_visit)][:3]  # the drawn ones


def test_the_likely_next_diagrams_are_laid_out_ahead_once(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[str] = []

    def counting(source: TreeFile, path: str, **options: Any) -> tuple[str, list[str]]:
        drawn.append(path)
        return draw(source, path, **options)

    monkeypatch.setattr(diagram, "draw", counting)
    cache, source = diagram.DiagramCache(), TreeFile.open(db)
    first = cache.svg(source, "4", depth=2, top=3, replay=None)
    _, kids = draw(source, "4", depth=2, top=3, replay=None)
    ahead = kids[:diagram.PREFETCH]
    assert len(ahead) == diagram.PREFETCH == 2
    for kid in ahead:  # laid out ahead (or being laid out): a request waits for it, never draws it again
        assert cache.svg(source, kid, depth=2, top=3, replay=None) == draw(source, kid, depth=2, top=3, replay=None)[0]
    assert cache.svg(source, "4", depth=2, top=3, replay=None) == first
    assert cache.settled(timeout=60)
    assert sorted(drawn[:1 + len(ahead)]) == sorted(["4", *ahead])  # each once: the request's, then ahead
    assert drawn.count("4") == 1 and all(drawn.count(kid) == 1 for kid in ahead)


def test_without_the_lean_path_the_plain_dot_draws(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = source_dot(db, path="4", depth=1, top=3)
    monkeypatch.setattr(lean, "_made", [None])  # as on a Graphviz whose plugins are not where they are looked for
    assert lean.lean_svg(text) == run_dot(text, "svg").decode()


def test_bad_dot_fails_in_one_line_as_the_plain_dot_does() -> None:
    with pytest.raises(RenderError, match=r"^dot failed with exit code 1: .*syntax error"):
        lean.lean_svg("digraph { a -> ; }")
