"""A fit's examples built over all the rows at once with numpy: :func:`treelab.learn.dataset.build_dataset`'s
fast path, giving the very arrays :func:`~treelab.learn.dataset.reference_dataset` gives one node at a time.

The rows become columns; each row's parent is found by a sorted search of the ids; the policy targets are
sums over the children grouped by parent (:func:`numpy.bincount`); the value targets are the reference's
arithmetic in the same order on float64 columns. The positions come from the game in bulk: Connect Four's
bitboards are replayed a depth at a time from the parents' (rows come parents first), its features, legal
moves and keys computed on the bitboards of every example together (:mod:`treelab.games.arrays`).

Where the rows are not what the stored tree always holds (an id twice, a parent missing or deeper, a move
that is not a column, a move played on a full column or after the end of a game, two children with one
move), or the game has no bulk positions, :func:`bulk_arrays` returns None and the reference path runs:
its answer, or its error, stands.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..games import Game
from ..games.arrays import Positions, bulk_replay
from ..store.rows import FitRows

__all__ = ["Positions", "bulk_arrays"]

I64 = npt.NDArray[np.int64]


Logged = Callable[[], dict[int, tuple[int, float]]]
"""The logged games' figures by node (:func:`treelab.learn.dataset.game_outcomes`, ``logged_values``), asked
for only when needed."""


def bulk_arrays(game: Game, fit_rows: FitRows, *, min_visits: int, max_depth: int | None,
                only: Collection[int] | None, outcome: float, outcomes: Logged, root_value: float,
                searched: Logged) -> tuple[Any, ...] | None:
    """The fields of :func:`~treelab.learn.dataset.build_dataset`'s ``Dataset`` built over all rows at once;
    None where it cannot be sure to give the reference's answer (see the module doc)."""
    replay = bulk_replay(game)
    rows = fit_rows.rows
    if replay is None:
        return None
    if not rows:  # nothing read: no example
        size, width = game.num_moves, int(np.prod(game.feature_shape))
        return (np.zeros((0, width), np.float32), np.zeros((0, size), np.float32), np.zeros(0, np.float32),
                np.zeros((0, size), bool), *(np.zeros(0, np.int64) for _ in range(3)), 0, 0)
    try:
        columns = _columns(game, rows, only)
    except (TypeError, ValueError, OverflowError, IndexError):  # a value of a type SQLite's columns do not hold here
        return None
    if columns is None:
        return None
    ids, parent, moves, depth, visits, wins, draws, proven, select, value_sum, wanted = columns
    positions = replay(parent, moves, depth)
    if positions is None:
        return None
    n, size, first = len(ids), game.num_moves, game.first_move
    child = np.flatnonzero(parent >= 0)
    of = parent[child]
    slot = moves[child] - first
    if len(child) and (slot.min() < 0 or slot.max() >= size):
        return None
    if len(child) and np.bincount(of * size + slot).max() > 1:  # two children with one move
        return None
    # the policy targets, for every row with children (as _policy_target)
    kid_proven = proven[child]
    won = kid_proven == 1
    alive = kid_proven != -1  # an unproven child (NaN) is alive
    winners = np.bincount(of, weights=won, minlength=n)
    living = np.bincount(of, weights=alive, minlength=n)
    kids = np.bincount(of, minlength=n)
    counted = np.where(winners[of] > 0, won, np.where(living[of] > 0, alive, True))
    kid_select = select[child].astype(np.float64)
    chosen = np.bincount(of, weights=np.where(counted, kid_select, 0.0), minlength=n)
    use_selections = (winners == 0) & (chosen >= min_visits)
    count = np.where(use_selections[of], kid_select, visits[child].astype(np.float64))
    total = np.bincount(of, weights=np.where(counted, count, 0.0), minlength=n)
    has_target = (winners > 0) | (total > 0)
    # the examples
    deepest = max_depth if max_depth is not None else 1 << 62
    keep = (visits >= min_visits) & (depth <= deepest) & (kids > 0) & ~positions.terminal & has_target
    if wanted is not None:
        keep &= wanted
    index = np.flatnonzero(keep)
    k = len(index)
    example_of = np.full(n, -1, dtype=np.int64)
    example_of[index] = np.arange(k)
    policy64 = np.zeros((k, size), dtype=np.float64)
    into = counted & (example_of[of] >= 0)
    rows_at, kid_at = example_of[of[into]], np.flatnonzero(into)
    share = np.where(winners[of[into]] > 0, 1.0 / np.maximum(winners[of[into]], 1.0),
                     count[kid_at] / np.where(total[of[into]] > 0, total[of[into]], 1.0))
    policy64[rows_at, slot[into]] = share
    policy = policy64.astype(np.float32)
    # the value targets (as the reference: proof or mean, for the player to move, then the logged shares)
    ex_proven = proven[index]
    proof = ~np.isnan(ex_proven)
    ex_visits = visits[index].astype(np.float64)
    mean = np.divide(wins[index] + 0.5 * draws[index] + 0.5 * value_sum[index], ex_visits,
                     out=np.full(k, 0.5), where=ex_visits != 0)
    value = np.where(proof, (ex_proven + 1.0) / 2.0, mean)
    to_move = positions.to_move[index]
    value = np.where(positions.mover[index] != to_move, 1.0 - value, value)
    if root_value > 0:  # (1 - share) * value + share * total / count, as the reference reads
        for i, (searches, summed) in _logged(searched(), ids[index], proof):
            value[i] = (1.0 - root_value) * float(value[i]) + root_value * summed / searches
    if outcome > 0:
        for i, (passed, score) in _logged(outcomes(), ids[index], proof):
            z = score / passed if to_move[i] == 1 else 1.0 - score / passed
            value[i] = (1.0 - outcome) * float(value[i]) + outcome * z
    features, legal, keys = positions.examples(index)
    _, first_at, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(len(first_at), dtype=np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(len(first_at))
    width = int(np.prod(game.feature_shape))
    return (
        np.ascontiguousarray(features, dtype=np.float32).reshape(-1, width), policy.reshape(-1, size),
        value.astype(np.float32), legal.reshape(-1, size), rank[inverse.reshape(-1)].astype(np.int64),
        visits[index].astype(np.int64), ids[index].astype(np.int64), int(proof.sum()),
        int(use_selections[index].sum()),
    )


def _logged(logged: dict[int, tuple[int, float]], nodes: I64,
            proof: npt.NDArray[np.bool_]) -> list[tuple[int, tuple[int, float]]]:
    """``(example, logged figures)`` of the examples whose node ``logged`` holds and whose value is no proof."""
    return [(i, found) for i, (nid, proven) in enumerate(zip(nodes.tolist(), proof.tolist(), strict=True))
            if not proven and (found := logged.get(nid)) is not None]


def _columns(game: Game, rows: list[Any], only: Collection[int] | None) -> tuple[Any, ...] | None:
    """The rows as numpy columns: ids, each row's parent's row (-1: none), move ids (-1 at a root), depth,
    visits, wins, draws, proven (NaN: unproven), selections, value sums, and whether ``only`` holds the row
    (None: no ``only``). None when the rows are not a stored tree's (see the module doc)."""
    n = len(rows)
    if set(map(len, rows)) != {11}:
        return None

    def column(at: int, kind: type = np.int64) -> Any:  # one field of every row (map and itemgetter: no loop)
        return np.fromiter(map(itemgetter(at), rows), dtype=kind, count=n)

    ids = column(0)
    pids_ = list(map(itemgetter(1), rows))
    labels = list(map(itemgetter(2), rows))
    if pids_[0] is None and pids_.count(None) == 1:  # the one root first, as read_fit_rows orders the rows
        rooted = np.zeros(n, dtype=bool)
        rooted[0] = True
        pids = np.empty(n, dtype=np.int64)
        pids[0] = -1
        pids[1:] = pids_[1:]
    else:
        rooted = np.fromiter((p is None for p in pids_), dtype=bool, count=n)
        pids = np.fromiter((-1 if p is None else p for p in pids_), dtype=np.int64, count=n)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    if n > 1 and (sorted_ids[1:] == sorted_ids[:-1]).any():
        return None
    at = np.minimum(np.searchsorted(sorted_ids, pids), n - 1)
    parent = np.where(rooted, -1, order[at])
    if not (rooted | (sorted_ids[at] == pids)).all():  # a parent not among the rows
        return None
    depth = column(3)
    has_parent = ~rooted
    if (depth[rooted] != 0).any() or (depth[has_parent] != depth[parent[has_parent]] + 1).any():
        return None
    codes: dict[Any, int] = {}
    for label in set(labels):
        try:
            codes[label] = game.parse_move(label)
        except Exception:  # not a move: fine at a root, which has none
            codes[label] = -1
    moves = np.fromiter(map(codes.__getitem__, labels), dtype=np.int64, count=n)
    if (moves[has_parent] < 0).any():  # the reference meets it (or not, where no example needs it)
        return None
    moves[rooted] = -1
    wanted = None
    if only is not None:
        wanted = np.isin(ids, np.fromiter(only, dtype=np.int64, count=len(only)))
    return (ids, parent, moves, depth, column(4), column(5, np.float64), column(6, np.float64),
            np.array(list(map(itemgetter(7), rows)), dtype=np.float64),  # None (unproven): NaN
            column(8), column(10, np.float64), wanted)
