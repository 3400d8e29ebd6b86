"""The project's documentation and packaging say what is true: the design page's layout table is the tree
of files in the order of the layers, the README's and the manual's examples run and leave no untracked
files, the type hints and the extension ship."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
from pathlib import Path

import click
import pytest
from paths import ROOT, TESTS

import treelab
from tests.design.test_layers import LAYERS, import_graph
from treelab.cli import cli

PACKAGE = ROOT / "treelab"


def table_rows(markdown: str, heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading`` (header and rule left out)."""
    section = markdown.split(heading, 1)[1]
    block: list[str] = []
    for line in section.splitlines():
        if line.startswith("|"):
            block.append(line)
        elif block:
            break
    assert block, f"no table after {heading!r}"
    return [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in block[2:]]


def names(cell: str) -> list[str]:
    """The names in backticks in a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def manual_pages() -> list[Path]:
    """The README and every page of the manual (docs/, the helpers' notes included)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def readme_layout() -> list[list[str]]:
    """The layout table of the design page."""
    return table_rows((ROOT / "docs" / "design.md").read_text(), "## Layout")


def test_the_layout_table_names_every_part_and_module() -> None:
    rows = readme_layout()
    first = [name for row in rows for name in names(row[0])]
    tops = sorted(
        [f"treelab/{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
        + [f"treelab/{p.name}" for p in PACKAGE.glob("*.py") if p.name != "__main__.py"]
    )
    listed = {n if n.startswith("treelab/") else f"treelab/{n}" for n in first}
    assert [t for t in tops if t not in listed] == [], "add these to the layout table of docs/design.md"
    for compiled in PACKAGE.glob("*.c"):
        assert compiled.name in first, compiled.name
    for row in rows:
        for name in names(row[0]):
            path = ROOT / (name if name.startswith("treelab/") else f"treelab/{name}")
            assert path.exists(), f"the layout table names {name}, which does not exist"
        part = names(row[0])[0]
        if not part.endswith("/"):
            assert names(row[1]) == [], f"{part}: only a subpackage's row lists modules"
            continue
        folder = ROOT / part
        modules = {p.name for p in folder.glob("*.py") if p.name != "__init__.py"}
        modules |= {f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file()}
        shown = set(names(row[1]))
        assert sorted(modules - shown) == [], f"add to the README's layout row of {part}"
        assert sorted(shown - modules) == [], f"the README's layout row of {part} names modules that do not exist"


def test_the_layout_table_reads_bottom_up_by_layer() -> None:
    """The rows go up the layers of tests/design/test_layers.py (core, mcts/store, ... cli), the front door last."""
    parts = [names(row[0])[0] for row in readme_layout()]
    assert parts[-1] == "treelab/__init__.py"
    layers = [LAYERS[part.removeprefix("treelab/").split("/")[0].removesuffix(".py")] for part in parts[:-1]]
    assert layers == sorted(layers), list(zip(parts, layers, strict=False))
    assert set(layers) == {0, 1, 2, 3, 4}


ROOMS = {"store/": "treelab.store", "mcts/": "treelab.mcts", "play/training/": "treelab.play.training"}
"""The parts whose rooms the design page lists bottom up, under "The rooms of ...", each with its package."""


def test_the_rooms_are_listed_bottom_up() -> None:
    """Every module of ``store/``, ``mcts/`` and ``play/training/`` is in the design page's list of rooms, and
    imports (inside functions and under ``TYPE_CHECKING`` included) only rooms of its part listed before it."""
    text = (ROOT / "docs" / "design.md").read_text().split("### The rooms of", 1)[1].split("\n### ", 1)[0]
    blocks = re.split(r"^`([\w/]+/)`.*:$", text, flags=re.M)
    listed = dict(zip(blocks[1::2], blocks[2::2], strict=True))
    assert sorted(listed) == sorted(ROOMS)
    graph = import_graph()
    for folder, package in ROOMS.items():
        path = PACKAGE / folder.removesuffix("/")
        modules = {p.stem for p in path.glob("*.py")  # a package's __init__ only when it holds more than a docstring
                   if p.stem != "__init__" or len(ast.parse(p.read_text()).body) > 1}
        order = list(dict.fromkeys(m.removesuffix(".py") for m in re.findall(r"`(\w+\.py)`", listed[folder])))
        order = [m for m in order if m in modules or (m == "__init__" and (path / "__init__.py").is_file())]
        assert sorted(set(order) & modules) == sorted(modules), f"list every module of {folder} in docs/design.md"
        for i, module in enumerate(order):
            name = package if module == "__init__" else f"{package}.{module}"
            inside = {t.removeprefix(package + ".") for t in graph[name] if t.startswith(package + ".")}
            assert inside <= set(order[:i]), f"{folder}{module}.py imports {sorted(inside - set(order[:i]))}"


def test_readme_examples_leave_no_untracked_files() -> None:
    """Every file the examples of the README and the manual write (`c4.db`, `subtree.png`...) is tracked or ignored."""
    if subprocess.run(["git", "rev-parse"], cwd=ROOT, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout: nothing can be left untracked")
    text = "\n".join(page.read_text() for page in manual_pages())
    written = set(re.findall(r"(?:--db|-o)\s+([\w./-]+\.\w+)", text))
    written |= set(re.findall(r"""(?:save|load|train)\((?:"\w+",\s*)?"([\w./-]+\.db)\"""", text))
    assert {"c4.db", "mine.db", "subtree.png"} <= written  # the reader finds the README's examples
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split())
    fresh = sorted(name for name in written if name not in tracked)
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *fresh], cwd=ROOT, capture_output=True,
                             text=True).stdout.split()
    assert sorted(set(fresh) - set(ignored)) == [], "ignore these in .gitignore, or write them under an ignored folder"
    assert not {"data/connect4.db", "data/tictactoe.db"} & set(ignored)  # the sample trees stay tracked


