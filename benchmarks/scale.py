"""Million-node trees: save, incremental save, load (time and memory), partial load.

Each figure is measured against a reference in the same run:
- first save vs plain ``sqlite3.executemany`` of the same rows in one transaction;
- a save after more games vs the first save;
- ``treelab.load`` (time, bytes per node in a fresh process) vs building the same
  tree in memory from tuples, for a UCT-grown tree (target <= 182 bytes a node) and for a
  tree of whole recorded random games, mostly one-child chains (``--recorded-nodes``,
  target <= 200 bytes a node);
- ``treelab.load(db, path=..., depth=...)`` of a small subtree vs the whole load.

    .venv/bin/python benchmarks/scale.py --nodes 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import treelab
from treelab.mcts.choice import best_child
from treelab.play.players import MCTSPlayer
from treelab.store import bulk  # the rows a first save writes, so both sides insert identical rows
from treelab.store.binding import bind

LOADER = r"""
import gc, json, sys, time
def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
import treelab, sqlite3
from treelab.tree import TreeNode
mode, db = sys.argv[1], sys.argv[2]
treelab.load  # resolve the lazily imported store module before timing: loads are measured, not imports
gc.collect()
before = rss()
t = time.perf_counter()
if mode == "load":
    tree = treelab.load(db)
    n = len(tree)
elif mode == "partial":
    tree = treelab.load(db, path=sys.argv[3], depth=int(sys.argv[4]))
    n = len(tree)
else:  # build the same tree from tuples already in memory (the reference)
    rows = sqlite3.connect(db).execute(
        "SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game FROM nodes ORDER BY id").fetchall()
    before = rss()
    t = time.perf_counter()
    nodes = {}
    gc.disable()
    for nid, pid, move, v, w, d, p, cg in rows:
        nodes[nid] = TreeNode(move, nodes[pid] if pid is not None else None, node_id=nid, nb_visit=v, nb_win=w,
                              nb_draw=d, proven=p, created_game=cg)
    gc.enable()
    n = len(nodes)
