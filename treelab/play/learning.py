"""The learning loop: self-play grows the tree, a model is fitted from the tree, the next games search with it.

This is the AlphaZero design at treelab's scale (Silver et al. 2017, 2018): the stored tree is the
dataset, :func:`treelab.fit` distils its selection shares and values into a small policy/value
model, and PUCT searches with that model (:class:`~treelab.mcts.evaluators.ModelEvaluator`) in the
next games. :func:`learning_loop` plays ``games`` games with :func:`~treelab.play.training.train`
in steps of at most ``refit_every`` games and refits the model after every ``refit_every`` games
logged in the database. Until the first model exists the games are searched by PUCT with the
heuristic evaluator where the game has a heuristic (:func:`first_search`), else as
:func:`~treelab.play.training.train` would (UCT).

Each move of the loop's games is searched on a fresh tree of its own, as AlphaZero's self-play is
(``TrainingConfig.searches="fresh"``): the move follows what the current model's search finds now, and the
top of each search (the position's visits and value along its path, each move's selections and value) is
added to the stored tree, which stays the dataset. Searching the one stored tree instead (``searches="tree"``)
let the counts that the first, weakest models gathered choose the openings for thousands of games
(``docs/notes/learning-loop.md``).

A refit is incremental (:mod:`treelab.learn.fitting`): it starts from the current model's weights
and trains on a replay window of positions, those made since the last fit first and a uniform
sample of the older ones; the window grows with the games logged (:func:`replay_plan`: from
:data:`LOOP_SAMPLE`, :data:`REPLAY_PER_GAME` positions a game, at most :data:`REPLAY_MAX`) while the
epochs over it shrink (:data:`WARM_PASSES`), so the model sees more of the data as the run grows and a
refit's cost stays about flat (the first fit trains from random weights, for up to ``FitConfig.epochs``).
Once there is a model, each refit runs beside the next games by default (:mod:`treelab.play.refits`: a
process of its own reads the file as the last step left it while the games play on with the version before,
so they wait only for what the fit has not finished by the end of their step; ``refits="between"`` makes them
wait for every fit). A run may be bounded by wall time (``minutes``) instead of games: it stops cleanly
between games.

Everything resumes from the files: the database holds the games (and, in ``games.exploration``,
the model version that played each), the model file holds its version and the number of games
logged when it was fitted, so running the same command again goes on where it stopped. A model
version is written whole or not at all (the current file, and a copy ``NAME.vN.npz`` beside it), so
Ctrl-C or ``kill -9`` loses at most the game being played and the fit under way.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import BudgetError, FitError, GameMismatchError
from ..games import Game, State, find_game
from ..learn.fitting import FitConfig, require_learning
from ..learn.model import Model, load_model
from ..mcts.config import SearchConfig, check_name
from ..store.dbfile import fold_log
from ..store.persistence import reusing_trees
from ..store.records import info
from ..store.schema import display
from .refits import BesideRefit, Refit, refit_between, versioned
from .training import TrainSummary, train
from .training.config import REFIT_PLACES, RefitPlace, TrainingConfig

__all__ = ["LOOP_FITTING", "LOOP_HIDDEN", "LOOP_ITERATIONS", "LOOP_MIX", "LOOP_OUTCOME", "LOOP_SAMPLE", "REPLAY_MAX",
           "REPLAY_PER_GAME", "WARM_EPOCHS", "WARM_PASSES", "LoopSummary", "Refit", "first_search", "learning_loop",
           "replay_plan", "versioned"]

LOOP_MIX = 0.0
"""The playout's share of a leaf's value in the loop's searches unless ``mix`` is given: none, the model's
value alone, as AlphaZero's self-play (Silver et al. 2017); PUCT's ``c`` is then :data:`~treelab.mcts.config.
C_PUCT_MODEL`. Sessions 5-17 mixed half a random playout in, as AlphaGo did (Silver et al. 2016), from a
300-game model that scored 0.83 against fresh UCT with it and 0.78 without (``docs/notes/model.md``); measured
again on the judged positions (session 18, ``docs/notes/learning-loop.md``), every model of a 31,300-game loop
from its 500th game on made more mistakes at the loop's 200 simulations with the playout than without (at
beginning-medium, middle-medium and beginning-hard together, 70-122 mistakes against 48-110 with ``c = 0.625``):
a random playout says little about a long game's value, and only slows the search."""
LOOP_ITERATIONS = 200
"""Simulations a move in the loop's games when ``train --refit-every`` (or :func:`learning_loop` without a
``training``) is not told otherwise (``train``'s own default is 400): more games of shorter searches, since the
games are what the model learns from."""
LOOP_SAMPLE = 10_000
"""Positions a refit builds and trains on at most (``FitConfig.sample``) unless ``fitting`` says otherwise:
about a hundred Connect Four games' worth of new positions at 200 simulations a move, the rest replayed."""
LOOP_OUTCOME = 0.5
"""The share of the logged games' outcomes in the loop's value targets (``FitConfig.outcome``): 0.5 is
AlphaZero's ``z`` averaged with the stored mean ``q`` at the positions the games passed, "z + q" (0 was the
default until session 21). Chosen on the dev half grown fivefold in session 21 (``docs/notes/learning-loop.md``:
1,100-2,200 positions a class; 600 simulations, the last five versions of four 60-minute hours): beginning-medium,
middle-medium and beginning-hard together, z + q with the learning-rate decay made 808 mistakes, the decay alone
(then the default) 849, neither 804, z + q alone 811; z + q made about a tenth fewer at beginning-hard in both
pairs (445 against 499, 434 against 478: the class with the most mistakes, furthest from the peer's) and a fifth
more at middle-medium (170 against 140, 184 against 159). Its refit reads the games' paths with its sample and
follows them all at once (``dataset.game_outcomes``)."""
LOOP_HIDDEN = (128, 64)
"""The hidden layers of the loop's network (``FitConfig.hidden``, the same as ``treelab fit``'s). Measured against
256-128 in sessions 13 and 18 (``docs/notes/learning-loop.md``): no better held-out value sign at 40,000 positions;
cold fits on a 31,300-game tree made fewer middle-medium mistakes with the wider one (3.6% against 6.1%), whose
refits then cost twice as much (float64; since session 22 they train in float32: 5.5 s against 2.6 s at the end of
an hour) and whose searches are about a tenth slower; a 30-minute loop with it (session 22) reached a better
held-out value sign and played worse: 608 mistakes at beginning-medium, middle-medium and beginning-hard on the
dev half (three versions) against 511 at the same games and 513 at the same minutes. A resumed loop keeps its
model's layers (:func:`learning_loop`): changing this default never restarts a loop from random weights."""
LOOP_FITTING = FitConfig(sample=LOOP_SAMPLE, outcome=LOOP_OUTCOME, hidden=LOOP_HIDDEN)
"""What the loop's refits learn from and how, unless ``fitting`` (or ``train``'s options) say otherwise: the
command line's loop and :func:`learning_loop` alike; :func:`replay_plan` grows its sample with the games."""
WARM_EPOCHS = 30
"""At most this many epochs for a refit that starts from the previous model (``docs/notes/learning-loop.md``)."""
REPLAY_PER_GAME = 20
"""The replay window grows by this many positions per game logged (from ``FitConfig.sample``, :data:`LOOP_SAMPLE`
by default): a refit after 2,000 games draws on 40,000 positions, the newest first (AlphaZero's window of the
last games, Silver et al. 2017, grown with the run as in Wu's KataGo, 2019)."""
REPLAY_MAX = 100_000
"""The replay window's largest size."""
DECAY_AFTER: int | None = REPLAY_MAX // REPLAY_PER_GAME
"""From this many games logged on (the replay window full), a refit's learning rate is ``fitting.learning_rate``
times ``sqrt(DECAY_AFTER / games)`` (None: no decay; AlphaZero lowers its rate in steps, Silver et al. 2017).
Measured in session 20 (``docs/notes/learning-loop.md``, dev half, 600 simulations): the hour with it made 185
mistakes at beginning-medium, middle-medium and beginning-hard over its last five versions against 201 without,
152 against 120 at 30 minutes (smaller steps learn less while the games still teach much), and no fewer on the
test half: within the noise, kept as the dev half's choice at 60 minutes."""
WARM_PASSES = WARM_EPOCHS * LOOP_SAMPLE
"""Examples a warm refit trains on, about (epochs times positions): a larger window trains fewer epochs over
it, so a refit's time stays about flat as the run grows (:func:`replay_plan`)."""


