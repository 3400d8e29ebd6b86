"""The suite's markers say what they mark, read from the test files themselves.

``browser`` is on every test that takes the Playwright ``browser`` fixture, ``ray`` on every test or
parameter that trains with ``--ray`` / ``ray=True``, ``jax`` on every test that imports mctx or JAX,
``openspiel`` on every test that calls pyspiel, ``notebook`` on every file that runs nbclient or
JupyterLab; each marker is registered in ``pyproject.toml``; ``make test`` selects no marker (it
runs them all) and ``make test-fast`` leaves out slow, jax, ray and notebook (minutes each). The
rules find the floor, not every use: a test may carry a marker for a use they cannot see (an
``"openspiel:..."`` game name).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import tomllib
from paths import ROOT
from paths import TESTS as SUITE

TESTS = sorted(p for p in SUITE.rglob("test_*.py") if p.name != "test_markers.py")
"""Every test module, in every folder of the suite (this one aside: it names the rules' examples)."""
MARKERS = {"slow", "browser", "ray", "jax", "openspiel", "notebook"}

RAY = re.compile(r"ray=True|\"--ray\"|\{\"ray\": True\}")
JAX = re.compile(r"\bimport (jax|mctx)\b|(?<![\w.])(jax|mctx)\.\w")
PYSPIEL = re.compile(r"importorskip\(\"pyspiel\"\)|(?<![\w.])pyspiel\.\w")
NOTEBOOK = re.compile(r"importorskip\(\"nbclient\"\)|^\s*import (nbclient|jupyterlab)\b|\"-m\", \"jupyterlab\"", re.M)


def marks_of(node: ast.expr) -> set[str]:
    """The marker names in ``pytest.mark.X``, ``pytest.mark.X(...)`` or a list of them."""
    found = set()
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) and sub.value.attr == "mark"
                and isinstance(sub.value.value, ast.Name) and sub.value.value.id == "pytest"):
            found.add(sub.attr)
    return found


def module_marks(tree: ast.Module) -> set[str]:
    return {m for node in tree.body if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            for m in marks_of(node.value)}


def segment(lines: list[bytes], node: ast.expr) -> str:
    """The source of ``node`` (``ast.get_source_segment`` splits the whole file on every call)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if first == last:
        return lines[first][node.col_offset:node.end_col_offset].decode()
    middle = lines[first + 1:last]
    return b"\n".join([lines[first][node.col_offset:], *middle, lines[last][:node.end_col_offset]]).decode()


def unmarked_params(source: str, decorator: ast.expr, pattern: re.Pattern[str], marker: str) -> list[str]:
    """Values of a ``parametrize`` list that match ``pattern`` but are not a ``pytest.param(..., marks=marker)``."""
    lines = source.encode().splitlines()
    if not (isinstance(decorator, ast.Call) and len(decorator.args) >= 2 and isinstance(decorator.args[1], ast.List)):
        return []
    bad = []
    for value in decorator.args[1].elts:
        text = segment(lines, value)
        if pattern.search(text) and not (isinstance(value, ast.Call) and any(
                k.arg == "marks" and marker in marks_of(k.value) for k in value.keywords)):
            bad.append(text)
    return bad


def missing_marks(paths: list[Path]) -> list[str]:
    missing = []
    for path in paths:
        source = path.read_text()
        tree = ast.parse(source)
        lines = source.splitlines()
        here = module_marks(tree)
        if NOTEBOOK.search(source) and "notebook" not in here:
            missing.append(f"{path.name}: runs a notebook or JupyterLab, no module-level notebook marker")
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test")):
                continue
            marked = here | {m for d in node.decorator_list for m in marks_of(d) if not isinstance(d, ast.Call)
                             or not (isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize")}
            body = "\n".join(lines[node.body[0].lineno - 1:node.end_lineno])
            args = {a.arg for a in node.args.args}
            wanted = {"browser"} & args
            wanted |= {name for name, rule in (("ray", RAY), ("jax", JAX), ("openspiel", PYSPIEL)) if rule.search(body)}
            missing += [f"{path.name}::{node.name}: {m}" for m in sorted(wanted - marked)]
            for d in node.decorator_list:
                missing += [f"{path.name}::{node.name}[{v}]: ray" for v in unmarked_params(source, d, RAY, "ray")]
    return missing


def test_every_test_that_uses_a_part_carries_its_marker() -> None:
    assert missing_marks(TESTS) == []


def test_the_rules_see_what_they_should(tmp_path: Path) -> None:
    """The rules are not vacuous: each finds its part in the files known to use it."""
    sources = {p.relative_to(ROOT).as_posix(): p.read_text() for p in TESTS}
    assert "browser" in module_marks(ast.parse(sources["tests/view/test_explorer_browser.py"]))
    assert NOTEBOOK.search(sources["tests/docs/test_notebooks.py"])
    assert JAX.search(sources["tests/interop/test_bring_your_own_search.py"])
    assert PYSPIEL.search(sources["tests/games/test_openspiel.py"])
    assert RAY.search(sources["tests/play/test_parallel.py"])
    probe = '@pytest.mark.parametrize("mode", [("--workers", "2"), ("--ray",)])\ndef test_x(mode): pass\n'
    decorator = ast.parse(probe).body[0].decorator_list[0]  # type: ignore[attr-defined]
    assert unmarked_params(probe, decorator, RAY, "ray") == ['("--ray",)']
    bare = tmp_path / "test_bare.py"
    bare.write_text("import pytest\n\n\n@pytest.mark.parametrize('n', [1])\ndef test_page(browser, n):\n"
                    "    pyspiel = pytest.importorskip(\"pyspiel\")\n    treelab.train('c4', db, ray=True)\n")
    assert missing_marks([bare]) == ["test_bare.py::test_page: browser", "test_bare.py::test_page: openspiel",
                                     "test_bare.py::test_page: ray"]
    bare.write_text(bare.read_text().replace("def test_page", "@pytest.mark.openspiel\ndef test_page"))
    assert missing_marks([bare]) == ["test_bare.py::test_page: browser", "test_bare.py::test_page: ray"]


def test_markers_are_registered_and_make_test_runs_them_all() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert {line.split(":")[0] for line in config["markers"]} == MARKERS
    assert "--strict-markers" in config["addopts"]  # a misspelt marker is an error, not a new marker
    used = {m for p in TESTS for m in marks_of(ast.parse(p.read_text()))} - {"parametrize", "skipif", "usefixtures",
                                                                             "filterwarnings", "xfail", "skip"}
    assert used == MARKERS
    makefile = (ROOT / "Makefile").read_text()
    recipes = dict(re.findall(r"^([\w-]+):[^\n]*\n\t([^\n]*pytest[^\n]*)", makefile, re.M))
    assert not re.search(r"\s-m\s+[\"']", recipes["test"]), recipes["test"]  # no marker left out: every one runs
    left_out = re.search(r"\s-m \"not (.*)\"$", recipes["test-fast"])
    assert left_out and set(left_out.group(1).split(" and not ")) == {"slow", "jax", "ray", "notebook"}
