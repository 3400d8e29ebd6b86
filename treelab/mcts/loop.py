"""The search loop UCT and PUCT share: named phases over one search state.

As in DeepMind mctx's ``search.py``, a search is a loop of simulations and a
simulation is a fixed sequence of phases over one small value, the
:class:`SearchState`:

1. **select** (the tree policy): descend from the start position to a leaf,
   **expanding** on the way (UCT adds one untried child, PUCT keeps every move's
   prior and adds the child it selects); gives a :class:`Leaf`;
2. **simulate** (the default policy): the leaf's result, a winner or a draw
   (UCT plays the game out, PUCT turns its evaluator's value into a result; a
   finished game's result is a fact, proven by :func:`prove_leaf`);
3. **back up** (:func:`back_up`): the result on the path from the start, with
   the one backup rule of :func:`treelab.tree.backup` (in C when built).

An algorithm brings its select and simulate phases as a :class:`Phases`
value (:class:`treelab.mcts.uct.UCTPhases`, :class:`treelab.mcts.puct.PUCTPhases`);
:func:`run` owns the rest: the stop checks (the :class:`Limit`, a proven start,
``should_stop``, the node budget), the tally, and the backup of the nodes above the
start, once, when the search ends (also on an exception). A phase set may carry
a compiled ``batch`` (UCT's ``_loop.c``): whole simulations of the same phases
in C, run by the same loop between the same checks.
"""

from __future__ import annotations

import gc
import math
import random
import time
from collections.abc import Callable, Set
from dataclasses import dataclass, field
from typing import Protocol

from .. import speedups
from ..errors import BudgetError
from ..games import Game, State
from ..nodes import HOOKS
from ..positions import PositionTable
from ..tree import Counts, Moves, Tree, TreeNode, backup
from .config import node_cap_for
from .solver import LegalCount, propagate, prove_terminal

__all__ = ["BatchFn", "Leaf", "Limit", "Phases", "SearchState", "Tracing", "back_up", "count_batch", "prove_leaf",
           "run", "start_at"]


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


class Tracing(Protocol):
    """What may ride along the loop and record it (:class:`treelab.mcts.tracer.Tracer`, which sits above the loop):
    it wraps the loop's select and back-up phases."""

    def select_phase(self, select: Callable[[SearchState], Leaf]) -> Callable[[SearchState], Leaf]:
        """The select phase, recording where each simulation starts."""
        ...

    def back_up_phase(self, back_up: Callable[[SearchState, list[TreeNode], int | None], None]
                      ) -> Callable[[SearchState, list[TreeNode], int | None], None]:
        """The back-up phase, recording what each node gains."""
        ...


@dataclass(eq=False)
class SearchState:
    """One search in progress: where it started, the options every phase reads, and its tally."""

    tree: Tree
    """The tree searched (grown in place)."""
    start: TreeNode
    """The node of the position searched."""
    position: State
    """The start's position."""
    above: list[TreeNode]
    """The nodes from the root down to the start's parent: backed up once, when the search ends."""
    c: float
    """The exploration constant (UCB1's ``c``, or PUCT's ``c_puct``)."""
    solver: bool
    """Prove results (MCTS-Solver) and stop once the start is proven."""
    rng: random.Random
    """The search's random numbers: the same seed grows the same tree."""
    movers: bool = False
    """The nodes store their movers (games whose players need not alternate, :class:`treelab.tree.MoverTree`)."""
    max_size: int = 1 << 62
    """The tree size at which the search stops (set by :func:`run` from its ``max_new_nodes``)."""
    fast_backup: Callable[..., None] | None = None
    """``treelab._speedups.backup`` when built and the nodes' movers are their depth's parity (set by :func:`run`)."""
    baselines: dict[TreeNode, Counts] = field(default_factory=dict)
    """The tree's change tracking (:attr:`treelab.tree.Tree.baselines`; set by :func:`run`)."""
    positions: PositionTable | None = None
    """The position table every backup adds to (graph statistics, :mod:`treelab.mcts.graph`); None: none."""
    cut: Set[TreeNode] = frozenset()
    """The nodes whose children were not loaded (the store's record of a partial load,
    :func:`treelab.store.binding.cut_of`): evaluated, never grown (set by :func:`start_at`)."""
    done: int = 0
    """Simulations run."""
    draws: int = 0
    """Simulations drawn."""
    wins: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Simulations won by player 1 (``wins[1]``) and player 2 (``wins[2]``)."""
    trace: Tracing | None = None
    """Records every simulation (a :class:`~treelab.mcts.tracer.Tracer`; the Python phases then run); None: no trace."""


@dataclass(slots=True)
class Leaf:
    """Where a simulation's tree policy stopped: what the simulate phase needs."""

    path: list[TreeNode]
    """The nodes from the start (``path[0]``) down to the leaf (``path[-1]``)."""
    position: State
    """The leaf's position."""
    value: float | None = None
    """An evaluator's value for the player to move at the leaf (PUCT); None: none yet (UCT plays out)."""
    positions: list[State] | None = None
    """The positions along ``path`` when the phases kept them (legal counts for proofs); None: replayed."""


