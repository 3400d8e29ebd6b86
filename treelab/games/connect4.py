"""Connect Four on bitboards.

The board is two integers, as in Pascal Pons' solver (gamesolver.org): column
``c`` (0-based) uses bits ``7c .. 7c+5`` bottom to top, bit ``7c+6`` is a
sentinel. ``mask`` holds every disc, ``cur`` the discs of the player to move.
Moves are columns ``1``-``7`` from the left.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from .. import speedups
from ..errors import GameOverError, IllegalMoveError
from .base import BoardLook, Game, Grid, State
from .encoding import grid_symmetry

__all__ = ["C4_LINES", "HEIGHT", "WIDTH", "ConnectFour", "ConnectFourState"]

WIDTH = 7
HEIGHT = 6
_H1 = HEIGHT + 1
_BOTTOM = [1 << (_H1 * c) for c in range(WIDTH)]
_TOP = [1 << (_H1 * c + HEIGHT - 1) for c in range(WIDTH)]
_COLUMN_END = [_H1 * c + HEIGHT for c in range(WIDTH)]  # first bit above the column
_ALL_MOVES = list(range(1, WIDTH + 1))
_CELLS = WIDTH * HEIGHT
_BOTTOM_OF = {c + 1: _BOTTOM[c] for c in range(WIDTH)}  # column label -> its bottom bit
_TOPS = sum(_TOP)
_OPEN_COLUMNS = {  # the top cells taken (mask & _TOPS) -> the columns still open
    sum(_TOP[c] for c in range(WIDTH) if full >> c & 1): tuple(c + 1 for c in range(WIDTH) if not full >> c & 1)
    for full in range(1 << WIDTH)
}
_BOARD = sum(((1 << HEIGHT) - 1) << (_H1 * c) for c in range(WIDTH))  # every cell, no sentinels
_BOTTOMS = sum(_BOTTOM)
_COMPILED_PLAYOUT = speedups.compiled.connect4 if speedups.compiled is not None else None
_COMPILED_REPLAY = speedups.compiled.connect4_replay if speedups.compiled is not None else None
_COMPILED_DECISIVE = getattr(speedups.compiled, "connect4_decisive", None)

C4_LINES: tuple[tuple[int, ...], ...] = (
    (3, 4, 5, 7, 5, 4, 3),
    (4, 6, 8, 10, 8, 6, 4),
    (5, 8, 11, 13, 11, 8, 5),
    (5, 8, 11, 13, 11, 8, 5),
    (4, 6, 8, 10, 8, 6, 4),
    (3, 4, 5, 7, 5, 4, 3),
)
"""Four-in-a-row lines through each cell, ``C4_LINES[row][column]``, row 0 at the bottom (centrality)."""


def has_four(pos: int) -> bool:
    """Whether the disc set ``pos`` holds four in a row (any direction)."""
    m = pos & (pos >> 1)  # vertical
    if m & (m >> 2):
        return True
    m = pos & (pos >> _H1)  # horizontal
    if m & (m >> 2 * _H1):
        return True
    m = pos & (pos >> HEIGHT)  # diagonal /
    if m & (m >> 2 * HEIGHT):
        return True
    m = pos & (pos >> (_H1 + 1))  # diagonal \
    return bool(m & (m >> 2 * (_H1 + 1)))


def _mirrored(bits: int) -> int:
    """A bitboard seen in a mirror: column ``c`` (7 bits each) moves to column ``6 - c`` (one expression: fast)."""
    return (((bits & _COLUMN_BITS) << 42) | ((bits >> 7 & _COLUMN_BITS) << 35) | ((bits >> 14 & _COLUMN_BITS) << 28)
            | (bits & _COLUMN_BITS << 21) | ((bits >> 28 & _COLUMN_BITS) << 14) | ((bits >> 35 & _COLUMN_BITS) << 7)
            | (bits >> 42 & _COLUMN_BITS))


_COLUMN_BITS = (1 << _H1) - 1
_Token = tuple[int, int, int, int]
"""A position as :meth:`ConnectFour.key_walk` steps it: ``cur`` and ``mask``, and their mirror images."""
assert _H1 == 7 and WIDTH == 7, "_mirrored is written for 7 columns of 7 bits"


class ConnectFourState(State):
    """A Connect Four position: ``cur`` (discs of the player to move), ``mask`` (all discs)."""

    __slots__ = ("_winner", "cur", "mask", "ply")
    game: ConnectFour

    def __init__(self, cur: int = 0, mask: int = 0, ply: int = 0, winner: int | None = None):
        self.cur = cur
        self.mask = mask
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
        return self._winner is not None or self.ply == _CELLS

    def legal_moves(self) -> list[int]:
        if self._winner is not None:
            return []
        return list(_OPEN_COLUMNS[self.mask & _TOPS])

    def play(self, move: int) -> ConnectFourState:
        mask = self.mask
        bottom = _BOTTOM_OF.get(move)  # None: not a column
        if bottom is None or mask & (bottom << (HEIGHT - 1)) or self._winner is not None or self.ply == _CELLS:
            raise self._refusal(move)
        new_mask = mask | (mask + bottom)
        other = self.cur ^ mask
        mine = other ^ new_mask  # the mover's discs after the move
        # four in a row (as has_four, inlined: this runs once per simulation)
        m = mine & (mine >> 1)
        if m & (m >> 2):
            return ConnectFourState(other, new_mask, self.ply + 1, 1 + (self.ply & 1))
        m = mine & (mine >> _H1)
        if m & (m >> 2 * _H1):
            return ConnectFourState(other, new_mask, self.ply + 1, 1 + (self.ply & 1))
        m = mine & (mine >> HEIGHT)
        if m & (m >> 2 * HEIGHT):
            return ConnectFourState(other, new_mask, self.ply + 1, 1 + (self.ply & 1))
        m = mine & (mine >> (_H1 + 1))
        if m & (m >> 2 * (_H1 + 1)):
            return ConnectFourState(other, new_mask, self.ply + 1, 1 + (self.ply & 1))
        return ConnectFourState(other, new_mask, self.ply + 1)

    def _refusal(self, move: object) -> Exception:
        """The error for playing ``move`` here: the game is over, or the column is no move or full."""
        if self.is_terminal:
            return GameOverError(f"column {move!r} cannot be played: the game is over")
        return IllegalMoveError(f"column {move!r} cannot be played here: pick one of {self.legal_moves()}")

    def winning_moves(self) -> list[int]:
        if self.is_terminal:
            return []
        return self._completing(self.cur)

    def threats(self) -> list[int]:
        if self.is_terminal:
            return []
        return self._completing(self.cur ^ self.mask)

    def _completing(self, discs: int) -> list[int]:
        """The playable columns where one more disc of ``discs`` makes four in a row."""
        mask = self.mask
        return [
            c + 1
            for c in range(WIDTH)
            if not mask & _TOP[c] and has_four(discs | ((mask + _BOTTOM[c]) & _column_mask(c) & ~mask))
        ]

    def key(self) -> int:
        return self.cur + self.mask + (self.ply << 49)

    def cell(self, column: int, row: int) -> int:
        """Who holds ``column`` (0-6 from the left), ``row`` (0-5 from the bottom): 0, 1 or 2."""
        bit = 1 << (_H1 * column + row)
        if not self.mask & bit:
            return 0
        mine = bool(self.cur & bit)
        return self.to_move if mine else 3 - self.to_move

    def grid(self) -> Grid:
        return tuple(tuple(self.cell(c, row) for c in range(WIDTH)) for row in range(HEIGHT - 1, -1, -1))

    def features(self) -> Any:
        """Four planes of 6 x 7 cells (top row first, as :meth:`grid`), seen by the player to move: its discs,
        the other's, then the empty cells where one more disc of its would make four (its threats), and the other's
        threats. Threats decide Connect Four's middle and end games (Allis 1988), and a small network does not
        find them from the discs alone: with them, a model's value sign against perfect play rose from 72% to 79%
        (``docs/notes/model.md``)."""
        import numpy as np

        global _FEATURE_INDEX
        if _FEATURE_INDEX is None:
            _FEATURE_INDEX = np.array(_FEATURE_BITS, dtype=np.intp)
        mine, mask = self.cur, self.mask
        theirs = mine ^ mask
        packed = mine | theirs << 56 | _winning_cells(mine, mask) << 112 | _winning_cells(theirs, mask) << 168
        bits = np.unpackbits(np.frombuffer(packed.to_bytes(28, "little"), np.uint8), bitorder="little")
        return bits[_FEATURE_INDEX].astype(np.float32).reshape(_PLANES, HEIGHT, WIDTH)

    def centrality(self, move: int) -> float:
        """Four-in-a-row lines through the cell where a disc dropped in column ``move`` lands."""
        c = move - 1
        if not 0 <= c < WIDTH:
            return 1.0
        column = (self.mask >> (_H1 * c)) & ((1 << HEIGHT) - 1)
        return float(C4_LINES[min(column.bit_length(), HEIGHT - 1)][c])  # bit_length: discs in the column

    def prior_weights(self, threat_bonus: float, blunder_weight: float) -> dict[int, float]:
        """The heuristic evaluator's weights on bitboards (equal to its generic rule; see :class:`State`)."""
        mask, mine = self.mask, self.cur
        theirs = mine ^ mask
        playable = (mask + _BOTTOMS) & _BOARD
        wins = _winning_cells(mine, mask) & playable
        if not wins:
            wins = _winning_cells(theirs, mask) & playable  # blocks
        legal = [c for c in range(WIDTH) if playable & _column_mask(c)]
        if wins:
            return {c + 1: 1.0 for c in legal if wins & _column_mask(c)}
        weights = {}
        for c in legal:
            bit = playable & _column_mask(c)
            row = (bit >> (_H1 * c)).bit_length() - 1
            new_mask = mask | bit
            open_cells = (new_mask + _BOTTOMS) & _BOARD
            threats = bin(_winning_cells(mine | bit, new_mask) & open_cells).count("1")
            weight = float(C4_LINES[row][c]) * threat_bonus**threats
            if _winning_cells(theirs, new_mask) & open_cells:
                weight *= blunder_weight
            weights[c + 1] = weight
        return weights

    def board(self) -> str:
        symbols = ".XO"
        rows = []
        for row in range(HEIGHT - 1, -1, -1):
            rows.append(" ".join(symbols[self.cell(c, row)] for c in range(WIDTH)))
        rows.append(" ".join(str(c + 1) for c in range(WIDTH)))
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"ConnectFourState(ply={self.ply}, key={self.key()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ConnectFourState) and (self.cur, self.mask) == (other.cur, other.mask)

    def __hash__(self) -> int:
        return hash((self.cur, self.mask))


