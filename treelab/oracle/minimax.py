"""Exhaustive minimax, memoised by position: the oracle of games small enough (tic-tac-toe: 5,478 positions).

:func:`is_optimal` judges one move the way the Connect Four solver does (the
move's value, then a null-window search that stops at the first better move),
here as plain alpha-beta over the same interface: an independent check of the
memoised values.

It reads only the :class:`~treelab.games.State` interface (``is_terminal``,
``winner``, ``legal_moves``, ``play``, ``key``) and assumes that the players
alternate (tic-tac-toe's players do).
"""

from __future__ import annotations

from collections.abc import Hashable

from ..games import State

__all__ = ["exceeds", "is_optimal", "move_values", "value"]

_MEMO: dict[tuple[str, Hashable], int] = {}
_ABOVE: dict[tuple[str, Hashable, int], bool] = {}


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


def exceeds(state: State, bound: int) -> bool:
    """Whether a non-terminal ``state`` is worth more than ``bound`` (-1 or 0) to its player to move.

    A null-window alpha-beta search that stops at the first move that does better, memoised by position
    and bound apart from :func:`value`'s table (so it checks those values independently).
    """
    memo = (state.game.name, state.key(), bound)
    found = _ABOVE.get(memo)
    if found is None:
        found = False
        for move in state.legal_moves():
            child = state.play(move)
            if child.is_terminal:
                found = (1 if child.winner is not None else 0) > bound
            else:
                found = not exceeds(child, -bound - 1)  # the child is worth less than -bound to the opponent
            if found:
                break
        _ABOVE[memo] = found
    return found


def is_optimal(state: State, move: int) -> bool:
    """Whether ``move`` keeps the value of the non-terminal ``state``: its value, then no better move."""
    mine = -value(state.play(move))
    return mine == 1 or not exceeds(state, mine)
