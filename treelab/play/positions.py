"""Searching one position and reporting it: :func:`analyse`, behind ``treelab analyse``."""

from __future__ import annotations

import random
import time
from os import PathLike
from typing import TYPE_CHECKING, Any

from ..games import Game, find_game
from ..mcts.config import ALGORITHMS, SearchConfig, resolve_aliases
from ..mcts.dispatch import run_search
from ..mcts.loop import Limit
from ..mcts.policies import make_rng
from ..mcts.scores import table_for
from ..mcts.summary import SearchSummary, choose_move, summarize
from ..tree import Moves, Tree

if TYPE_CHECKING:
    from ..mcts.tracer import Tracer

__all__ = ["ALGORITHMS", "analyse", "search_position"]


def analyse(
    game: str | Game,
    moves: Moves = None,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    search: SearchConfig | None = None,
    seed: int | random.Random | None = None,
    db: str | PathLike[str] | None = None,
    trace: Tracer | None = None,
    **options: Any,
) -> SearchSummary:
    """Search the position ``moves`` and report every move's statistics.

    Args:
        game: game name or :class:`Game`.
        moves: the position, as moves from the start (``"4453"``, ``"4,4,5,3"``).
        iterations: simulations to run (default 1,000 when ``seconds`` is not given either).
        seconds: a time budget instead of, or as well as, ``iterations``.
        search: how to search and pick the move (:class:`~treelab.mcts.config.SearchConfig`):
            ``algorithm`` (``"uct"``, or ``"puct"``, which always proves terminal results),
            ``solver`` (the search stops once the position is proven; PUCT's default), ``c`` (UCB1's,
            or PUCT's; the reported ``ucb1`` uses it for UCT, sqrt(2) for PUCT),
            ``playout`` (a name or a playout function), ``evaluator`` (PUCT), ``temperature``
            (``> 0`` samples the best move from visit counts; a proven win is always played),
            ``choice`` (``"visits"`` or ``"ucb1"``), ``max_new_nodes`` (a memory bound) and ``model``
            (a model file fitted by :func:`treelab.fit`, PUCT's evaluator; the summary then carries
            its value and each move's prior) with ``mix``.
        seed: replay the search exactly.
        db: search in (and save to) this stored tree, created if missing; only the
            subtree at the position is read. None: a fresh in-memory tree.
        trace: record every simulation into this :class:`~treelab.mcts.tracer.Tracer` (the search then
            runs its Python phases; :func:`treelab.trace` is the short way).
        options: fields of ``search`` as keywords (``solver=True, c=1.4142``), replacing them;
            ``config`` and ``how`` are the old spellings of ``search`` and ``choice``.

    Raises:
        UnknownOptionError: an unknown option, algorithm, playout, evaluator or move choice; a model without PUCT.
        ModelFileError, ModelMismatchError: ``model`` is no model file, or one of another game.

    Example:
        >>> import treelab
        >>> result = treelab.analyse("tictactoe", "1425", iterations=300, seed=1)
        >>> result.best_move in ("3", "7")  # X completes a line
        True
    """
    the_game = find_game(game)
    options = resolve_aliases(options, {"how": "choice", "config": "search"})
    if "search" in options:
        search = options.pop("search") or search
    cfg = SearchConfig.of(search, **options)
    if iterations is None and seconds is None:
        iterations = 1000
    return search_position(the_game, moves, Limit(iterations=iterations, seconds=seconds), cfg,
                           seed=seed, db=db, trace=trace)[0]


def search_position(game: Game, moves: Moves, limit: Limit, cfg: SearchConfig, *,
                    seed: int | random.Random | None = None, db: str | PathLike[str] | None = None,
                    trace: Tracer | None = None, save: bool = True) -> tuple[SearchSummary, Tree]:
    """:func:`analyse`'s search with its options made: the summary and the tree searched.

    ``save``: write the stored tree ``db`` back (False: the file is only read).
    """
    the_game = game
    parsed = the_game.parse(moves)
    the_game.replay(parsed)  # bad input fails before any file is touched
    if cfg.model is not None:
        from ..learn.model import load_model

        load_model(cfg.model, the_game)  # a missing, damaged or foreign model too
    rng = make_rng(seed)
    score_c = cfg.score_c
    if db is not None:
        from ..store.persistence import open_tree

        tree = open_tree(db, the_game, c=score_c, path=parsed)
    else:
        tree = Tree(the_game, c=score_c)
    started = time.perf_counter()
    done = run_search(tree, parsed, cfg, limit, rng=rng, tracer=trace)
    elapsed = time.perf_counter() - started
    if db is not None and save:
        from ..store.persistence import save as write

        write(tree, db)
    node = tree.find(parsed)
    best = (choose_move(node, choice=cfg.choice, c=score_c, temperature=cfg.temperature, rng=rng,
                        table=table_for(tree) if cfg.choice == "ucb1" else None) if node.children_view else None)
    summary = summarize(tree, parsed, iterations=done, c=score_c, best=best, seconds=elapsed,
                        statistics=cfg.rule(tree))
    if cfg.model is not None:  # the model's value of the position and its prior of each move
        from ..learn.model import load_model
        from ..mcts.summary import with_model

        summary = with_model(summary, load_model(cfg.model, the_game), the_game.replay(parsed))
    return summary, tree
