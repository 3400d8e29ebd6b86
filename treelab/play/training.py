"""Training: whole games played with the persistent tree, saved after every game.

The tree plays itself (``opponent="self"``), a ``random`` / ``heuristic``
opponent, or one drawn for each game from a ``pool`` (:mod:`treelab.play.pool`,
earlier trees too), changing colours every game. Each game is logged in the database's
``games`` table and the tree is saved incrementally, in one transaction, after
every game: by a writer process while the next game is played, or by this one,
decided once per run (:mod:`treelab.store.background`; the file is the same). Ctrl-C (SIGINT)
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
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import BudgetError
from ..games import Game, State, find_game
from ..mcts.choice import check_exploration
from ..mcts.config import Algorithm, Choice, EvaluatorName, PlayoutName, SearchConfig, check_name
from ..mcts.policies import PlayoutFn, make_rng
from ..tree import Tree
from .console import progress_bar, stop_on_signals
from .players import HeuristicPlayer, MCTSPlayer, Player, RandomPlayer, Wrapper
from .pool import OpponentScore, describe_scores, open_pool, parse_pool
from .workers import play_game

if TYPE_CHECKING:
    from ..mcts.puct import PUCTPlayer

__all__ = [
    "NOISE",
    "OPPONENTS",
    "TEMPERATURE",
    "TEMPERATURE_MOVES",
    "Opening",
    "TrainSummary",
    "exploration",
    "make_players",
    "play_game",
    "train",
]

OPPONENTS = ("self", "random", "heuristic")
"""Who the tree plays against in :func:`train`."""

TEMPERATURE = 1.0
"""Self-play's move temperature over the opening (AlphaZero's tau = 1, Silver et al. 2017)."""

TEMPERATURE_MOVES = 8
"""Moves of each game sampled with :data:`TEMPERATURE`; later ones are the most selected.

AlphaZero samples Go's first 30 moves (about a tenth of a game); Connect Four
games last 7 to 42 moves. Compared with 16 and with every move by ``benchmarks/learning.py``."""

NOISE = 0.25
"""The share of root Dirichlet noise in self-play's move choice: AlphaZero's 0.25 (Silver et al. 2017).

