"""The reference checkers of ``test_references`` fail on stale text: a page, a module's comment and docstring and a
``pyproject.toml`` written here, each naming a module, a file and a test that do not exist beside ones that do."""

from __future__ import annotations

from pathlib import Path

from tests.docs.test_references import (
    file_mentions,
    mentions,
    named_tests,
    repository_files,
    stale_files,
    stale_names,
    stale_tests,
)


def test_each_checker_fails_on_a_stale_text(tmp_path: Path) -> None:
    """Stale references in a page, a module's comment and docstring and a ``pyproject.toml`` are each reported;
    the same text naming what exists is not. (The names are put together as the test runs: the repository's
    scan reads this file's dotted names, and leaves out its file names.)"""
    package, test = "treelab", "test"
    page, module, pyproject = tmp_path / "page.md", tmp_path / "module.py", tmp_path / "pyproject.toml"
    page.write_text(f"`{package}.tree.Tree` and :mod:`{package}.tree.Tree`; `{package}.mcts.no_such_module`;\n"
                    f"`tests/docs/{test}_references.py` and `tests/docs/{test}_gone.py`, `treelab/tree.py`,\n"
                    f"`store/no_such_module.py`, `no_such_page.md`, `design.md` and `_speedups.h`;\n"
                    f"`tests/docs/{test}_references.py::{test}_every_file_the_text_names_exists` and\n"
                    f"`tests/docs/{test}_references.py::{test}_that_was_renamed[case]`.\n")
    module.write_text(f'"""Reads :func:`{package}.store.no_such_function`."""\n\n# see {package}.no_such_part.Thing\n')
    pyproject.write_text(f'[[tool.mypy.overrides]]\nmodule = ["{package}.tree", "{package}.former_module"]\n')
    files = [page, module, pyproject]
    assert stale_names(mentions(files)) == [
        f"{package}.former_module (in {pyproject})", f"{package}.mcts.no_such_module (in {page})",
        f"{package}.no_such_part.Thing (in {module})", f"{package}.store.no_such_function (in {module})",
        f":mod:`{package}.tree.Tree` is not a module (in {page})"]
    stale, _ = stale_files(file_mentions(files), repository_files())
    assert stale == [f"no_such_page.md (in {page})", f"store/no_such_module.py (in {page})",
                     f"tests/docs/{test}_gone.py (in {page})"]
    renamed = f"tests/docs/{test}_references.py::{test}_that_was_renamed"
    assert stale_tests(named_tests(files)) == [f"{renamed} (in {page})"]
    without = repository_files() - {"docs/design.md"}  # a bare name is checked against the repository's files
    assert stale_files(file_mentions(files), without)[0] == sorted([*stale, f"design.md (in {page})"])
