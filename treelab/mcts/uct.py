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
from ..nodes import kids_of
from ..tree import SQRT2, Counts, Moves, Tree, TreeNode
from .config import MAX_NEW_NODES, node_cap_for
from .policies import PlayoutFn, decisive_playout, find_playout, make_rng, random_playout
from .selection import SelectFn, select_ucb1, walk
from .solver import propagate, prove_terminal, replayed_legal_count

__all__ = ["Limit", "search"]


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
    max_new_nodes: int = MAX_NEW_NODES,
    select: SelectFn | None = None,
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
        max_new_nodes: the search stops once it has added this many nodes (a memory bound:
            :data:`~treelab.mcts.config.MAX_NEW_NODES`, about 0.4 GB, by default).
        select: the selection hook (:data:`~treelab.mcts.selection.SelectFn`, as OpenSpiel's
            ``child_selection_fn``); None: UCB1 (:func:`~treelab.mcts.selection.select_ucb1`),
            walked in C when the extension is built.

    Each simulation runs the four phases in turn: ``select_and_expand`` (the tree
    policy), ``simulate`` (the default policy) and ``back_up``. With the default
    selection the tree walk (descend, select, back up) runs in C when
    ``treelab._speedups`` is built (:mod:`treelab.fastpath`), with exactly the Python rule:
    the fast path of the same phases. With the default options on Connect Four and
    tic-tac-toe (UCB1, random or Connect Four's decisive playouts, solver or not) whole
    batches of simulations run in C (``_loop.c``), growing the very tree the phases grow
    from the same seed; the budget, time limit and ``should_stop`` are then checked
    between batches of ``_BATCH`` simulations, Ctrl-C between simulations. During the
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
    batch = _compiled_batch(tree, start_state, select, play_out)  # None: the Python phases
    if play_out is random_playout:
        play_out = _direct_playout(game, rng)
    elif play_out is decisive_playout and game.compiled_decisive is not None:
        play_out = _direct_playout(game, rng, game.compiled_decisive)
    labels = [game.label(m) for m in range(game.num_moves + 1)]
    move_of = {label: m for m, label in enumerate(labels)}
    rand = rng.random
    max_moves = game.num_moves
    baselines = tree.baselines
    add_child = tree.add_child
    descend, pick, backup = walk(select)
    max_iter = limit.iterations if limit.iterations is not None else 1 << 62
    node_cap = node_cap_for(tree.size, max_new_nodes)
    deadline = time.perf_counter() + limit.seconds if limit.seconds is not None else None
    # The frontier: for each node met below ``start`` that is not fully expanded, its position
    # and its untried moves in legal order (None: not listed yet; a terminal position lists
    # none). Fully expanded nodes are dropped, so the descent through them never plays a move
    # on a State; an entry dropped by the cap is rebuilt equal (replay, legal minus tried).
    frontier: dict[TreeNode, list[Any]] = {start: [start_state, None]}
    above = prefix[:-1]  # the nodes above ``start``: backed up once, at the end
    first_win = {1: (start.depth + 1) & 1, 2: start.depth & 1, None: None}  # path[i] is at depth start.depth + i
    alternating = game.alternating  # False: the nodes store their movers (treelab.movernode), not the parity

    def select_and_expand(path: list[TreeNode]) -> tuple[TreeNode, State]:
        """Tree policy: descend by the selection function, then add one untried move (Browne et al. 2012)."""
        node = descend(start, path, c, solver, max_moves)  # down through fully expanded nodes
        while True:  # ``node`` may not be fully expanded: look at its position
            entry = frontier.get(node)
            if entry is None:
                entry = frontier[node] = [_replay(start_state, path, move_of), None]
            state, untried = entry
            kids = kids_of(node)
            if untried is None:
                if state.is_terminal:
                    return node, state
                untried = state.legal_moves()
                if kids:
                    tried = {kid.name for kid in kids}
                    untried = [m for m in untried if labels[m] not in tried]
                entry[1] = untried
            if untried:
                move = untried.pop(int(rand() * len(untried)))  # in legal order: a cleared entry comes back equal
                if not untried and len(kids) + 1 == max_moves:
                    del frontier[node]  # fully expanded from now on
                node = add_child(node, labels[move], None if alternating else state.to_move)
                state = state.play(move)
                if len(frontier) >= _FRONTIER_CAP:
                    frontier.clear()  # bounded memory: positions met again are replayed
                frontier[node] = [state, None]
                path.append(node)
                return node, state
            if not kids:  # only a terminal position has no moves at all
                return node, state
            node = pick(node, c, solver)  # every legal move tried, fewer than max_moves
            path.append(node)
            node = descend(node, path, c, solver, max_moves)

    def simulate(node: TreeNode, state: State, path: list[TreeNode]) -> int | None:
        """Default policy: the playout's winner; a finished game's result is a fact (and a proof)."""
        if not state.is_terminal:
            return play_out(state, rng)
        winner = state.winner
        if solver and node.proven is None:
            node.proven = prove_terminal(node, winner)
            full = above + path
            propagate(tree, full, replayed_legal_count(game, full), first=len(full) - 2)
        return winner

    def back_up(path: list[TreeNode], winner: int | None) -> None:
        """Backup along the stored path from ``start`` (the nodes above get theirs when the search ends)."""
        if alternating:
            backup(path, first_win[winner], baselines)
        else:
            _backup_movers(path, winner, baselines)

    batch_of = (tuple(labels), move_of, start.depth)
    done = draws = wins_1 = wins_2 = 0
    collecting = gc.isenabled()
    gc.disable()  # the loop makes no garbage cycles; the collector would walk the growing tree over and over
    try:
        while done < max_iter:
            if solver and start.proven is not None:
                break
            path: list[TreeNode] | None
            if batch is not None:  # whole simulations in C; a terminal node to prove comes back as its path
                stats = [0, 0, 0, 0, 0]  # simulations, draws, wins of player 1, of player 2, nodes made
                try:
                    path = batch(start, min(_BATCH, max_iter - done), c, solver, rng.random, rng.getrandbits,
                                 node_cap - tree.size, batch_of, stats)
                finally:  # also on an exception (Ctrl-C): what the batch did is counted
                    done, draws = done + stats[0], draws + stats[1]
                    wins_1, wins_2 = wins_1 + stats[2], wins_2 + stats[3]
                    tree.count_made(stats[4])
                if path is not None:
                    node, state = path[-1], _replay(start_state, path, move_of)
            else:
                path = [start]
                node, state = select_and_expand(path)
            if path is not None:
                winner = simulate(node, state, path)
                back_up(path, winner)
                if winner is None:
                    draws += 1
                elif winner == 1:
                    wins_1 += 1
                else:
                    wins_2 += 1
                done += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if should_stop is not None and should_stop():
                break
            if tree.size >= node_cap:
                break
    finally:  # also on an exception (Ctrl-C): the path above ``start`` gets every simulation run
        if collecting:
            gc.enable()
        if done:
            for pnode in above:
                if pnode not in baselines:
                    baselines[pnode] = (pnode.nb_visit, pnode.nb_win, pnode.nb_draw, pnode.nb_select)
                pnode.nb_visit += done
                pnode.nb_draw += draws
                pnode.nb_win += wins_1 if pnode.mover == 1 else wins_2
    return done


BatchFn = Callable[..., "list[TreeNode] | None"]
"""``batch(start, n, c, solver, rand, bits, max_new, (labels, move_of, start_depth), stats)``: up to ``n``
simulations in C (``treelab._speedups.batch``); None, or the path of a terminal node the solver must prove."""


def _compiled_batch(tree: Tree, start_state: State, select: SelectFn | None, play_out: PlayoutFn) -> BatchFn | None:
    """The compiled loop for this search's options, or None: the Python phases run instead.

    Compiled: UCB1 selection (no ``select`` hook), random playouts (or decisive ones for Connect Four)
    on the built-in Connect Four and tic-tac-toe, when ``treelab._speedups`` is built. It grows the
    tree the phases grow from the same seed: same children, counts, proofs and random draws.
    """
    run = getattr(fastpath.compiled, "batch", None)
    game = tree.game
    kind = vars(type(game)).get("compiled_loop")  # the class's own: a subclass may have changed the rules
    if run is None or kind is None or (select is not None and select is not select_ucb1) or not game.alternating:
        return None
    decisive = play_out is decisive_playout
    if not (play_out is random_playout or (decisive and kind == 0)):
        return None
    a, b, ply = game.playout_board(start_state)
    parts = (kind, a, b, ply, decisive)

    def batch(start: TreeNode, n: int, c: float, solver: bool, rand: Callable[[], float],
              bits: Callable[[int], int], max_new: int, names: tuple[tuple[str, ...], dict[str, int], int],
              stats: list[int]) -> list[TreeNode] | None:
        labels, move_of, start_depth = names
        pending: list[TreeNode] | None = run(
            start, n, c, solver, *parts, rand, bits, tree.baselines, tree.new_nodes, tree.depth_counts,
            tree.node_class, tree.next_id, tree.current_game, max_new, labels, move_of, start_depth, stats)
        return pending

    return batch


_BATCH = 256
"""Simulations one compiled batch runs at most: time limits, ``should_stop`` and the node budget are
checked between batches (every ~0.5 ms), Ctrl-C between simulations."""


def _direct_playout(
    game: Game, rng: random.Random, compiled: Callable[[int, int, int, int], int | None] | None = None
) -> PlayoutFn:
    """``game.playout`` (or ``compiled``) without its checks (the search only plays out live positions)."""
    run, board = compiled or game.compiled_playout, game.playout_board
    if run is None:
        return game.playout
    bits = rng.getrandbits

    def play_out(state: State, _rng: random.Random) -> int | None:
        return run(*board(state), bits(64))

    return play_out


def _backup_movers(path: list[TreeNode], winner: int | None, baselines: dict[TreeNode, Counts]) -> None:
    """The backup for nodes that store their mover (games whose players need not alternate): a win where it moved.

    As :func:`~treelab.mcts.selection.backup`, every node after ``path[0]`` was selected: ``nb_select += 1``.
    """
    for i, node in enumerate(path):
        if node not in baselines:
            baselines[node] = (node.nb_visit, node.nb_win, node.nb_draw, node.nb_select)
        node.nb_visit += 1
        if i:
            node.nb_select += 1
        if winner is None:
            node.nb_draw += 1
        elif node.mover == winner:
            node.nb_win += 1


_FRONTIER_CAP = 1 << 19
"""Positions the frontier cache holds at most (about 100 MB); beyond, it starts again empty."""

def _replay(state: State, path: list[TreeNode], move_of: dict[str, int]) -> State:
    """The position at ``path[-1]``, playing the moves of ``path[1:]`` from ``state`` (at ``path[0]``)."""
    return state.play_all([move_of[node.name] for node in path[1:]])
