"""Where the repository's files are, for the tests that read them (docs, data, notebooks, sources, helpers)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository: README.md, pyproject.toml, docs/, data/, treelab/, tests/ ..."""
TESTS = ROOT / "tests"
"""The suite: a folder per package of treelab, the shared helpers (this module's folder) at the top."""
