"""Shared fixtures."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
C4_POSITIONS = SHARED / "data" / "connect4" / "Test_L3_R1"


@pytest.fixture
def rng() -> random.Random:
    """A seeded random generator, so every test replays exactly."""
    return random.Random(12345)


@pytest.fixture(scope="session")
def c4_positions() -> list[tuple[str, int]]:
    """The 1,000 gamesolver.org positions: (moves, score for the player to move)."""
    rows = []
    for line in C4_POSITIONS.read_text().split("\n"):
        if line.strip():
            moves, score = line.split()
            rows.append((moves, int(score)))
    return rows
