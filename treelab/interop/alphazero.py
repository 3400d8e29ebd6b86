"""alpha-zero-general's search statistics: ``Nsa``, ``Qsa``, ``Ns``, ``Ps`` keyed by a position string.

alpha-zero-general's ``MCTS`` class (github.com/suragnair/alpha-zero-general, ``MCTS.py``) keeps
no tree, only dictionaries keyed by ``s = game.stringRepresentation(canonicalBoard)``:
``Nsa[(s, a)]`` the visits of action ``a`` at ``s``, ``Qsa[(s, a)]`` its mean value in [-1, 1]
for the player who takes it (the player to move at ``s``: boards are canonical), ``Ns[s]`` the
visits of ``s`` and ``Ps[s]`` its policy vector. :func:`from_alphazero` replays the game from the
searched position, following every action with visits, so the position graph becomes paths: a
child's visits are ``Nsa``, its value sum ``Qsa * Nsa`` (each simulation a draw plus its return,
:mod:`treelab.interop.build`) and its prior ``Ps[s][a]``.

**Transpositions.** The statistics are per position, not per path: a position reached by two move
orders has one ``Nsa``/``Qsa``, and each path to it gets a copy of the whole subtree below it.
So a node counts every simulation through its position, whichever way it came, and a parent's
visits may be fewer than its children's together. Trees of games without transpositions (or
searched from positions where none occur) are imported exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ImportFormatError
from ..games import Game, State, find_game
from ..tree import Tree
from .build import Builder, Stats

__all__ = ["AlphaZeroStats", "from_alphazero"]


@dataclass(frozen=True)
class AlphaZeroStats:
    """alpha-zero-general's dictionaries (``mcts.Nsa``, ``mcts.Qsa``, ``mcts.Ns``, ``mcts.Ps``) and how to read them."""

    nsa: Mapping[tuple[Hashable, int], int]
    """Visits of action ``a`` at position ``s``: ``Nsa[(s, a)]``."""
    qsa: Mapping[tuple[Hashable, int], float]
    """Mean value in [-1, 1] of action ``a`` at ``s`` for the player taking it: ``Qsa[(s, a)]``."""
    ns: Mapping[Hashable, int]
    """Visits of position ``s``: ``Ns[s]``."""
    ps: Mapping[Hashable, Sequence[float]] = field(default_factory=dict)
    """Policy vector of position ``s``, indexed by action: ``Ps[s]`` (empty: no priors)."""


def from_alphazero(stats: AlphaZeroStats, game: str | Game, key: Callable[[State], Hashable], *,
                   moves: Sequence[int | str] = (), action_to_move: Callable[[int], int] | None = None,
                   move_to_action: Callable[[int], int] | None = None) -> Tree:
    """A tree from alpha-zero-general style statistics, replaying ``game`` from the searched position.

    Args:
        stats: the four dictionaries.
        game: the game searched.
        key: a position's key in the dictionaries (alpha-zero-general's ``stringRepresentation`` of its
            canonical board).
        moves: the moves from the game's start to the searched position.
        action_to_move: an action index -> the game's move (None: ``action + game.first_move``).
        move_to_action: the inverse (None: ``move - game.first_move``).

    Raises:
        ImportFormatError: no statistics for the searched position, a value outside [-1, 1].
    """
    the_game = find_game(game)
    first = the_game.first_move
    to_move_of = action_to_move or (lambda a: a + first)
    to_action = move_to_action or (lambda m: m - first)
    builder = Builder(the_game, "alpha-zero-general statistics")
    path, position = builder.start(the_game.parse(list(moves)))
    s0 = key(position)
    if s0 not in stats.ns:
        raise ImportFormatError(f"alpha-zero-general statistics: the searched position's key {s0!r} is not in Ns: "
                                "give the position the search ran from (moves=...) and the same key function")
    visits = int(stats.ns[s0])
    legal = position.legal_moves()
    total = sum(float(stats.qsa[(s0, to_action(m))]) * int(stats.nsa[(s0, to_action(m))])
                for m in legal if (s0, to_action(m)) in stats.nsa)
    to_move = position.to_move
    for node in path:  # ``total`` is the player to move's: the searched node's mover is the other player
        sign = 1.0 if node.mover == to_move else -1.0
        builder.set(node, Stats(visits=visits, value_sum=sign * total, selected=0), position,
                    "the searched position" if node is path[-1] else "a move before it")
    limit = (the_game.max_length or 1 << 20) + 1
    stack: list[tuple[Any, State, Hashable, int]] = [(path[-1], position, s0, 0)]
    while stack:
        node, state, s, depth = stack.pop()
        if state.is_terminal or depth > limit:
            continue
        policy = stats.ps.get(s)
        for move in state.legal_moves():
            a = to_action(move)
            n = stats.nsa.get((s, a))
            if not n:
                continue
            where = f"Nsa[({s!r}, {a})]"
            child, after = builder.child(node, state, to_move_of(a), where)
            q = float(stats.qsa.get((s, a), 0.0))
            prior = float(policy[a]) if policy is not None else None
            builder.set(child, Stats(visits=int(n), value_sum=q * int(n), prior=prior), after, where)
            if not after.is_terminal:
                stack.append((child, after, key(after), depth + 1))
    return builder.tree
