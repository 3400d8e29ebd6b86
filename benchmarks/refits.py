"""The learning loop's refits beside the games against between them: the same games, side by side.

From one starting point (a tree of ``--refit-every`` games and its first model, made once), each round runs
the loop for ``--games`` more games twice, once with ``--refits between`` (the games wait for every refit) and
once with ``--refits beside`` (each refit but the last runs in a process of its own while the next games play
on with the version before), in turn, each in a fresh process on its own copy of the files, and prints each
run's wall time, games a second, the refits' share of the wall time and the share the games waited for them,
then the median ratio of the two wall times (between / beside: above 1, beside is faster).

    .venv/bin/python benchmarks/refits.py --games 600 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = """
import json, sys, time
import treelab
db, model, games, every, where, seed = sys.argv[1:7]
began = time.perf_counter()
r = treelab.learning_loop("connect4", db, model, int(games), refit_every=int(every), refits=where, seed=int(seed),
                          progress=False)
print(json.dumps({"seconds": time.perf_counter() - began, "games": r.games, "refits": len(r.refits),
                  "refit_share": r.refit_share, "wait_share": r.wait_share, "version": r.version}))
"""


def loop(db: Path, model: Path, games: int, every: int, where: str, seed: int) -> dict[str, float]:
    """One run of the loop in a fresh process; its summary."""
    done = subprocess.run([sys.executable, "-c", RUN, str(db), str(model), str(games), str(every), where, str(seed)],
                          capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=600, help="games a run plays from the start (default 600)")
    parser.add_argument("--refit-every", type=int, default=100, help="games between refits (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="treelab-refits-") as folder:
        work = Path(folder)
        start_db, start_model = work / "start.db", work / "start.npz"
        first = loop(start_db, start_model, args.refit_every, args.refit_every, "between", args.seed)
        print(f"start: {args.refit_every} games and model v{first['version']} in {first['seconds']:.1f}s")
        times: dict[str, list[float]] = {"between": [], "beside": []}
        for round_ in range(args.rounds):
            order = ("between", "beside") if round_ % 2 == 0 else ("beside", "between")
            for where in order:
                db, model = work / f"{where}.db", work / f"{where}.npz"
                for path in (db, model):
                    path.unlink(missing_ok=True)
                shutil.copyfile(start_db, db)
                shutil.copyfile(start_model, model)
                got = loop(db, model, args.games, args.refit_every, where, args.seed + 1)
                times[where].append(got["seconds"])
                print(f"round {round_ + 1} {where:>7}: {got['games']} games in {got['seconds']:.1f}s "
                      f"({got['games'] / got['seconds']:.2f} games/s), {got['refits']} refits, refitting "
                      f"{got['refit_share']:.0%} of the time, the games waiting {got['wait_share']:.0%}", flush=True)
        ratios = [b / s for b, s in zip(times["between"], times["beside"], strict=True)]
        print(f"wall time between / beside: median {statistics.median(ratios):.2f}x "
              f"(rounds {', '.join(f'{r:.2f}' for r in ratios)})")


if __name__ == "__main__":
    main()
