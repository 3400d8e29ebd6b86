"""The one search dispatch: a :class:`~treelab.mcts.config.SearchConfig` (and an optional tracer) made into
the phases a search runs, and run; the public PUCT search :func:`puct_search` over it (UCT's,
:func:`treelab.mcts.uct.search`, sits above this module, beside its phases' re-export).

As mctx's ``search.py`` is the one entry of its searches, :func:`phases_for` is the one place that chooses
an algorithm's phases for a config (:class:`~treelab.mcts.uct_phases.UCTPhases`, its graph-statistics form
:class:`~treelab.mcts.uct_phases.GraphPhases`, :class:`~treelab.mcts.puct.PUCTPhases`), and :func:`run_search`
the one place that starts a search from a config: every caller that searches (``treelab.search`` and
``treelab.puct_search``, :class:`treelab.play.players.MCTSPlayer`, ``analyse``, training, the arena, a traced
search) comes here. The loop itself is :func:`treelab.mcts.loop.run`'s.
"""

from __future__ import annotations

import copy
import random
import warnings
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..positions import PositionTable
from ..tree import Moves, Tree
from .config import EVALUATORS, MAX_NEW_NODES, RootNoise, SearchConfig
from .graph import select_graph
from .loop import Limit, Phases, SearchState, run, start_at
from .policies import PlayoutFn, find_playout, make_rng
from .selection import SelectFn, select_ucb1
from .tracer import Tracer, graph_terms, puct_terms, ucb1_terms
from .uct_phases import GraphPhases, UCTPhases

if TYPE_CHECKING:
    from .evaluators import Evaluator

__all__ = ["phases_for", "puct_search", "run_search", "traced_search"]


def phases_for(state: SearchState, config: SearchConfig, tracer: Tracer | None = None, *,
               evaluator: Evaluator | None = None, select: SelectFn | None = None) -> Phases:
    """The phases a search from ``state`` runs for ``config`` (recording into ``tracer`` when given).

    Args:
        state: the search's state (:func:`~treelab.mcts.loop.start_at`).
        config: how to search: the algorithm, its playout or evaluator (or model), root noise, statistics.
        tracer: a :class:`~treelab.mcts.tracer.Tracer` begun on ``state``: its selection and playout
            hooks ride along (the Python phases run, never a compiled batch).
        evaluator: PUCT's evaluator already made from ``config`` (a player keeps one per game, a model
            being loaded once); None: made here (:func:`~treelab.mcts.evaluators.evaluator_of`).
        select: UCT's selection hook (:data:`~treelab.mcts.selection.SelectFn`, as OpenSpiel's
            ``child_selection_fn``); None: the config's statistics (UCB1, or the graph rule).

    UCT sets the tree's rule (``tree.statistics``) to the config's unless a hook is given; graph statistics
    attach the tree's :class:`~treelab.positions.PositionTable` to ``state.positions`` (settled by
    :func:`run_search` when the search ends).
    """
    tree = state.tree
    game = tree.game
    if config.algorithm == "puct":  # PUCT's modules (and numpy, for a model) load only when PUCT searches
        from .evaluators import evaluator_of
        from .puct import PUCTPhases

        evaluate = evaluator if evaluator is not None else evaluator_of(config, game)
        if tracer is not None:  # a copy names its playout's moves; the player's own evaluator is untouched
            evaluate = copy.copy(evaluate)
            if callable(getattr(evaluate, "playout", None)):
                evaluate.playout = tracer.playing(evaluate.playout, game)  # type: ignore[attr-defined]
        move_of = {game.label(m): m for m in range(game.num_moves + 1)}  # OpenSpiel action ids start at 0
        phases = PUCTPhases(evaluate, config.noise, move_of)
        if tracer is not None:
            phases.watch = partial(tracer.selecting, puct_terms(tree.priors, state.start, phases.root_priors))
        return phases
    play: PlayoutFn = find_playout(config.playout)
    if tracer is not None:
        play = tracer.playing(play, game)
    if select is None:
        tree.statistics = config.rule(tree)  # the rule its scores and its file follow
    if select is None and tree.statistics == "graph":
        table = state.positions = PositionTable.of(tree)
        pick = select_graph(table)
        if tracer is not None:
            tracer._terms = graph_terms(table)
            pick = tracer.selecting(tracer._terms, pick)
        graph = GraphPhases.of(state, play, pick)
        assert isinstance(graph, GraphPhases)
        graph.table = table
        return graph
    if tracer is not None:  # a hook: the Python walk
        select = tracer.selecting(ucb1_terms, select or select_ucb1)
    return UCTPhases.of(state, play, select)


