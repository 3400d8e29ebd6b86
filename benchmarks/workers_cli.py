"""``treelab train --workers 2`` against ``--workers 1``, as a user runs them: back to back on the command line.

Each round runs, for every search asked (``--searches``), ``treelab train connect4 --workers 1`` and
``--workers 2`` on fresh databases, one right after the other (the order alternating between rounds, each run
starting as the last ends, so the second of a pair starts on the load average the first left: what was
measured as 1.00x when such a load made PUCT fall back to one process). Each run is timed whole (start-up,
games, every save) and its simulations per second read from its summary line. Prints every run with the note
the command printed (``note: ...``), then the medians and the ratio ``--workers 2 / --workers 1`` per search.

    .venv/bin/python benchmarks/workers_cli.py --rounds 3
    .venv/bin/python benchmarks/workers_cli.py --searches puct-heuristic,puct-model --model M.npz --rounds 3

Searches: ``uct`` (the default search; ``--workers 2`` trains in one process by design, so about 1.0x),
``puct-heuristic`` (PUCT with the Connect Four heuristic evaluator, Python phases), ``puct-model`` (PUCT with
a fitted model, ``--model``: the compiled batch).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def options(search: str, model: str | None) -> list[str]:
    """The ``treelab train`` options of a search."""
    if search == "uct":
        return []
    if search == "puct-heuristic":
        return ["--algorithm", "puct", "--evaluator", "heuristic"]
    if search == "puct-model":
        if model is None:
            raise SystemExit("puct-model needs --model M.npz (a Connect Four model: treelab fit)")
        return ["--algorithm", "puct", "--model", str(Path(model).resolve())]
    raise SystemExit(f"unknown search {search!r}: uct, puct-heuristic or puct-model")


def run(folder: Path, search: str, extra: list[str], workers: int, games: int, iterations: int,
        seed: int) -> tuple[float, str]:
    """One ``treelab train`` run on a fresh file: its simulations per second (whole run) and its notes."""
    db = folder / f"{search}-w{workers}-{seed}.db"
    command = [sys.executable, "-m", "treelab", "train", "connect4", "--db", str(db), "--games", str(games),
               "--iterations", str(iterations), "--seed", str(seed), "--quiet", "--workers", str(workers), *extra]
    began = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, cwd=folder, check=True,
                         env={**os.environ, "PYTHONPATH": str(HERE)})
    seconds = time.perf_counter() - began
    found = re.search(r"([\d,]+) new simulations", out.stdout)
    if found is None:
        raise SystemExit(f"no summary in: {out.stdout}\n{out.stderr}")
    notes = " | ".join(line[len("note: "):] for line in out.stdout.splitlines() if line.startswith("note: "))
    db.unlink()
    return int(found.group(1).replace(",", "")) / seconds, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--searches", default="uct,puct-heuristic", help="comma-separated: uct, puct-heuristic, "
                        "puct-model")
    parser.add_argument("--model", help="a Connect Four model file, for puct-model")
    parser.add_argument("--games", default="uct:40,puct-heuristic:12,puct-model:40",
                        help="games a run, per search (search:games, comma-separated)")
    parser.add_argument("--iterations", type=int, default=200, help="simulations a move")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stop-unless", metavar="FILE", help="stop before any run once FILE is gone (a shared "
                        "machine's sign that it is quiet); the rounds done so far are summed up")
    args = parser.parse_args()
    games = {k: int(v) for k, v in (item.split(":") for item in args.games.split(","))}
    searches = args.searches.split(",")
    rates: dict[tuple[str, int], list[float]] = {(s, w): [] for s in searches for w in (1, 2)}
    print(f"treelab train connect4 --iterations {args.iterations}, back to back; load average "
          f"{os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory(prefix="treelab-workers-cli-") as tmp:
        for r in range(args.rounds):
            if args.stop_unless and not Path(args.stop_unless).exists():
                print(f"{args.stop_unless} is gone: stopped after {r} rounds")
                break
            for search in searches:
                extra = options(search, args.model)
                for workers in ((1, 2) if r % 2 == 0 else (2, 1)):
                    load = os.getloadavg()[0]
                    rate, notes = run(Path(tmp), search, extra, workers, games[search], args.iterations, r + 1)
                    rates[search, workers].append(rate)
                    print(f"round {r + 1} {search:>15} --workers {workers}: {rate:>9,.0f} sims/s (load {load:.2f} "
                          f"at its start){'; note: ' + notes if notes else ''}", flush=True)
    done = min(len(rates[search, w]) for search in searches for w in (1, 2))
    print(f"\nmedians of {done} rounds:")
    for search in searches:
        if not done:
            break
        rates[search, 1], rates[search, 2] = rates[search, 1][:done], rates[search, 2][:done]
        one, two = (statistics.median(rates[search, w]) for w in (1, 2))
        pairs = [b / a for a, b in zip(rates[search, 1], rates[search, 2], strict=True)]
        print(f"  {search:>15} ({games[search]} games): --workers 1 {one:,.0f} sims/s, --workers 2 {two:,.0f} "
              f"sims/s: {two / one:.2f}x (rounds: {', '.join(f'{p:.2f}' for p in pairs)})")


if __name__ == "__main__":
    main()
