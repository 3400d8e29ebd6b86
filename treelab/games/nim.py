"""Nim, written against the :class:`Game`/:class:`State` protocol only: the example of bringing your own game.

Piles of 1, 3, 5 and 7 objects (the classic Marienbad start); a move takes one
or more objects from one pile; whoever takes the last object wins (normal play,
Bouton 1901). A move is written pile letter then count: ``c3`` takes three from
pile ``c``; a position is the comma-separated moves (``"d7,c5"``).

Nothing here is compiled or special-cased: every command (train, analyse,
play, arena, render, stats, serve) handles it through the protocol alone.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from ..errors import GameOverError, IllegalMoveError, NotationError
from .base import Game, State

__all__ = ["Nim", "NimState"]

PILES = (1, 3, 5, 7)
"""The starting piles (Bouton's "Marienbad" rows)."""
_MOST = max(PILES)


def _move(pile: int, take: int) -> int:
    """The move id of taking ``take`` from pile ``pile`` (0-based): ``1 + pile * 7 + take - 1``."""
    return 1 + pile * _MOST + take - 1


def _split(move: int) -> tuple[int, int]:
    """``(pile, take)`` of a move id."""
    return (move - 1) // _MOST, (move - 1) % _MOST + 1


class NimState(State):
    """A Nim position: the objects left on each pile, and the number of moves played."""

    __slots__ = ("piles", "ply")
    game: Nim

    def __init__(self, piles: tuple[int, ...] = PILES, ply: int = 0) -> None:
        self.piles = piles
        self.ply = ply

    @property
    def to_move(self) -> int:
        return 1 + (self.ply & 1)

    @property
    def is_terminal(self) -> bool:
        return not any(self.piles)

    @property
    def winner(self) -> int | None:
        return (2 - (self.ply & 1)) if self.is_terminal else None  # whoever took the last object

    def legal_moves(self) -> list[int]:
        return [_move(p, k) for p, left in enumerate(self.piles) for k in range(1, left + 1)]

    def play(self, move: int) -> NimState:
        if self.is_terminal:
            raise GameOverError(f"move {self.game.label(move)!r} cannot be played: the game is over")
        pile, take = _split(move) if isinstance(move, int) and move >= 1 else (-1, 0)
        if not 0 <= pile < len(self.piles) or take > self.piles[pile]:
            raise IllegalMoveError(
                f"move {move!r} cannot be played here: pick one of "
                f"{', '.join(self.game.label(m) for m in self.legal_moves())}"
            )
        piles = list(self.piles)
        piles[pile] -= take
        return NimState(tuple(piles), self.ply + 1)

    def key(self) -> tuple[tuple[int, ...], int]:
        return (self.piles, self.ply & 1)

    def features(self) -> Any:
        """One row per pile: a one-hot of the objects left (0-7). Nim is impartial: no view to take."""
        import numpy as np

        out = np.zeros((len(PILES), _MOST + 1), dtype=np.float32)
        out[range(len(PILES)), self.piles] = 1.0
        return out

    def board(self) -> str:
        return "\n".join(f"{'abcd'[i]} {'|' * n or '-'}" for i, n in enumerate(self.piles))

    def winning_moves(self) -> list[int]:
        left = [i for i, n in enumerate(self.piles) if n]
        return [_move(left[0], self.piles[left[0]])] if len(left) == 1 else []

    def threats(self) -> list[int]:
        return self.winning_moves()  # the same test for the other player: taking the last pile whole

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NimState) and other.key() == self.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"NimState({self.piles!r}, ply={self.ply})"


class Nim(Game):
    """Nim on piles 1, 3, 5, 7; the last to take wins."""

    name = "nim"
    num_moves = len(PILES) * _MOST
    max_length = sum(PILES)  # every move takes at least one object
    move_word = "move"
    full_word = "more than the pile holds"
    example = "d7,c5"
    encoding = "nim-onehot-v1"
    feature_shape = (len(PILES), _MOST + 1)

    @property
    def move_hint(self) -> str:
        return "a pile a-d and how many to take, e.g. c3"

    def initial(self) -> NimState:
        return NimState()

    def python_playout(self, state: State, rng: random.Random) -> int | None:
        while not state.is_terminal:
            legal = state.legal_moves()
            state = state.play(legal[int(rng.random() * len(legal))])
        return state.winner

    def label(self, move: int) -> str:
        pile, take = _split(move)
        return f"{'abcd'[pile]}{take}"

    def parse_move(self, label: str | int) -> int:
        if isinstance(label, int) and not isinstance(label, bool) and 1 <= label <= self.num_moves:
            pile, take = _split(label)
            if take <= PILES[pile]:
                return label  # a move id (what parse() returns), accepted back as it is
        text = str(label).strip().lower()
        if len(text) == 2 and text[0] in "abcd" and text[1].isdigit():
            pile, take = "abcd".index(text[0]), int(text[1])
            if 1 <= take <= PILES[pile]:
                return _move(pile, take)
        raise NotationError(
            f"{str(label)!r} is not a nim move: write the pile a-d and how many to take, e.g. 'c3'"
        )

    def parse(self, moves: str | Iterable[str | int] | None) -> tuple[int, ...]:
        """``"d7,c5"``, ``"d7 c5"``, ``"/root/d7/c5"`` or a list of labels."""
        if isinstance(moves, str):
            try:
                return tuple(self.parse_move(p) for p in self.notation_parts(moves))
            except NotationError as exc:
                raise NotationError(f"{moves!r} is not a nim position ({exc}), e.g. {self.example!r}") from None
        return super().parse(moves)

    def notation_parts(self, moves: str) -> list[str]:
        """``"d7,c5"``, ``"d7 c5"``, ``"root/d7/c5"`` are ``["d7", "c5"]``."""
        text = moves.strip().strip("/")
        if text.startswith("root"):
            text = text[4:]
        return [p for p in text.replace("/", " ").replace(",", " ").split() if p]

    def notation(self, moves: Iterable[int]) -> str:
        return ",".join(self.label(m) for m in moves)


NimState.game = Nim()  # type: ignore[assignment]
