"""Training: whole games played with the persistent tree, saved after every game, in one process or many.

This package is training's room: :func:`train` here (one process, or the parallel run it hands over to);
its settings (:mod:`treelab.play.training.config`, :class:`TrainingConfig`); one game as every run plays and
records it (:mod:`treelab.play.training.games`); the opponent pool (:mod:`treelab.play.training.pool`);
and parallel training (:mod:`treelab.play.training.parallel`, which runs the workers and their writer of
:mod:`treelab.play.training.workers` in local processes, :mod:`treelab.play.training.processes`, or on
Ray, :mod:`treelab.play.training.cluster`). Its modules import one another downwards only: ``train`` ->
``parallel`` -> {``processes``, ``cluster``} -> ``workers`` -> ``games``; none imports this one.

The tree plays itself (``opponent="self"``), a ``random`` / ``heuristic``
opponent, or one drawn for each game from a ``pool`` (:mod:`treelab.play.training.pool`,
earlier trees too), changing colours every game. Each game is logged in the database's
``games`` table and the tree is saved incrementally, in one transaction, after
every game: by a writer process while the next game is played, or by this one,
decided once per run (:mod:`treelab.store.writer`; the file is the same). Ctrl-C (SIGINT)
or SIGTERM ends the current search at once; the unfinished game is dropped, the
tree saved, and training returns normally. Running it again resumes from the saved tree.

Self-play explores by default, as AlphaZero's does (Silver et al. 2017): the
tree's first ``temperature_moves`` moves of every game are sampled from the
simulations that selected them with temperature ``temperature`` (tau = 1), the
rest are the most selected, and ``noise`` (0.25) mixes root Dirichlet noise
into every move's choice. Without that, both sides read the same statistics and replay
one game forever. The settings are logged per game (``games.exploration``, JSON)
and ``seed`` replays the run.
"""

from __future__ import annotations

import gc
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import BudgetError
from ...games import Game, State, find_game
from ...mcts.config import SearchConfig
from ...mcts.loop import Limit
from ...mcts.policies import make_rng
from ...store.persistence import now
from ...tree import Tree
from ..console import progress_bar, stop_on_signals
from ..players import HeuristicPlayer, MCTSPlayer, Player, RandomPlayer, Wrapper
from .config import NOISE, OPPONENTS, TEMPERATURE, TEMPERATURE_MOVES, TrainingConfig, split_options
from .games import keep_game_nodes, play_game, play_recorded, tree_player_of
from .pool import OpponentScore, describe_scores, open_pool, parse_pool

__all__ = [
    "NOISE",
    "OPPONENTS",
    "TEMPERATURE",
    "TEMPERATURE_MOVES",
    "OpeningSampler",
    "TrainSummary",
    "TrainingConfig",
    "exploration",
    "make_players",
    "play_game",
    "train",
]

@dataclass(frozen=True)
class TrainSummary:
    """What a training run did."""

    db: str
    """The database file."""
    game: str
    """Game name."""
    opponent: str
    """``"self"``, ``"random"``, ``"heuristic"`` or ``"pool"`` (then see :attr:`by_opponent`)."""
    games: int
    """Games finished and logged in this run."""
    wins: int
    """Games the tree won (self-play: wins of player 1)."""
    draws: int
    """Drawn games."""
    losses: int
    """Games the tree lost (self-play: wins of player 2)."""
    nodes: int
    """Nodes in the tree after the run."""
    new_nodes: int
    """Nodes the run added."""
    simulations: int
    """Simulations the run added."""
    total_games: int
    """Games logged in the database in all (this run and earlier ones)."""
    seconds: float
    """Wall-clock time."""
    interrupted: bool
    """True if Ctrl-C or SIGTERM ended the run early (the tree is saved all the same)."""
    distinct: int = 0
    """Distinct games (move sequences) among the games of this run."""
    by_opponent: tuple[OpponentScore, ...] = ()
    """With a pool: the score against each member drawn (:mod:`treelab.play.training.pool`)."""

    def describe(self) -> str:
        """A few readable lines for the terminal."""
        if self.by_opponent:
            score = "by opponent drawn from the pool:\n" + describe_scores(self.by_opponent)
        elif self.opponent == "self":
            score = f"player 1 won {self.wins}, player 2 won {self.losses}, {self.draws} drawn"
        else:
            score = f"tree won {self.wins}, drew {self.draws}, lost {self.losses} against {self.opponent}"
        head = "interrupted after" if self.interrupted else "trained"
        return (
            f"{head} {self.games} games of {self.game} in {self.seconds:.1f}s ({self.distinct} distinct): {score}\n"
            f"tree: {self.nodes:,} nodes (+{self.new_nodes:,}), {self.simulations:,} new simulations, "
            f"{self.total_games} games logged in {self.db}"
        )