def run_search(tree: Tree, moves: Moves, config: SearchConfig, limit: Limit, *,
               rng: random.Random | int | None = None, should_stop: Callable[[], bool] | None = None,
               tracer: Tracer | None = None, evaluator: Evaluator | None = None,
               select: SelectFn | None = None) -> int:
    """Search the position ``moves`` of ``tree`` as ``config`` says, within ``limit``; returns the simulations run.

    ``rng`` (a seed or a generator) replays the search; ``should_stop`` is polled after every simulation;
    ``tracer`` records every simulation; ``evaluator`` and ``select`` as in :func:`phases_for`.
    """
    state = start_at(tree, moves, c=config.exploration, solver=config.proves, rng=make_rng(rng))
    if state is None:
        return 0
    if tracer is not None:
        state.trace = tracer
        tracer.begin(state, config.algorithm)
    phases = phases_for(state, config, tracer, evaluator=evaluator, select=select)
    try:
        return run(state, phases, limit=limit, should_stop=should_stop, max_new_nodes=config.max_new_nodes)
    finally:
        if state.positions is not None:
            state.positions.settle()


def puct_search(
    tree: Tree,
    moves: Moves = None,
    *,
    limit: Limit,
    c: float | None = None,
    evaluator: str | Evaluator = "rollout",
    solver: bool = True,
    noise: RootNoise | None = None,
    rng: random.Random | int | None = None,
    should_stop: Callable[[], bool] | None = None,
    max_new_nodes: int = MAX_NEW_NODES,
    **deprecated: Any,
) -> int:
    """Run PUCT simulations from the position ``moves`` of ``tree``; returns how many ran.

    Args:
        tree: the persistent tree (grown in place; every changed node is marked for saving).
        moves: the position to search, as moves from the start.
        limit: the budget (iterations and/or seconds).
        c: exploration constant for values in [0, 1] (None: :attr:`SearchConfig.exploration
            <treelab.mcts.config.SearchConfig.exploration>`'s default, :data:`~treelab.mcts.config.C_PUCT_MODEL`
            for a ``"model:PATH"`` evaluator, which becomes the config's ``model``, else
            :data:`~treelab.mcts.config.C_PUCT`).
        evaluator: ``"rollout"``, ``"heuristic"``, ``"model:PATH"`` or an
            :data:`~treelab.mcts.evaluators.Evaluator`.
        solver: prove wins, losses and draws and stop once the position is proven.
        noise: root noise mixed into the start position's priors for this search only
            (:class:`~treelab.mcts.config.RootNoise`; None: none).
        rng: a seed or generator; the same seed grows the same tree.
        should_stop: polled every simulation; True ends the search early (Ctrl-C).
        max_new_nodes: the search stops once it has added this many nodes (a memory bound).
        deprecated: the old spellings ``c_puct`` (of ``c``), ``dirichlet_alpha`` and ``dirichlet_fraction``
            (of ``noise``'s fields), with a :class:`DeprecationWarning`.

    A thin form of :func:`run_search` with a PUCT :class:`~treelab.mcts.config.SearchConfig`; the phases
    are :class:`~treelab.mcts.puct.PUCTPhases`.
    """
    if "c_puct" in deprecated:
        old = deprecated.pop("c_puct")
        warnings.warn("the option 'c_puct' is now called 'c'", DeprecationWarning, stacklevel=2)
        c = old if old is not None else c
    if deprecated:
        noise = RootNoise.of(**deprecated)
    model = None
    if isinstance(evaluator, str) and evaluator.startswith("model:"):  # the model's own field: its c follows
        model, evaluator = evaluator[len("model:"):], "rollout"
    if isinstance(evaluator, str) and evaluator not in EVALUATORS:
        from .evaluators import find_evaluator

        evaluator = find_evaluator(evaluator)  # the one-line error naming the choices
    config = SearchConfig(algorithm="puct", c=c, solver=solver, evaluator=evaluator, model=model,
                          max_new_nodes=max_new_nodes, noise=noise)
    made = None
    if model is not None:  # loaded and checked against the game before the search touches the tree
        from .evaluators import evaluator_of

        made = evaluator_of(config, tree.game)
    return run_search(tree, moves, config, limit, rng=rng, should_stop=should_stop, evaluator=made)


def traced_search(tree: Tree, moves: Moves, *, limit: Limit, search: SearchConfig, rng: random.Random,
                  tracer: Tracer) -> int:
    """Search ``moves`` of ``tree`` as ``search`` says (UCT, its solver, or PUCT), recording into ``tracer``.

    :func:`run_search` with a tracer: the same phases and loop as an untraced search, the compiled batch
    left out. Returns the simulations run.
    """
    return run_search(tree, moves, search, limit, rng=rng, tracer=tracer)
