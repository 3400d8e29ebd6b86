"""Game rules behind one small interface, and the registry ``find_game(name)``."""

from __future__ import annotations

from .base import BoardLook, Game, Grid, State, mover_at_depth, other_player, written
from .connect4 import ConnectFour, ConnectFourState
from .nim import Nim, NimState
from .registry import ENTRY_POINT_GROUP, GAMES, find_game, register_game
from .tictactoe import TicTacToe, TicTacToeState

__all__ = [
    "ENTRY_POINT_GROUP",
    "GAMES",
    "BoardLook",
    "ConnectFour",
    "ConnectFourState",
    "Game",
    "Grid",
    "Nim",
    "NimState",
    "State",
    "TicTacToe",
    "TicTacToeState",
    "find_game",
    "mover_at_depth",
    "other_player",
    "register_game",
    "written",
]

for _game in (ConnectFourState.game, TicTacToeState.game, NimState.game):
    register_game(_game)
