"""Position evaluators for PUCT: move priors and a value for the player to move.

An evaluator is a plain function (or callable object) behind the
:data:`Evaluator` alias, as AlphaZero's network is for its search (Silver et
al. 2017, 2018): given a position and the search's random generator it
returns an :class:`Evaluation` with a prior probability for every legal move
and the expected reward of the player to move, in [0, 1] (1 win, 0.5 draw,
0 loss). Rewards in [0, 1] match the tree's ``nb_win``/``nb_draw`` counts.

Built-ins:

- :class:`RolloutEvaluator` (``"rollout"``): uniform priors and the result of
  a random (or decisive) playout as the value, the classic MCTS evaluation
  used as a stand-in for a network (OpenSpiel's ``RandomRolloutEvaluator``).
- :class:`HeuristicEvaluator` (``"heuristic"``): priors from immediate wins,
  forced blocks, new threats, moves that hand the opponent a win, and
  centrality (the number of four-in-a-row lines through the cell a Connect
  Four disc lands on; lines through a cell in tic-tac-toe); the value is a
  playout result as above.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import NamedTuple

from ..errors import BudgetError
from ..games import State
from ..games.connect4 import HEIGHT, WIDTH, ConnectFourState
from ..games.tictactoe import TicTacToeState
from .policies import PlayoutFn, find_playout

__all__ = [
    "C4_LINES",
    "EVALUATORS",
    "TTT_LINES",
    "Evaluation",
    "Evaluator",
    "HeuristicEvaluator",
    "RolloutEvaluator",
    "find_evaluator",
    "uniform_priors",
]


class Evaluation(NamedTuple):
    """What an evaluator says about one position."""

    priors: Mapping[int, float]
    """Prior probability of every legal move (they sum to 1): PUCT's ``P``."""
    value: float
    """Expected reward of the player to move, in [0, 1] (1 win, 0.5 draw, 0 loss)."""


Evaluator = Callable[[State, random.Random], Evaluation]
"""``evaluate(state, rng) -> Evaluation`` for a non-terminal ``state``; ``rng`` is the search's generator."""

C4_LINES: tuple[tuple[int, ...], ...] = (
    (3, 4, 5, 7, 5, 4, 3),
    (4, 6, 8, 10, 8, 6, 4),
    (5, 8, 11, 13, 11, 8, 5),
    (5, 8, 11, 13, 11, 8, 5),
    (4, 6, 8, 10, 8, 6, 4),
    (3, 4, 5, 7, 5, 4, 3),
)
"""Four-in-a-row lines through each Connect Four cell, ``C4_LINES[row][column]``, row 0 at the bottom."""

TTT_LINES: tuple[int, ...] = (3, 2, 3, 2, 4, 2, 3, 2, 3)
"""Three-in-a-row lines through each tic-tac-toe cell (cells 1-9)."""


def uniform_priors(state: State) -> dict[int, float]:
    """The same prior for every legal move."""
    legal = state.legal_moves()
    p = 1.0 / len(legal)
    return dict.fromkeys(legal, p)


def _rollout_value(state: State, playout: PlayoutFn, rollouts: int, rng: random.Random) -> float:
    """Mean reward of the player to move over ``rollouts`` playouts from ``state``."""
    me = state.to_move
    total = 0.0
    for _ in range(rollouts):
        winner = playout(state, rng)
        total += 0.5 if winner is None else (1.0 if winner == me else 0.0)
    return total / rollouts


class RolloutEvaluator:
    """Uniform priors; the value is the mean result of ``rollouts`` playouts.

    With one rollout the value is exactly 1, 0.5 or 0, so PUCT backs up the
    playout's real result, as UCT does.

    Args:
        playout: ``"random"`` (uniform moves), ``"decisive"`` or a playout function.
        rollouts: playouts per evaluation.
    """

    def __init__(self, *, playout: str | PlayoutFn = "random", rollouts: int = 1) -> None:
        if rollouts < 1:
            raise BudgetError(f"rollouts {rollouts!r} must be at least 1")
        self.playout = find_playout(playout)
        self.rollouts = rollouts
        self.name = "rollout"

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        return Evaluation(uniform_priors(state), _rollout_value(state, self.playout, self.rollouts, rng))


