"""Searching one position and reporting it: :func:`analyse`, behind ``treelab analyse``."""

from __future__ import annotations

import random
import time
from os import PathLike

from ..games import Game, find_game
from ..mcts.policies import PlayoutFn, make_rng
from ..mcts.summary import SearchSummary, choose_move, summarize
from ..mcts.uct import Limit, search
from ..tree import SQRT2, Moves, Tree

__all__ = ["ALGORITHMS", "analyse"]

ALGORITHMS = ("uct", "puct")
"""Search algorithms :func:`analyse` can run."""


def analyse(
    game: str | Game,
    moves: Moves = None,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    algorithm: str = "uct",
    solver: bool = False,
    c: float | None = None,
    seed: int | random.Random | None = None,
    playout: str | PlayoutFn = "random",
    evaluator: str = "rollout",
    temperature: float = 0.0,
    how: str = "visits",
    db: str | PathLike[str] | None = None,
) -> SearchSummary:
    """Search the position ``moves`` and report every move's statistics.

    Args:
        game: game name or :class:`Game`.
        moves: the position, as moves from the start (``"4453"``, ``"4,4,5,3"``).
        iterations: simulations to run (default 1,000 when ``seconds`` is not given either).
        seconds: a time budget instead of, or as well as, ``iterations``.
        algorithm: ``"uct"`` (UCB1, Browne et al. 2012) or ``"puct"`` (AlphaZero style,
            :mod:`treelab.puct`, which always proves terminal results).
        solver: MCTS-Solver proofs for UCT; the search stops once the position is proven.
        c: exploration constant: UCB1's ``c`` (default sqrt(2)) for UCT, ``c_puct``
            (default 1.25) for PUCT. The reported ``ucb1`` uses it for UCT, sqrt(2) for PUCT.
        seed: replay the search exactly.
        playout: ``"random"`` or ``"decisive"`` playouts (UCT, and PUCT's evaluator).
        evaluator: ``"rollout"`` or ``"heuristic"`` (PUCT).
        temperature: ``> 0`` samples the best move from visit counts (AlphaZero); 0 takes
            the most visited. A proven win is always played.
        how: ``"visits"`` (most visited) or ``"ucb1"`` (the original persistent-tree choice).
        db: search in (and save to) this stored tree, created if missing; only the
            subtree at the position is read. None: a fresh in-memory tree.

    Example:
        >>> import treelab
        >>> result = treelab.analyse("tictactoe", "1425", iterations=300, seed=1)
        >>> result.best_move in ("3", "7")  # X completes a line
        True
    """
    from ..errors import BudgetError

    the_game = find_game(game)
    if algorithm not in ALGORITHMS:
        raise BudgetError(f"unknown algorithm {algorithm!r}: use one of {', '.join(ALGORITHMS)}")
    if temperature < 0:
        raise BudgetError(f"temperature {temperature!r} must be >= 0 (0 plays the most visited move)")
    if iterations is None and seconds is None:
        iterations = 1000
    limit = Limit(iterations=iterations, seconds=seconds)
    parsed = the_game.parse(moves)
    the_game.replay(parsed)  # bad input fails before any file is touched
    rng = make_rng(seed)
    ucb_c = c if c is not None and algorithm == "uct" else SQRT2
    if db is not None:
        from ..store.persistence import open_tree, save

        tree = open_tree(db, the_game, c=ucb_c, path=parsed)
    else:
        tree = Tree(the_game, c=ucb_c)
    started = time.perf_counter()
    if algorithm == "puct":
        from ..mcts.evaluators import find_evaluator
        from ..mcts.puct import C_PUCT, puct_search

        done = puct_search(tree, parsed, limit=limit, c_puct=C_PUCT if c is None else c,
                           evaluator=find_evaluator(evaluator, playout=playout),
                           rng=rng)
    else:
        done = search(tree, parsed, limit=limit, c=ucb_c, solver=solver, playout=playout, rng=rng)
    elapsed = time.perf_counter() - started
    if db is not None:
        save(tree, db)
    node = tree.find(parsed)
    best = choose_move(node, how=how, c=ucb_c, temperature=temperature, rng=rng) if node.kids else None
    return summarize(tree, parsed, iterations=done, c=ucb_c, best=best, seconds=elapsed)
