"""Tic-tac-toe on two 9-bit masks. Cells ``1``-``9`` row by row from the top left; X starts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from .. import speedups
from ..errors import GameOverError, IllegalMoveError
from .base import Game, Grid, State
from .encoding import Symmetry, grid_symmetry

__all__ = ["TTT_LINES", "TicTacToe", "TicTacToeState"]

_LINES = [
    0b000000111, 0b000111000, 0b111000000,  # rows
    0b001001001, 0b010010010, 0b100100100,  # columns
    0b100010001, 0b001010100,  # diagonals
]
_FULL = 0b111111111
TTT_LINES: tuple[int, ...] = (3, 2, 3, 2, 4, 2, 3, 2, 3)
"""Three-in-a-row lines through each cell (cells 1-9): the centrality of a move."""
_COMPILED_PLAYOUT = speedups.compiled.tictactoe if speedups.compiled is not None else None
_COMPILED_REPLAY = speedups.compiled.tictactoe_replay if speedups.compiled is not None else None


def _won(bits: int) -> bool:
    for line in _LINES:  # noqa: SIM110  (a plain loop: any() with a generator is slower in playouts)
        if bits & line == line:
            return True
    return False


class TicTacToeState(State):
    """A tic-tac-toe position: ``x`` and ``o`` are the cells each side holds (bit ``cell-1``)."""

    __slots__ = ("_winner", "o", "ply", "x")
    game: TicTacToe

    def __init__(self, x: int = 0, o: int = 0, ply: int = 0, winner: int | None = None):
        self.x = x
        self.o = o
        self.ply = ply
        self._winner = winner

    @property
    def to_move(self) -> int:
        return 1 + (self.ply & 1)

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def is_terminal(self) -> bool:
        return self._winner is not None or self.ply == 9

    def legal_moves(self) -> list[int]:
        if self._winner is not None:
            return []
        taken = self.x | self.o
        return [i + 1 for i in range(9) if not taken >> i & 1]

    def play(self, move: int) -> TicTacToeState:
        bit = 1 << (move - 1) if 1 <= move <= 9 else 0
        if self.is_terminal:
            raise GameOverError(f"cell {move!r} cannot be played: the game is over")
        if self._winner is not None or not bit or (self.x | self.o) & bit:
            raise IllegalMoveError(
                f"cell {move!r} cannot be played here: pick one of {self.legal_moves()}"
            )
        if self.ply & 1:
            o = self.o | bit
            return TicTacToeState(self.x, o, self.ply + 1, 2 if _won(o) else None)
        x = self.x | bit
        return TicTacToeState(x, self.o, self.ply + 1, 1 if _won(x) else None)

    def winning_moves(self) -> list[int]:
        mine = self.o if self.ply & 1 else self.x
        return [m for m in self.legal_moves() if _won(mine | 1 << (m - 1))]

    def threats(self) -> list[int]:
        theirs = self.x if self.ply & 1 else self.o
        return [m for m in self.legal_moves() if _won(theirs | 1 << (m - 1))]

    def key(self) -> tuple[int, int]:
        return (self.x, self.o)

    def cell(self, index: int) -> int:
        """Who holds cell ``index`` (1-9): 0, 1 or 2."""
        bit = 1 << (index - 1)
        return 1 if self.x & bit else 2 if self.o & bit else 0

    def grid(self) -> Grid:
        return tuple(tuple(self.cell(3 * r + c + 1) for c in range(3)) for r in range(3))

    def features(self) -> Any:
        """Two planes of 3 x 3 cells (rows from the top): the marks of the player to move, then the other's."""
        import numpy as np

        mine, theirs = (self.o, self.x) if self.ply & 1 else (self.x, self.o)
        return np.array([[mine >> i & 1 for i in range(9)], [theirs >> i & 1 for i in range(9)]],
                        dtype=np.float32).reshape(2, 3, 3)

    def centrality(self, move: int) -> float:
        """Three-in-a-row lines through cell ``move``."""
        return float(TTT_LINES[move - 1]) if 1 <= move <= 9 else 1.0

    def board(self) -> str:
        marks = ".XO"
        rows = []
        for r in range(3):
            rows.append(" ".join(marks[self.cell(3 * r + c + 1)] for c in range(3)))
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"TicTacToeState(x={self.x:#05x}, o={self.o:#05x})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TicTacToeState) and (self.x, self.o) == (other.x, other.o)

    def __hash__(self) -> int:
        return hash((self.x, self.o))


_SQUARE_MAPS = {
    "rotate90": lambda r, c: (c, 2 - r),
    "rotate180": lambda r, c: (2 - r, 2 - c),
    "rotate270": lambda r, c: (2 - c, r),
    "mirror": lambda r, c: (r, 2 - c),
    "flip": lambda r, c: (2 - r, c),
    "transpose": lambda r, c: (c, r),
    "antitranspose": lambda r, c: (2 - c, 2 - r),
}
"""The seven symmetries of the square other than the identity, as maps of a cell ``(row, column)``."""


def _square_symmetry(name: str) -> Symmetry:
    cell_map = _SQUARE_MAPS[name]
    moves = [0] * 9
    for r in range(3):
        for c in range(3):
            r2, c2 = cell_map(r, c)
            moves[3 * r2 + c2] = 3 * r + c
    return grid_symmetry(name, 2, 3, 3, cell_map, moves)


def _images(moves: Sequence[int]) -> tuple[int, ...]:
    """For every 9-bit set of cells, its image under the symmetry whose move permutation is ``moves``."""
    return tuple(sum(1 << i for i in range(9) if bits >> moves[i] & 1) for bits in range(512))


_IMAGES = (tuple(range(512)), *(_images(_square_symmetry(name).moves) for name in _SQUARE_MAPS))
"""The cells' images under the identity and the seven symmetries, as lookup tables of 512 entries."""


class TicTacToe(Game):
    """Tic-tac-toe: three in a row on a 3x3 board."""

    name = "tictactoe"
    num_moves = 9
    max_length = 9
    move_word = "cell"
    full_word = "taken"
    example = "519"
    compiled_playout = _COMPILED_PLAYOUT
    compiled_replay = _COMPILED_REPLAY
    compiled_loop = 1
    encoding = "tictactoe-planes-v1"
    feature_shape = (2, 3, 3)
    symmetries = tuple(_square_symmetry(name) for name in _SQUARE_MAPS)
    """The square's rotations and reflections."""

    def position_key(self, state: State) -> str:
        """The smallest ``(x, o)`` over the position's eight images under the square's symmetries."""
        assert isinstance(state, TicTacToeState)
        x, o = state.x, state.o
        return "%d,%d" % min((table[x], table[o]) for table in _IMAGES)  # noqa: UP031

    def initial(self) -> TicTacToeState:
        return TicTacToeState()

    playout_board = staticmethod(attrgetter("x", "o", "ply"))  # type: ignore[assignment]
    """The compiled playout's view of a state: two bitboards and the ply."""

    def python_playout(self, state: State, rng: random.Random) -> int | None:
        assert isinstance(state, TicTacToeState)
        if state._winner is not None:
            return state._winner
        x, o, ply = state.x, state.o, state.ply
        free = [i for i in range(9) if not (x | o) >> i & 1]
        rand = rng.random
        while free:
            i = int(rand() * len(free))
            bit = 1 << free[i]
            free[i] = free[-1]
            free.pop()
            if ply & 1:
                o |= bit
                if _won(o):
                    return 2
            else:
                x |= bit
                if _won(x):
                    return 1
            ply += 1
        return None


TicTacToeState.game = TicTacToe()  # type: ignore[assignment]