Measured by ``benchmarks/learning.py`` (README, *Does the tree learn?*): after 1,000 self-play games
at 200 simulations a move the tree scored 0.643 (0.574-0.706, 200 games) against a fresh tree with
it, 0.535 (0.466-0.603) with the temperature alone."""


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
    """With a pool: the score against each member drawn (:mod:`treelab.play.pool`)."""

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
    *,
    games: int = 100,
    iterations: int = 400,
    opponent: str = "self",
    pool: str | Sequence[str] | None = None,
    c: float | None = None,
    seed: int | random.Random | None = None,
    config: SearchConfig | None = None,
    solver: bool | None = None,
    playout: PlayoutName | PlayoutFn | None = None,
    algorithm: Algorithm | None = None,
    evaluator: EvaluatorName | None = None,
    temperature: float | None = None,
    temperature_moves: int | None = TEMPERATURE_MOVES,
    noise: float | None = None,
    alpha: float | None = None,
    how: Choice | None = None,
    progress: bool = True,
    on_game: Callable[[int, str, int | None], None] | None = None,
    workers: int | None = None,
    ray: str | bool | None = None,
) -> TrainSummary:
    """Grow the tree stored in ``db`` by playing ``games`` whole games.

    Args:
        game: game name or :class:`Game`.
        db: SQLite file, created if missing, resumed if present.
        games: games to play in this run.
        iterations: simulations per move of the tree.
        opponent: ``"self"`` (the tree plays both sides), ``"random"`` or ``"heuristic"``.
        pool: instead of ``opponent``, draw each game's from these members (``"self,heuristic,db=old.db"``,
            :mod:`treelab.play.pool`) with the run's rng; exploration defaults are self-play's.
        c: exploration constant: UCB1's ``c`` (default sqrt(2)) or PUCT's ``c_puct`` (default 1.25).
        seed: replay the run exactly.
        config: how the tree searches and picks its moves (:class:`~treelab.mcts.config.SearchConfig`);
            ``c`` and the keywords below, when given, replace its fields.
        solver: use MCTS-Solver proofs while searching.
        playout: ``"random"`` or ``"decisive"`` playouts (UCT).
        algorithm: ``"uct"`` or ``"puct"`` (AlphaZero style; ``c`` is then ``c_puct``).
        evaluator: PUCT's ``"rollout"`` or ``"heuristic"`` evaluator.
        temperature: ``> 0`` samples the tree's opening moves from the simulations that
            selected them (``nb_select ** (1 / temperature)``); 0 always plays the most selected.
            None: :data:`TEMPERATURE` in self-play, 0 against another opponent (which varies the games).
        temperature_moves: how many moves of each game are sampled (None: every move).
        noise: the share of root Dirichlet noise mixed into every move choice of the tree
            (UCT: into the choice; PUCT: into the root's priors), in [0, 1]. None:
            :data:`NOISE` in self-play, 0 against another opponent.
        alpha: the noise's Dirichlet ``alpha`` (None: AlphaZero's ``10 / moves``).
        how: the UCT tree's move choice: ``"visits"`` (most selected) or ``"ucb1"`` (the
            original persistent-tree rule: the best UCB1 score).
        progress: show a progress bar (games, win/draw/loss, nodes, rate).
        on_game: called with (game id, moves, winner) once each game is committed to ``db``
            (with the writer process, while the next game is played).
        workers: play in this many processes at once, one writer merging what they
            learn (:mod:`treelab.play.parallel`); None: this process alone.
        ray: play on Ray instead: True for a local Ray, or a cluster address.
    """
    from ..store.background import BackgroundSaver
    from ..store.persistence import kept_open, open_tree

    the_game = find_game(game)
    if not isinstance(games, int) or games < 0:
        raise BudgetError(f"games {games!r} must be a whole number >= 0")
    if not isinstance(iterations, int) or iterations < 1:
        raise BudgetError(f"iterations {iterations!r} must be a whole number of at least 1")
    if temperature is None and not (config is not None and config.temperature):
        temperature = TEMPERATURE if opponent == "self" else 0.0  # the keyword 0 turns it off
    if noise is None:
        noise = NOISE if opponent == "self" else 0.0
    cfg = SearchConfig.of(config, c=c, solver=solver, playout=None if callable(playout) else playout,
                          algorithm=algorithm, evaluator=evaluator, temperature=temperature, choice=how)
    check_name("opponent", opponent, OPPONENTS)
    members = parse_pool(pool, opponent=opponent, parallel=workers is not None or ray is not None)
    if alpha is None:
        from ..mcts.puct import dirichlet_alpha_for

        alpha = dirichlet_alpha_for(the_game.num_moves)
    check_exploration(cfg.temperature, noise, alpha, cfg.choice)
    if temperature_moves is not None and (isinstance(temperature_moves, bool) or not isinstance(
            temperature_moves, int) or temperature_moves < 0):
        raise BudgetError(f"temperature moves {temperature_moves!r} must be a whole number >= 0, or None (all)")
    rng = make_rng(seed)
    play: str | PlayoutFn = playout if callable(playout) else cfg.playout
    settings: dict[str, Any] = dict(iterations=iterations, opponent=opponent, c=cfg.exploration, solver=cfg.solver,
                                    playout=play, algorithm=cfg.algorithm, evaluator=cfg.evaluator,
                                    temperature=cfg.temperature, how=cfg.choice,
                                    temperature_moves=temperature_moves, noise=noise, alpha=alpha)
    if workers is not None or ray is not None:  # parallel self-play, merged by one writer
        from .parallel import train_parallel

        counts = train_parallel(the_game, db, games=games, workers=workers, ray=ray, seed=rng, progress=progress,
                                on_game=on_game, players=make_players, logged_as=exploration(settings), **settings)
        return TrainSummary(db=os.fspath(db), game=the_game.name, opponent=opponent, by_opponent=(), **counts)
    the_pool = None if members is None else open_pool(members, the_game, db, iterations=iterations, rng=rng)
    saver = BackgroundSaver(db, the_game.name, background=games > 1 and _cores() > 1)  # a lone core: saves here
    try:  # the writer process starts up while the tree loads
        tree = open_tree(db, the_game, c=cfg.exploration if cfg.algorithm == "uct" else None)
    except BaseException:
        saver.finish()
        raise
    gc.freeze()  # the loaded tree lives on: keep full collections from walking every node again
    start_nodes, start_sims = tree.size, tree.root.nb_visit
    me, other = make_players(tree, rng, **settings)
    played, seen = 0, set[str]()
    logged_as = exploration(settings if members is None else {**settings, "pool": list(members)})
    tally, scores = {"wins": 0, "draws": 0, "losses": 0}, dict[str, list[int]]()
    started = time.perf_counter()
    bar = progress_bar(games, progress, the_game.name)
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

    with stop_on_signals() as stopped, kept_open(tree), saver:
        saver.track(tree)  # decides, once, which process saves this run's games (a Ctrl-C meanwhile: a flag)
        me.should_stop = stopped
        for _ in range(games):
            game_id = tree.last_game_id + 1
            tree.current_game = game_id
            member, other = the_pool.draw(the_game) if the_pool is not None else (opponent, other)
            tree_player = 1 if member == "self" else 1 + (game_id + 1) % 2
            first = datetime.now(timezone.utc).isoformat(timespec="seconds")
            state, moves = play_game(the_game, me, other, tree_player, stopped)
            if not state.is_terminal:
                break  # interrupted mid-game: drop the game, keep what the tree learned
            winner = state.winner
            row: dict[str, Any] = {
                "id": game_id, "moves": the_game.notation(moves), "winner": winner,
                "opponent": member, "tree_player": None if member == "self" else tree_player,
                "iterations": iterations, "started_at": first, "exploration": logged_as,
                "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            }
            played += 1
            seen.add(row["moves"])
            key = "draws" if winner is None else "wins" if winner == tree_player else "losses"
            tally[key] += 1
            scores.setdefault(member, [0, 0, 0])[("wins", "draws", "losses").index(key)] += 1
            logged(saver.save(row))  # the writer process may hold it: it is logged with the next one
            gc.freeze()  # the tree's new nodes live on: full collections need not walk them again
        tree.current_game = None
        interrupted = stopped()
        if interrupted:
            logged(saver.save(None))  # what the unfinished game's searches learned
        logged(saver.finish())
    if bar is not None:
        bar.close()
    return TrainSummary(
        db=os.fspath(db), game=the_game.name, opponent=opponent if members is None else "pool", games=played,
        nodes=tree.size, new_nodes=tree.size - start_nodes, simulations=tree.root.nb_visit - start_sims,
        total_games=tree.last_game_id, seconds=time.perf_counter() - started,
        interrupted=interrupted, distinct=len(seen), **tally,
        by_opponent=tuple(OpponentScore(m, sum(v), *v) for m, v in scores.items()) if members else (),
    )


def _cores() -> int:
    """The CPUs this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def exploration(settings: dict[str, Any]) -> str:
    """The exploration settings of :func:`make_players`'s keywords, as logged in ``games.exploration`` (JSON)."""
    noise, pool = settings.get("noise", 0.0), ({"pool": settings["pool"]} if "pool" in settings else {})
    return json.dumps({"temperature": settings.get("temperature", 0.0), "temperature_moves": settings.get(
        "temperature_moves"), "noise": noise, "alpha": settings.get("alpha") if noise > 0 else None,
        "how": settings.get("how", "visits"), **pool})


