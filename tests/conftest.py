"""Shared fixtures."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from paths import ROOT

# CI replays the same examples every run (a failure there is a real, reproducible bug, never
# luck), and no example is failed for being slow on a busy machine. Locally Hypothesis explores.
settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

C4_POSITIONS = ROOT / "data" / "connect4" / "Test_L3_R1"
"""The gamesolver.org reference positions, kept in the repository (source and licence: data/connect4/README.md)."""


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


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
"""Debian's chromium, which `make setup` installs (Playwright drives it; it never downloads browsers)."""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]
"""Chromium's flags here: headless as root, and none of its background connections (the network is closed)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless chromium through Playwright, for the explorer's and the stepper's front-end tests."""
    from playwright import sync_api  # the dev group (make setup): no skip, a missing browser stack fails

    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run `make setup` (or `make chromium`)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()
