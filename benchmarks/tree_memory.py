"""Bytes a node of a loaded tree, before and after a change, side by side (the bound: 200).

Makes the trees with ``treelab train`` (this checkout): a UCT self-play tree, and a PUCT tree grown with a
model (``--model``, as the learning loop grows it: a prior and a value sum on nearly every node) or, without
one, with the heuristic evaluator (priors, no value sums). Each tree is then loaded by ``treelab.load`` in fresh
processes of this checkout and of ``--before`` (``git archive`` of that revision, its extension built from its own
C sources), measured two ways:

- **RSS**: the growth of the process's resident memory over the load (no tracemalloc in that process: its own
  bookkeeping would count);
- **allocated**: the blocks ``tracemalloc`` sees alive after the load, each rounded up as Python's allocator
  rounds small blocks (to 16 bytes), after a first load of the same file has imported what a load needs.

    .venv/bin/python benchmarks/tree_memory.py --before main --uct-games 130 --puct-games 95 --model M.npz
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
SOURCES = ["_speedups.c", "_nodes.c", "_rows.c", "_loop.c", "_puct.c", "_columns.c", "_solver.c"]

MEASURE = r"""
import gc, json, sys, tracemalloc
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
import treelab
how, db = sys.argv[1], sys.argv[2]
treelab.load(db)  # imports and caches, then gone: not the tree's cost
gc.collect()
if how == "rss":
    before = rss()
    tree = treelab.load(db)
    gc.collect()
    used = rss() - before
else:
    tracemalloc.start(1)
    tree = treelab.load(db)
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    used = sum((t.size + 15) // 16 * 16 if t.size <= 512 else t.size for t in snapshot.traces)
print(json.dumps({"nodes": len(tree), "bytes": used, "file": treelab.__file__}))
"""


def checkout(rev: str, where: Path) -> Path:
    """``rev``'s package in ``where``, with its extension built from its own C sources."""
    where.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(HERE), "archive", rev, "treelab"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    built = sorted((HERE / "treelab").glob("_speedups.*.so"))
    same = subprocess.run(["git", "-C", str(HERE), "diff", "--quiet", rev, "--", "treelab/*.c", "treelab/*.h"],
                          check=False).returncode == 0
    if same and built:
        shutil.copy2(built[0], where / "treelab" / built[0].name)
    else:
        include = sysconfig.get_paths()["include"]
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        subprocess.run(["gcc", "-O3", "-shared", "-fPIC", f"-I{include}",
                        *[str(where / "treelab" / name) for name in SOURCES if (where / "treelab" / name).exists()],
                        "-o", str(where / "treelab" / f"_speedups{suffix}")], check=True)
    return where


def measure(root: Path, how: str, db: Path) -> float:
    """Bytes a node of ``treelab.load(db)`` with the package in ``root``, in a fresh process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, how, str(db)], env={**os.environ, "PYTHONPATH": str(root)},
                         cwd=db.parent, capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    assert data["file"].startswith(str(root)), (data["file"], root)  # the intended checkout was imported
    return float(data["bytes"]) / data["nodes"]


def train(db: Path, games: int, *extra: str) -> int:
    """Grow ``db`` with this checkout's ``treelab train``; the nodes it holds."""
    subprocess.run([sys.executable, "-m", "treelab", "train", "connect4", "--db", str(db), "--games", str(games),
                    "--seed", "1", "--quiet", *extra], stdout=subprocess.DEVNULL, cwd=db.parent,
                   env={**os.environ, "PYTHONPATH": str(HERE)}, check=True)
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM nodes").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="main", help="git revision to compare against")
    parser.add_argument("--uct-games", type=int, default=130, help="UCT self-play games (130: about 1M nodes)")
    parser.add_argument("--puct-games", type=int, default=95, help="PUCT games (95 with a model: about 1M nodes)")
    parser.add_argument("--model", help="a Connect Four model file (treelab fit): PUCT grows the tree with it")
    parser.add_argument("--keep", help="a folder to make (or reuse) the databases in (and the checkout, removed)")
    args = parser.parse_args()
    if args.keep:
        Path(args.keep).mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp:  # the checkout before, and the databases unless kept
        folder = Path(args.keep or tmp)
        before = checkout(args.before, Path(tmp) / "before")
        puct = ["--algorithm", "puct", *(["--model", args.model] if args.model else ["--evaluator", "heuristic"])]
        trees = {"UCT": ("uct.db", args.uct_games, []),
                 f"PUCT ({'model' if args.model else 'heuristic'})": ("puct.db", args.puct_games, puct)}
        print(f"before = {args.before}, after = {HERE}; bytes a node of treelab.load, fresh processes")
        print(f"| {'tree':<16} | {'nodes':>9} | {'RSS before':>10} | {'RSS after':>9} | {'allocated before':>16} | "
              f"{'allocated after':>15} |")
        print(f"|{'-' * 18}|{'-' * 11}|{'-' * 12}|{'-' * 11}|{'-' * 18}|{'-' * 17}|")
        for label, (name, games, extra) in trees.items():
            db = folder / name
            nodes = train(db, games, *extra) if not db.exists() else train(db, 0)
            figures = [measure(root, how, db) for how in ("rss", "traced") for root in (before, HERE)]
            print(f"| {label:<16} | {nodes:>9,} | {figures[0]:>10.0f} | {figures[1]:>9.0f} | {figures[2]:>16.0f} | "
                  f"{figures[3]:>15.0f} |")


if __name__ == "__main__":
    main()
