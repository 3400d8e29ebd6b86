"""Where the repository's files are, for the tests that read them (docs, data, notebooks, sources, helpers)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository: README.md, pyproject.toml, docs/, data/, treelab/, tests/ ..."""
TESTS = ROOT / "tests"
"""The suite: a folder per package of treelab, and this one."""
HELPERS = TESTS / "helpers"
"""The modules the folders share (this one among them), imported by name: pyproject.toml puts them on the path."""
