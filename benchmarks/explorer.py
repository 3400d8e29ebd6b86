"""The explorer on a 1,000,000-node database: API answers against the bare SQL for the same rows.

Builds (once, then reuses) a Connect Four tree of at least a million nodes from
seeded random games (the tree of ``benchmarks/render_subtree.py``), serves it
with the real app and uvicorn on 127.0.0.1 (a copy of it as the compared
tree), and times, alternating in the same run:

- **API**: one HTTP request on a kept-alive connection (``http.client``), the
  JSON decoded: ``/api/node`` at the root and at positions 4, 8 and 16 moves down
  the principal variation, ``/api/info``, ``/api/compare``, ``/api/subtree.svg``
  (laid out by ``dot``, then from the server's cache), and 48 diagrams laid out anew,
  alternately by the explorer's lean ``dot`` and by a plain one, and a click to a child 0.3 s
  after its parent's diagram, with the likely next diagrams laid out ahead or not (alternated);
- **SQL**: the same rows read with plain ``sqlite3`` on a connection kept open:
  the path one ``(parent_id, move)`` lookup per move, the children, the principal
  variation one lookup per level (for compare: both files; for the diagram the
  rows ``load_view`` reads).

It prints the medians and the ratio API / SQL (machines are noisy: compare
ratios, not absolute times), the explorer's lean ``dot`` (only the plugins an
SVG needs) against a plain ``dot`` on the same diagrams, alternated, and, with
chromium and Playwright installed, the time from opening the page to its table
shown and to its diagram drawn.

Usage:
    python benchmarks/explorer.py [--db PATH] [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import gettempdir
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from render_subtree import build

from treelab.play.explorer import explorer_app
from treelab.view.dot import run_dot, source_dot
from treelab.view.explorer import diagram, lean
from treelab.view.explorer.server import Background
from treelab.view.explorer.svgdot import lean_svg

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]


def sql_node(conn: sqlite3.Connection, moves: list[str]) -> int:
    """The rows ``/api/node`` reads, with plain SQL: path, children, principal variation."""
    (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    for m in moves:
        (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (node, m)).fetchone()
    rows = conn.execute("SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game FROM nodes "
                        "WHERE parent_id = ? ORDER BY id", (node,)).fetchall()
    while True:
        row = conn.execute("SELECT id, move, nb_visit FROM nodes WHERE parent_id = ? ORDER BY nb_visit DESC, id "
                           "LIMIT 1", (node,)).fetchone()
        if row is None or row[2] == 0:
            return len(rows)
        node = row[0]


def sql_info(conn: sqlite3.Connection) -> object:
    conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    conn.execute("SELECT max(id) FROM nodes").fetchone()
    return conn.execute("SELECT count(*), coalesce(max(id), 0) FROM games").fetchone()


def sql_subtree(conn: sqlite3.Connection, moves: list[str], depth: int) -> int:
    """The rows a depth-``depth`` diagram reads: path, then every child of every node per level."""
    (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL ORDER BY id LIMIT 1").fetchone()
    for m in moves:
        (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (node, m)).fetchone()
    level, count = [node], 0
    for _ in range(depth):
        marks = ",".join("?" * len(level))
        rows = conn.execute(f"SELECT id, nb_visit FROM nodes WHERE parent_id IN ({marks})", level).fetchall()
        count += len(rows)
        level = [r[0] for r in sorted(rows, key=lambda r: -r[1])[: 3 * len(level)]]
    return count


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=Path(gettempdir()) / "treelab-bench-1m.db")
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=31)
    args = parser.parse_args()
    if not args.db.exists():
        build(args.db, args.nodes)
    other = args.db.with_name(args.db.stem + "-copy.db")
    if not other.exists():
        shutil.copyfile(args.db, other)
    ro = sqlite3.connect(f"{args.db.resolve().as_uri()}?mode=ro", uri=True)
    ro_b = sqlite3.connect(f"{other.resolve().as_uri()}?mode=ro", uri=True)
    nodes = ro.execute("SELECT count(*) FROM nodes").fetchone()[0]
    server = Background(explorer_app(args.db, other))
    conn = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1].strip("/")), timeout=60)

    def get(target: str) -> Any:
        conn.request("GET", target)
        resp = conn.getresponse()
        body = resp.read()
        assert resp.status == 200, (target, resp.status, body[:200])
        return json.loads(body) if resp.getheader("content-type", "").startswith("application/json") else body

    pv = get("/api/node?path=")["principal_variation"]
    print(f"{args.db}: {nodes:,} nodes; principal variation {''.join(pv[:16])}...", flush=True)
    cases: list[tuple[str, Callable[[], object], Callable[[], object]]] = []
    for k in (0, 4, 8, 16):
        path = "".join(pv[:k])
        cases.append((f"/api/node?path={path or '(root)'}", lambda p=path: get(f"/api/node?path={p}"),
                      lambda k=k: sql_node(ro, pv[:k])))
    cases.append(("/api/info", lambda: get("/api/info"), lambda: sql_info(ro)))
    cases.append((f"/api/compare?path={''.join(pv[:4])}", lambda: get(f"/api/compare?path={''.join(pv[:4])}"),
                  lambda: (sql_node(ro, pv[:4]), sql_node(ro_b, pv[:4]))))
    svg = f"/api/subtree.svg?path={''.join(pv[:2])}&depth=2&top=3"
    cases.append((svg + " (cached)", lambda: get(svg), lambda: sql_subtree(ro, pv[:2], 2)))
    for _, api, sql in cases:  # warm up: page cache, the diagram cache, the first connection
        api()
        sql()
    print(f"{'request':46} {'API median':>11} {'SQL median':>11} {'ratio':>7} {'API max':>9}")
    worst = 0.0
    for name, api, sql in cases:
        a_times, s_times = [], []
        for _ in range(args.repeat):
            a_times.append(timed(api))
            s_times.append(timed(sql))
        a, s = statistics.median(a_times), statistics.median(s_times)
        worst = max(worst, a)
        print(f"{name:46} {a * 1e3:9.2f}ms {s * 1e3:9.3f}ms {a / s:6.1f}x {max(a_times) * 1e3:7.1f}ms", flush=True)
    fresh: dict[str, list[float]] = {"lean": [], "plain": []}
    made = lean.plugin_dir()
    for i, (k, depth, top) in enumerate(itertools.product((3, 5, 1, 7), (1, 2, 3), (2, 3, 4, 5))):
        mode = "lean" if i % 2 else "plain"  # alternated: every diagram is laid out anew, by one dot or the other
        lean._made[:] = [made if mode == "lean" else None]
        fresh[mode].append(timed(lambda k=k, d=depth, t=top: get(f"/api/subtree.svg?path={''.join(pv[:k])}"
                                                                 f"&depth={d}&top={t}")))
    lean._made[:] = [made]
    for mode, times in fresh.items():
        print(f"{'/api/subtree.svg, uncached, ' + mode + ' dot':46} {statistics.median(times) * 1e3:9.2f}ms "
              f"{'':>11} {'':>7} {max(times) * 1e3:7.1f}ms  ({len(times)} diagrams)")
    clicks(get, pv)
    print(f"slowest median of a cached or data answer: {worst * 1e3:.1f} ms (target: at most 50 ms)")
    layouts(args.db, pv, args.repeat)
    first_layouts(args.db, pv)
    page_load(server.url, pv)
    server.stop()


def clicks(get: Callable[[str], Any], pv: list[str]) -> None:
    """A click down the principal variation 0.3 s after the parent's diagram: laid out ahead or not, alternated."""
    times: dict[int, list[float]] = {diagram.PREFETCH: [], 0: []}
    kept = diagram.PREFETCH
    for i, (depth, top, k) in enumerate(itertools.product((1, 2), (5, 6, 7), range(0, 8, 2))):  # parents even
        diagram.PREFETCH = kept if i % 2 else 0
        query = f"&depth={depth}&top={top}"
        get(f"/api/subtree.svg?path={''.join(pv[:k])}{query}")  # the diagram the user looks at (maybe cached)
        time.sleep(0.3)  # reading it, then clicking its most visited child
        child = f"/api/subtree.svg?path={''.join(pv[:k + 1])}{query}"
        times[diagram.PREFETCH].append(timed(lambda c=child: get(c)))
    diagram.PREFETCH = kept
    for ahead, spent in times.items():
        print(f"{f'click to a child, {ahead} diagrams laid out ahead':46} {statistics.median(spent) * 1e3:9.2f}ms "
              f"{'':>11} {'':>7} {max(spent) * 1e3:7.1f}ms  ({len(spent)} clicks)")


