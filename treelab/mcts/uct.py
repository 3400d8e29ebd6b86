"""The MCTS loop on the persistent tree: select, expand, simulate, back up.

UCT as in Browne et al. (2012), "A Survey of Monte Carlo Tree Search Methods":
the tree policy descends by UCB1 and expands one untried move, the default
policy plays the game out (not stored), and the result is backed up along the
whole stored path from the root, so the root's ``nb_visit`` counts every
simulation. With ``solver=True`` terminal results are propagated as proofs
(MCTS-Solver, Winands, Bjornsson & Saito 2008): a position with a winning move
is won for the player to move, one whose moves all lose is lost.
"""

from __future__ import annotations

import gc
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import fastpath
from ..errors import BudgetError
from ..games import Game, State
from ..tree import SQRT2, Moves, Tree, TreeNode
from .policies import PlayoutFn, find_playout, make_rng, random_playout

__all__ = ["Limit", "search"]

_KIDS = "_LightNodeMixin__children"


@dataclass(frozen=True)
class Limit:
    """A search budget: stop after ``iterations`` simulations or ``seconds``, whichever first."""

    iterations: int | None = None
    """Simulations to run (None: no count limit)."""
    seconds: float | None = None
    """Wall-clock seconds to search (None: no time limit)."""

    def __post_init__(self) -> None:
        if self.iterations is None and self.seconds is None:
            raise BudgetError("a search needs a budget: give iterations or seconds")
        if self.iterations is not None and (not isinstance(self.iterations, int) or self.iterations < 1):
            raise BudgetError(f"iterations {self.iterations!r} must be a whole number of at least 1")
        if self.seconds is not None and not (self.seconds > 0 and math.isfinite(self.seconds)):
            raise BudgetError(f"seconds {self.seconds!r} must be a positive number")