def train(
    game: str | Game,
    db: str | os.PathLike[str],
    games: int = 100,
    *,
    search: SearchConfig | None = None,
    training: TrainingConfig | None = None,
    on_game: Callable[[int, str, int | None], None] | None = None,
    until: float | None = None,
    **options: Any,
) -> TrainSummary:
    """Grow the tree stored in ``db`` by playing ``games`` whole games (fewer if ``until`` comes first).

    Args:
        game: game name or :class:`Game`.
        db: SQLite file, created if missing, resumed if present.
        games: games to play in this run.
        search: how the tree searches and picks its moves (:class:`~treelab.mcts.config.SearchConfig`:
            algorithm, ``c``, solver, playout, evaluator, temperature, choice, node budget).
        training: how the games are played (:class:`~treelab.play.training.config.TrainingConfig`:
            iterations, opponent or pool, temperature moves, noise, alpha, seed, progress, workers, ray).
        on_game: called with (game id, moves, winner) once each game is committed to ``db``
            (with the writer process, while the next game is played).
        until: a :func:`time.monotonic` time after which no new game starts (the game under way is played to
            its end and saved): a run of so many minutes (``train --minutes``); None: ``games`` alone.
        options: any field of either value, replacing it (``iterations=200, solver=True``).

    The temperature, unless given, is :data:`~treelab.play.training.config.TEMPERATURE` over the
    opening in self-play and 0 against another opponent; the noise :data:`NOISE` in self-play, else
    0 (:func:`~treelab.play.training.config.split_options`).

    Example:
        >>> import treelab, tempfile, os
        >>> db = os.path.join(tempfile.mkdtemp(), "t.db")
        >>> treelab.train("tictactoe", db, 2, iterations=50, seed=1, progress=False).games
        2
    """
    from ...store.binding import last_game
    from ...store.persistence import kept_open, open_tree
    from ...store.writer import BackgroundSaver

    the_game = find_game(game)
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise BudgetError(f"games {games!r} must be a whole number >= 0")
    cfg, plan = split_options(search, training, options, the_game.num_moves)
    opponent, iterations = plan.opponent, plan.iterations
    members = parse_pool(plan.pool, opponent=opponent, parallel=plan.workers is not None or plan.ray is not None)
    rng = make_rng(plan.seed)
    if plan.workers is not None or plan.ray is not None:  # parallel self-play, merged by one writer
        from .parallel import train_parallel

        counts = train_parallel(the_game, db, games=games, search=cfg, training=plan, seed=rng, on_game=on_game,
                                players=make_players, logged_as=exploration(cfg, plan))
        return TrainSummary(db=os.fspath(db), game=the_game.name, opponent=opponent, by_opponent=(), **counts)
    the_pool = None if members is None else open_pool(members, the_game, db, iterations=iterations, rng=rng)
    saver = BackgroundSaver(db, the_game.name, background=games > 1 and _cores() > 1)  # a lone core: saves here
    try:  # the writer process starts up while the tree loads
        tree = open_tree(db, the_game, c=cfg.stored_c)
    except BaseException:
        saver.finish()
        raise
    gc.freeze()  # the loaded tree lives on: keep full collections from walking every node again
    start_nodes, start_sims = tree.size, tree.root.nb_visit
    me, other = make_players(tree, rng, cfg, plan)
    played, seen = 0, set[str]()
    logged_as = exploration(cfg, plan, None if members is None else list(members))
    tally, scores = {"wins": 0, "draws": 0, "losses": 0}, dict[str, list[int]]()
    started = time.perf_counter()
    bar = progress_bar(games, plan.progress, the_game.name)
    score_label = "X/draw/O" if opponent == "self" else "W/D/L"  # self-play: wins of each side

    def logged(rows: list[dict[str, Any]]) -> None:  # committed games: callback, progress
        for row in rows:
            if on_game is not None:
                on_game(row["id"], row["moves"], row["winner"])
            if bar is not None:
                rate = (tree.root.nb_visit - start_sims) / max(time.perf_counter() - started, 1e-9)
                bar.set_postfix_str(
                    f"{score_label} {tally['wins']}/{tally['draws']}/{tally['losses']}, {tree.size:,} nodes, "
                    f"{rate:,.0f} sims/s",
                    refresh=False,
                )
                bar.update(1)

    try:
        with stop_on_signals() as stopped, kept_open(tree), saver:
            saver.track(tree)  # decides, once, which process saves this run's games (a Ctrl-C meanwhile: a flag)
            me.should_stop = stopped
            for _ in range(games):
                if until is not None and time.monotonic() >= until:
                    break  # the time given is up: a clean stop between games
                game_id = last_game(tree) + 1  # the saver stamps the game's new nodes with it
                member, other = the_pool.draw(the_game) if the_pool is not None else (opponent, other)
                tree_player = tree_player_of(member, game_id)
                first = now()
                played_game = play_recorded(the_game, me, other, tree_player, stopped)
                if not played_game.state.is_terminal:
                    break  # interrupted mid-game: drop the game, keep what the tree learned
                winner = played_game.state.winner
                row = played_game.record(the_game, game_id, member, tree_player, iterations, first,
                                         logged_as).as_dict()
                played += 1
                seen.add(row["moves"])
                key = "draws" if winner is None else "wins" if winner == tree_player else "losses"
                tally[key] += 1
                scores.setdefault(member, [0, 0, 0])[("wins", "draws", "losses").index(key)] += 1
                logged(saver.save(row))  # the writer process may hold it: it is logged with the next one
                keep_game_nodes()
            logged(saver.finish())
        interrupted = stopped()  # read once every save is done: a Ctrl-C while the last one was committed counts
    finally:
        gc.unfreeze()  # frozen objects are never collected: the tree must go once the caller drops it
    if bar is not None:
        bar.close()
    return TrainSummary(
        db=os.fspath(db), game=the_game.name, opponent=opponent if members is None else "pool", games=played,
        nodes=tree.size, new_nodes=tree.size - start_nodes, simulations=tree.root.nb_visit - start_sims,
        total_games=last_game(tree), seconds=time.perf_counter() - started,
        interrupted=interrupted, distinct=len(seen), **tally,
        by_opponent=tuple(OpponentScore(m, sum(v), *v) for m, v in scores.items()) if members else (),
    )