def replay_plan(fitting: FitConfig, logged: int, warm: bool) -> FitConfig:
    """The fit a refit after ``logged`` games makes: ``fitting`` with its sample grown to the replay window
    (:data:`REPLAY_PER_GAME` a game, at most :data:`REPLAY_MAX`, never below ``fitting.sample``) and, from a
    previous model (``warm``), at most :data:`WARM_EPOCHS` epochs, fewer over a larger window
    (:data:`WARM_PASSES`, at least 3), its learning rate lowered after :data:`DECAY_AFTER` games."""
    sample = fitting.sample
    if sample is not None:
        sample = max(sample, min(REPLAY_MAX, REPLAY_PER_GAME * logged))
    epochs = fitting.epochs
    if warm:
        epochs = min(epochs, WARM_EPOCHS, max(3, round(WARM_PASSES / (sample or LOOP_SAMPLE))))
    rate = fitting.learning_rate
    if DECAY_AFTER is not None and logged > DECAY_AFTER:
        rate *= (DECAY_AFTER / logged) ** 0.5
    return replace(fitting, sample=sample, epochs=epochs, learning_rate=rate)


def first_search(game: Game) -> dict[str, str]:
    """How the loop searches before its first model: PUCT with the heuristic evaluator when the game has a
    heuristic (its own :meth:`~treelab.games.State.prior_weights` or
    :meth:`~treelab.games.State.centrality`), else nothing changed (``train``'s UCT).

    Measured on Connect Four (``docs/notes/learning-loop.md``): the heuristic start's first model is much
    stronger (0.855 against fresh UCT after 100 games, where UCT self-play's scores 0.670).
    """
    kind = type(game.initial())
    if kind.prior_weights is not State.prior_weights or kind.centrality is not State.centrality:
        return {"algorithm": "puct", "evaluator": "heuristic"}
    return {}


