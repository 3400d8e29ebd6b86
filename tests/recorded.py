"""Trees grown only with ``Tree.record`` from seeded random games (independent of the search code)."""

from __future__ import annotations

import random

import treelab


def grow(game: str, games: int, seed: int, *, max_len: int) -> treelab.Tree:
    """Record ``games`` random games, each cut at a random length of at most ``max_len`` moves."""
    rng = random.Random(seed)
    tree = treelab.Tree(game)
    g = tree.game
    for _ in range(games):
        state, moves = g.initial(), []
        while not state.is_terminal:
            moves.append(rng.choice(state.legal_moves()))
            state = state.play(moves[-1])
        cut = rng.randint(1, min(len(moves), max_len))
        tree.record(moves if cut == len(moves) else moves[:cut], state.winner)
    return tree
