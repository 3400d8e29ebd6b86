"""Game rules behind one small interface, and the registry ``find_game(name)``."""

from __future__ import annotations

from ..errors import UnknownGameError
from .base import BoardLook, Game, Grid, State, mover_at_depth, other_player
from .connect4 import ConnectFour, ConnectFourState
from .tictactoe import TicTacToe, TicTacToeState

__all__ = [
    "GAMES",
    "BoardLook",
    "ConnectFour",
    "ConnectFourState",
    "Game",
    "Grid",
    "State",
    "TicTacToe",
    "TicTacToeState",
    "find_game",
    "mover_at_depth",
    "other_player",
]

GAMES: dict[str, Game] = {
    "connect4": ConnectFourState.game,
    "tictactoe": TicTacToeState.game,
}
"""Every registered game by name."""

_ALIASES = {"c4": "connect4", "connect-four": "connect4", "connectfour": "connect4",
            "ttt": "tictactoe", "tic-tac-toe": "tictactoe"}


def find_game(name: str | Game) -> Game:
    """The game called ``name`` (a :class:`Game` is returned as it is).

    Raises:
        UnknownGameError: ``name`` is not a registered game.
    """
    if isinstance(name, Game):
        return name
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return GAMES[key]
    except KeyError:
        raise UnknownGameError(
            f"unknown game {name!r}: use one of {', '.join(sorted(GAMES))}"
        ) from None