def pyproject_table(name: str) -> str:
    """The text of one ``[table]`` of pyproject.toml (tomllib is not in Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    match = re.search(rf"^\[{re.escape(name)}\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    assert match, name
    return match.group(1)


def test_the_development_page_lists_every_folder_of_the_suite() -> None:
    """Every test module sits in a folder of tests/ that docs/development.md's table lists, and says what it holds."""
    listed = [names(row[0])[0] for row in table_rows((ROOT / "docs" / "development.md").read_text(),
                                                      "## Where the tests live")]
    folders = sorted(f"tests/{p.parent.relative_to(TESTS).as_posix()}/" for p in TESTS.glob("*/__init__.py"))
    assert sorted(listed) == folders
    for folder in folders:
        assert ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text())), f"{folder}: say what it holds"
    modules = sorted(p.relative_to(TESTS).parent.as_posix() for p in TESTS.rglob("test_*.py"))
    assert set(modules) == {f.removeprefix("tests/").rstrip("/") for f in folders}, "put each test in a folder"


def test_no_test_names_an_issue_number() -> None:
    """A test, its file, docstrings and comments say what it holds; an issue's number says nothing to a reader."""
    numbered = re.compile(r"\bissues?[ #]*[0-9]+|(?<![&\w}])#[0-9]+\b", re.I)
    assert numbered.search("as issue " + "14 wrote") and numbered.search("(#" + "31)")  # (spelt so as not to be one)
    assert not numbered.search("&#160; db#1 {db}#2")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in sorted(TESTS.rglob("*.py"))
             for n, line in enumerate([p.name, *p.read_text().splitlines()]) if numbered.search(line)]
    assert found == [], "say what the test holds instead"


def test_type_hints_and_every_data_file_ship() -> None:
    """py.typed and every other file of the package that is not Python source is in the package data."""
    assert (PACKAGE / "py.typed").is_file()
    patterns: dict[str, list[str]] = {}
    for line in pyproject_table("tool.setuptools.package-data").splitlines():
        if match := re.match(r'^"?([\w.]+)"?\s*=\s*\[(.*)\]', line):
            patterns[match.group(1)] = re.findall(r'"([^"]+)"', match.group(2))
    assert "py.typed" in patterns["treelab"]
    data = [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            and p.suffix not in (".py", ".pyc", ".so", ".c", ".h")]
    for path in data:
        shipped = any(
            path.relative_to(ROOT / package.replace(".", "/")).match(pattern)
            for package, globs in patterns.items() if path.is_relative_to(ROOT / package.replace(".", "/"))
            for pattern in globs
        )
        assert shipped, f"{path.relative_to(ROOT)} is not in pyproject.toml's package data: it would not be installed"


