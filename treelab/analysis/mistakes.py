"""Connect Four test positions for mistake rates, classed as in Pascal Pons' test protocol.

Pons' protocol (gamesolver.org, "Part 2 - Test protocol"), as AlphaZero.jl's
``pons_benchmark.jl`` uses it, classes a position by its **stage**, the moves
played (``beginning`` <= 14, ``middle`` 15-28, ``end`` > 28), and by its
**difficulty**, the moves left to the end of the game under perfect play from
both sides (``easy`` < 14, ``medium`` 14-28, ``hard`` > 28). A move is a
**mistake** when another legal move has a strictly better game-theoretic class
(win > draw > loss). Only six of the nine classes can exist: a middle position
has at most 27 moves left and an end position at most 13.

This module owns the pure part: the classes (:func:`stage_of`,
:func:`difficulty_of`), the moves left from Pons' score (:func:`moves_left`),
one position judged by the exact solver (:func:`judge_position`), and the file
of judged positions (:func:`read_positions`, :func:`format_position`), which
holds every legal move's class so that measuring a player needs no solver. The
runner that searches each position with a player spec lives in
:mod:`treelab.play.mistakes`; the positions shipped with treelab are
``data/connect4/mistakes/positions.txt`` (:data:`DEFAULT_POSITIONS`), made by
``benchmarks/mistake_positions.py``.

Example:
    >>> moves_left(1, 41)  # one cell left and the player to move wins by filling it
    1
    >>> stage_of(10), difficulty_of(30)
    ('beginning', 'hard')
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import GameOverError, ImportFormatError
from ..games import find_game

__all__ = [
    "CELLS",
    "CLASSES",
    "DEFAULT_POSITIONS",
    "DIFFICULTIES",
    "PONS_CLASSES",
    "SPLITS",
    "STAGES",
    "JudgedPosition",
    "class_of",
    "difficulty_of",
    "format_position",
    "judge_position",
    "moves_left",
    "parse_position",
    "read_positions",
    "split_of",
    "stage_of",
]

CELLS = 42
"""The cells of Connect Four's 7x6 board: the longest game."""

STAGES = ("beginning", "middle", "end")
"""Stages by moves played: ``beginning`` <= 14, ``middle`` 15-28, ``end`` > 28."""

DIFFICULTIES = ("easy", "medium", "hard")
"""Difficulties by moves left under perfect play: ``easy`` < 14, ``medium`` 14-28, ``hard`` > 28."""

CLASSES = tuple(f"{stage}-{level}" for level in DIFFICULTIES for stage in STAGES)
"""Every ``stage-difficulty`` name, easy first (AlphaZero.jl's order), including the three that cannot occur."""

PONS_CLASSES = ("beginning-easy", "middle-easy", "end-easy", "beginning-medium", "middle-medium",
                "beginning-hard")
"""The six classes that exist, in the order of Pons' test sets and AlphaZero.jl's tables."""

SPLITS = ("dev", "test")
"""``dev`` may be used for tuning; ``test`` is held out and never tunes anything (:func:`split_of`)."""

Split = Literal["dev", "test"]

DEFAULT_POSITIONS = Path(__file__).resolve().parents[2] / "data" / "connect4" / "mistakes" / "positions.txt"
"""The position file of the source tree (``data/connect4/mistakes/positions.txt``)."""

_LETTERS = {1: "W", 0: "D", -1: "L"}
_VALUES = {letter: value for value, letter in _LETTERS.items()}


def stage_of(played: int) -> str:
    """The stage of a position with ``played`` discs on the board: ``beginning``, ``middle`` or ``end``."""
    if not 0 <= played < CELLS:
        raise ValueError(f"{played!r} moves played is not a Connect Four position that can still be played")
    return "beginning" if played <= 14 else "middle" if played <= 28 else "end"


def difficulty_of(left: int) -> str:
    """The difficulty of a position with ``left`` moves to the end under perfect play."""
    if not 1 <= left <= CELLS:
        raise ValueError(f"{left!r} moves left is not between 1 and {CELLS}")
    return "easy" if left < 14 else "medium" if left <= 28 else "hard"


