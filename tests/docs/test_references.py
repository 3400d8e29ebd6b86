"""No stale references: every dotted name under ``treelab`` and every file that the project's text mentions exists.

Comments, docstrings, C comments, the README, the docs pages, the notebooks, the tests and the
benchmarks name modules and their members by dotted name (``treelab.store.bulk.build``,
:func:`treelab.mcts.uct.search`). A module renamed or a function moved leaves such names behind;
this test imports each one (the longest prefix that is a module, then attribute by attribute) and
fails on any that does not resolve, and on a ``:mod:`` role whose target is not a module. The same
text names files (``store/dbfile.py``, ``docs/design.md``, ``_loop.c``): a path under one of the project's
folders or packages must exist, a bare file name must be some file's of the repository.

The files at the top are read too (``pyproject.toml``, whose mypy overrides name modules, the ``Makefile``,
``mkdocs.yml``, ``setup.py``, ``.ci/``); a bare file name is checked against the files git lists (new ones
included, not what a build or a run left beside them); a test named by its file
(``tests/docs/test_docs.py::test_the_python_tour_runs``) must be defined there. The checkers take any files:
``tests/docs/test_reference_checkers.py`` shows each of them failing on a stale text.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import types
from pathlib import Path

from paths import ROOT

SCANNED = ("treelab", "tests", "benchmarks", "docs", "data", "notebooks", ".ci")
"""The folders whose text is read (with the files of ``TOP``)."""

TOP = ("README.md", "pyproject.toml", "Makefile", "mkdocs.yml", "setup.py")
"""The files at the top of the repository whose text is read."""

SUFFIXES = {".py", ".c", ".h", ".md", ".ipynb", ".yml", ".toml"}

DOTTED = re.compile(r"(?<![\w./~-])(:mod:`~?)?~?(treelab(?:\.[A-Za-z_]\w*)+)(?![\w-])")
"""``treelab.`` then dotted identifiers, not inside a path (``src/treelab.x``) nor ``treelab.egg-info``;
group 1 is a Sphinx ``:mod:`` role in front of it."""

MADE_BY_TESTS = {"treelab.games.probe": "tests/design/test_layers.py writes this module for one test and removes it"}
"""Names that exist only while a test runs, each with the file that names it."""

FORMER_NAMES = {"treelab.fastpath": "benchmarks/search.py"}
"""Modules of earlier versions, each with the one file allowed to name them: ``benchmarks/search.py
--against DIR`` times an older checkout, where the compiled parts were still ``treelab.fastpath``."""


def texts() -> list[Path]:
    """The files whose text is read: ``TOP``, and those of ``SCANNED`` with a suffix of ``SUFFIXES`` (``.ci/``: all)."""
    files = [ROOT / name for name in TOP]
    for folder in SCANNED:
        files += [p for p in sorted((ROOT / folder).rglob("*")) if p.is_file()
                  and (p.suffix in SUFFIXES or folder == ".ci")
                  and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts]
    return files


def relative(path: Path) -> str:
    """A file's name as the messages give it: from the repository's root (a file elsewhere: its whole path)."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def mentions(files: list[Path] | None = None) -> dict[str, dict[str, bool]]:
    """Every dotted name in ``files`` (all of ``texts()``) -> {file: whether one mention there is a ``:mod:`` role}."""
    found: dict[str, dict[str, bool]] = {}
    for path in texts() if files is None else files:
        for match in DOTTED.finditer(path.read_text(errors="replace")):
            name = match.group(2).rstrip(".")
            where = found.setdefault(name, {})
            rel = relative(path)
            where[rel] = where.get(rel, False) or bool(match.group(1))
    return found


def resolve(name: str) -> object:
    """The module or object a dotted name names; ``LookupError`` when nothing does.

    The compiled extension (``treelab._speedups``) is optional: where it was not built, its name and
    the names in it count as existing when its C source is there (``tests/core/test_compiled_playouts.py`` checks
    its members where it is built).
    """
    parts = name.split(".")
    if len(parts) >= 2 and (ROOT / "treelab" / f"{parts[1]}.c").is_file() and importlib.util.find_spec(
            ".".join(parts[:2])) is None:
        return types.ModuleType(name)
    for length in range(len(parts), 0, -1):
        module = ".".join(parts[:length])
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            continue
        if parts[length - 1] == "__main__":  # importing it would run the command line
            if length == len(parts):
                return spec
            raise LookupError(name)
        value: object = importlib.import_module(module)
        for attribute in parts[length:]:
            if not hasattr(value, attribute):
                raise LookupError(name)
            value = getattr(value, attribute)
        return value
    raise LookupError(name)