@dataclass(frozen=True)
class LoopSummary:
    """What :func:`learning_loop` did."""

    db: str
    """The tree's database."""
    model: str
    """The model file."""
    games: int
    """Games played in this run."""
    total_games: int
    """Games logged in the database after it."""
    version: int
    """The model's version at the end (0: no model yet)."""
    refits: tuple[Refit, ...]
    """The models fitted in this run."""
    runs: tuple[TrainSummary, ...]
    """Each step of games between refits."""
    interrupted: bool
    """Ctrl-C or a signal ended it early."""
    seconds: float
    """Wall time."""
    notes: tuple[str, ...] = ()
    """Refits that could not be made (too few well-visited positions yet), each said once."""

    def describe(self) -> str:
        """The command line's report."""
        head = "interrupted after" if self.interrupted else "played"
        share = ""
        if self.refits:
            fitting = sum(r.seconds for r in self.refits)
            share = f" ({fitting:.1f}s of it refitting, {self.refit_share:.0%})"
            if any(r.beside for r in self.refits):
                share = (f" ({fitting:.1f}s refitting beside the games, {self.refit_share:.0%} of the time; they "
                         f"waited {sum(r.waited for r in self.refits):.1f}s for it, {self.wait_share:.0%})")
        lines = [f"{head} {self.games} games in {self.seconds:.1f}s{share}, {self.total_games} logged in {self.db}; "
                 f"model {self.model} at version {self.version}"]
        lines += [f"  no refit: {note}" for note in self.notes]
        for r in self.refits:
            acc = "-" if r.value_sign_accuracy is None else f"{r.value_sign_accuracy:.1%}"
            top = "-" if r.policy_top1 is None else f"{r.policy_top1:.1%}"
            where = f" beside the games (waited {r.waited:.1f}s)" if r.beside else ""
            lines.append(f"  refit v{r.version} after {r.games} games: {r.positions:,} positions, held-out value "
                         f"sign {acc}, policy top-1 {top}, {r.seconds:.1f}s{where}")
        return "\n".join(lines)

    @property
    def refit_share(self) -> float:
        """The fits' time over the wall time (0 without refits); beside the games, part of it ran while they played."""
        return sum(r.seconds for r in self.refits) / self.seconds if self.refits and self.seconds else 0.0

    @property
    def wait_share(self) -> float:
        """The share of the wall time the games waited for refits (the whole of :attr:`refit_share` between steps)."""
        return sum(r.waited for r in self.refits) / self.seconds if self.refits and self.seconds else 0.0


