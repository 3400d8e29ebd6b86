"""One training game: the colour the tree plays, the game played with its search values kept, and its ``games`` row.

Training in one process (:func:`treelab.play.training.train`) and its workers
(:class:`treelab.play.training.workers.Worker`) play their games alike: the tree's side by the one colour
rule (:func:`tree_player_of`), the moves and the value each of the tree's searches found (:func:`play_recorded`,
a :class:`PlayedGame`), and the game's row built once from it (:meth:`PlayedGame.record`).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from dataclasses import dataclass

from ...games import Game, State
from ...store.persistence import GameRow, now
from ..players import Player

__all__ = ["PlayedGame", "keep_game_nodes", "play_game", "play_recorded", "tree_player_of"]


def keep_game_nodes() -> None:
    """After a game: free what its searches left, then freeze what lives on (the tree's new nodes), so that
    full collections need not walk them again.

    A search on a fresh tree (the learning loop's self-play) leaves that tree behind as cyclic garbage (each
    node and its parent refer to each other), and :func:`gc.freeze` would keep it for good: session 18's hour
    held 12.8 GB at its end, about half a megabyte a game. The collection walks only what the game made (the
    rest is frozen already).
    """
    gc.collect()
    gc.freeze()


def tree_player_of(opponent: str, game_id: int) -> int:
    """The side the tree plays in game ``game_id`` against ``opponent``: 1 in self-play (both sides), else
    colours alternating with the game's id (the tree moves first in even games) -- the one colour rule of
    training in one process and in workers."""
    return 1 if opponent == "self" else 1 + (game_id + 1) % 2


@dataclass(frozen=True)
class PlayedGame:
    """One game as :func:`play_recorded` played it."""

    state: State
    """The last position (not terminal if the game was stopped)."""
    moves: list[int]
    """The moves from the start."""
    root_values: list[float | None]
    """Before each move, the value the tree's search found for the player to move (its ``last_value``,
    :func:`treelab.mcts.summary.search_value`); None where another player moved."""

    def record(self, game: Game, game_id: int, opponent: str, tree_player: int, iterations: int, started_at: str,
               exploration: str) -> GameRow:
        """This finished game's ``games`` row, built once (:class:`~treelab.store.persistence.GameRow`, checked).

        ``tree_player`` is logged only against an opponent (self-play: None, the tree played both sides).
        """
        return GameRow.of(game, {
            "id": game_id, "moves": game.notation(self.moves), "winner": self.state.winner, "opponent": opponent,
            "tree_player": None if opponent == "self" else tree_player, "iterations": iterations,
            "started_at": started_at, "finished_at": now(), "exploration": exploration,
            "root_values": self.root_values_text()})

    def root_values_text(self) -> str | None:
        """:attr:`root_values` as the JSON list ``games.root_values`` keeps (4 decimals); None if all None."""
        if all(v is None for v in self.root_values):
            return None
        return json.dumps([None if v is None else round(v, 4) for v in self.root_values], separators=(",", ":"))


def play_recorded(
    game: Game, me: Player, other: Player | None, tree_player: int, stopped: Callable[[], bool]
) -> PlayedGame:
    """:func:`play_game`, keeping the value of each of ``me``'s searches (:class:`PlayedGame`)."""
    state, moves, values = game.initial(), list[int](), list[float | None]()
    while not state.is_terminal and not stopped():
        mine = other is None or state.to_move == tree_player
        mover = me if mine else other
        assert mover is not None
        move = mover.choose(state, moves)
        values.append(getattr(mover, "last_value", None) if mine else None)
        state = state.play(move)
        moves.append(move)
    return PlayedGame(state, moves, values)


def play_game(
    game: Game, me: Player, other: Player | None, tree_player: int, stopped: Callable[[], bool]
) -> tuple[State, list[int]]:
    """One game from the start: ``me`` plays ``tree_player`` (both sides if ``other`` is None).

    Returns the last position (not terminal if ``stopped()`` became true) and the moves.
    """
    played = play_recorded(game, me, other, tree_player, stopped)
    return played.state, played.moves