def test_the_scan_finds_the_names_it_should() -> None:
    """The scan reads docstrings, C comments and markdown: names known to be written there are found."""
    found = mentions()
    assert "treelab/_rows.c" in found["treelab.store.bulk.build"]
    assert "treelab/mcts/puct.py" in found["treelab.mcts.evaluators.Evaluator"]
    assert found["treelab.store.schema"]["treelab/store/persistence.py"]  # a :mod: role
    assert len(found) >= 30


def stale_names(found: dict[str, dict[str, bool]]) -> list[str]:
    """The dotted names of ``found`` (as ``mentions`` gives them) naming nothing, or a ``:mod:`` that is no module."""
    stale = []
    for name, where in sorted(found.items()):
        if name in MADE_BY_TESTS:
            continue
        if name in FORMER_NAMES:
            if not set(where) <= {FORMER_NAMES[name], "tests/docs/test_references.py"}:
                stale.append(f"{name}: a former name (in {', '.join(sorted(where))})")
            continue
        try:
            value = resolve(name)
        except LookupError:
            stale.append(f"{name} (in {', '.join(sorted(where))})")
            continue
        roles = [f for f, role in where.items() if role]
        if roles and not isinstance(value, types.ModuleType):
            stale.append(f":mod:`{name}` is not a module (in {', '.join(sorted(roles))})")
    return stale


def test_every_dotted_treelab_name_exists() -> None:
    assert stale_names(mentions()) == [], "stale references: rename them to what exists now"


def test_names_made_by_tests_are_still_named_and_absent() -> None:
    found = mentions()
    for name, reason in MADE_BY_TESTS.items():
        assert name in found, f"{name} is no longer mentioned: drop it from MADE_BY_TESTS"
        assert importlib.util.find_spec(name) is None, reason


FILE = re.compile(r"(?<![\w./~:<%-])((?:[\w.-]+/)*[\w-]+\.(?:py|c|h|md|toml|ipynb|js|css|html))(?![\w/-])")
"""A file name or path in the text (``view/explorer/svgdot.py``, ``DESIGN.md``, ``_loop.c``), not a URL's tail,
a ``<header.h>`` or an escaped path."""

FOREIGN_FILES = {
    "docs/GraphSearch.md": "KataGo's notes on graph search, cited",
    "docs/src/tutorial/connect_four.md": "Pons' Connect Four tutorial, cited",
    "MCTS.py": "alpha-zero-general's search, cited",
    "Python.h": "CPython's header",
    "structmember.h": "CPython's header",
    "fastpath.py": "an earlier version's module (benchmarks/search.py --against)",
    "probe.py": "written by tests/design/test_layers.py for one test",
    "treelab/games/probe.py": "written by tests/design/test_layers.py for one test",
    "plugin_games.py": "written by tests/games/test_bring_your_own_game.py",
    "train_me.py": "written by tests/store/test_writer_process.py",
    "stepper.ipynb": "written by tests/view/test_stepper_in_jupyterlab.py",
    "test_bare.py": "written by tests/design/test_markers.py",
}
"""Files the text names that are not the repository's, each with why."""

FORMER_FILES = {"docs/notes/store.md": {"writers.py", "lean.py", "grow.py", "combine.py"}}
"""Files of earlier layouts, named by the one page that tells the history of the names."""

NOT_YET = {"treelab/bulk.py": "treelab/_rows.c", "treelab/search.py": "treelab/_nodes.c"}
"""Stale names in C sources being rewritten this round by the compiled PUCT work (each with its file); a name
here makes the test fail once it is gone, so the list cannot go stale."""

_FOLDERS = {"treelab", "tests", "benchmarks", "docs", "data", "notebooks"}

TEST_ID = re.compile(r"(?<![\w./~:<%-])((?:[\w.-]+/)*test_\w+\.py)::(\w+)")
"""A test named by its file, as pytest prints it (``tests/docs/test_docs.py::test_the_python_tour_runs``,
a parameter's ``[id]`` after it left out)."""


def file_mentions(files: list[Path] | None = None) -> dict[str, set[str]]:
    """Every file name or path in ``files`` (all of ``texts()``) -> the files mentioning it."""
    found: dict[str, set[str]] = {}
    examples = {Path(__file__).resolve(), Path(__file__).resolve().with_name("test_reference_checkers.py")}
    scanned = [p for p in texts() if p not in examples]  # these name examples (this one checks its own below)
    for path in scanned if files is None else files:
        for match in FILE.finditer(path.read_text(errors="replace")):
            found.setdefault(match.group(1), set()).add(relative(path))
    return found