elapsed = time.perf_counter() - t
gc.collect()
print(json.dumps({"seconds": elapsed, "nodes": n, "bytes": rss() - before}))
"""


def fresh(mode: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", LOADER, mode, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def reference_insert(rows: list[tuple], path: Path, *, indexed: bool = False) -> float:
    """Plain sqlite3: default settings, one executemany in one transaction.

    ``indexed=False``: a bare table with the same columns; ``indexed=True``: docs/design.md's
    schema as plain SQL (unique on (parent_id, move), which serves lookups by parent_id too).
    """
    conn = sqlite3.connect(path)
    unique = ", UNIQUE (parent_id, move)" if indexed else ""
    conn.execute(f"""CREATE TABLE nodes (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES nodes(id),
        move TEXT NOT NULL, depth INTEGER NOT NULL, nb_visit INTEGER NOT NULL, nb_win INTEGER NOT NULL,
        nb_draw INTEGER NOT NULL, proven INTEGER, created_game INTEGER, nb_select INTEGER NOT NULL{unique})""")
    conn.commit()
    started = time.perf_counter()
    conn.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--games", type=int, default=200, help="games played before the incremental save")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--search-iterations", type=int, default=0,
                        help="simulations per move the tree searches in those games (0: record the games only)")
    parser.add_argument("--recorded-nodes", type=int, default=1_000_000,
                        help="nodes of the tree of recorded random games whose load is measured too (0: skip)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="treelab-scale-"))
    print(f"growing a Connect Four tree of {args.nodes:,} nodes ...", flush=True)
    tree = treelab.Tree("connect4")
    started = time.perf_counter()
    treelab.search(tree, "", limit=treelab.Limit(iterations=args.nodes - 1), rng=1)
    print(f"  {len(tree):,} nodes in {time.perf_counter() - started:.1f}s")

    order, parents = bulk.breadth_first(tree.root)
    rows = bulk.rows(order, parents, 0, len(order), 1)
    del order, parents
    ours, theirs, theirs_indexed = [], [], []
    for r in range(args.rounds):
        ref_path, our_path = tmp / f"ref{r}.db", tmp / f"ours{r}.db"
        theirs.append(reference_insert(rows, ref_path))
        theirs_indexed.append(reference_insert(rows, tmp / f"refi{r}.db", indexed=True))
        bind(tree, None)  # a first save to a new file writes every node
        started = time.perf_counter()
        treelab.save(tree, our_path)
        ours.append(time.perf_counter() - started)
    first = statistics.median(ours)
    bare, indexed = statistics.median(theirs), statistics.median(theirs_indexed)
    print(f"first save: treelab {first:.2f}s; sqlite3.executemany into a bare table {bare:.2f}s (ratio "
          f"{first / bare:.2f}), into the same schema with its indexes {indexed:.2f}s (ratio {first / indexed:.2f}); "
          "target <= 1.5")

    db = tmp / f"ours{args.rounds - 1}.db"  # the file the tree is bound to now
    # 200 more games, each stored whole as one simulation (the persistent-tree formulation: every
    # game's path is recorded); with --search-iterations K the tree also searches K simulations per move
    game = tree.game
    rng = random.Random(2)
    player = MCTSPlayer(tree=tree, iterations=args.search_iterations, rng=3) if args.search_iterations else None
    for _ in range(args.games):
        state, moves = game.initial(), []
        while not state.is_terminal:
            if player is not None and state.ply % 2 == 0:
                move = player.choose(state, moves)
            else:
                move = rng.choice(state.legal_moves())
            state = state.play(move)
            moves.append(move)
        tree.record(moves, state.winner)
    changed = tree.unsaved
    started = time.perf_counter()
    written = treelab.save(tree, db)
    later = time.perf_counter() - started
    print(f"save after {args.games} more games ({written:,} rows, {changed:,} changed nodes): {later:.3f}s = "
          f"{100 * later / first:.1f}% of the first save (target <= 2%)")

    size = db.stat().st_size + (Path(f"{db}-wal").stat().st_size if Path(f"{db}-wal").exists() else 0)
    total = len(tree)
    print(f"on disk: {size / total:.0f} bytes per node ({size / 1e6:.0f} MB)")
    t_load = measure_load(db, args.rounds, f"load of the UCT-grown tree ({total:,} nodes)", 182)

    node = tree.root
    while node.nb_visit > 2000 and node.children_view:
        node = best_child(node)
    path = "".join(node.moves)
    parts = [fresh("partial", str(db), path, "3") for _ in range(args.rounds)]
    t_part = statistics.median(x["seconds"] for x in parts)
    print(f"partial load of {path!r} depth 3 ({parts[0]['nodes']:,} nodes): {t_part * 1000:.1f}ms = "
          f"{100 * t_part / t_load:.2f}% of a whole load (target <= 1%)")
    if args.recorded_nodes:
        recorded = record_games(args.recorded_nodes)
        chains = sum(1 for n in recorded if len(n.children_view) == 1)
        print(f"recorded {len(recorded):,} nodes of random games ({100 * chains / len(recorded):.0f}% with one child)")
        recorded.save(tmp / "recorded.db")
        del recorded
        measure_load(tmp / "recorded.db", args.rounds, "load of the recorded games' tree", 200)
    os.system(f"rm -rf {tmp}")


def record_games(nodes: int) -> treelab.Tree:
    """A Connect Four tree of at least ``nodes`` nodes: whole uniformly random games, each stored by ``Tree.record``."""
    tree = treelab.Tree("connect4")
    game, rng = tree.game, random.Random(1)
    while len(tree) < nodes:
        state, moves = game.initial(), []
        while not state.is_terminal:
            move = rng.choice(state.legal_moves())
            moves.append(move)
            state = state.play(move)
        tree.record(moves, state.winner)
    return tree


def measure_load(db: Path, rounds: int, what: str, target: int) -> float:
    """Print the load's time and bytes a node in fresh processes, beside building the same tree from tuples."""
    loads, builds = [], []
    for _ in range(rounds):  # alternated: both see the same machine
        loads.append(fresh("load", str(db)))
        builds.append(fresh("build", str(db)))
    t_load = statistics.median(x["seconds"] for x in loads)
    t_build = statistics.median(x["seconds"] for x in builds)
    per_node = statistics.median(x["bytes"] / x["nodes"] for x in loads)
    print(f"{what}: {t_load:.2f}s, {per_node:.0f} bytes/node in a fresh process (target <= {target}); building "
          f"the same tree from tuples: {t_build:.2f}s, ratio {t_load / t_build:.2f}")
    return t_load


if __name__ == "__main__":
    main()