def _cores() -> int:
    """The CPUs this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def exploration(search: SearchConfig, training: TrainingConfig, pool: list[str] | None = None) -> str:
    """The exploration settings of a run, as logged in ``games.exploration`` (JSON): the move temperature and
    the moves it covers, the root noise's share and alpha, the move choice, the pool drawn from, the model."""
    noise = training.noise or 0.0
    guide = {}
    if search.model is not None:  # which model played (the learning loop's versions)
        from ...learn.model import load_model

        guide = {"algorithm": "puct", "model": search.model,
                 "model_version": load_model(search.model).info.get("version"), "mix": search.mix}
    fresh = {"searches": "fresh"} if training.searches == "fresh" else {}
    return json.dumps({"temperature": search.temperature, "temperature_moves": training.temperature_moves,
                       "noise": noise, "alpha": training.alpha if noise > 0 else None, "choice": search.choice,
                       **({"pool": pool} if pool is not None else {}), **guide, **fresh})


class OpeningSampler(Wrapper[MCTSPlayer]):
    """The tree's player, sampling its moves with ``temperature`` over each game's first ``moves`` moves.

    Later moves are played with temperature 0 (the most selected), as AlphaZero's self-play does.
    """

    def __init__(self, player: MCTSPlayer, temperature: float, moves: int | None) -> None:
        super().__init__(player)
        self.temperature = temperature
        self.moves = moves

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The player's move, sampled while ``len(moves) < self.moves``."""
        opening = self.moves is None or len(moves) < self.moves
        return self.player.choose(state, moves, temperature=self.temperature if opening else 0.0)


def make_players(tree: Tree, rng: random.Random, search: SearchConfig,
                 training: TrainingConfig) -> tuple[OpeningSampler, Player | None]:
    """The tree's player on ``tree`` and its opponent (None in self-play), seeded from ``rng``.

    ``search`` carries the run's root noise (:func:`~treelab.play.training.config.split_options`) and
    ``training`` is resolved (:meth:`~treelab.play.training.config.TrainingConfig.resolved`).
    """
    fresh = training.searches == "fresh"  # each move on a tree of its own, its top kept in ``tree``
    me = MCTSPlayer(search, Limit(iterations=training.iterations), tree=None if fresh else tree,
                    record=tree if fresh else None, rng=random.Random(rng.getrandbits(64)))
    other: Player | None = None
    if training.opponent == "random":
        other = RandomPlayer(rng=random.Random(rng.getrandbits(64)))
    elif training.opponent == "heuristic":
        other = HeuristicPlayer(rng=random.Random(rng.getrandbits(64)))
    return OpeningSampler(me, search.temperature, training.temperature_moves), other
