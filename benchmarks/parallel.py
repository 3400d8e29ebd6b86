"""Parallel self-play: simulations per second of ``train --workers 2`` against ``--workers 1`` and one process.

Each round trains a fresh Connect Four self-play tree three ways, in turn:
``train`` in this one process (the reference: it searches, its writer process
saves), ``workers=1`` (one worker process; this process writes) and
``workers=2``, as the library runs them when asked, and times the whole run
(start-up, games, every save). Prints each run, then the medians and the
ratios of the medians, and the ratios CPU time alone allows on two idle cores
(the machine is shared: under load, wall-clock ratios favour whichever mode runs
more processes). The last ratio is the command line's: ``treelab train --workers N``
runs workers only where they pay (:func:`treelab.play.training.parallel.advice`), so it compares
the modes it picks.

    .venv/bin/python benchmarks/parallel.py --budgets 100,200,400,2000 --rounds 3
    .venv/bin/python benchmarks/parallel.py --algorithm puct --budgets 200,400 --sims 40000 --rounds 3

Several budgets (simulations a move) run in one call, each with its own number of
games (about the same work per run: ``--sims`` simulations in all, at least 8 games),
the rounds alternating the modes' order; one line of ratios per budget at the end.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import treelab
from treelab.play.training.parallel import advice

MODES = {"one process": None, "--workers 1": 1, "--workers 2": 2}


def _cpu() -> tuple[float, float]:
    """CPU seconds used so far by this process (the writer, or the search of one process) and by its finished
    children (the workers, or one process's writer)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def run(folder: Path, name: str, games: int, iterations: int, workers: int | None, seed: int,
        algorithm: str) -> tuple[float, ...]:
    """Train a fresh tree (``workers`` as asked, as the library does); return simulations per second over the
    whole call, and CPU microseconds a simulation in this process (the writer, or the search of one process) and
    in the child processes (the workers, or one process's writer)."""
    db = folder / f"{name.replace(' ', '_').strip('-')}-{seed}.db"
    gc.collect()  # the trees the runs before loaded to check their counts: not collected on this run's time
    cpu = _cpu()
    began = time.perf_counter()
    summary = treelab.train("connect4", db, games=games, iterations=iterations, workers=workers, seed=seed,
                            progress=False, algorithm=algorithm)
    seconds = time.perf_counter() - began
    here, kids = (after - before for after, before in zip(_cpu(), cpu, strict=True))
    visits = treelab.load(db).root.nb_visit
    moves = sum(len(g["moves"]) for g in treelab.read_games(db))
    assert visits == summary.simulations, "counts lost"
    assert algorithm != "uct" or visits == iterations * moves, "counts lost"  # PUCT's searches reuse subtrees
    per = 1e6 / summary.simulations
    return summary.simulations / seconds, here * per, kids * per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", default="100,200,400,2000", help="simulations a move, comma-separated")
    parser.add_argument("--sims", type=int, default=300_000, help="simulations a run, about (sets the games)")
    parser.add_argument("--games", type=int, default=0, help="games a run (0: from --sims)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--algorithm", choices=("uct", "puct"), default="uct",
                        help="the search (puct: its default rollout evaluator, an evaluation per expansion)")
    args = parser.parse_args()
    lines = []
    for budget in (int(b) for b in args.budgets.split(",")):
        games = args.games or max(8, round(args.sims / (budget * 30)))  # about 30 moves a self-play game
        lines.append(measure(budget, games, args.rounds, args.algorithm))
    picks = {n: advice(n, cores=2, load=0.0, algorithm=args.algorithm)[0] for n in (1, 2)}
    print(f"\nsummary, {args.algorithm} (medians; as asked: --workers 2 / --workers 1, --workers 2 / one process; the "
          "same from CPU time alone; as the command line runs them on 2 idle cores, "
          + ", ".join(f"--workers {n}: {'one process' if p is None else f'{p} workers'}" for n, p in picks.items())
          + ", --workers 2 / --workers 1):")
    for line in lines:
        print(line)


def measure(iterations: int, games: int, rounds: int, algorithm: str) -> str:
    """Run the rounds at one budget; print them; return the line of ratios."""
    folder = Path(tempfile.mkdtemp(prefix="treelab-parallel-"))
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    cpus: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    print(f"{games} self-play games x {iterations} iterations per move, {rounds} rounds; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"\n== {iterations} simulations a move, uptime: {_uptime()}")
    for r in range(rounds):
        order = list(MODES) if r % 2 == 0 else list(reversed(MODES))  # alternate the order too
        for mode in order:
            rate, here, kids = run(folder, mode, games, iterations, MODES[mode], r, algorithm)
            rates[mode].append(rate)
            cpus[mode].append((here, kids))
            print(f"round {r + 1} {mode:>12}: {rate:>9,.0f} sims/s  (load {os.getloadavg()[0]:.2f}); CPU us/sim: "
                  f"main process {here:.2f}, workers {kids:.2f}")
    median = {mode: statistics.median(v) for mode, v in rates.items()}
    print("medians:", ", ".join(f"{mode} {m:,.0f} sims/s" for mode, m in median.items()))
    print(f"--workers 2 / --workers 1: {median['--workers 2'] / median['--workers 1']:.2f}x; "
          f"--workers 2 / one process: {median['--workers 2'] / median['one process']:.2f}x; "
          f"load average after: {os.getloadavg()[0]:.2f}")
    # What 2 idle cores would give, from CPU time alone (the load of others' jobs inflates wall time, not this):
    # --workers 1 is bound by its worker; --workers 2 by all three processes' CPU shared on 2 cores.
    # one process and --workers 1 are bound by the busier of their two processes (each has a core), --workers 2
    # by all three processes' CPU shared on 2 cores (or by the writer, if it alone needs more than a core).
    one = {mode: tuple(statistics.median(c[k] for c in v) for k in (0, 1)) for mode, v in cpus.items()}
    o, w1, w2 = one["one process"], one["--workers 1"], one["--workers 2"]
    busiest = max(sum(w2) / 2, w2[0], w2[1] / 2)
    ceiling_w1, ceiling_one = max(w1) / busiest, max(o) / busiest
    print(f"CPU us/sim (medians): one process {o[0]:.2f} + its writer {o[1]:.2f}; --workers 1 writer {w1[0]:.2f} + "
          f"worker {w1[1]:.2f}; --workers 2 writer {w2[0]:.2f} + workers {w2[1]:.2f}; on 2 idle cores --workers 2 "
          f"would be at most {ceiling_w1:.2f}x --workers 1 and {ceiling_one:.2f}x one process")
    w2w1 = median["--workers 2"] / median["--workers 1"]
    w2one = median["--workers 2"] / median["one process"]
    picked = {n: _mode(advice(n, cores=2, load=0.0, algorithm=algorithm)[0]) for n in (1, 2)}
    cli = median[picked[2]] / median[picked[1]]
    return (f"{iterations:>5} sims/move, {games} games: {w2w1:.2f}x, {w2one:.2f}x; CPU-time ceilings "
            f"{ceiling_w1:.2f}x, {ceiling_one:.2f}x; command line {cli:.2f}x (one process "
            f"{median['one process']:,.0f} sims/s; load {os.getloadavg()[0]:.2f})")


def _mode(workers: int | None) -> str:
    return "one process" if workers is None else f"--workers {workers}"


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"load average {os.getloadavg()}"


if __name__ == "__main__":
    main()
