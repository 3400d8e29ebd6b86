"""Training throughput as the tree grows: simulations per second at ~10k nodes against ~1M nodes.

Self-play Connect Four with :func:`treelab.train`, saved after every game as always (from the run's
writer process, :mod:`treelab.store.writer`). First one tree is trained until it holds
``--target`` nodes and kept as it is (not timed). Then each round times two runs of ``--games``
games: one on a tree trained (not timed) to ``--small`` nodes, one on a copy of the big tree, so
every round starts at the same sizes. After every logged game the script notes the time and the
root's visits (every simulation of self-play passes the root), so a run's rate is its simulations
between its first and last logged game over the time between them: search, move choice and saving
included, loading the tree not. By default each run waits for its writer process (0.2-0.3 s of
start-up) before its first game, so both runs are measured in the steady state of a long run;
``--cold`` does not (the first games of a run on a small tree are then saved in-process while the
writer starts). Prints every run and the medians of the rates and of the per-round slowdowns (the
goal: at most 1.3x slower at 1M nodes than at 10k).

    .venv/bin/python benchmarks/training_scale.py                        # 10k against 1M, 3 rounds
    .venv/bin/python benchmarks/training_scale.py --target 300000 --rounds 1
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import treelab
from treelab import speedups
from treelab.store import persistence, writer


class Stop(Exception):
    """Raised from ``on_game`` once the run has played enough (its games are saved by then)."""


def trained(db: Path, seed: int, iterations: int, *, games: int = 0, until: int = 0, ready: bool = True
            ) -> tuple[float, int, int]:
    """Train the tree in ``db``: ``games`` logged games, or until it holds ``until`` nodes.

    Returns:
        The simulations per second from the first logged game to the last, and the tree's
        nodes at those two games.
    """
    trees: list[treelab.Tree] = []
    real_open, real_saver = persistence.open_tree, writer.BackgroundSaver  # train() imports them when it runs

    def open_tree(*args: Any, **kwargs: Any) -> treelab.Tree:
        tree = real_open(*args, **kwargs)
        trees.append(tree)
        return tree

    class Saver(real_saver):  # type: ignore[misc, valid-type]
        def track(self, tree: treelab.Tree, *, timeout: float = 60.0) -> None:
            super().track(tree, timeout=timeout)  # waits for the writer, which then saves every game

    marks: list[tuple[float, int, int]] = []  # (time, nodes, simulations) after each logged game

    def on_game(game_id: int, moves: str, winner: int | None) -> None:
        tree = trees[0]
        marks.append((time.perf_counter(), tree.size, tree.root.nb_visit))
        if (until and tree.size >= until) or (games and len(marks) > games):
            raise Stop

    persistence.open_tree = open_tree  # type: ignore[assignment]
    writer.BackgroundSaver = Saver  # type: ignore[misc]
    try:
        with contextlib.suppress(Stop):
            treelab.train("connect4", db, games=10**9, iterations=iterations, seed=seed, progress=False,
                          on_game=on_game)
    finally:
        persistence.open_tree = real_open  # type: ignore[assignment]
        writer.BackgroundSaver = real_saver  # type: ignore[misc]
        trees.clear()
        gc.unfreeze()  # train() froze the tree's objects; let this run's tree go
        gc.collect()
    (t0, n0, s0), (t1, n1, s1) = marks[0], marks[-1]
    return ((s1 - s0) / (t1 - t0) if t1 > t0 else 0.0), n0, n1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=400, help="simulations per move (400: treelab's default)")
    parser.add_argument("--small", type=int, default=10_000, help="nodes where the first window starts")
    parser.add_argument("--target", type=int, default=1_000_000, help="nodes where the second window starts")
    parser.add_argument("--games", type=int, default=12, help="games per window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", action="store_true",
                        help="do not wait for the writer process before a run's first game")
    args = parser.parse_args()
    print(f"treelab {speedups.describe()}; self-play Connect Four, {args.iterations} simulations a move, "
          f"runs of {args.games} games from {args.small:,} nodes and from {args.target:,}"
          + ("; cold starts" if args.cold else "; writer ready first"))
    smalls, bigs, slowdowns = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        kept, big_db = Path(tmp) / "kept.db", Path(tmp) / "big.db"
        trained(kept, 0, args.iterations, until=args.target)
        for r in range(args.rounds):
            small_db = Path(tmp) / f"small{r}.db"
            trained(small_db, r + 1, args.iterations, until=args.small)
            small, a0, a1 = trained(small_db, 50 + r, args.iterations, games=args.games, ready=not args.cold)
            for suffix in ("-wal", "-shm"):
                Path(f"{big_db}{suffix}").unlink(missing_ok=True)
            shutil.copyfile(kept, big_db)
            big, b0, b1 = trained(big_db, 100 + r, args.iterations, games=args.games, ready=not args.cold)
            smalls.append(small)
            bigs.append(big)
            slowdowns.append(small / big)
            print(f"round {r + 1}: {small:,.0f} sims/s from {a0:,} to {a1:,} nodes, {big:,.0f} from {b0:,} to "
                  f"{b1:,}: {small / big:.2f}x slower", flush=True)
    print(f"median: {statistics.median(smalls):,.0f} sims/s at ~{args.small:,} nodes, {statistics.median(bigs):,.0f} "
          f"at ~{args.target:,}; slowdown {statistics.median(slowdowns):.2f}x "
          f"({min(slowdowns):.2f}-{max(slowdowns):.2f}; target <= 1.3x)")


if __name__ == "__main__":
    main()