class Opening(Wrapper["MCTSPlayer | PUCTPlayer"]):
    """The tree's player, sampling its moves with ``temperature`` over each game's first ``moves`` moves.

    Later moves are played with temperature 0 (the most selected), as AlphaZero's self-play does.
    """

    def __init__(self, player: MCTSPlayer | PUCTPlayer, temperature: float, moves: int | None) -> None:
        super().__init__(player)
        self.temperature = temperature
        self.moves = moves

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The player's move, sampled while ``len(moves) < self.moves``."""
        opening = self.moves is None or len(moves) < self.moves
        self.player.temperature = self.temperature if opening else 0.0
        return self.player.choose(state, moves)


def make_players(
    tree: Tree, rng: random.Random, *, iterations: int, opponent: str, c: float, solver: bool,
    playout: str | PlayoutFn, algorithm: str, evaluator: str, temperature: float, how: str,
    temperature_moves: int | None = None, noise: float = 0.0, alpha: float = 1.0,
) -> tuple[Opening, Player | None]:
    """The tree's player on ``tree`` and its opponent (None in self-play), seeded from ``rng``."""
    me: MCTSPlayer | PUCTPlayer
    if algorithm == "puct":
        from ..mcts.evaluators import find_evaluator
        from ..mcts.puct import PUCTPlayer

        me = PUCTPlayer(tree=tree, iterations=iterations, c_puct=c, temperature=temperature,
                        evaluator=find_evaluator(evaluator, playout=playout),
                        dirichlet_alpha=alpha if noise > 0 else None, dirichlet_fraction=noise,
                        rng=random.Random(rng.getrandbits(64)))
    else:
        me = MCTSPlayer(tree=tree, iterations=iterations, c=c, solver=solver, playout=playout,
                        temperature=temperature, how=how, noise=noise, alpha=alpha,
                        rng=random.Random(rng.getrandbits(64)))
    other: Player | None = None
    if opponent == "random":
        other = RandomPlayer(rng=random.Random(rng.getrandbits(64)))
    elif opponent == "heuristic":
        other = HeuristicPlayer(rng=random.Random(rng.getrandbits(64)))
    return Opening(me, temperature, temperature_moves), other
