"""What checking a database's rows costs (treelab.store.integrity), as ratios in one run.

- the compiled load step (``_rows.c`` build) with every row checked vs unchecked;
- ``check_nodes`` (the whole table, run only when a reader fails) vs one plain ``count(*)`` scan.

Usage: ``.venv/bin/python benchmarks/checks.py [ITERATIONS]`` (grows a Connect Four tree first).
"""

from __future__ import annotations

import gc
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import treelab
from treelab import speedups
from treelab.store.integrity import check_nodes, label_check
from treelab.tree import Tree

COLUMNS = "id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game, nb_select"


def timed(run: object, repeats: int = 7) -> float:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return statistics.median(out)


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    if speedups.compiled is None:
        sys.exit("the compiled extension is not built: run make setup")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "b.db"
        tree = treelab.Tree("connect4")
        treelab.search(tree, "", limit=treelab.Limit(iterations=iterations), rng=1)
        treelab.save(tree, db)
        conn = sqlite3.connect(db)
        rows = [(*r, 0) for r in conn.execute(f"SELECT {COLUMNS} FROM nodes ORDER BY id")]

        def build(checked: bool) -> Tree:
            fresh = Tree("connect4")
            fresh.depth_counts = []
            args = (fresh.node_class, rows, [None] * (rows[-1][0] + 1), fresh.depth_counts, {}, set())
            gc.disable()
            try:
                if checked:
                    speedups.compiled.build(*args, label_check(fresh.game))
                else:
                    speedups.compiled.build(*args)
            finally:
                gc.enable()
            return fresh  # freed outside the timing

        build(False)  # warm up, then alternate the two
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(7):
            for checked_ in (False, True):
                start = time.perf_counter()
                kept = build(checked_)
                times[checked_].append(time.perf_counter() - start)
                del kept
                gc.collect()
        plain, checked = statistics.median(times[False]), statistics.median(times[True])
        game = treelab.find_game("connect4")
        scan = timed(lambda: conn.execute("SELECT count(*), sum(nb_visit) FROM nodes NOT INDEXED").fetchone())
        whole = timed(lambda: check_nodes(conn, game), repeats=3)
        conn.close()
    print(f"{len(rows):,} nodes")
    print(f"load build: checked {checked:.3f} s / unchecked {plain:.3f} s = {checked / plain:.2f}x")
    print(f"check_nodes {whole:.3f} s / one plain scan {scan:.3f} s = {whole / scan:.1f}x (only when a reader fails)")


if __name__ == "__main__":
    main()