BatchFn = Callable[[SearchState, int], "Leaf | None"]
"""``batch(state, n)``: up to ``n`` whole simulations in C, counted into ``state``; returns the leaf of
a finished game left for :func:`prove_leaf` (then simulated and backed up in Python), or None."""


class Phases(Protocol):
    """An algorithm's phases for :func:`run` (the backup and the stop checks are the loop's)."""

    batch: BatchFn | None
    """The compiled fast path of these phases for this search, or None."""

    def select(self, state: SearchState) -> Leaf:
        """Tree policy: descend from ``state.start``, expanding on the way; the leaf reached."""

    def simulate(self, state: SearchState, leaf: Leaf) -> int | None:
        """Default policy: the leaf's result (1, 2, None for a draw)."""


def start_at(tree: Tree, moves: Moves, *, c: float, solver: bool, rng: random.Random) -> SearchState | None:
    """The state of a search from the position ``moves`` of ``tree``; None if that game is over."""
    prefix, position = tree.path(moves)
    if position.is_terminal:
        return None
    cut = HOOKS["cut"](tree) if "cut" in HOOKS else frozenset()  # no store loaded: no tree was loaded in part
    return SearchState(tree=tree, start=prefix[-1], position=position, above=prefix[:-1], c=c, solver=solver,
                       rng=rng, movers=not tree.game.alternating, cut=cut)


def run(state: SearchState, phases: Phases, *, limit: Limit, should_stop: Callable[[], bool] | None = None,
        max_new_nodes: int) -> int:
    """Run simulations of ``phases`` from ``state`` until the budget, a proof or ``should_stop`` ends them.

    Checked after every simulation (after every compiled batch): the :class:`Limit`, ``should_stop()``
    and the node budget (``max_new_nodes`` more nodes than at the start); before each, the start's proof
    (with the solver). With ``state.trace`` (a :class:`~treelab.mcts.tracer.Tracer`) the Python phases run
    (never the compiled batch) and every simulation is recorded. Returns the simulations run. The nodes
    above the start receive their counts when the loop ends (also on an exception, such as Ctrl-C); the cyclic
    garbage collector is paused.
    """
    tree, start = state.tree, state.start
    max_iter = limit.iterations if limit.iterations is not None else 1 << 62
    state.max_size = node_cap = node_cap_for(tree.size, max_new_nodes)
    deadline = time.perf_counter() + limit.seconds if limit.seconds is not None else None
    batch, simulate = phases.batch, phases.simulate
    select: Callable[[SearchState], Leaf] = phases.select
    finish: Callable[[SearchState, list[TreeNode], int | None], None] = back_up
    if state.trace is not None:  # a traced search: the Python phases, each simulation recorded
        batch, select, finish = None, state.trace.select_phase(select), state.trace.back_up_phase(back_up)
    solver = state.solver
    leaf: Leaf | None
    state.fast_backup = None if speedups.compiled is None or state.movers else speedups.compiled.backup
    state.baselines = tree.baselines  # no save runs during a search
    collecting = gc.isenabled()
    gc.disable()  # the loop makes no garbage cycles; the collector would walk the growing tree over and over
    try:
        while state.done < max_iter:
            if solver and start.proven is not None:
                break
            leaf = batch(state, min(BATCH, max_iter - state.done)) if batch is not None else select(state)
            if leaf is not None:
                finish(state, leaf.path, simulate(state, leaf))
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if should_stop is not None and should_stop():
                break
            if tree.size >= node_cap:
                break
    finally:
        if collecting:
            gc.enable()
        _back_up_above(state)
    return state.done