def test_the_extension_is_declared_once_in_setup_py() -> None:
    """setuptools' ext-modules table in pyproject.toml is experimental (BuildBackendWarning on every build);
    setup.py declares the extension, with every C source of the package."""
    assert "[[tool.setuptools.ext-modules]]" not in (ROOT / "pyproject.toml").read_text()
    calls = [node for node in ast.walk(ast.parse((ROOT / "setup.py").read_text()))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Extension"]
    assert len(calls) == 1
    keywords = {k.arg: ast.literal_eval(k.value) for k in calls[0].keywords}
    assert sorted(keywords["sources"]) == sorted(f"treelab/{p.name}" for p in PACKAGE.glob("*.c"))
    assert sorted(keywords["depends"]) == sorted(f"treelab/{p.name}" for p in PACKAGE.glob("*.h"))
    assert keywords["optional"] is True


def test_make_test_runs_the_linters_and_the_doctests() -> None:
    makefile = (ROOT / "Makefile").read_text()
    target = re.search(r"^test:(.*)$", makefile, re.M)
    assert target and "lint" in target.group(1).split()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "ruff check" in lint and "mypy treelab" in lint
    pytest_config = pyproject_table("tool.pytest.ini_options")
    assert re.search(r'^addopts = ".*--doctest-modules.*"', pytest_config, re.M)
    assert re.search(r'^testpaths = \[.*"treelab".*\]', pytest_config, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def command_lines(page: Path) -> list[list[str]]:
    """Every ``.venv/bin/treelab ...`` command line of a page, as arguments (comments dropped)."""
    text = page.read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        if ".venv/bin/treelab " in line:
            words = shlex.split(line.split(".venv/bin/treelab ", 1)[1].split("`", 1)[0], comments=True)
            found.append(words)
    return found


def test_every_command_line_of_the_readme_and_the_manual_parses() -> None:
    """The command lines of the README and the docs pages are accepted by the real commands (parsed, not run)."""
    readme = command_lines(ROOT / "README.md")
    assert len(readme) >= 10 and ["info", "c4.db"] in readme
    lines = [words for page in manual_pages() for words in command_lines(page)]
    assert len(lines) >= 30
    for words in lines:
        with cli.make_context("treelab", list(words), resilient_parsing=False) as group:
            name, command, rest = cli.resolve_command(group, list(words))
            assert command is not None, words
            try:
                command.make_context(name or "", rest, parent=group)
            except click.UsageError as exc:
                pytest.fail(f"treelab {shlex.join(words)}: {exc.format_message()}")


def python_block(page: Path, heading: str | None = None) -> str:
    """The first ```python block of a page (after ``heading`` when given)."""
    text = page.read_text()
    if heading:
        text = text.split(heading, 1)[1]
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_python_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python API tour's block runs as written (in an empty folder, where it writes its files)."""
    code = python_block(ROOT / "docs" / "guide" / "python.md")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/guide/python.md", "exec"), namespace)
    tree, part, summary = namespace["tree"], namespace["part"], namespace["summary"]
    assert tree.root.nb_visit == 5001  # type: ignore[attr-defined]  # one record and 5,000 simulations
    assert part.find("44").nb_visit == tree.find("44").nb_visit  # type: ignore[attr-defined]
    assert summary.games == 20  # type: ignore[attr-defined]
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["c4.db", "mine.db"]


def test_the_readme_notebook_session_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README tour's Python block runs as written: it trains, loads a subtree, draws it and analyses."""
    code = python_block(ROOT / "README.md", "## A five-minute tour")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md (five-minute tour)", "exec"), namespace)
    summary, part, result = namespace["summary"], namespace["part"], namespace["result"]
    assert summary.games == 20  # type: ignore[attr-defined]
    assert part.find("4").nb_visit > 0  # type: ignore[attr-defined]
    assert result.to_dict()["moves"] == "4453"  # type: ignore[attr-defined]
    diagram = treelab.draw(part, path="4", depth=2, top=3)
    assert "<svg" in diagram._repr_svg_()  # type: ignore[attr-defined]
