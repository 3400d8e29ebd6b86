"""UCT's search (``treelab.search``): UCB1 on the persistent tree, through the one dispatch.

The method (Browne et al. 2012, with MCTS-Solver proofs) is described with its phases in
:mod:`treelab.mcts.uct_phases`.

The phases live in :mod:`treelab.mcts.uct_phases` (re-exported here); the choice of phases for a config
in :func:`treelab.mcts.dispatch.phases_for`.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..tree import SQRT2, Moves, Tree
from .config import MAX_NEW_NODES, SearchConfig, Statistics
from .dispatch import run_search
from .loop import Limit
from .policies import PlayoutFn
from .selection import SelectFn
from .uct_phases import GraphPhases, UCTPhases

__all__ = ["GraphPhases", "Limit", "UCTPhases", "search"]


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
    select: SelectFn | Statistics | None = None,
) -> int:
    """Run UCT simulations from the position ``moves`` of ``tree``; returns how many ran.

    Args:
        tree: the persistent tree (grown in place).
        moves: the position to search, as moves from the start.
        limit: the budget.
        c: UCB1 exploration constant (rewards in [0, 1]).
        solver: propagate proven wins/losses/draws (MCTS-Solver) and stop once
            the position is proven.
        playout: ``"random"``, ``"decisive"`` or a :data:`~treelab.mcts.policies.PlayoutFn`.
        rng: a seed or generator; the same seed grows the same tree.
        should_stop: polled every simulation; True ends the search early (Ctrl-C).
        max_new_nodes: the search stops once it has added this many nodes (a memory bound:
            :data:`~treelab.mcts.config.MAX_NEW_NODES`, about 0.4 GB, by default).
        select: the selection hook (:data:`~treelab.mcts.selection.SelectFn`, as OpenSpiel's
            ``child_selection_fn``); None: UCB1 (:func:`~treelab.mcts.selection.select_ucb1`),
            walked in C when the extension is built. Or the name of the statistics the selection reads
            (:data:`~treelab.mcts.config.Statistics`): ``"classic"`` (UCB1, as None) or ``"graph"``
            (:mod:`treelab.mcts.graph`: edge counts and the position table, run by
            :class:`GraphPhases` in Python; the table is kept in step with every backup).

    A thin form of :func:`~treelab.mcts.dispatch.run_search` with a UCT :class:`~treelab.mcts.config.SearchConfig`;
    the phases are :class:`UCTPhases` (see there for the compiled walk and batches).
    """
    hook: SelectFn | None = None if select is None or isinstance(select, str) else select
    statistics: str | None = None if hook is not None else (select or "classic")  # type: ignore[assignment]
    config = SearchConfig(c=c, solver=solver, playout=playout, max_new_nodes=max_new_nodes,  # type: ignore[arg-type]
                          statistics=statistics)  # type: ignore[arg-type]
    return run_search(tree, moves, config, limit, rng=rng, should_stop=should_stop, select=hook)