def named_tests(files: list[Path] | None = None) -> dict[tuple[str, str], set[str]]:
    """Every (test file, test name) in ``files`` (all of ``texts()``) -> the files mentioning it."""
    found: dict[tuple[str, str], set[str]] = {}
    for path in texts() if files is None else files:
        for match in TEST_ID.finditer(path.read_text(errors="replace")):
            found.setdefault((match.group(1), match.group(2)), set()).add(relative(path))
    return found


def repository_files() -> set[str]:
    """The repository's files, as git lists them (tracked, and new ones not ignored); outside a git checkout,
    every file under the root but those of the venv, of git and of caches."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True)
    if listed.returncode == 0:
        return {line for line in listed.stdout.splitlines() if line}
    skipped = {".venv", ".git", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "site"}
    return {relative(p) for p in ROOT.rglob("*") if p.is_file() and not skipped & set(p.relative_to(ROOT).parts)}


def _file_exists(ref: str, where: str, names: set[str], packages: set[str]) -> bool | None:
    """Whether ``ref`` (mentioned in ``where``) names a file of the repository; None: not a file reference."""
    first, _, _ = ref.partition("/")
    if "/" in ref:
        if first not in _FOLDERS | packages:
            return None  # another project's path, or a module path of a foreign package
        return any(p.exists() for p in (ROOT / ref, ROOT / "treelab" / ref, (ROOT / where).parent / ref))
    if ref.endswith((".c", ".h")) and not ref.startswith("_"):
        return None  # ``self.c``, ``tree.c``: attributes, not files (the project's C files start with ``_``)
    return ref in names


def stale_files(found: dict[str, set[str]], files: set[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The file names of ``found`` (as ``file_mentions`` gives them) that name no file of ``files`` (the
    repository's, as ``repository_files`` gives them), and where each name of ``NOT_YET`` still is."""
    packages = {p.name for p in (ROOT / "treelab").iterdir() if p.is_dir() and not p.name.startswith("__")}
    names = {Path(f).name for f in files}
    stale, still = [], {}
    for ref, where in sorted(found.items()):
        if ref in FOREIGN_FILES:
            continue
        rest = {w for w in where if ref not in FORMER_FILES.get(w, set())}
        missing = sorted(w for w in rest if _file_exists(ref, w, names, packages) is False)
        if ref in NOT_YET:
            still[ref] = missing
        elif missing:
            stale.append(f"{ref} (in {', '.join(missing)})")
    return stale, still


def stale_tests(found: dict[tuple[str, str], set[str]]) -> list[str]:
    """The tests of ``found`` (as ``test_mentions`` gives them) that their file does not define (a file that
    is not there is ``stale_files``' to report)."""
    stale = []
    for (ref, name), where in sorted(found.items()):
        for w in sorted(where):
            path = next((p for p in (ROOT / ref, (ROOT / w).parent / ref) if p.is_file()), None)
            if path is not None and not re.search(rf"^\s*(?:async )?(?:def|class) {name}\b", path.read_text(), re.M):
                stale.append(f"{ref}::{name} (in {w})")
    return stale


def test_every_file_the_text_names_exists() -> None:
    stale, still = stale_files(file_mentions(), repository_files())
    named_here = {ref for why in FOREIGN_FILES.values() for ref in FILE.findall(why) if ref.startswith("tests/")}
    assert named_here and sorted(ref for ref in named_here if not (ROOT / ref).is_file()) == []
    assert stale == [], "files named that do not exist: name what exists now"
    assert {ref: where for ref, where in still.items() if where} == {ref: [w] for ref, w in NOT_YET.items()}


def test_every_test_the_text_names_is_defined_where_it_says() -> None:
    found = named_tests()
    assert any(ref.startswith("tests/") and "docs/development.md" in where for (ref, _), where in found.items())
    assert stale_tests(found) == [], "tests named that their file does not define: name what exists now"


def test_the_file_scan_reads_docs_comments_and_pyproject() -> None:
    found = file_mentions()
    assert "treelab/mcts/choice.py" in found["docs/design.md"]  # a docstring
    assert "docs/notes/store.md" in found["store/binding.py"]  # a page
    assert "pyproject.toml" in mentions()["treelab.tree"]  # the mypy overrides' module names are checked
    assert "Makefile" in found["tests/docs/test_site.py"]  # the files at the top are read
    assert "mkdocs.yml" in found["docs/reference_hooks.py"]
