"""Whole uniformly random games, for tests that need trees of recorded games (long one-child chains)."""

from __future__ import annotations

import random

from treelab.games import Game


def random_game(game: Game, rng: random.Random) -> tuple[list[int], int | None]:
    """The moves of one game played to the end by uniformly random moves, and its winner (None: a draw)."""
    state, moves = game.initial(), []
    while not state.is_terminal:
        move = rng.choice(state.legal_moves())
        moves.append(move)
        state = state.play(move)
    return moves, state.winner