class HeuristicEvaluator:
    """Priors from threats and centrality; the value from playouts.

    Weights of a legal move before normalising:

    - the player to move can win at once: only the winning moves (weight 1);
    - else the opponent threatens to win at once: only the blocking moves;
    - else centrality (lines through the cell the move takes), times
      ``threat_bonus`` per immediate win the move creates, times
      ``blunder_weight`` when the move lets the opponent win at once
      (in Connect Four: playing under the opponent's winning cell).

    Other games get uniform centrality.

    Args:
        playout: the value's playout policy, ``"random"`` or ``"decisive"``.
        rollouts: playouts per evaluation.
        threat_bonus: factor per new immediate win the move creates.
        blunder_weight: factor for a move that hands the opponent an immediate win.
    """

    def __init__(
        self,
        *,
        playout: str | PlayoutFn = "random",
        rollouts: int = 1,
        threat_bonus: float = 2.0,
        blunder_weight: float = 0.02,
    ) -> None:
        if rollouts < 1:
            raise BudgetError(f"rollouts {rollouts!r} must be at least 1")
        if threat_bonus <= 0 or blunder_weight <= 0:
            raise BudgetError("threat_bonus and blunder_weight must be positive")
        self.playout = find_playout(playout)
        self.rollouts = rollouts
        self.threat_bonus = threat_bonus
        self.blunder_weight = blunder_weight
        self.name = "heuristic"

    def priors(self, state: State) -> dict[int, float]:
        """The prior of every legal move (see the class docstring)."""
        if isinstance(state, ConnectFourState):
            return _normalised(_c4_weights(state, self.threat_bonus, self.blunder_weight))
        wins = state.winning_moves()
        if wins:
            return _normalised(dict.fromkeys(wins, 1.0))
        blocks = state.threats()
        if blocks:
            return _normalised(dict.fromkeys(blocks, 1.0))
        weights = {}
        for move in state.legal_moves():
            after = state.play(move)
            weight = _centrality(state, move)
            if not after.is_terminal:
                weight *= self.threat_bonus ** len(after.threats())  # my immediate wins, were it my turn
                if after.winning_moves():  # the opponent wins at once
                    weight *= self.blunder_weight
            weights[move] = weight
        return _normalised(weights)

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        return Evaluation(self.priors(state), _rollout_value(state, self.playout, self.rollouts, rng))


_COLUMN = (1 << HEIGHT) - 1
_BOARD = sum(_COLUMN << ((HEIGHT + 1) * c) for c in range(WIDTH))
_BOTTOM = [1 << ((HEIGHT + 1) * c) for c in range(WIDTH)]
_BOTTOMS = sum(_BOTTOM)


def _winning_cells(pos: int, mask: int) -> int:
    """The empty cells where one more disc of ``pos`` makes four in a row (Pons' bitboard method)."""
    r = (pos << 1) & (pos << 2) & (pos << 3)  # vertical: three below
    for s in (HEIGHT + 1, HEIGHT, HEIGHT + 2):  # horizontal and both diagonals
        p = (pos << s) & (pos << 2 * s)
        r |= p & (pos << 3 * s)
        r |= p & (pos >> s)
        p = (pos >> s) & (pos >> 2 * s)
        r |= p & (pos << s)
        r |= p & (pos >> 3 * s)
    return r & (_BOARD ^ mask)


def _c4_weights(state: ConnectFourState, threat_bonus: float, blunder_weight: float) -> dict[int, float]:
    """:meth:`HeuristicEvaluator.priors` before normalising, on bitboards (same result as the generic rules)."""
    mask, mine = state.mask, state.cur
    theirs = mine ^ mask
    playable = (mask + _BOTTOMS) & _BOARD
    wins = _winning_cells(mine, mask) & playable
    if not wins:
        wins = _winning_cells(theirs, mask) & playable  # blocks
    legal = [c for c in range(WIDTH) if playable & (_COLUMN << ((HEIGHT + 1) * c))]
    if wins:
        return {c + 1: 1.0 for c in legal if wins & (_COLUMN << ((HEIGHT + 1) * c))}
    weights = {}
    for c in legal:
        shift = (HEIGHT + 1) * c
        bit = playable & (_COLUMN << shift)
        row = (bit >> shift).bit_length() - 1
        new_mask = mask | bit
        open_cells = (new_mask + _BOTTOMS) & _BOARD
        threats = bin(_winning_cells(mine | bit, new_mask) & open_cells).count("1")
        weight = float(C4_LINES[row][c]) * threat_bonus**threats
        if _winning_cells(theirs, new_mask) & open_cells:
            weight *= blunder_weight
        weights[c + 1] = weight
    return weights


def _centrality(state: State, move: int) -> float:
    """Lines through the cell that ``move`` takes (1.0 for games without a table)."""
    if isinstance(state, ConnectFourState):
        c = move - 1
        column = (state.mask >> ((HEIGHT + 1) * c)) & ((1 << HEIGHT) - 1)
        row = column.bit_length()  # discs already in the column
        return float(C4_LINES[min(row, HEIGHT - 1)][c]) if 0 <= c < WIDTH else 1.0
    if isinstance(state, TicTacToeState):
        return float(TTT_LINES[move - 1])
    return 1.0


def _normalised(weights: dict[int, float]) -> dict[int, float]:
    total = sum(weights.values())
    return {m: w / total for m, w in weights.items()}


EVALUATORS: dict[str, Callable[..., Evaluator]] = {
    "rollout": RolloutEvaluator,
    "heuristic": HeuristicEvaluator,
}
"""Evaluator factories by name (``puct:...,evaluator=heuristic``); keywords: ``playout``, ``rollouts``."""


def find_evaluator(name: str | Evaluator, **options: object) -> Evaluator:
    """The evaluator called ``name``, built with ``options`` (a callable is returned as it is).

    Raises:
        BudgetError: ``name`` is not a known evaluator.
    """
    if callable(name):
        return name
    try:
        factory = EVALUATORS[name]
    except KeyError:
        raise BudgetError(f"unknown evaluator {name!r}: use one of {', '.join(EVALUATORS)}") from None
    return factory(**options)