def class_of(played: int, left: int) -> str:
    """``stage-difficulty`` of a position (``"beginning-hard"``)."""
    return f"{stage_of(played)}-{difficulty_of(left)}"


def split_of(moves: str) -> str:
    """The half a position belongs to, by a fixed rule that adding positions never changes: ``dev`` when the
    first byte of the SHA-256 of its moves (``"4453"``) is even, else ``test``."""
    return "dev" if hashlib.sha256(moves.encode()).digest()[0] % 2 == 0 else "test"


def moves_left(score: int, played: int) -> int:
    """The moves (plies, both players') to the end of the game under perfect play, from Pons' score.

    Pons' score of a position, for the player to move: ``0`` for a draw, which lasts until the board is full
    (``42 - played`` moves); ``22 - k`` when that player wins with their ``k``-th disc of the game, ``-(22 - k)``
    when the opponent wins with theirs. The player to move has ``played // 2`` discs on the board and the
    opponent ``(played + 1) // 2``, so a win takes ``2 * (k - played // 2) - 1`` more moves (the winner's last
    one included) and a loss ``2 * (k - (played + 1) // 2)``.

    Raises:
        ValueError: a score that no position with ``played`` discs can have.
    """
    if score > 0:
        left = 2 * (22 - score - played // 2) - 1
    elif score < 0:
        left = 2 * (22 + score - (played + 1) // 2)
    else:
        left = CELLS - played
    if not 1 <= left <= CELLS - played:
        raise ValueError(f"Pons' score {score!r} is impossible with {played!r} discs on the board")
    return left


@dataclass(frozen=True)
class JudgedPosition:
    """One judged position: its moves, Pons' score, every legal move's class, and its split."""

    moves: str
    """The columns played from the empty board, ``1``-``7`` (treelab's notation)."""
    score: int
    """Pons' score for the player to move (sign: the result with perfect play; size: how soon)."""
    values: Mapping[int, int]
    """Each legal move (column 1-7) and its game-theoretic value for the player making it: 1, 0, -1."""
    split: str = "dev"
    """``dev`` (allowed for tuning) or ``test`` (held out): :func:`split_of` the moves in a file."""

    @property
    def played(self) -> int:
        """Moves played (discs on the board)."""
        return len(self.moves)

    @property
    def left(self) -> int:
        """Moves left to the end under perfect play (:func:`moves_left`)."""
        return moves_left(self.score, self.played)

    @property
    def stage(self) -> str:
        """``beginning``, ``middle`` or ``end``."""
        return stage_of(self.played)

    @property
    def difficulty(self) -> str:
        """``easy``, ``medium`` or ``hard``."""
        return difficulty_of(self.left)

    @property
    def name(self) -> str:
        """The class, ``stage-difficulty``."""
        return f"{self.stage}-{self.difficulty}"

    @property
    def best(self) -> int:
        """The best value a move has: the position's result for the player to move."""
        return max(self.values.values())

    @property
    def decisive(self) -> bool:
        """Whether a mistake is possible: some legal move's class is worse than another's."""
        return min(self.values.values()) < self.best

    def is_mistake(self, move: int) -> bool:
        """Whether ``move`` is a mistake: another legal move has a strictly better class.

        Raises:
            ValueError: ``move`` is not legal here.
        """
        if move not in self.values:
            raise ValueError(f"move {move!r} is not legal after {self.moves!r}: legal are {sorted(self.values)}")
        return self.values[move] < self.best


def judge_position(moves: str | Iterable[int], *, max_nodes: int | None = None, oracles: tuple[Any, Any] | None = None
                   ) -> JudgedPosition:
    """Judge a Connect Four position with treelab's exact solver: Pons' score and every legal move's value.

    Args:
        moves: the position (``"4453"`` or a list of columns); not finished.
        max_nodes: give up (``BudgetError``) after this many positions for one solve.
        oracles: the weak and the score oracle to reuse (``oracle_for("connect4")`` and
            ``oracle_for("connect4", score=True)``), so that their memory is shared between calls.

    Raises:
        GameOverError: the game is over; BudgetError: ``max_nodes`` reached; UnsupportedGameError: no solver.
    """
    from ..oracle import require_oracle

    game = find_game("connect4")
    state = game.replay(moves)
    if state.is_terminal:
        raise GameOverError(f"the game is over after {game.notation(game.parse(moves))!r}: nothing to judge")
    weak, strong = oracles or (require_oracle(game, max_nodes=max_nodes),
                               require_oracle(game, score=True, max_nodes=max_nodes))
    values = weak(state)
    best = max(values.values())
    score = 0 if best == 0 else int(strong.value(state))  # type: ignore[union-attr]
    if (score > 0) - (score < 0) != best:
        raise AssertionError(f"the solver's score {score} and weak value {best} disagree after {moves!r}")
    notation = game.notation(game.parse(moves))
    return JudgedPosition(notation, score, values, split_of(notation))


def format_position(position: JudgedPosition) -> str:
    """One line of the position file: ``MOVES SCORE LEFT CLASS SPLIT VALUES``.

    ``VALUES`` has one letter per column 1-7: ``W`` the move wins, ``D`` draws, ``L`` loses (for the
    player making it), ``.`` the column is full.
    """
    letters = "".join(_LETTERS[position.values[c]] if c in position.values else "." for c in range(1, 8))
    return f"{position.moves} {position.score} {position.left} {position.name} {position.split} {letters}"


def parse_position(line: str, where: str = "line") -> JudgedPosition:
    """A position from one line of :func:`format_position`, checked against itself and the rules of the game.

    Raises:
        ImportFormatError: a malformed line, an illegal or finished position, a class that does not follow
            from the moves and the score, or move letters that do not match the legal moves.
    """
    fields = line.split()
    if len(fields) != 6:
        raise ImportFormatError(f"{where}: {line.strip()!r} is not 'MOVES SCORE LEFT CLASS SPLIT VALUES'")
    moves, score_text, left_text, name, split, letters = fields
    try:
        score, left = int(score_text), int(left_text)
        game = find_game("connect4")
        state = game.replay(moves)
        position = JudgedPosition(moves, score, {c: _VALUES[x] for c, x in enumerate(letters, 1) if x != "."}, split)
        checks = [(not state.is_terminal, "the game is over"),
                  (len(letters) == 7 and set(letters) <= {"W", "D", "L", "."}, "VALUES is not 7 of W D L ."),
                  (sorted(position.values) == sorted(state.legal_moves()), "VALUES do not match the legal moves"),
                  (position.left == left, f"LEFT should be {position.left}"),
                  (position.name == name, f"CLASS should be {position.name}"),
                  (split == split_of(moves), f"SPLIT should be {split_of(moves)} (treelab.analysis.mistakes.split_of)"),
                  ((score > 0) - (score < 0) == position.best, "SCORE's sign is not the best move's value")]
    except (ValueError, KeyError) as exc:
        raise ImportFormatError(f"{where}: {line.strip()!r}: {exc}") from None
    for ok, why in checks:
        if not ok:
            raise ImportFormatError(f"{where}: {line.strip()!r}: {why}")
    return position


def read_positions(path: str | os.PathLike[str] = DEFAULT_POSITIONS, *, split: str | None = None,
                   classes: Iterable[str] | None = None) -> list[JudgedPosition]:
    """The positions of a file written with :func:`format_position` (``#`` lines are comments), in file order.

    Args:
        path: the file (default: the positions shipped in ``data/connect4/mistakes/``).
        split: keep only ``dev`` or ``test`` (None: both).
        classes: keep only these ``stage-difficulty`` classes (None: all).

    Raises:
        ImportFormatError: a malformed line (named by its number), or an unknown split or class asked for.
    """
    if split is not None and split not in SPLITS:
        raise ImportFormatError(f"split {split!r} is not one of {', '.join(SPLITS)}")
    wanted = None if classes is None else set(classes)
    if wanted is not None and wanted - set(CLASSES):
        raise ImportFormatError(f"unknown class {sorted(wanted - set(CLASSES))[0]!r}: use one of {', '.join(CLASSES)}")
    found = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip() or line.startswith("#"):
                continue
            position = parse_position(line, f"{os.fspath(path)}:{number}")
            if (split is None or position.split == split) and (wanted is None or position.name in wanted):
                found.append(position)
    return found
