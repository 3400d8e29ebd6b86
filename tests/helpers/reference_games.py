"""Deliberately simple reference rules, written independently of treelab's games.

No bitboards and no cleverness: Connect Four is a 6x7 list of lists with
gravity and an explicit scan of every 4-in-a-row window; tic-tac-toe is a
list of 9 cells and its 8 lines. The tests compare treelab against these at
every ply, so they must stay obviously correct rather than fast.

Conventions (the project's notation): players are 1 (X, moves first) and 2
(O); Connect Four moves are columns 1-7 from the left, tic-tac-toe moves are
cells 1-9 row by row from the top left.
"""

from __future__ import annotations

import random
from fractions import Fraction

ROWS = 6
COLS = 7


def _c4_windows() -> list[list[tuple[int, int]]]:
    """Every set of four cells in a line: (row, col), row 0 at the bottom."""
    windows = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + i * dr, c + i * dc) for i in range(4)]
                if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                    windows.append(cells)
    return windows


C4_WINDOWS = _c4_windows()
assert len(C4_WINDOWS) == 69  # 24 horizontal + 21 vertical + 12 + 12 diagonal


class _RefGame:
    """What both reference games share: whose turn it is, and the moves that win at once."""

    moves: list[int]

    @property
    def to_move(self) -> int:
        return 1 if len(self.moves) % 2 == 0 else 2

    def winning_moves(self) -> list[int]:
        result = []
        for move in self.legal_moves():  # type: ignore[attr-defined]
            after = self.copy()  # type: ignore[attr-defined]
            after.play(move)
            if after.winner == self.to_move:
                result.append(move)
        return result


class RefConnectFour(_RefGame):
    """A Connect Four position; ``grid[row][col]`` with row 0 at the bottom, 0 = empty."""

    def __init__(self) -> None:
        self.grid = [[0] * COLS for _ in range(ROWS)]
        self.moves: list[int] = []
        self._winner: int | None = None  # rescanned after every move

    def copy(self) -> RefConnectFour:
        other = RefConnectFour()
        other.grid = [row[:] for row in self.grid]
        other.moves = self.moves[:]
        other._winner = self._winner
        return other

    def _scan(self) -> int | None:
        """Look at all 69 windows; the player holding a whole window, if any."""
        grid = self.grid
        found = set()
        for (r0, c0), (r1, c1), (r2, c2), (r3, c3) in C4_WINDOWS:
            v = grid[r0][c0]
            if v != 0 and v == grid[r1][c1] == grid[r2][c2] == grid[r3][c3]:
                found.add(v)
        assert len(found) <= 1, "both players have four in a row: the game went on after a win"
        return found.pop() if found else None

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def is_full(self) -> bool:
        return all(self.grid[ROWS - 1][c] != 0 for c in range(COLS))

    @property
    def is_terminal(self) -> bool:
        return self.winner is not None or self.is_full

    def legal_moves(self) -> list[int]:
        if self.winner is not None:
            return []
        return [c + 1 for c in range(COLS) if self.grid[ROWS - 1][c] == 0]

    def play(self, move: int) -> None:
        """Drop a disc in column ``move`` (1-7), in place."""
        if move not in self.legal_moves():
            raise ValueError(f"illegal move {move}")
        col = move - 1
        row = 0
        while self.grid[row][col] != 0:
            row += 1
        self.grid[row][col] = self.to_move
        self.moves.append(move)
        self._winner = self._scan()

    def threats(self) -> list[int]:
        """The columns where a disc of the opponent (were it their turn) would make four."""
        opponent = 3 - self.to_move
        result = []
        for move in self.legal_moves():
            after = self.copy()
            col = move - 1
            row = 0
            while after.grid[row][col] != 0:
                row += 1
            after.grid[row][col] = opponent
            if after._scan() == opponent:
                result.append(move)
        return result

    def key(self) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(row) for row in self.grid)

    def cells_top_down(self) -> list[list[str]]:
        """The board as symbols, top row first: ``'X'``, ``'O'`` or ``'.'``."""
        return [[".XO"[v] for v in self.grid[r]] for r in range(ROWS - 1, -1, -1)]

    def discs(self) -> int:
        return sum(1 for row in self.grid for v in row if v)


# rows, then columns, then the two diagonals (cell indices 0-8)
TTT_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


class RefTicTacToe(_RefGame):
    """A tic-tac-toe position: ``cells[i]`` for cell ``i + 1``, 0 = empty."""

    def __init__(self) -> None:
        self.cells = [0] * 9
        self.moves: list[int] = []

    def copy(self) -> RefTicTacToe:
        other = RefTicTacToe()
        other.cells = self.cells[:]
        other.moves = self.moves[:]
        return other

    @property
    def winner(self) -> int | None:
        found = set()
        for a, b, c in TTT_LINES:
            if self.cells[a] != 0 and self.cells[a] == self.cells[b] == self.cells[c]:
                found.add(self.cells[a])
        assert len(found) <= 1, "both players have three in a row: the game went on after a win"
        return found.pop() if found else None

    @property
    def is_terminal(self) -> bool:
        return self.winner is not None or all(self.cells)

    def legal_moves(self) -> list[int]:
        if self.winner is not None:
            return []
        return [i + 1 for i in range(9) if self.cells[i] == 0]

    def play(self, move: int) -> None:
        if move not in self.legal_moves():
            raise ValueError(f"illegal move {move}")
        self.cells[move - 1] = self.to_move
        self.moves.append(move)

    def threats(self) -> list[int]:
        """The cells where a mark of the opponent (were it their turn) would make three."""
        opponent = 3 - self.to_move
        result = []
        for move in self.legal_moves():
            after = self.copy()
            after.cells[move - 1] = opponent
            if after.winner == opponent:
                result.append(move)
        return result

    def key(self) -> tuple[int, ...]:
        return tuple(self.cells)

    def cells_top_down(self) -> list[list[str]]:
        return [[".XO"[self.cells[3 * r + c]] for c in range(3)] for r in range(3)]


REFERENCES = {"connect4": RefConnectFour, "tictactoe": RefTicTacToe}


def replay(game: str, moves: list[int]) -> RefConnectFour | RefTicTacToe:
    ref = REFERENCES[game]()
    for move in moves:
        ref.play(move)
    return ref


def random_game(game: str, rng: random.Random, max_moves: int | None = None):
    """A uniformly random game (stopped after ``max_moves`` if given): the reference position."""
    ref = REFERENCES[game]()
    while not ref.is_terminal and (max_moves is None or len(ref.moves) < max_moves):
        ref.play(rng.choice(ref.legal_moves()))
    return ref


def result_distribution(ref, _memo: dict | None = None) -> dict[int | None, Fraction]:
    """Exact probabilities of each result (1, 2, None = draw) under uniformly random play from ``ref``.

    Exhaustive (memoised on the position), so only for tic-tac-toe or Connect
    Four positions near the end.
    """
    memo = {} if _memo is None else _memo
    key = ref.key()
    if key in memo:
        return memo[key]
    if ref.is_terminal:
        total = {ref.winner: Fraction(1)}
    else:
        moves = ref.legal_moves()
        total = {}
        for move in moves:
            after = ref.copy()
            after.play(move)
            for result, p in result_distribution(after, memo).items():
                total[result] = total.get(result, Fraction(0)) + p / len(moves)
    memo[key] = total
    return total
