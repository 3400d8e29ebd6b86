"""The front door: at most about 60 advertised names, each one the docs show; every name the README, the guides
and the notebooks call resolves; errors in ``treelab.errors``; importing treelab stays light."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

from paths import ROOT

import treelab


def test_every_public_name_resolves() -> None:
    assert len(set(treelab.__all__)) == len(treelab.__all__)
    for name in treelab.__all__:
        assert getattr(treelab, name) is not None, name
    assert set(treelab.__all__) <= set(dir(treelab))


def test_import_does_not_pull_in_the_heavy_parts() -> None:
    heavy = "('numpy', 'sqlite_utils', 'graphviz', 'matplotlib')"
    code = f"import sys, treelab; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_python_api_session_from_the_readme(tmp_path) -> None:
    tree = treelab.Tree("connect4")
    tree.record("4453", winner=1)
    node = tree.find("445")
    assert (node.nb_visit, node.nb_win) == (1, 1)
    treelab.search(tree, "44", limit=treelab.Limit(iterations=300), rng=1)
    db = tmp_path / "c4.db"
    assert tree.save(db) == len(tree)
    again = treelab.load(db)
    assert again.root.nb_visit == 301 and len(again) == len(tree)
    part = treelab.load(db, path="44", depth=1)
    assert part.find("44").nb_visit == tree.find("44").nb_visit
    result = treelab.analyse("connect4", "4453", iterations=200, seed=1)
    assert result.to_dict()["iterations"] == 200


def test_front_door_names_stay_functions_after_their_modules_load() -> None:
    """`treelab.search` and `treelab.render` are the functions, whatever imported the modules first."""
    probe = (
        "import treelab.mcts.uct, treelab.view.dot, treelab.store.persistence, treelab, types;"
        "print(all(isinstance(getattr(treelab, n), types.FunctionType)"
        " for n in ('search', 'render', 'save', 'load', 'analyse')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
    assert importlib.import_module("treelab.mcts.uct").search is treelab.search


USER_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md")),
             *sorted((ROOT / "notebooks").glob("*.ipynb"))]
"""What a user reads: the README, the guides and the notebooks (what they call is the front door's brief)."""

MAX_ADVERTISED = 60


def _ruff_order(name: str) -> tuple[int, str]:
    """ruff's RUF022 order for ``__all__``: SCREAMING_CASE, then CamelCase, then the rest, each alphabetical."""
    return (0 if name.upper() == name else 1 if name[0].isupper() else 2, name)


def _dotted_in(paths: list[Path]) -> set[str]:
    """Every first name after ``treelab.`` in these files (``search`` of ``treelab.search(...)``)."""
    return {m for p in paths for m in re.findall(r"(?<![\w.])treelab\.(\w+)", p.read_text())}


def test_the_front_door_advertises_at_most_sixty_sorted_names_that_resolve() -> None:
    names = treelab.__all__
    assert 30 <= len(names) <= MAX_ADVERTISED, len(names)
    assert names == sorted(names, key=_ruff_order)
    assert len(set(names)) == len(names)
    for name in names:
        assert getattr(treelab, name) is not None, name
    errors = {n for n in vars(treelab.errors) if isinstance(getattr(treelab.errors, n), type)
              and issubclass(getattr(treelab.errors, n), BaseException)}
    assert set(names) & errors == {"TreelabError"}  # the errors live in treelab.errors


def test_every_advertised_name_is_one_the_docs_show() -> None:
    """The front door holds the names a user calls: each appears in the README, a guide, a notebook or a note."""
    text = "\n".join(p.read_text() for p in [*USER_DOCS, *sorted((ROOT / "docs" / "notes").glob("*.md"))])
    unseen = [n for n in treelab.__all__ if n != "__version__" and not re.search(rf"\b{n}\b", text)]
    assert unseen == []


def test_every_treelab_name_the_readme_guides_and_notebooks_use_resolves() -> None:
    used = _dotted_in(USER_DOCS)
    assert {"Tree", "load", "search", "analyse", "train", "draw", "trace", "Limit"} <= used  # the files are read
    unresolved = []
    for name in sorted(used):
        if importlib.util.find_spec(f"treelab.{name}") is not None:
            continue  # a module: treelab.analysis.shape, treelab.errors
        if not hasattr(treelab, name):
            unresolved.append(name)
    assert unresolved == []


def test_every_error_class_is_reachable_as_treelab_errors_x() -> None:
    """In a fresh process: `import treelab` alone makes `treelab.errors.<name>` work for every error class, each a
    TreelabError, and the names the longer front door once offered (`treelab.IllegalMoveError`,
    `treelab.TreeNode`) still resolve, with no warning."""
    code = (
        "import warnings; warnings.simplefilter('error')\n"
        "import inspect, treelab\n"
        "classes = [n for n, v in vars(treelab.errors).items() if inspect.isclass(v) and issubclass(v, Exception)"
        " and v.__module__ == 'treelab.errors']\n"
        "assert classes and all(n in treelab.errors.__all__ for n in classes), classes\n"
        "assert all(issubclass(getattr(treelab.errors, n), treelab.TreelabError) for n in classes)\n"
        "assert all(getattr(treelab, n) is getattr(treelab.errors, n) for n in classes)\n"
        "for name in treelab._LAZY: getattr(treelab, name)\n"
        "print(len(classes))\n"
    )
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 19
    assert treelab.IllegalMoveError is treelab.errors.IllegalMoveError  # old code keeps working
    assert treelab.TreeNode is importlib.import_module("treelab.tree").TreeNode
    assert "TreeNode" not in treelab.__all__ and "IllegalMoveError" not in treelab.__all__
    assert not hasattr(treelab, "require_extra")  # a function of treelab.errors, not an error: not at the front door
