"""Tic-tac-toe solved exactly: plain minimax over every position, memoised (5,478 positions)."""

from __future__ import annotations

from functools import cache

from ..games import State
from ..games.tictactoe import TicTacToeState

__all__ = ["move_values", "value"]


def value(state: State) -> int:
    """The result for the player to move with perfect play: 1 win, 0 draw, -1 loss (a finished game:
    -1 when the last mover won, else 0)."""
    assert isinstance(state, TicTacToeState), state
    return _value(state)


@cache
def _value(state: TicTacToeState) -> int:
    if state.is_terminal:
        return 0 if state.winner is None else -1  # the player who just moved won
    return max(-_value(state.play(move)) for move in state.legal_moves())


def move_values(state: State) -> dict[int, int]:
    """Each legal move of ``state`` and its value for the player making it."""
    return {move: -value(state.play(move)) for move in state.legal_moves()}
