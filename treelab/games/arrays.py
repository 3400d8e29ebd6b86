"""A game's positions as numpy arrays, many at a time: what a fit's examples are built from in bulk
(:mod:`treelab.learn.bulk`), the very features, legal moves and keys each :class:`~treelab.games.State` gives
one at a time.

:func:`bulk_replay` gives a game's replay of many rows at once (each row's parent row, the move into it, its
depth), where the game has one: Connect Four's bitboards, replayed a depth at a time from the parents', its
features, legal moves and keys computed on the bitboards of every example together. Other games have none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .base import Game
from .connect4 import HEIGHT, WIDTH, ConnectFour

__all__ = ["Positions", "Replay", "bulk_replay", "connect4_positions"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Positions:
    """The positions of every row, as a game's bulk replay gives them."""

    terminal: npt.NDArray[np.bool_]
    """``(n,)``: the end of a game."""
    to_move: npt.NDArray[np.int64]
    """``(n,)``: the player to move (1 or 2)."""
    mover: npt.NDArray[np.int64]
    """``(n,)``: the player who moved into the position (its parent's player to move; at a root, the other)."""
    examples: Any
    """``examples(index)``: ``(features (k, width) float32, legal (k, num_moves) bool, keys (k,) int64)`` of
    the rows at ``index``."""


Replay = Callable[[I64, I64, I64], "Positions | None"]
"""A game's bulk replay: ``replay(parent, moves, depth)`` (see :func:`bulk_replay`)."""


# -- Connect Four ------------------------------------------------------------------------------------------------------
_H1 = HEIGHT + 1
_U = np.uint64
_BOTTOM = np.array([1 << (_H1 * c) for c in range(WIDTH)], dtype=np.uint64)
_TOP = np.array([1 << (_H1 * c + HEIGHT - 1) for c in range(WIDTH)], dtype=np.uint64)
_BOARD = _U(sum(((1 << HEIGHT) - 1) << (_H1 * c) for c in range(WIDTH)))
_CELL_BITS = np.array([_H1 * c + HEIGHT - 1 - r for r in range(HEIGHT) for c in range(WIDTH)], dtype=np.uint64)
"""Each feature cell's bit (row from the top, then column), as :meth:`ConnectFourState.features` reads them."""


def _has_four(pos: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    found = np.zeros(len(pos), dtype=bool)
    for s in (1, _H1, HEIGHT, _H1 + 1):
        m = pos & (pos >> _U(s))
        found |= (m & (m >> _U(2 * s))) != 0
    return found


def _winning_cells(pos: npt.NDArray[np.uint64], mask: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """:func:`treelab.games.connect4._winning_cells` on many boards (bits shifted past 64 are off the board)."""
    r = (pos << _U(1)) & (pos << _U(2)) & (pos << _U(3))
    for s in (_H1, HEIGHT, _H1 + 1):
        p = (pos << _U(s)) & (pos << _U(2 * s))
        r |= p & (pos << _U(3 * s))
        r |= p & (pos >> _U(s))
        p = (pos >> _U(s)) & (pos >> _U(2 * s))
        r |= p & (pos << _U(s))
        r |= p & (pos >> _U(3 * s))
    return r & (_BOARD ^ mask)


def connect4_positions(parent: I64, moves: I64, depth: I64) -> Positions | None:
    """Every row's Connect Four position, replayed a depth at a time on bitboards (None: a move on a full
    column or after the end of a game, which the reference refuses)."""
    n = len(parent)
    cur = np.zeros(n, dtype=np.uint64)
    mask = np.zeros(n, dtype=np.uint64)
    terminal = np.zeros(n, dtype=bool)
    by_depth = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max()) + 2))
    for d in range(1, len(bounds) - 1):
        at = by_depth[bounds[d]:bounds[d + 1]]
        if not len(at):
            continue
        up = parent[at]
        column = moves[at] - 1
        if terminal[up].any() or ((mask[up] & _TOP[column]) != 0).any():
            return None
        before = mask[up]
        new_mask = before | (before + _BOTTOM[column])
        new_cur = cur[up] ^ before
        cur[at], mask[at] = new_cur, new_mask
        terminal[at] = _has_four(new_cur ^ new_mask) | (d == WIDTH * HEIGHT)
    to_move = 1 + (depth & 1)

    def examples(index: I64) -> tuple[Any, Any, Any]:
        mine, board = cur[index], mask[index]
        theirs = mine ^ board
        planes = np.stack([mine, theirs, _winning_cells(mine, board), _winning_cells(theirs, board)], axis=1)
        features = ((planes[:, :, None] >> _CELL_BITS[None, None, :]) & _U(1)).astype(np.float32)
        legal = (board[:, None] & _TOP[None, :]) == 0
        keys = (mine + board + (depth[index].astype(np.uint64) << _U(49))).astype(np.int64)
        return features.reshape(len(index), 4 * WIDTH * HEIGHT), legal, keys

    return Positions(terminal, to_move, 3 - to_move, examples)


_REPLAYS: dict[type, tuple[Replay, str]] = {ConnectFour: (connect4_positions, "connect4-planes-v2")}
"""The games with bulk positions (their exact class: a subclass may change the rules) and the encoding they give."""


def bulk_replay(game: Game) -> Replay | None:
    """``game``'s replay of many positions at once (``replay(parent, moves, depth)``: each row's parent row, the
    move into it, its depth; a :class:`Positions`, or None where a row is not a legal position), None if it has
    none for its encoding (the positions are then made one at a time)."""
    found = _REPLAYS.get(type(game))
    return found[0] if found is not None and game.encoding == found[1] else None
