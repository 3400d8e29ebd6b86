"""Training on many cores or machines: workers play on their own copies; what they learn is added to the file.

The workers and their writer, and how they share what they learn, are described in
:mod:`treelab.play.training.workers`; this module runs them: :func:`train_parallel` (local processes,
:mod:`treelab.play.training.processes`, or Ray, :mod:`treelab.play.training.cluster`) and :func:`advice` (how many
workers pay here).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

from ...errors import BudgetError
from ...games import Game, find_game
from ...mcts.config import SearchConfig
from ...store.dbfile import check_unlocked
from ..console import progress_bar
from .config import TrainingConfig
from .workers import Job, PlayersFn, Writer

__all__ = ["advice", "train_parallel"]


def advice(workers: int, *, cores: int | None = None, load: float | None = None,
           algorithm: str = "uct") -> tuple[int | None, str]:
    """How many local worker processes to run for ``--workers N`` here (None: one process), and a note saying why.

    Workers only play: every game of every worker is written by one writer (SQLite takes one write at a
    time), and one process already plays on one core while its writer process saves on the other. With S
    and W the CPU a simulation costs to search and to write, two workers and their writer on two cores give
    at most ``2 max(S, W) / (S + W)`` times one process (or one worker): workers pay only where the search
    costs far more than the writing. Measured on Connect Four (``benchmarks/parallel.py`` and
    ``benchmarks/parallel_roles.py``, CPU time on a loaded 2-core machine, 2026-11-28): a UCT simulation
    costs 5-8 microseconds to search and hand on (its delta with the position keys) and 5-10 to write
    (its ``nodes`` row, its position's row and a share of the commit: the SQLite statements alone 5-6), so
    two workers would reach 0.89-1.06x one worker on two idle cores at 100 to 2,000 simulations a move
    (the writer would have to cost under half the search for 1.4x); a PUCT simulation (its rollout
    evaluator) costs 135-145 microseconds to search and 13-15 to write, and there two workers would reach
    1.68-1.71x one worker (the write fell to 5-7 microseconds on 2026-11-29, a new row taking its prior and value
    sum in its INSERT: with the heuristic evaluator 9.2 -> 5.2, with a model, whose compiled search costs 25-50,
    10.7 -> 7.3). Hence:

    - UCT (``algorithm`` "uct"), or one worker (the same pipeline as one process, plus the hand-over), or
      one core: one process;
    - cores busy with other jobs (load average of 1 or more): the workers asked for, with a warning, never a
      silent override. Linux shares the CPU between sessions (autogroups) and services (cgroups), not
      processes, so a run's processes together get what the other jobs leave (measured: two PUCT workers
      ran 0.62-1.27x one process at load averages of 10-15, though 1.36-1.81x on CPU time); but the load
      average lags by a minute, so right after another run (a load of 1.3 left on 2 idle cores) the old rule
      trained PUCT ``--workers 2`` in one process and back-to-back runs measured 1.00x instead of ~1.7x;
    - never more workers than cores.

    Args:
        workers: the workers asked for.
        cores: the CPUs this process may use (None: read them).
        load: the one-minute load average (None: read it).
        algorithm: the search, ``"uct"`` (playouts) or ``"puct"`` (an evaluator per expansion).
    """
    if cores is None:
        affinity = getattr(os, "sched_getaffinity", None)
        cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    alone = "one process (it plays while its writer process saves: both cores busy)"
    if cores < 2:
        return None, f"--workers {workers} on 1 core: trained in {alone.replace(': both cores busy', '')} instead"
    if workers == 1:
        return None, f"--workers 1: trained in {alone}, the same as a worker and its writer without the hand-over"
    if algorithm == "uct":
        return None, (f"--workers {workers} with UCT: trained in {alone}; a UCT simulation costs about as much "
                      "to write as to search (5-10 microseconds each), and every worker's games go through the one "
                      "writer, so workers would not be faster (they pay with --algorithm puct)")
    if workers > cores:
        return cores, f"--workers {workers} on {cores} cores: {cores} workers instead (more would take turns)"
    if load >= 1.0:  # what was asked, with a warning: the load may be the run before this one, about to end
        return workers, (f"warning: the cores were busy when the run started (load average {load:.1f} on {cores} "
                         f"cores): {workers} workers share with the writer what other jobs leave, and one process "
                         "may have been faster")
    return workers, ""


def train_parallel(
    game: str | Game,
    db: str | os.PathLike[str],
    *,
    games: int,
    search: SearchConfig | None = None,
    training: TrainingConfig | None = None,
    seed: random.Random | int | None = None,
    on_game: Callable[[int, str, int | None], None] | None = None,
    players: PlayersFn | None = None,
    logged_as: str = "{}",
) -> dict[str, Any]:
    """:func:`treelab.train` with ``workers`` processes (or Ray workers) playing at once.

    Args:
        game, db, games, seed, on_game: as in :func:`treelab.train`.
        search, training: the run's two values, as :func:`treelab.train` made them (its root noise decided,
            the training resolved), carried down to every worker unchanged. From ``training``: ``workers``
            (processes playing games; default with ``ray``: the CPUs Ray offers), ``ray`` (None for local
            processes; True for a local Ray; an address for a Ray cluster) and ``progress``.
        players: makes the players on a worker's copy (:func:`treelab.play.training.make_players`).
        logged_as: the exploration settings logged with every game (JSON).

    Returns:
        The fields of :class:`treelab.play.training.TrainSummary` that a run measures (``games``,
        ``wins``, ``draws``, ``losses``, ``distinct`` (games with different moves), ``nodes``, ``new_nodes``,
        ``simulations`` (those this run added, not other writers'), ``total_games``,
        ``seconds``, ``interrupted``): training, above this module, makes the summary.

    Raises:
        BudgetError: ``workers`` below 1 or more than ``games``.
        StoreError: the database is locked by another writer, or cannot be written.
        WorkerError: a worker died (the games finished before are saved).
    """
    the_game = find_game(game)
    search, training = search or SearchConfig(), training or TrainingConfig()
    workers, ray, progress = training.workers, training.ray, training.progress
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise BudgetError(f"workers {workers!r} must be a whole number of at least 1")
    if workers is not None and workers > max(games, 1):
        raise BudgetError(f"workers {workers} is more than games {games}: give at most as many workers as games")
    rng = seed if isinstance(seed, random.Random) else random.Random(seed)
    job = Job(the_game.name, os.fspath(db), search, training, workers=workers or 2, players=players,
              logged_as=logged_as)
    check_unlocked(db)  # a locked file or one that is no database: refused before workers or Ray start
    if ray is not None and ray is not False:
        from .cluster import connect

        connect(None if ray is True else str(ray))  # checks the install and the address
    on_ray = ray is not None and ray is not False
    if on_ray:
        from .cluster import RemoteWriter

        writer: Writer | RemoteWriter = RemoteWriter(job)
    else:
        writer = Writer(job)
    start_nodes, _, last = writer.stats()
    first = last + 1
    ids = list(range(first, first + games))
    began = time.perf_counter()
    tally = {"wins": 0, "draws": 0, "losses": 0}
    seen: set[str] = set()
    bar = progress_bar(games, progress, the_game.name)

    added = [0]  # the simulations this run wrote (the file's root also counts other writers')

    def logged(rows: list[dict[str, Any]], simulations: int) -> None:
        added[0] += simulations
        for row in rows:
            tree_player = row["tree_player"] or 1
            winner = row["winner"]
            tally["draws" if winner is None else "wins" if winner == tree_player else "losses"] += 1
            seen.add(row["moves"])
            if on_game is not None:
                on_game(row["id"], row["moves"], winner)
        if bar is not None and rows:
            bar.update(len(rows))

    try:
        if on_ray:
            from .cluster import run_on_ray

            interrupted = run_on_ray(job, writer, ids, workers, rng, logged)  # type: ignore[arg-type]
        else:
            from .processes import run_processes

            interrupted = run_processes(job, writer, ids, workers or 1, rng, logged)  # type: ignore[arg-type]
        nodes, _, last = writer.stats()
    finally:
        writer.close()
        if bar is not None:
            bar.close()
    return dict(games=sum(tally.values()), nodes=nodes, new_nodes=nodes - start_nodes, simulations=added[0],
                total_games=last, seconds=time.perf_counter() - began, interrupted=interrupted, distinct=len(seen),
                **tally)
