"""Searching one position and reporting it: :func:`analyse`, behind ``treelab analyse``."""

from __future__ import annotations

import random
import time
from os import PathLike

from ..games import Game, find_game
from ..mcts.config import ALGORITHMS, Algorithm, Choice, EvaluatorName, PlayoutName, SearchConfig
from ..mcts.policies import PlayoutFn, make_rng
from ..mcts.summary import SearchSummary, choose_move, summarize
from ..mcts.uct import Limit, search
from ..tree import Moves, Tree

__all__ = ["ALGORITHMS", "analyse"]


def analyse(
    game: str | Game,
    moves: Moves = None,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    config: SearchConfig | None = None,
    algorithm: Algorithm | None = None,
    solver: bool | None = None,
    c: float | None = None,
    seed: int | random.Random | None = None,
    playout: PlayoutName | PlayoutFn | None = None,
    evaluator: EvaluatorName | None = None,
    temperature: float | None = None,
    how: Choice | None = None,
    max_new_nodes: int | None = None,
    db: str | PathLike[str] | None = None,
    model: str | PathLike[str] | None = None,
) -> SearchSummary:
    """Search the position ``moves`` and report every move's statistics.

    Args:
        game: game name or :class:`Game`.
        moves: the position, as moves from the start (``"4453"``, ``"4,4,5,3"``).
        iterations: simulations to run (default 1,000 when ``seconds`` is not given either).
        seconds: a time budget instead of, or as well as, ``iterations``.
        config: how to search (:class:`~treelab.mcts.config.SearchConfig`); the keywords
            below, when given, replace its fields.
        algorithm: ``"uct"`` (UCB1, Browne et al. 2012) or ``"puct"`` (AlphaZero style,
            :mod:`treelab.mcts.puct`, which always proves terminal results).
        solver: MCTS-Solver proofs for UCT; the search stops once the position is proven.
        c: exploration constant: UCB1's ``c`` (default sqrt(2)) for UCT, ``c_puct``
            (default 1.25) for PUCT. The reported ``ucb1`` uses it for UCT, sqrt(2) for PUCT.
        seed: replay the search exactly.
        playout: ``"random"`` or ``"decisive"`` playouts (UCT, and PUCT's evaluator), or a
            playout function (UCT).
        evaluator: ``"rollout"`` or ``"heuristic"`` (PUCT).
        temperature: ``> 0`` samples the best move from visit counts (AlphaZero); 0 takes
            the most visited. A proven win is always played.
        how: ``"visits"`` (most visited) or ``"ucb1"`` (the original persistent-tree choice).
        max_new_nodes: the search stops after adding this many nodes (a memory bound).
        db: search in (and save to) this stored tree, created if missing; only the
            subtree at the position is read. None: a fresh in-memory tree.
        model: a model file fitted by :func:`treelab.fit`: PUCT's evaluator (replacing
            ``evaluator``); the summary then carries its value and each move's prior.

    Raises:
        UnknownOptionError: an unknown algorithm, playout, evaluator or move choice; a model without PUCT.
        ModelFileError, ModelMismatchError: ``model`` is no model file, or one of another game.

    Example:
        >>> import treelab
        >>> result = treelab.analyse("tictactoe", "1425", iterations=300, seed=1)
        >>> result.best_move in ("3", "7")  # X completes a line
        True
    """
    the_game = find_game(game)
    play_fn = playout if callable(playout) else None
    cfg = SearchConfig.of(config, algorithm=algorithm, solver=solver, c=c, evaluator=evaluator,
                          playout=None if callable(playout) else playout, temperature=temperature, choice=how,
                          max_new_nodes=max_new_nodes)
    if iterations is None and seconds is None:
        iterations = 1000
    limit = Limit(iterations=iterations, seconds=seconds)
    parsed = the_game.parse(moves)
    the_game.replay(parsed)  # bad input fails before any file is touched
    guide = None
    if model is not None:
        from ..errors import UnknownOptionError
        from ..mcts.modeleval import ModelEvaluator

        if cfg.algorithm != "puct":
            raise UnknownOptionError(f"model {str(model)!r} guides PUCT only: search with algorithm 'puct'")
        guide = ModelEvaluator(model, game=the_game)
    rng = make_rng(seed)
    ucb_c = cfg.ucb_c
    if db is not None:
        from ..store.persistence import open_tree, save

        tree = open_tree(db, the_game, c=ucb_c, path=parsed)
    else:
        tree = Tree(the_game, c=ucb_c)
    started = time.perf_counter()
    if cfg.algorithm == "puct":
        from ..mcts.evaluators import find_evaluator
        from ..mcts.puct import puct_search

        done = puct_search(tree, parsed, limit=limit, c_puct=cfg.exploration,
                           evaluator=guide or find_evaluator(cfg.evaluator, playout=cfg.playout),
                           rng=rng, max_new_nodes=cfg.max_new_nodes)
    else:
        done = search(tree, parsed, limit=limit, c=ucb_c, solver=cfg.solver, playout=play_fn or cfg.playout,
                      rng=rng, max_new_nodes=cfg.max_new_nodes)
    elapsed = time.perf_counter() - started
    if db is not None:
        save(tree, db)
    node = tree.find(parsed)
    best = (choose_move(node, how=cfg.choice, c=ucb_c, temperature=cfg.temperature, rng=rng)
            if node.kids else None)
    summary = summarize(tree, parsed, iterations=done, c=ucb_c, best=best, seconds=elapsed)
    if guide is not None:
        from ..mcts.modeleval import with_model

        summary = with_model(summary, guide.model, the_game.replay(parsed))
    return summary
