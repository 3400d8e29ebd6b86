"""The compiled decisive playout of Connect Four against the Python reference (treelab.decisive_playout)."""

from __future__ import annotations

import random

import pytest

import treelab
from treelab import speedups
from treelab.games import State
from treelab.mcts.policies import decisive_playout

pytestmark = pytest.mark.skipif(speedups.compiled is None, reason="the C extension is not built")

GAME = treelab.find_game("connect4")


def positions(count: int, seed: int) -> list[State]:
    """Live positions after 4 to 30 random moves."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        state = GAME.initial()
        for _ in range(rng.randrange(4, 31)):
            state = state.play(rng.choice(state.legal_moves()))
            if state.is_terminal:
                break
        if not state.is_terminal:
            out.append(state)
    return out


def compiled(state: State, seed: int) -> int | None:
    assert GAME.compiled_decisive is not None
    return GAME.compiled_decisive(*GAME.playout_board(state), seed)


def test_takes_an_immediate_win_every_time() -> None:
    wins = [s for s in positions(600, 1) if s.winning_moves()]
    assert len(wins) > 30
    for state in wins:
        assert {compiled(state, seed) for seed in range(20)} == {state.to_move}


def test_same_results_as_the_python_reference_in_distribution() -> None:
    """Over many playouts from the same positions, both give each result equally often (within 5 sigma)."""
    rng = random.Random(3)
    n = 400
    for state in positions(12, 2):
        c_counts = {1: 0, 2: 0, None: 0}
        p_counts = {1: 0, 2: 0, None: 0}
        for _ in range(n):
            c_counts[compiled(state, rng.getrandbits(64))] += 1
            p_counts[decisive_playout(state, rng)] += 1
        for key in (1, 2):
            p = (c_counts[key] + p_counts[key]) / (2 * n)
            sigma = (2 * p * (1 - p) / n) ** 0.5 or 1 / n
            assert abs(c_counts[key] - p_counts[key]) / n <= 5 * sigma + 1e-9, (c_counts, p_counts)


def test_search_with_decisive_playouts_uses_it_and_finds_the_win() -> None:
    tree = treelab.Tree("connect4")
    treelab.search(tree, "445566", limit=treelab.Limit(iterations=2000), playout="decisive", rng=1)
    best = max(tree.find("445566").children_view, key=lambda kid: kid.nb_visit)
    assert best.name in ("3", "7")  # either completes the bottom row