_PLANES = 4
"""The feature planes: the mover's discs, the other's, the mover's threats, the other's."""
_FEATURE_BITS = [
    plane * 56 + _H1 * c + HEIGHT - 1 - r for plane in range(_PLANES) for r in range(HEIGHT) for c in range(WIDTH)
]
"""For each place of the features (plane, row from the top, column), its bit in the four planes' bitboards packed
56 bits apart."""
_FEATURE_INDEX: Any = None
""":data:`_FEATURE_BITS` as a numpy index, made at the first :meth:`ConnectFourState.features` (numpy loads late)."""


def _column_mask(c: int) -> int:
    return ((1 << HEIGHT) - 1) << (_H1 * c)


def _winning_cells(pos: int, mask: int) -> int:
    """The empty cells where one more disc of ``pos`` makes four in a row (Pons' bitboard method)."""
    r = (pos << 1) & (pos << 2) & (pos << 3)  # vertical: three below
    for s in (_H1, HEIGHT, _H1 + 1):  # horizontal and both diagonals
        p = (pos << s) & (pos << 2 * s)
        r |= p & (pos << 3 * s)
        r |= p & (pos >> s)
        p = (pos >> s) & (pos >> 2 * s)
        r |= p & (pos << s)
        r |= p & (pos >> 3 * s)
    return r & (_BOARD ^ mask)


