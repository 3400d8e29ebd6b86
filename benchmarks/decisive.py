"""Decisive playouts against random ones: UCT search time from the empty Connect Four board.

Decisive playouts (take a win, else block a loss, else random; Teytaud & Teytaud 2010) run in C
for Connect Four (``connect4_decisive`` in ``_speedups.c``); the Python ``decisive_playout`` is the
reference. Alternates the two, ``--rounds`` times each, and prints the medians and their ratio.

    .venv/bin/python benchmarks/decisive.py --iterations 20000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import treelab
from treelab import speedups


def timed(playout: str, iterations: int, seed: int) -> float:
    """Seconds for one search of ``iterations`` simulations in a fresh tree."""
    tree = treelab.Tree("connect4")
    began = time.perf_counter()
    treelab.search(tree, limit=treelab.Limit(iterations=iterations), playout=playout, rng=seed)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"random": [], "decisive": []}
    for r in range(args.rounds):
        for playout in (("random", "decisive") if r % 2 == 0 else ("decisive", "random")):
            times[playout].append(timed(playout, args.iterations, r))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{speedups.describe()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{args.iterations:,} iterations: random {med['random']:.3f} s, decisive {med['decisive']:.3f} s "
          f"(medians of {args.rounds}): decisive / random = {med['decisive'] / med['random']:.2f}x")


if __name__ == "__main__":
    main()