BATCH = 256
"""Simulations one compiled batch runs at most: time limits, ``should_stop`` and the node budget are
checked between batches (every ~0.5 ms), Ctrl-C between simulations."""


def count_batch(state: SearchState, stats: list[int]) -> None:
    """Count what a compiled batch did into ``state`` and its tree: ``stats`` is ``[simulations, draws, wins of
    player 1, wins of player 2, nodes made]`` (and, from PUCT's batch, whether it added value sums). Called
    also when the batch raised (Ctrl-C): its accounting is written whatever happens."""
    state.done += stats[0]
    state.draws += stats[1]
    state.wins[1] += stats[2]
    state.wins[2] += stats[3]
    state.tree.count_made(stats[4])
    if len(stats) > 5 and stats[5]:
        state.tree.valued = True


def back_up(state: SearchState, path: list[TreeNode], winner: int | None) -> None:
    """The back-up phase: one simulation's result on ``path`` (from the start), counted in ``state``.

    :func:`treelab.tree.backup`'s rule, run by ``treelab._speedups.backup`` when built (parity games).
    """
    fast = state.fast_backup
    if fast is not None:
        fast(path, None if winner is None else (path[0].depth + (winner == 1)) & 1, state.baselines)
    else:
        backup(path, winner, state.baselines, movers=state.movers)
    if state.positions is not None:
        state.positions.add(path, winner)
    state.done += 1
    if winner is None:
        state.draws += 1
    else:
        state.wins[winner] += 1


def _back_up_above(state: SearchState) -> None:
    """The nodes above the start get every simulation the search ran (none of them was selected)."""
    above = state.above
    if not state.done or not above:
        return
    baselines, selected, movers = state.tree.baselines, len(above), state.movers
    backup(above, None, baselines, times=state.draws, selected_from=selected, movers=movers)
    for player in (1, 2):
        backup(above, player, baselines, times=state.wins[player], selected_from=selected, movers=movers)
    table = state.positions
    if table is not None:
        for winner, times in ((None, state.draws), (1, state.wins[1]), (2, state.wins[2])):
            if times:
                table.add(above, winner, times)


def prove_leaf(state: SearchState, leaf: Leaf) -> int | None:
    """The result of a finished game at ``leaf``: a fact, and with the solver a proof that propagates up."""
    winner = leaf.position.winner
    node = leaf.path[-1]
    if state.solver and node.proven is None:
        node.proven = prove_terminal(node, winner)
        full = state.above + leaf.path
        propagate(state.tree, full, legal_counter(state, leaf), first=len(full) - 2)
    return winner


def legal_counter(state: SearchState, leaf: Leaf) -> LegalCount:
    """The number of legal moves at ``(above + leaf.path)[i]``: from the kept positions, else replayed."""
    game: Game = state.tree.game
    full = state.above + leaf.path
    positions, offset = leaf.positions, len(state.above)

    def count(i: int) -> int:
        if positions is not None and i >= offset:
            return len(positions[i - offset].legal_moves())
        return len(game.replay(full[i].moves).legal_moves())

    return count
