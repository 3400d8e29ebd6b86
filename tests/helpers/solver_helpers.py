"""The compiled Connect Four solver for the oracle's tests, and the mark of the tests that need it."""

from __future__ import annotations

import pytest

from treelab.errors import UnsupportedGameError

try:
    from treelab.oracle.compiled import compiled_solver

    c4solver = compiled_solver()
except UnsupportedGameError:  # pragma: no cover - without a compiler
    c4solver = None

needs_solver = pytest.mark.skipif(c4solver is None, reason="treelab's compiled solver is not built")
