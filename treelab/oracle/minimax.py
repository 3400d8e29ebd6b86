"""Exhaustive minimax, memoised by position: the oracle of games small enough (tic-tac-toe: 5,478 positions).

It reads only the :class:`~treelab.games.State` interface (``is_terminal``,
``winner``, ``legal_moves``, ``play``, ``key``) and assumes that the players
alternate (tic-tac-toe's players do).
"""

from __future__ import annotations

from collections.abc import Hashable

from ..games import State

__all__ = ["move_values", "value"]

_MEMO: dict[tuple[str, Hashable], int] = {}


def value(state: State) -> int:
    """The result for the player to move with perfect play: 1 win, 0 draw, -1 loss (a finished game:
    -1 when the last mover won, else 0)."""
    memo = (state.game.name, state.key())
    found = _MEMO.get(memo)
    if found is None:
        if state.is_terminal:
            found = 0 if state.winner is None else -1  # the player who just moved won
        else:
            found = max(-value(state.play(move)) for move in state.legal_moves())
        _MEMO[memo] = found
    return found


def move_values(state: State) -> dict[int, int]:
    """Each legal move of ``state`` and its value for the player making it."""
    return {move: -value(state.play(move)) for move in state.legal_moves()}