def search(
    tree: Tree,
    moves: Moves = None,
    *,
    limit: Limit,
    c: float = SQRT2,
    solver: bool = False,
    playout: str | PlayoutFn = "random",
    rng: random.Random | int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> int:
    """Run UCT simulations from the position ``moves`` of ``tree``; returns how many ran.

    Args:
        tree: the persistent tree (grown in place).
        moves: the position to search, as moves from the start.
        limit: the budget.
        c: UCB1 exploration constant (rewards in [0, 1]).
        solver: propagate proven wins/losses/draws (MCTS-Solver) and stop once
            the position is proven.
        playout: ``"random"``, ``"decisive"`` or a :data:`PlayoutFn`.
        rng: a seed or generator; the same seed grows the same tree.
        should_stop: polled every simulation; True ends the search early (Ctrl-C).

    The tree walk (descend, select, back up) runs in C when ``treelab._speedups``
    is built (:mod:`treelab.fastpath`), with exactly the Python rule. During the
    search the positions of nodes not yet fully expanded are cached (at most
    ``_FRONTIER_CAP``), the nodes above ``moves`` receive their counts when it
    returns (also on an exception), and the cyclic garbage collector is paused.
    """
    if c < 0 or not math.isfinite(c):
        raise BudgetError(f"c {c!r} must be a finite number >= 0")
    rng = make_rng(rng)
    play_out = find_playout(playout)
    prefix, start_state = tree.path(moves)
    start = prefix[-1]
    if start_state.is_terminal:
        return 0
    game = tree.game
    if play_out is random_playout:
        play_out = _direct_playout(game, rng)
    labels = [game.label(m) for m in range(game.num_moves + 1)]
    move_of = {label: m for m, label in enumerate(labels)}
    rand = rng.random
    max_moves = game.num_moves
    dirty = tree._dirty
    add_child = tree.add_child
    fast = fastpath.compiled
    descend, select, backup = (fast.descend, fast.select, fast.backup) if fast is not None else _PYTHON_WALK
    max_iter = limit.iterations if limit.iterations is not None else 1 << 62
    deadline = time.perf_counter() + limit.seconds if limit.seconds is not None else None
    # The frontier: for each node met below ``start`` that is not fully expanded, its position
    # and its untried moves in legal order (None: not listed yet; a terminal position lists
    # none). Fully expanded nodes are dropped, so the descent through them never plays a move
    # on a State; an entry dropped by the cap is rebuilt equal (replay, legal minus tried).
    frontier: dict[TreeNode, list[Any]] = {start: [start_state, None]}
    above = prefix[:-1]  # the nodes above ``start``: backed up once, at the end
    first_win = {1: (start.depth + 1) & 1, 2: start.depth & 1, None: None}  # path[i] is at depth start.depth + i
    done = draws = wins_odd = wins_even = 0
    collecting = gc.isenabled()
    gc.disable()  # the loop makes no garbage cycles; the collector would walk the growing tree over and over
    try:
        while done < max_iter:
            if solver and start.proven is not None:
                break
            path = [start]
            # -- selection and expansion (tree policy) --
            node = descend(start, path, c, solver, max_moves)  # down through fully expanded nodes
            while True:  # ``node`` may not be fully expanded: look at its position
                entry = frontier.get(node)
                if entry is None:
                    entry = frontier[node] = [_replay(start_state, path, move_of), None]
                state, untried = entry
                kids = getattr(node, _KIDS, None)
                if untried is None:
                    if state.is_terminal:
                        break
                    untried = state.legal_moves()
                    if kids:
                        tried = {kid.name for kid in kids}
                        untried = [m for m in untried if labels[m] not in tried]
                    entry[1] = untried
                if untried:
                    move = untried.pop(int(rand() * len(untried)))  # in legal order: a cleared entry comes back equal
                    if not untried and len(kids or ()) + 1 == max_moves:
                        del frontier[node]  # fully expanded from now on
                    node = add_child(node, labels[move])
                    state = state.play(move)
                    if len(frontier) >= _FRONTIER_CAP:
                        frontier.clear()  # bounded memory: positions met again are replayed
                    frontier[node] = [state, None]
                    path.append(node)
                    break
                if not kids:  # only a terminal position has no moves at all
                    break
                node = select(node, c, solver)  # every legal move tried, fewer than max_moves
                path.append(node)
                node = descend(node, path, c, solver, max_moves)
            # -- simulation (default policy) from ``state``, the position at ``node`` --
            if state.is_terminal:
                winner = state.winner
                if solver and node.proven is None:
                    node.proven = 0 if winner is None else (1 if winner == node.mover else -1)
                    _propagate(tree, above + path)
            else:
                winner = play_out(state, rng)
            # -- backup along the whole stored path: ``start`` and below here, above at the end --
            backup(path, first_win[winner])
            if winner is None:
                draws += 1
            elif winner == 1:
                wins_odd += 1
            else:
                wins_even += 1
            dirty.update(path)
            done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if should_stop is not None and should_stop():
                break
    finally:  # also on an exception (Ctrl-C): the path above ``start`` gets every simulation run
        if collecting:
            gc.enable()
        if done:
            for pnode in above:
                pnode.nb_visit += done
                pnode.nb_draw += draws
                pnode.nb_win += wins_odd if pnode.depth & 1 else wins_even
            dirty.update(above)
    return done


def _direct_playout(game: Game, rng: random.Random) -> PlayoutFn:
    """``game.playout`` without its checks (the search only plays out live positions), same stream."""
    compiled, board = game.compiled_playout, game.playout_board
    if compiled is None:
        return game.playout
    bits = rng.getrandbits

    def play_out(state: State, _rng: random.Random) -> int | None:
        return compiled(*board(state), bits(64))

    return play_out


def _select(node: TreeNode, c: float, solver: bool) -> TreeNode:
    """The child UCT descends to: UCB1 ``mean + c*sqrt(ln N / n)``, unvisited first, ties to the first.

    With ``solver``, proven children are skipped (never waste simulations below a
    proven move); if all are, the first most visited. ``treelab._speedups.select``
    does exactly this in C.
    """
    kids = node.kids
    big_n = node.nb_visit
    explore = c * math.sqrt(math.log(big_n)) if big_n > 1 else 0.0
    sqrt = math.sqrt
    best = None
    best_score = -math.inf
    for kid in kids:
        n = kid.nb_visit
        if solver and kid.proven is not None:
            continue
        if n == 0:
            return kid
        score = (kid.nb_win + 0.5 * kid.nb_draw) / n + explore / sqrt(n)
        if score > best_score:
            best_score = score
            best = kid
    if best is None:  # every move proven but the node not (only without full proofs)
        best = max(kids, key=lambda k: k.nb_visit)
    return best


def _descend(node: TreeNode, path: list[TreeNode], c: float, solver: bool, max_moves: int) -> TreeNode:
    """Walk down by :func:`_select` while the node has ``max_moves`` children, appending to ``path``.

    Returns the first node with fewer children (possibly not fully expanded);
    ``treelab._speedups.descend`` does exactly this in C.
    """
    while True:
        kids = getattr(node, _KIDS, None)
        if kids is None or len(kids) < max_moves:
            return node
        node = _select(node, c, solver)
        path.append(node)


def _backup(path: list[TreeNode], first_win: int | None) -> None:
    """One simulation's result on ``path``: every node visited, a draw everywhere or a win on ``path[first_win::2]``.

    ``treelab._speedups.backup`` does exactly this in C.
    """
    for node in path:
        node.nb_visit += 1
    if first_win is None:
        for node in path:
            node.nb_draw += 1
    else:
        for node in path[first_win::2]:
            node.nb_win += 1


_FRONTIER_CAP = 1 << 19
"""Positions the frontier cache holds at most (about 100 MB); beyond, it starts again empty."""

_PYTHON_WALK = (_descend, _select, _backup)
"""The pure-Python tree walk: the reference, and the fallback without the extension."""


def _replay(state: State, path: list[TreeNode], move_of: dict[str, int]) -> State:
    """The position at ``path[-1]``, playing the moves of ``path[1:]`` from ``state`` (at ``path[0]``)."""
    return state.play_all([move_of[node.name] for node in path[1:]])


def _propagate(tree: Tree, path: list[TreeNode]) -> None:
    """Push a new proof at ``path[-1]`` up the path while parents become proven.

    A parent is proven when one of its moves is a proven win for the player to
    move there (the parent is then a loss for the player who moved into it), or
    when every legal move is expanded and proven (its value is then minus the
    best of them). Proofs only ever use game facts, so they are never wrong.
    """
    game = tree.game
    for i in range(len(path) - 2, -1, -1):
        parent = path[i]
        if parent.proven is not None:
            return
        kids = parent.kids
        if any(k.proven == 1 for k in kids):
            parent.proven = -1
        else:
            n_legal = len(game.replay(parent.moves).legal_moves())
            if len(kids) < n_legal or any(k.proven is None for k in kids):
                return
            parent.proven = -max(k.proven for k in kids if k.proven is not None)
        tree.mark_dirty(parent)
    return
