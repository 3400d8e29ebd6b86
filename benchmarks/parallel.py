"""Parallel self-play: simulations per second of ``train --workers 2`` against ``--workers 1`` and one process.

Each round trains a fresh Connect Four self-play tree three ways, in turn:
``train`` in this one process (the reference), ``--workers 1`` (one worker
process and the writer) and ``--workers 2``, and times the whole run
(start-up, games, every save). Prints each run, then the medians and the
ratios of the medians. The machine's load average is printed beside them:
the team shares these 2 cores, so read ratios, not absolute rates.

    .venv/bin/python benchmarks/parallel.py --games 16 --iterations 400 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import treelab

MODES = {"one process": None, "--workers 1": 1, "--workers 2": 2}


def _cpu() -> tuple[float, float]:
    """CPU seconds used so far by this process (the writer) and by its finished children (the workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def run(folder: Path, name: str, games: int, iterations: int, workers: int | None, seed: int) -> tuple[float, ...]:
    """Train a fresh tree; return simulations per second over the whole call, and CPU microseconds a simulation
    in this process (the writer, or everything in one process) and in the worker processes."""
    db = folder / f"{name.replace(' ', '_').strip('-')}-{seed}.db"
    cpu = _cpu()
    began = time.perf_counter()
    summary = treelab.train("connect4", db, games=games, iterations=iterations, workers=workers, seed=seed,
                            progress=False)
    seconds = time.perf_counter() - began
    here, kids = (after - before for after, before in zip(_cpu(), cpu, strict=True))
    visits = treelab.load(db).root.nb_visit
    moves = sum(len(g["moves"]) for g in treelab.read_games(db))
    assert visits == summary.simulations == iterations * moves, "counts lost"
    per = 1e6 / summary.simulations
    return summary.simulations / seconds, here * per, kids * per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="treelab-parallel-"))
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    cpus: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    print(f"{args.games} self-play games x {args.iterations} iterations per move, {args.rounds} rounds; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        order = list(MODES) if r % 2 == 0 else list(reversed(MODES))  # alternate the order too
        for mode in order:
            rate, here, kids = run(folder, mode, args.games, args.iterations, MODES[mode], seed=r)
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
    one = {mode: tuple(statistics.median(c[k] for c in v) for k in (0, 1)) for mode, v in cpus.items()}
    w1, w2 = one["--workers 1"], one["--workers 2"]
    bound = max(w1[1], w1[0]) / max(sum(w2) / 2, w2[0], w2[1] / 2)
    print(f"CPU us/sim (medians): one process {one['one process'][0]:.2f}; --workers 1 writer {w1[0]:.2f} + worker "
          f"{w1[1]:.2f}; --workers 2 writer {w2[0]:.2f} + workers {w2[1]:.2f}; on 2 idle cores --workers 2 / "
          f"--workers 1 would be at most {bound:.2f}x")


if __name__ == "__main__":
    main()
