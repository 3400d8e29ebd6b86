"""Training throughput as the tree grows: simulations per second at ~10k nodes against ~1M nodes.

Self-play Connect Four with :func:`treelab.train` (saved after every game, as always). First one
tree is trained until it holds ``--target`` nodes (not timed). Then the rounds alternate two
windows of ``--games`` games each: a fresh tree's games once it holds ``--small`` nodes, and more
games of the big tree. After every game the script notes the time, the tree's size and its root's
visits (every simulation of self-play passes the root), so a window's rate is its simulations over
the time from its first game's end to its last's: search, move choice and the save included, the
load of the big tree before its games not. Prints every window and the medians of the rates and of
the per-round slowdowns (the goal: at most 1.3x slower at 1M nodes than at 10k).

    .venv/bin/python benchmarks/training_scale.py                        # 10k against 1M, 3 rounds
    .venv/bin/python benchmarks/training_scale.py --target 300000 --rounds 1
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
    """Raised from ``on_game`` once the tree is big enough (the tree is saved by then)."""


def trained(
    db: Path, seed: int, iterations: int, games: int, after: int, until: int | None = None, warmup: int = 0
) -> tuple[float, int]:
    """Train the tree in ``db``; (simulations/s from the first game that ends with >= ``after`` nodes, nodes then).

    Plays ``games`` games after that one, or, with ``until``, until the tree holds that many nodes.
    The window starts after the run's first ``warmup`` games at the earliest.
    """
    trees: list[treelab.Tree] = []
    real_open = persistence.open_tree  # train() imports it when it runs

    def open_tree(*args: Any, **kwargs: Any) -> treelab.Tree:
        tree = real_open(*args, **kwargs)
        trees.append(tree)
        return tree

    marks: list[tuple[float, int, int]] = []  # (time, nodes, simulations) after each game from ``after`` nodes

    logged = [0]

    def on_game(game_id: int, moves: str, winner: int | None) -> None:
        tree = trees[0]
        logged[0] += 1
        if tree.size >= after and logged[0] > warmup:
            marks.append((time.perf_counter(), tree.size, tree.root.nb_visit))
        if (until is not None and tree.size >= until) or (until is None and len(marks) > games):
            raise Stop

    persistence.open_tree = open_tree  # type: ignore[assignment]
    try:
        with contextlib.suppress(Stop):
            treelab.train("connect4", db, games=10**9, iterations=iterations, seed=seed, progress=False,
                          on_game=on_game)
    finally:
        persistence.open_tree = real_open  # type: ignore[assignment]
        trees.clear()
        gc.unfreeze()  # train() froze the tree's objects; let this run's tree go
        gc.collect()
    (t0, n0, s0), (t1, _, s1) = marks[0], marks[-1]
    return ((s1 - s0) / (t1 - t0) if t1 > t0 else 0.0), n0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=400, help="simulations per move (400: treelab's default)")
    parser.add_argument("--small", type=int, default=10_000, help="nodes where the first window starts")
    parser.add_argument("--target", type=int, default=1_000_000, help="nodes where the second window starts")
    parser.add_argument("--games", type=int, default=12, help="games per window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=0,
                        help="games each run plays before its window may start (its writer process starts up "
                             "meanwhile: 0 measures what a run shows from its start, 10 its steady state)")
    args = parser.parse_args()
    print(f"treelab {fastpath.describe()}; self-play Connect Four, {args.iterations} simulations a move, "
          f"windows of {args.games} games from {args.small:,} nodes (a fresh tree) and from {args.target:,}")
    smalls, bigs, slowdowns = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        big_db = Path(tmp) / "big.db"
        trained(big_db, 0, args.iterations, 0, 0, until=args.target)
        for r in range(args.rounds):
            small, at_small = trained(Path(tmp) / f"small{r}.db", r + 1, args.iterations, args.games, args.small,
                                      warmup=args.warmup)
            big, at_big = trained(big_db, 100 + r, args.iterations, args.games, 0, warmup=args.warmup)
            smalls.append(small)
            bigs.append(big)
            slowdowns.append(small / big)
            print(f"round {r + 1}: {small:,.0f} sims/s from {at_small:,} nodes, {big:,.0f} from {at_big:,}: "
                  f"{small / big:.2f}x slower", flush=True)
    print(f"median: {statistics.median(smalls):,.0f} sims/s at ~{args.small:,} nodes, {statistics.median(bigs):,.0f} "
          f"at ~{args.target:,}; slowdown {statistics.median(slowdowns):.2f}x "
          f"({min(slowdowns):.2f}-{max(slowdowns):.2f}; target <= 1.3x)")

if __name__ == "__main__":
    main()