def learning_loop(
    game: str | Game,
    db: str | os.PathLike[str],
    model: str | os.PathLike[str],
    games: int | None = 100,
    *,
    refit_every: int,
    minutes: float | None = None,
    search: SearchConfig | None = None,
    training: TrainingConfig | None = None,
    fitting: FitConfig | None = None,
    on_refit: Callable[[Refit], None] | None = None,
    **options: Any,
) -> LoopSummary:
    """Play ``games`` self-play games into ``db``, refitting ``model`` from it every ``refit_every`` games.

    Args:
        game: the game (its name or :class:`Game`).
        db: the tree's database, created if missing, resumed if present.
        model: the model file: loaded when present (it must be a model of ``game``), written by the
            first refit when missing.
        games: games to play in this run (None: as many as ``minutes`` allows).
        refit_every: fit the model again after every this many games logged.
        minutes: stop cleanly once this much wall time has passed (the game under way is finished and saved,
            a refit that falls due then is left to the next run, which makes it first); None: ``games`` alone.
            Running the same call again resumes tree and model.
        search: how the games are searched before a model exists (None, and no ``algorithm`` or
            ``evaluator`` keyword: :func:`first_search`); with a model, the same with
            ``algorithm="puct"`` and the model as PUCT's evaluator (``mix`` kept).
        training: how the games are played (:class:`TrainingConfig`: iterations, workers, ray, seed...; None:
            ``train``'s defaults but :data:`LOOP_ITERATIONS` simulations a move) and
            where refits run (:attr:`TrainingConfig.refits`: ``"beside"`` the next ``refit_every`` games, in a
            process of their own, the games one version behind, or ``"between"`` them). The first fit, and the
            last of a run of ``games`` games, are made between. Either way a run replays exactly for a seed.
        fitting: what each refit learns from and how long it trains (:class:`FitConfig`; by default
            :data:`LOOP_FITTING`); a refit from the previous model trains at most :data:`WARM_EPOCHS` epochs. A
            resumed loop whose model has other layers than :data:`LOOP_HIDDEN` keeps them while ``fitting`` asks
            for the default ones (other layers asked for start the next version from random weights).
        on_refit: called after each refit.
        options: fields of ``search`` or ``training`` as keywords (``iterations=200, workers=2``);
            ``mix`` (default :data:`LOOP_MIX`) applies once a model exists.

    Raises:
        BudgetError: ``refit_every`` or ``games`` is not a whole number >= 1 (>= 0 for games), ``minutes`` is not
            a positive number, or neither ``games`` nor ``minutes`` is given.
        ModelFileError, ModelMismatchError: ``model`` exists and is not a model of ``game``.
        GameMismatchError: ``db`` holds a tree of another game.
        MissingExtraError: scikit-learn (the ``learn`` extra) is not installed, refused before any game.
    """
    started = time.perf_counter()
    require_learning()
    the_game = find_game(game)
    if isinstance(refit_every, bool) or not isinstance(refit_every, int) or refit_every < 1:
        raise BudgetError(f"refit every {refit_every!r} games must be a whole number >= 1")
    if games is not None and (isinstance(games, bool) or not isinstance(games, int) or games < 0):
        raise BudgetError(f"games {games!r} must be a whole number >= 0")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, (int, float))
                                or not 0 < minutes < 1e9):
        raise BudgetError(f"minutes {minutes!r} must be a positive number")
    if games is None and minutes is None:
        raise BudgetError("give games or minutes (or both): a loop needs a budget")
    refits = options.get("refits", training.refits if training is not None else "beside")
    check_name("refits", refits, REFIT_PLACES)
    until = time.monotonic() + 60.0 * minutes if minutes is not None else None
    budget = games if games is not None else 1 << 62
    path = Path(model)
    if not path.parent.is_dir():
        raise BudgetError(f"cannot write model {display(model)!r}: no such directory {str(path.parent)!r}")
    current = load_model(path, the_game) if path.exists() else None  # another game's model: refused now
    logged = _games_logged(db, the_game)  # another game's tree: refused now, before any game
    fitting = fitting or LOOP_FITTING
    if current is not None and fitting.hidden == LOOP_HIDDEN and current.hidden != LOOP_HIDDEN:
        fitting = replace(fitting, hidden=current.hidden)  # a resumed loop keeps its network's layers
    if search is None and "algorithm" not in options and "evaluator" not in options:
        options = {**first_search(the_game), **options}
    if training is None:  # the loop's own default, as train --refit-every's
        options = {"iterations": LOOP_ITERATIONS, **options}
    if options.get("searches") is None and (training is None or training.searches is None):
        options["searches"] = "fresh"  # each move on a tree of its own (TrainingConfig.searches)
    version = int(current.info.get("version", 1)) if current is not None else 0
    next_fit = (int(current.info.get("games_logged", logged)) if current is not None else 0) + refit_every
    seed = (training.seed if training is not None else None) if "seed" not in options else options.pop("seed")
    mix = options.pop("mix", None)  # the playout's share of the model's value, once there is a model
    mix = LOOP_MIX if mix is None else mix
    progress = options.get("progress", training.progress if training is not None else True)
    played, made, runs, notes, interrupted = 0, list[Refit](), list[TrainSummary](), list[str](), False
    with reusing_trees():  # the tree is loaded once, not at every step (while no one else writes the file)
        played, logged, version, interrupted = _steps(
            the_game, db, path, games=budget, until=until, refit_every=refit_every, refits_mode=refits, search=search,
            training=training, fitting=fitting, options=options, seed=seed, mix=mix, progress=progress,
            on_refit=on_refit, current=current, logged=logged, version=version, next_fit=next_fit,
            refits=made, runs=runs, notes=notes)
    fold_log(db)  # every process of the run is done with the file: leave it without a log to replay
    return LoopSummary(db=display(db), model=display(model), games=played, total_games=logged, version=version,
                       refits=tuple(made), runs=tuple(runs), interrupted=interrupted,
                       seconds=time.perf_counter() - started, notes=tuple(notes))


