"""Drawing a ~300-node subtree out of a 1,000,000-node database, against loading the whole tree.

Builds (once, then reuses) a Connect Four tree of at least a million nodes from
seeded random games, saves it with ``treelab.store``, then times side by side
in the same run:

- **view**: ``treelab.view.dot.render(db, ...)``: reads only the drawn nodes and
  their siblings (one indexed query per level), then writes the DOT text;
- **subtree load**: ``treelab.load(db, path, depth)`` (a recursive query) + ``to_dot``;
- **full load**: ``treelab.load(db)`` (every node) + ``to_dot`` of the same subtree;

and, for ``treelab stats``, the SQL aggregates of ``db_stats`` against
loading the whole tree and computing the same object in memory. It prints the
times and the ratios (machines are noisy: compare ratios, not absolute times).

Usage:
    python benchmarks/render_subtree.py [--db PATH] [--nodes N] [--repeat R] [--svg]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import gettempdir

import treelab
from treelab.analysis.arrays import stats
from treelab.analysis.sqlstats import db_stats
from treelab.view.dot import render, run_dot, to_dot
from treelab.view.loading import load_view
from treelab.view.subtree import select

PATH, DEPTH, TOP = "44", 3, 6  # 1 + 6 + 36 + 216 drawn nodes, plus one "+N more" node per drawn parent


def build(db: Path, nodes: int, seed: int = 1) -> None:
    """A Connect Four tree of at least ``nodes`` nodes from seeded random games, saved to ``db``."""
    rng = random.Random(seed)
    tree = treelab.Tree("connect4")
    game = tree.game
    started = time.perf_counter()
    while tree.size < nodes:
        state, moves = game.initial(), []
        while not state.is_terminal:
            moves.append(rng.choice(state.legal_moves()))
            state = state.play(moves[-1])
        tree.record(moves, state.winner)
    print(f"built {tree.size:,} nodes in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    tree.save(db)
    print(f"saved to {db} in {time.perf_counter() - started:.1f} s ({db.stat().st_size / 1e6:.0f} MB)", flush=True)


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    """The fastest of ``repeat`` runs (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=Path(gettempdir()) / "treelab-bench" / "c4-1m.db")
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--svg", action="store_true", help="also lay out the diagram with the real dot")
    args = parser.parse_args()
    db: Path = args.db
    if not db.exists() or treelab.info(db)["nodes"] < args.nodes:
        db.parent.mkdir(parents=True, exist_ok=True)
        db.unlink(missing_ok=True)
        build(db, args.nodes)
    facts = treelab.info(db)
    print(f"database: {db} · {facts['nodes']:,} nodes · {facts['size_bytes'] / 1e6:.0f} MB")
    options = {"path": PATH, "depth": DEPTH, "top": TOP}
    out = db.parent / "subtree.dot"

    t_view, _ = best_of(args.repeat, lambda: render(db, out, **options))
    dot = out.read_text()
    view, _ = load_view(db, **options)
    drawn = select(view.find(PATH), depth=DEPTH, top_k=TOP).size
    t_sub, sub_dot = best_of(args.repeat, lambda: to_dot(treelab.load(db, path=PATH, depth=DEPTH), **options))
    t_full, full_dot = best_of(max(1, args.repeat - 1), lambda: to_dot(treelab.load(db), **options))
    assert dot == full_dot, "the view and the whole tree must draw the same diagram"
    assert isinstance(sub_dot, str) and "children not loaded" in sub_dot  # load(depth=) cannot say what is below
    print(f"\ndiagram: subtree at {PATH!r}, depth {DEPTH}, top {TOP}: {drawn} nodes "
          f"({view.size:,} rows read by the view loader)")
    print(f"  view (render from the database) {t_view * 1000:9.1f} ms")
    print(f"  load(path, depth) + to_dot      {t_sub * 1000:9.1f} ms   ratio {t_sub / t_view:8.1f}x")
    print(f"  load() whole tree + to_dot      {t_full * 1000:9.1f} ms   ratio {t_full / t_view:8.1f}x")
    if args.svg:
        t_dot, _ = best_of(args.repeat, lambda: run_dot(dot, "svg"))
        print(f"  dot -Tsvg on the diagram        {t_dot * 1000:9.1f} ms (the same for every way)")

    t_sql, sql = best_of(args.repeat, lambda: db_stats(db))
    t_mem, mem = best_of(1, lambda: stats(treelab.load(db)))
    assert isinstance(sql, dict) and isinstance(mem, dict)
    assert sql["nodes"] == mem["nodes"] and sql["depth_histogram"] == mem["depth_histogram"]
    print("\nstats of the whole tree")
    print(f"  db_stats (SQL aggregates)       {t_sql * 1000:9.1f} ms")
    print(f"  load() + stats in memory        {t_mem * 1000:9.1f} ms   ratio {t_mem / t_sql:8.1f}x")
    print(f"\nRATIO drawing a {drawn}-node subtree: whole-tree load / view = {t_full / t_view:.0f}x")


if __name__ == "__main__":
    main()