ConnectFourState.game = None  # type: ignore[assignment]  # set below


class ConnectFour(Game):
    """Connect Four: 7 columns, 6 rows, four in a row wins; X (player 1) starts."""

    name = "connect4"
    num_moves = WIDTH
    max_length = WIDTH * HEIGHT
    move_word = "column"
    full_word = "full"
    example = "4453"
    look = BoardLook(
        background="#2659a8", cell_size=11, cell_padding=0,
        fills=("#ffffff", "#e41a1c", "#ffd92f"), marks=None, footer=tuple(str(c + 1) for c in range(WIDTH)),
    )
    """Red (player 1) and yellow (player 2) discs on a blue board, the column numbers below."""
    compiled_playout = _COMPILED_PLAYOUT
    compiled_replay = _COMPILED_REPLAY
    compiled_loop = 0
    compiled_decisive = _COMPILED_DECISIVE
    encoding = "connect4-planes-v2"
    """v2: the discs and the threats of both players (v1, before 2026-11-28: the discs alone)."""
    feature_shape = (_PLANES, HEIGHT, WIDTH)
    symmetries = (
        grid_symmetry("mirror", _PLANES, HEIGHT, WIDTH, lambda r, c: (r, WIDTH - 1 - c), range(WIDTH - 1, -1, -1)),
    )
    """The left-right mirror: column ``c`` becomes ``8 - c``."""

    def position_key(self, state: State) -> str:
        """The smaller of the position's key and its mirror image's (:meth:`Game.position_key`)."""
        assert isinstance(state, ConnectFourState)
        key = state.cur + state.mask  # Pons' key: the sum never carries out of a column, so it mirrors whole
        return str(min(key, _mirrored(key)))

    compiled_keys: Callable[[list[Any], Any, dict[str, int]], list[str]] | None = getattr(
        speedups.compiled, "connect4_keys", None)
    """:meth:`position_key` of many nodes at once where the extension is built (:func:`treelab.positions.node_keys`'
    fastest path): ``compiled_keys(nodes, root, move_of)`` replays each node's moves from ``root`` on bitboards
    (``move_of``: label -> column). A subclass with other keys sets it to None."""

    def key_walk(self) -> tuple[_Token, Callable[[_Token, int], _Token], Callable[[_Token], str]]:
        """:meth:`position_key` without states (:func:`treelab.positions.node_keys`' fast path): the empty
        board's token, ``step(token, move)`` and ``key(token)``. A token is the two bitboards and their
        mirror images, so a step is a few integer operations (no win check: keys are asked of stored nodes)."""

        def step(token: _Token, move: int) -> _Token:
            cur, mask, mirror_cur, mirror_mask = token
            return (cur ^ mask, mask | (mask + _BOTTOM_OF[move]), mirror_cur ^ mirror_mask,
                    mirror_mask | (mirror_mask + _BOTTOM_OF[WIDTH + 1 - move]))

        def key(token: _Token) -> str:
            return str(min(token[0] + token[1], token[2] + token[3]))

        return (0, 0, 0, 0), step, key

    def initial(self) -> ConnectFourState:
        return ConnectFourState()

    playout_board = staticmethod(attrgetter("cur", "mask", "ply"))  # type: ignore[assignment]
    """The compiled playout's view of a state: two bitboards and the ply."""

    def python_playout(self, state: State, rng: random.Random) -> int | None:
        assert isinstance(state, ConnectFourState)
        if state._winner is not None:
            return state._winner
        ply = state.ply
        if ply == WIDTH * HEIGHT:
            return None
        mask = state.mask
        me = state.cur
        other = me ^ mask
        player = 1 + (ply & 1)
        # next free bit of every column, and the columns still open
        heights = [(mask + _BOTTOM[c]) & _column_mask_sentinel(c) for c in range(WIDTH)]
        heights = [h.bit_length() - 1 for h in heights]
        cols = [c for c in range(WIDTH) if heights[c] < _COLUMN_END[c]]
        rand = rng.random
        ends = _COLUMN_END
        while True:
            n = len(cols)
            i = int(rand() * n)
            c = cols[i]
            h = heights[c]
            me |= 1 << h
            h += 1
            heights[c] = h
            if h == ends[c]:
                cols[i] = cols[n - 1]
                cols.pop()
            # inline four-in-a-row test of the mover's discs
            m = me & (me >> 1)
            if m & (m >> 2):
                return player
            m = me & (me >> 7)
            if m & (m >> 14):
                return player
            m = me & (me >> 6)
            if m & (m >> 12):
                return player
            m = me & (me >> 8)
            if m & (m >> 16):
                return player
            ply += 1
            if ply == 42:
                return None
            me, other = other, me
            player = 3 - player


def _column_mask_sentinel(c: int) -> int:
    return ((1 << _H1) - 1) << (_H1 * c)


ConnectFourState.game = ConnectFour()  # type: ignore[assignment]
