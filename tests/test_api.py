"""The front door: every public name resolves, and importing treelab stays light."""

from __future__ import annotations

import subprocess
import sys

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
    import importlib

    probe = (
        "import treelab.mcts.uct, treelab.view.dot, treelab.store.persistence, treelab, types;"
        "print(all(isinstance(getattr(treelab, n), types.FunctionType)"
        " for n in ('search', 'render', 'save', 'load', 'analyse')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
    assert importlib.import_module("treelab.mcts.uct").search is treelab.search
