"""A small exact solver for checking MCTS-Solver proofs: negamax with alpha-beta and a transposition table.

Weak solving only: the value of a position for the player to move is 1 (win),
0 (draw) or -1 (loss) with perfect play. It works on any treelab ``State``
(``legal_moves``, ``play``, ``winner``, ``is_terminal``, ``winning_moves``,
``threats``, ``key``) and is meant for late Connect Four positions (up to
about 14 empty cells) and for all of tic-tac-toe. It is checked against the
gamesolver.org scores in ``tests/mcts/test_solver_proofs.py``.

Standard, safe prunings only: a position with a winning move is won; when the
opponent threatens to win at once, only blocking moves are searched (two
threats and no win of our own: lost); moves are tried centre first.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

EXACT, LOWER, UPPER = 0, 1, 2


class ExactSolver:
    """Exact game values with a transposition table shared across calls.

    Args:
        max_nodes: give up (raise ``RuntimeError``) after visiting this many positions in one call.
    """

    def __init__(self, max_nodes: int = 2_000_000) -> None:
        self.table: dict[Hashable, tuple[int, int]] = {}
        self.max_nodes = max_nodes
        self.nodes = 0

    def value(self, state: Any) -> int:
        """1, 0 or -1: the result for the player to move with perfect play from both sides."""
        self.nodes = 0
        return self._negamax(state, -1, 1)

    def best_moves(self, state: Any) -> list[int]:
        """Every move that keeps the value of ``state`` (the perfect moves)."""
        target = self.value(state)
        return [m for m in state.legal_moves() if self._after(state, m) == target]

    def _after(self, state: Any, move: int) -> int:
        child = state.play(move)
        return -self.value(child)

    def _negamax(self, state: Any, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise RuntimeError(f"exact solver gave up after {self.max_nodes} positions")
        if state.is_terminal:
            return 0 if state.winner is None else -1  # the player who just moved won
        if state.winning_moves():
            return 1
        key = state.key()
        hit = self.table.get(key)
        alpha0 = alpha
        if hit is not None:
            value, flag = hit
            if flag == EXACT:
                return value
            if flag == LOWER:
                alpha = max(alpha, value)
            else:
                beta = min(beta, value)
            if alpha >= beta:
                return value
        threats = sorted(set(state.threats()))
        if len(threats) >= 2:
            best = -1  # we cannot win at once and can block only one of them
        else:
            moves = threats or _centre_first(state.legal_moves(), state.game.num_moves)
            best = -2
            for move in moves:
                score = -self._negamax(state.play(move), -beta, -alpha)
                if score > best:
                    best = score
                if best > alpha:
                    alpha = best
                if alpha >= beta:
                    break
        flag = UPPER if best <= alpha0 else LOWER if best >= beta else EXACT
        self.table[key] = (best, flag)
        return best


def _centre_first(moves: list[int], num_moves: int) -> list[int]:
    """Moves ordered by distance from the middle label (columns 4, 3, 5, ...; cell 5 first)."""
    middle = (num_moves + 1) / 2
    return sorted(moves, key=lambda m: (abs(m - middle), m))


def solve(state: Any) -> int:
    """The value of ``state`` for the player to move (a fresh solver)."""
    return ExactSolver().value(state)


class PerfectPlayer:
    """A perfect player (a :class:`treelab.play.players.Player`): a random move among those that keep the value.

    Args:
        rng: picks among equally good moves, so a match sees many perfect lines.
    """

    def __init__(self, rng: Any = None) -> None:
        import random

        self.rng = rng if isinstance(rng, random.Random) else random.Random(rng)
        self.solver = ExactSolver()
        self.name = "perfect"

    def new_game(self, game: Any) -> None:
        return None

    def choose(self, state: Any, moves: Any) -> int:
        best = self.solver.best_moves(state)
        return best[int(self.rng.random() * len(best))]
