"""Importing a big foreign tree vs ``treelab merge`` of a tree of the same size.

A Connect Four tree of about ``--nodes`` nodes is written in the plain rows format (random legal
lines, each node's visits its children's plus one, values in [-1, 1]). Each round, alternated,
in fresh processes:

- ``import``: ``treelab import rows`` of that file into a new database (parse, check every move
  against the rules, stream the rows into SQLite a chunk at a time, as ``merge`` does);
- ``merge``: ``treelab merge`` of the database the import made into a new database (the same
  nodes, read from SQLite);
- ``load``: ``treelab.load`` of that database, for the memory a loaded tree of that size takes.

It prints the median times, the ratio import / merge (the issue's target: at most 2) and each
process's peak memory, its own VmHWM (the import's should stay within the loaded tree's), with the
load average after each round.

    .venv/bin/python benchmarks/interop.py --nodes 1000000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import treelab

RUN = r"""
import sys, time
import treelab


def peak():  # this process's own peak (VmHWM): ru_maxrss would carry the parent's across fork and exec
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


mode, a, b = sys.argv[1:4]
t = time.perf_counter()
if mode == "import":
    from treelab.interop.transfer import import_file
    import_file(a, "rows", "connect4", b)
elif mode == "merge":
    treelab.merge(b, a)
else:
    tree = treelab.load(a)
print(time.perf_counter() - t, peak())
"""


def write_rows(path: Path, nodes: int, seed: int) -> int:
    """Write a random legal Connect Four tree of about ``nodes`` nodes as rows; return the rows written."""
    game = treelab.find_game("connect4")
    rng = random.Random(seed)
    kids: dict[tuple[int, ...], list[int]] = {}
    count = 1
    frontier = [((), game.initial())]
    while frontier and count < nodes:  # breadth first, a random share of the legal moves each
        nxt = []
        for moves, state in frontier:
            if state.is_terminal:
                continue
            legal = state.legal_moves()
            chosen = rng.sample(legal, k=min(len(legal), rng.choice((1, 2, 3, 4, 7))))
            kids[moves] = chosen
            for m in chosen:
                nxt.append(((*moves, m), state.play(m)))
                count += 1
                if count >= nodes:
                    break
            if count >= nodes:
                break
        frontier = nxt
    visits: dict[tuple[int, ...], int] = {}

    def total(moves: tuple[int, ...]) -> int:  # iterative post-order
        stack = [(moves, False)]
        while stack:
            at, done = stack.pop()
            if done:
                visits[at] = 1 + sum(visits[(*at, m)] for m in kids.get(at, ()))
            else:
                stack.append((at, True))
                stack.extend(((*at, m), False) for m in kids.get(at, ()))
        return visits[moves]

    total(())
    order, stack = [], [()]
    while stack:  # depth first, a node before its subtree: the order treelab writes rows in
        at = stack.pop()
        order.append(at)
        stack.extend(reversed([(*at, m) for m in kids.get(at, ())]))
    with path.open("w") as out:
        out.write(json.dumps({"treelab_rows": 1, "game": "connect4"}) + "\n")
        for moves in order:
            n = visits[moves]
            out.write(json.dumps({"path": ",".join(str(m) for m in moves), "visits": n,
                                  "value_sum": round(rng.uniform(-n, n) * 0.5, 6), "prior": 0.5}) + "\n")
    return len(visits)


def measure(mode: str, a: Path, b: Path) -> tuple[float, int]:
    for extra in ("", "-wal", "-shm"):
        Path(f"{b}{extra}").unlink(missing_ok=True)
    out = subprocess.run([sys.executable, "-c", RUN, mode, str(a), str(b)], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="treelab-interop-") as tmp:
        rows, imported, merged = Path(tmp) / "big.jsonl", Path(tmp) / "imported.db", Path(tmp) / "merged.db"
        t = time.perf_counter()
        n = write_rows(rows, args.nodes, args.seed)
        print(f"{n:,} rows written in {time.perf_counter() - t:.1f} s ({rows.stat().st_size / 1e6:.0f} MB); "
              f"load average {os.getloadavg()[0]:.1f}")
        times: dict[str, list[float]] = {"import": [], "merge": [], "load": []}
        peaks: dict[str, list[int]] = {"import": [], "merge": [], "load": []}
        for r in range(args.rounds):
            for mode, a, b in (("import", rows, imported), ("merge", imported, merged), ("load", imported, merged)):
                if mode == "merge" and not imported.exists():
                    continue
                seconds, peak = measure(mode, a, b) if mode != "load" else measure("load", imported, merged)
                times[mode].append(seconds)
                peaks[mode].append(peak)
            print(f"round {r + 1}: import {times['import'][-1]:.1f} s, merge {times['merge'][-1]:.1f} s, "
                  f"load {times['load'][-1]:.1f} s; load average {os.getloadavg()[0]:.1f}")
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"medians: import {med['import']:.1f} s, merge {med['merge']:.1f} s, load {med['load']:.1f} s; "
              f"import / merge = {med['import'] / med['merge']:.2f} (target <= 2)")
        peak = {k: statistics.median(v) for k, v in peaks.items()}
        print("peak memory, median (max) MB: " + ", ".join(f"{k} {peak[k] / 1e6:.0f} ({max(v) / 1e6:.0f})"
                                                          for k, v in peaks.items()) +
              f"; import / load = {peak['import'] / peak['load']:.2f}")


if __name__ == "__main__":
    main()
