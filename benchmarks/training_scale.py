"""Training throughput as the tree grows: simulations per second at ~10k nodes against ~1M nodes.

One self-play Connect Four tree is trained with :func:`treelab.train` (saved after every game, as
always) until it holds ``--target`` nodes. After every game the script notes the time, the tree's
size and its root's visits (every simulation of self-play passes the root), and reports the
simulations per second of whole games -- search, move choice and the save included -- in two
windows of ``--window`` simulations: the first games after the tree reaches ``--small`` nodes, and
the first after it reaches ``--target``. Each round trains a fresh tree with another seed; the
medians of the rounds and of the per-round slowdowns are printed (the goal: at most 1.3x slower at
1M nodes than at 10k).

    .venv/bin/python benchmarks/training_scale.py                        # 10k against 1M, 3 rounds
    .venv/bin/python benchmarks/training_scale.py --target 300000 --rounds 1
    .venv/bin/python benchmarks/training_scale.py --no-freeze            # gc.freeze() after saves off
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import treelab
from treelab import fastpath
from treelab.store import persistence


class Stop(Exception):
    """Raised from ``on_game`` once the big window is measured (the tree is saved by then)."""


def one_round(seed: int, iterations: int, small: int, target: int, window: int, freeze: bool) -> tuple[float, float]:
    """Train one tree; the simulations per second in the small window and in the big one."""
    trees: list[treelab.Tree] = []
    real_open = persistence.open_tree  # train() imports it when it runs

    def open_tree(*args: Any, **kwargs: Any) -> treelab.Tree:
        tree = real_open(*args, **kwargs)
        trees.append(tree)
        return tree

    marks: list[tuple[float, int, int]] = []  # (time, nodes, simulations) after each game
    rates: dict[str, float] = {}

    def on_game(game_id: int, moves: str, winner: int | None) -> None:
        tree = trees[0]
        marks.append((time.perf_counter(), tree.size, tree.root.nb_visit))
        for name, at in (("small", small), ("big", target)):
            if name in rates:
                continue
            begun = [m for m in marks if m[1] >= at]
            if begun and begun[-1][2] - begun[0][2] >= window:
                (t0, _, s0), (t1, _, s1) = begun[0], begun[-1]
                rates[name] = (s1 - s0) / (t1 - t0)
                print(f"  seed {seed}: {rates[name]:>9,.0f} sims/s from {begun[0][1]:,} to {begun[-1][1]:,} nodes "
                      f"({len(begun) - 1} games)", flush=True)
        if "big" in rates:
            raise Stop

    persistence.open_tree = open_tree  # type: ignore[assignment]
    real_freeze = gc.freeze
    if not freeze:
        gc.freeze = lambda: None  # type: ignore[assignment]
    try:
        with tempfile.TemporaryDirectory() as tmp, contextlib.suppress(Stop):
            treelab.train("connect4", Path(tmp) / "scale.db", games=10**9, iterations=iterations, seed=seed,
                          progress=False, on_game=on_game)
    finally:
        persistence.open_tree = real_open  # type: ignore[assignment]
        gc.freeze = real_freeze
        gc.unfreeze()
        trees.clear()
        gc.collect()
    return rates["small"], rates["big"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=400, help="simulations per move (400: treelab's default)")
    parser.add_argument("--small", type=int, default=10_000, help="nodes where the first window starts")
    parser.add_argument("--target", type=int, default=1_000_000, help="nodes where the second window starts")
    parser.add_argument("--window", type=int, default=100_000, help="simulations per window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-freeze", dest="freeze", action="store_false",
                        help="turn training's gc.freeze() after each save off (to measure what it buys)")
    args = parser.parse_args()
    print(f"treelab {fastpath.describe()}; self-play Connect Four, {args.iterations} simulations a move, "
          f"windows of {args.window:,} simulations at {args.small:,} and {args.target:,} nodes")
    smalls, bigs, slowdowns = [], [], []
    for r in range(args.rounds):
        small, big = one_round(r + 1, args.iterations, args.small, args.target, args.window, args.freeze)
        smalls.append(small)
        bigs.append(big)
        slowdowns.append(small / big)
        print(f"round {r + 1}: {small:,.0f} sims/s at ~{args.small:,} nodes, {big:,.0f} at ~{args.target:,}: "
              f"{small / big:.2f}x slower", flush=True)
    print(f"median: {statistics.median(smalls):,.0f} sims/s at ~{args.small:,} nodes, {statistics.median(bigs):,.0f} "
          f"at ~{args.target:,}; slowdown {statistics.median(slowdowns):.2f}x "
          f"({min(slowdowns):.2f}-{max(slowdowns):.2f}; target <= 1.3x)")


if __name__ == "__main__":
    main()
