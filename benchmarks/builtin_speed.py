"""Connect Four and tic-tac-toe before and after a change, in one run: nothing may get slower.

The game registry, OpenSpiel games and movers from the game (``MoverTree``) must
leave the built-in games on their fast path. This script checks out ``--before``
(a git revision, default ``main``) into a temporary worktree, builds its compiled
extension (copied when the C sources are the same, else built by pip), and then
times the same jobs alternately in fresh processes importing the old and the current treelab:

* ``search``: one UCT search of ``--simulations`` from the empty board (connect4, tictactoe);
* ``record``: ``Tree.record`` of 2,000 random Connect Four games;
* ``save+load``: a 20,000-simulation Connect Four tree saved to a new file and loaded back;
* ``train:N`` (asked for with ``--jobs``): ``treelab.train`` of a new Connect Four self-play tree at N
  simulations a move, one game per 6,000 of ``--simulations``, in CPU seconds (the search's process and
  its writer process: on a shared machine wall time says more about the other jobs).

It prints each job's median over ``--rounds`` alternated rounds and the ratio
after/before (1.00: the same; above 1: slower now).

    .venv/bin/python benchmarks/builtin_speed.py --before main --rounds 5
    .venv/bin/python benchmarks/builtin_speed.py --before main --jobs train:200 train:400 --simulations 60000
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

HERE = Path(__file__).resolve().parents[1]

JOB = """\
import json, random, sys, tempfile, time, os
import treelab
from treelab import Limit, Tree, load, search
kind, sims, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if kind.startswith("search:"):
    tree = Tree(kind.split(":")[1])
    t = time.perf_counter(); search(tree, limit=Limit(iterations=sims), rng=seed); dt = time.perf_counter() - t
elif kind == "record":
    rng = random.Random(seed); game = treelab.find_game("connect4"); lines = []
    for _ in range(2000):
        s, line = game.initial(), []
        while not s.is_terminal:
            m = rng.choice(s.legal_moves()); line.append(m); s = s.play(m)
        lines.append((line, s.winner))
    tree = Tree("connect4")
    t = time.perf_counter()
    for line, winner in lines:
        tree.record(line, winner=winner)
    dt = time.perf_counter() - t
elif kind.startswith("train:"):  # self-play training in one process (its writer process saves), from scratch
    import resource
    path = os.path.join(tempfile.mkdtemp(), "t.db")
    used = lambda: sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                       for f in ("ru_utime", "ru_stime"))
    t = used()
    treelab.train("connect4", path, games=sims // 6000, iterations=int(kind.split(":")[1]), seed=seed, progress=False)
    dt = used() - t  # CPU seconds of this process and its writer process: a shared machine stretches wall time
else:
    tree = Tree("connect4"); search(tree, limit=Limit(iterations=20000), rng=seed)
    path = os.path.join(tempfile.mkdtemp(), "t.db")
    t = time.perf_counter(); tree.save(path); load(path); dt = time.perf_counter() - t
print(json.dumps({"seconds": dt, "file": treelab.__file__}))
"""


def _run(root: Path, kind: str, sims: int, seed: int) -> float:
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", JOB, kind, str(sims), str(seed)], env=env, cwd=tempfile.gettempdir(),
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["file"].startswith(str(root)), (data["file"], root)  # the intended checkout was imported
    return float(data["seconds"])


def _checkout(rev: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(where), rev], check=True,
                   capture_output=True)
    same = subprocess.run(["git", "-C", str(HERE), "diff", "--quiet", rev, "--", "treelab/*.c", "treelab/*.h"],
                          check=False).returncode == 0
    built = sorted((HERE / "treelab").glob("_speedups.*.so"))
    if same and built:  # the same C sources: the same extension
        shutil.copy2(built[0], where / "treelab" / built[0].name)
    else:  # pip builds it with the setuptools the revision asks for
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(where / "_site"),
                        str(where)], check=True, capture_output=True)
        return where / "_site"
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="main", help="git revision to compare against")
    parser.add_argument("--simulations", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", nargs="+", default=["search:connect4", "search:tictactoe", "record", "save+load"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before = _checkout(args.before, Path(tmp) / "before")
        try:
            jobs = args.jobs
            print(f"before = {args.before} ({before}), after = {HERE}; medians of {args.rounds} alternated rounds")
            print(f"| {'job':<18} | {'before s':>9} | {'after s':>9} | {'after/before':>12} |")
            print(f"|{'-' * 20}|{'-' * 11}|{'-' * 11}|{'-' * 14}|")
            for job in jobs:
                old, new = [], []
                for r in range(args.rounds):
                    order = [(old, before), (new, HERE)]
                    for sink, root in (order if r % 2 == 0 else order[::-1]):
                        sink.append(_run(root, job, args.simulations, r))
                b, a = statistics.median(old), statistics.median(new)
                print(f"| {job:<18} | {b:>9.3f} | {a:>9.3f} | {a / b:>12.2f} |", flush=True)
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(before)], check=False,
                           capture_output=True)


if __name__ == "__main__":
    main()
