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
import statistics
import tempfile
import time
from pathlib import Path

import treelab

MODES = {"one process": None, "--workers 1": 1, "--workers 2": 2}


def run(folder: Path, name: str, games: int, iterations: int, workers: int | None, seed: int) -> float:
    """Train a fresh tree; return simulations per second over the whole call."""
    db = folder / f"{name.replace(' ', '_').strip('-')}-{seed}.db"
    began = time.perf_counter()
    summary = treelab.train("connect4", db, games=games, iterations=iterations, workers=workers, seed=seed,
                            progress=False)
    seconds = time.perf_counter() - began
    visits = treelab.load(db).root.nb_visit
    moves = sum(len(g["moves"]) for g in treelab.read_games(db))
    assert visits == summary.simulations == iterations * moves, "counts lost"
    return summary.simulations / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="treelab-parallel-"))
    rates: dict[str, list[float]] = {mode: [] for mode in MODES}
    print(f"{args.games} self-play games x {args.iterations} iterations per move, {args.rounds} rounds; "
          f"load average before: {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        order = list(MODES) if r % 2 == 0 else list(reversed(MODES))  # alternate the order too
        for mode in order:
            rate = run(folder, mode, args.games, args.iterations, MODES[mode], seed=r)
            rates[mode].append(rate)
            print(f"round {r + 1} {mode:>12}: {rate:>9,.0f} sims/s  (load {os.getloadavg()[0]:.2f})")
    median = {mode: statistics.median(v) for mode, v in rates.items()}
    print("medians:", ", ".join(f"{mode} {m:,.0f} sims/s" for mode, m in median.items()))
    print(f"--workers 2 / --workers 1: {median['--workers 2'] / median['--workers 1']:.2f}x; "
          f"--workers 2 / one process: {median['--workers 2'] / median['one process']:.2f}x; "
          f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
