"""What the training run's writer process costs a simulation, at ~30k nodes against ~1M.

``treelab train`` hands each game's delta to a writer process (:mod:`treelab.store.writer`),
which adds it to the file (:class:`~treelab.store.writer.DeltaWriter`). Once the searches are
fast, that writer bounds training. This script trains a tree to ``--small`` nodes and one to
``--target`` nodes (not timed), records the deltas of ``--games`` real self-play games on each
(``treelab.train`` itself, its writer ready before the first game), then replays them into fresh
copies of the files in this process, ``--rounds`` times alternately, timing only the writer's
stores. Prints the writer's microseconds a simulation (every self-play simulation passes the
root, so a game's simulations are its root increment), the rows it writes, and the ratio.

    .venv/bin/python benchmarks/writer.py                       # ~30k against ~1M nodes, 3 rounds
    .venv/bin/python benchmarks/writer.py --target 300000 --rounds 5
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from treelab import speedups
from treelab.store import writer
from treelab.store.deltas import AssignedIds, Delta
from treelab.store.writer import DeltaWriter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_scale import trained


def recorded(db: Path, seed: int, iterations: int, games: int) -> tuple[Path, list[Delta]]:
    """A copy of ``db`` as it is now, and the deltas of ``games`` games trained into ``db`` from it."""
    start = db.with_suffix(".start.db")
    shutil.copyfile(db, start)
    deltas: list[Delta] = []
    real_take = writer.take

    def take(*args: object, **kwargs: object) -> tuple[Delta, list[object]]:
        delta, new = real_take(*args, **kwargs)  # type: ignore[arg-type]
        deltas.append(delta)
        return delta, new  # type: ignore[return-value]

    writer.take = take  # type: ignore[assignment]
    try:
        trained(db, seed, iterations, games=games)  # waits for the writer: every game is a delta
    finally:
        writer.take = real_take
    return start, deltas


def replay(start: Path, deltas: list[Delta], work: Path) -> tuple[float, int, int]:
    """Seconds the writer spends storing ``deltas`` into a copy of ``start``; simulations; rows written."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(start, work)
    writer = DeltaWriter(work, "connect4")
    spent, earlier, sims, rows = 0.0, None, 0, 0
    try:
        for i, delta in enumerate(deltas):
            began = time.perf_counter()
            _, [ids] = writer.store([(None, {"id": 10**6 + i, "moves": "4", "winner": None}, delta)], earlier=earlier)
            spent += time.perf_counter() - began
            earlier = AssignedIds(delta.first, np.array(ids, dtype=np.int64))
            root = np.flatnonzero(delta.known == 1)  # the root's row: its visits are the game's simulations
            sims += int(delta.known_counts[root[0], 0]) if len(root) else 0
            rows += len(delta)
    finally:
        writer.close()
    return spent, sims, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--small", type=int, default=30_000)
    parser.add_argument("--target", type=int, default=1_000_000)
    parser.add_argument("--games", type=int, default=14)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"treelab {speedups.describe()}; the writer's stores of {args.games} self-play games of "
          f"{args.iterations} simulations a move, at {args.small:,} and {args.target:,} nodes")
    with tempfile.TemporaryDirectory() as tmp:
        cases = {}
        for name, size, seed in (("small", args.small, 1), ("big", args.target, 2)):
            db = Path(tmp) / f"{name}.db"
            trained(db, seed, args.iterations, until=size)
            cases[name] = recorded(db, seed + 10, args.iterations, args.games)
        costs: dict[str, list[float]] = {"small": [], "big": []}
        for r in range(args.rounds):
            for name, (start, deltas) in cases.items():
                spent, sims, rows = replay(start, deltas, Path(tmp) / "work.db")
                costs[name].append(spent / sims * 1e6)
                print(f"round {r + 1} {name:5}: {spent * 1e3:6.0f} ms for {sims:,} simulations, {rows:,} rows "
                      f"({rows / sims:.2f} a simulation): {spent / sims * 1e6:.2f} us a simulation", flush=True)
        small, big = statistics.median(costs["small"]), statistics.median(costs["big"])
    print(f"median: {small:.2f} us a simulation at ~{args.small:,} nodes, {big:.2f} at ~{args.target:,}: "
          f"{big / small:.2f}x; the writer alone keeps up with {1e6 / small:,.0f} and {1e6 / big:,.0f} simulations/s")


if __name__ == "__main__":
    main()