def _steps(the_game: Game, db: str | os.PathLike[str], path: Path, *, games: int, until: float | None,
           refit_every: int, refits_mode: RefitPlace, search: SearchConfig | None, training: TrainingConfig | None,
           fitting: FitConfig, options: dict[str, Any], seed: Any, mix: float, progress: bool,
           on_refit: Callable[[Refit], None] | None, current: Model | None, logged: int, version: int,
           next_fit: int, refits: list[Refit], runs: list[TrainSummary],
           notes: list[str]) -> tuple[int, int, int, bool]:
    """The loop of :func:`learning_loop`: steps of games and refits; ``(played, logged, version, interrupted)``."""
    budget, played, interrupted = games, 0, False
    pending: BesideRefit | None = None  # the version fitted beside the step under way

    def made(make: Callable[[], Refit]) -> None:
        """Make a version (``make`` installs it), or note why there is none yet (too few well-visited positions)."""
        nonlocal current, version
        try:
            refit = make()
        except FitError as exc:  # play on, try again at the next refit
            notes.append(str(exc))
            return
        current, version = load_model(path, the_game), refit.version
        refits.append(refit)
        if on_refit is not None:
            on_refit(refit)

    try:
        while True:
            if until is not None and time.monotonic() >= until:
                break  # the time given is up: a due refit is made first by the next run (logged >= its next_fit)
            if logged >= next_fit:
                if pending is not None:  # the games wait for the version fitted beside the last step, if need be
                    beside, pending = pending, None
                    made(beside.finish)
                fitted = current.info.get("games_logged") if current is not None else None
                since = int(fitted) if isinstance(fitted, int) else None
                config = replay_plan(fitting, logged, warm=current is not None)
                if refits_mode == "beside" and current is not None and played < budget:
                    fold_log(db)  # no read under way now: the log that the last refit's read kept growing is emptied
                    pending = BesideRefit(db, path, the_game.name, config, version=version + 1, logged=logged,
                                          since=since, current=current)
                else:  # the first model (nothing to play with yet), the last of a run, or asked so
                    made(partial(refit_between, db, path, the_game.name, config, version=version + 1, logged=logged,
                                 since=since, current=current, progress=progress))
                next_fit = logged + refit_every
            if played >= budget:
                break
            step = min(budget - played, next_fit - logged)
            parallel = training is not None and (training.workers is not None or training.ray is not None)
            if until is not None and training is not None and parallel and runs and runs[-1].games:
                rate = runs[-1].games / max(runs[-1].seconds, 1e-9)  # parallel games see no deadline: a step that
                step = max(training.workers or 1, min(step, int(rate * (until - time.monotonic()))))  # ends in time
            guided: dict[str, Any] = {"algorithm": "puct", "model": str(path), "mix": mix} if version else {}
            summary = train(the_game, db, step, search=search, training=training, **{**options, **guided},
                            seed=seed + logged if isinstance(seed, int) else seed, until=until)
            runs.append(summary)
            played, logged = played + summary.games, summary.total_games
            if summary.interrupted or (summary.games < step and (until is None or time.monotonic() < until)):
                interrupted = summary.interrupted
                break
        if pending is not None and not interrupted:  # the time is up (or the games ran out) while it was fitted
            beside, pending = pending, None
            made(beside.finish)
    except KeyboardInterrupt:  # the model file is as it was: a version is written whole or not at all
        interrupted = True
    finally:
        if pending is not None:
            pending.cancel()
    return played, logged, version, interrupted


def _games_logged(db: str | os.PathLike[str], game: Game) -> int:
    """Games logged in ``db`` (0 for a new file); a tree of another game is refused."""
    if not Path(db).exists() or Path(db).stat().st_size == 0:
        return 0
    facts = info(db)
    if facts["game"] != game.name:
        raise GameMismatchError(f"{display(db)!r} holds a {facts['game']!r} tree, not {game.name!r}: "
                                "train that game, or give another --db")
    return int(facts["games"])