_FIRST = """
import sys, time
from treelab.view.dot import run_dot, source_dot
from treelab.view.explorer import svgdot as lean
text = source_dot(sys.argv[1], path=sys.argv[2], depth=2, top=3)
if sys.argv[3] == "lean":
    lean.plugin_dir()  # made while the server starts
started = time.perf_counter()
lean.lean_svg(text) if sys.argv[3] == "lean" else run_dot(text, "svg")
print(time.perf_counter() - started)
"""


def first_layouts(db: Path, pv: list[str], rounds: int = 7) -> None:
    """The first diagram a fresh process lays out, by a plain or the lean ``dot`` (processes alternated)."""
    times: dict[str, list[float]] = {"plain": [], "lean": []}
    for i in range(rounds):
        for mode in ("plain", "lean") if i % 2 else ("lean", "plain"):
            out = subprocess.run([sys.executable, "-c", _FIRST, str(db), "".join(pv[:i]), mode],
                                 capture_output=True, text=True, check=True).stdout
            times[mode].append(float(out))
    print("first layout in a fresh process (depth 2, top 3): " + ", ".join(
        f"{mode} dot {statistics.median(t) * 1e3:.1f} ms (max {max(t) * 1e3:.1f})" for mode, t in times.items()))


def layouts(db: Path, pv: list[str], repeat: int) -> None:
    """The explorer's lean ``dot`` (:mod:`treelab.view.explorer.svgdot`) against a plain ``dot``, alternated."""
    plain_times, lean_times = [], []
    texts = [source_dot(db, path=pv[:k], depth=d, top=t) for k, d, t in ((3, 2, 3), (1, 2, 5), (5, 3, 2))]
    for _ in range(max(3, repeat // 3)):
        for text in texts:
            plain_times.append(timed(lambda t=text: run_dot(t, "svg")))
            lean_times.append(timed(lambda t=text: lean_svg(t)))
    plain, lean = statistics.median(plain_times), statistics.median(lean_times)
    print(f"layout of one diagram: plain dot {plain * 1e3:.1f} ms, lean dot {lean * 1e3:.1f} ms "
          f"(median of {len(lean_times)} alternated each): {plain / lean:.1f}x faster")


def page_load(url: str, pv: list[str]) -> None:
    """Seconds from opening the page to its table shown and to its diagram drawn (needs chromium)."""
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        print("page load: skipped (no chromium or playwright; run make setup)")
        return
    table, ready = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page()
        for k in (0, 3, 6, 9, 12, 2, 5, 8):
            path = "".join(pv[:k])
            started = time.perf_counter()
            page.goto(f"{url}?path={path}&depth=2&top=3")
            page.wait_for_function("(p) => document.body.dataset.loaded === p", arg=path)
            table.append(time.perf_counter() - started)
            page.wait_for_function("(p) => (document.body.dataset.ready || '').startsWith(p + '|')", arg=path)
            ready.append(time.perf_counter() - started)
        browser.close()
    print(f"page load (chromium, 8 positions): table shown median {statistics.median(table) * 1e3:.0f} ms "
          f"(max {max(table) * 1e3:.0f}), diagram drawn median {statistics.median(ready) * 1e3:.0f} ms "
          f"(max {max(ready) * 1e3:.0f}); target: usable in under 1 s")


if __name__ == "__main__":
    main()
