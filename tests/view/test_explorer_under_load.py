"""The explorer's step mode under load: large files, many traces at once.

A traced search on the stored tree reads only what the search reaches (a one-simulation search at the
root of a 5-million-node file once read every node: 28.8 s, 1.46 GB), and runs exactly as on the whole
stored tree; traced searches run one at a time in a child process, another asked meanwhile is answered
503 ``busy`` at once, and ``/api/info`` stays fast while twenty are asked.
"""

from __future__ import annotations

import sqlite3
import statistics
import threading
import time
from pathlib import Path

import pytest
from explorer_helpers import SAMPLE_C4, copy_db, digest, serving

from treelab.mcts.dispatch import traced_search
from treelab.mcts.loop import Limit
from treelab.mcts.policies import make_rng
from treelab.mcts.tracer import Tracer
from treelab.store.persistence import load
from treelab.store.reach import load_reach
from treelab.view.explorer import stepping
from treelab.view.explorer.data import TreeFile


def nodes_in(db: Path) -> int:
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    finally:
        conn.close()


def test_a_short_search_reads_a_few_lines_not_the_subtree() -> None:
    reach = load_reach(SAMPLE_C4, [])
    assert reach.tree.size < nodes_in(SAMPLE_C4) / 10
    assert reach.frontier and all(node.parent is not None for node in reach.frontier.values())
    deeper = load_reach(SAMPLE_C4, [], reach.expanded, list(reach.frontier)[:3])
    assert reach.expanded < deeper.expanded and deeper.tree.size > reach.tree.size


@pytest.mark.parametrize("search", ["uct", "puct", "solver"])
@pytest.mark.parametrize(("path", "iterations"), [("", 1), ("", 60), ("44", 200)])
def test_a_stored_trace_read_as_far_as_it_reaches_is_the_search_on_the_whole_tree(
        monkeypatch: pytest.MonkeyPatch, search: str, path: str, iterations: int) -> None:
    monkeypatch.setattr(stepping, "WHOLE_BELOW", 0)  # never the whole subtree at once
    monkeypatch.setattr(stepping, "WHOLE_PER_SIMULATION", 0)
    source = TreeFile.open(SAMPLE_C4)
    moves = source.game.parse(path)
    query = stepping.TraceQuery(search=search, iterations=iterations, seed=4, stored=True)
    read = stepping._stored_search(source, moves, query, Limit(iterations=iterations)).records
    whole = load(SAMPLE_C4, path=moves)
    tracer = Tracer()
    traced_search(whole, moves, limit=Limit(iterations=iterations), search=stepping.SEARCHES[search],
                  rng=make_rng(4), tracer=tracer)
    assert read == tracer.records


def test_twenty_traces_at_once_get_one_search_and_busy_answers_while_info_stays_fast(tmp_path: Path) -> None:
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    before = digest(db)
    with serving(str(db)) as server:
        status, first = server.json("/api/trace?path=&tree=stored&iterations=1")  # starts the tracing process
        assert status == 200 and first["tree"] == "stored" and first["simulations"] == 1
        started = time.perf_counter()
        status, _ = server.json("/api/trace?path=&tree=stored&iterations=1&seed=7")
        assert status == 200 and time.perf_counter() - started < 5  # measured 0.38 s on 2.58M nodes
        answers: list[tuple[int, dict[str, object], float]] = []

        def ask(seed: int) -> None:
            began = time.perf_counter()
            code, body = server.json(f"/api/trace?path=&search=puct&iterations=2000&seed={seed}")
            answers.append((code, body, time.perf_counter() - began))

        threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(20)]
        for thread in threads:
            thread.start()
        waits = []
        while any(thread.is_alive() for thread in threads):
            began = time.perf_counter()
            assert server.json("/api/info")[0] == 200
            waits.append(time.perf_counter() - began)
            time.sleep(0.02)
        for thread in threads:
            thread.join()
    busy = [(body, seconds) for code, body, seconds in answers if code == 503]
    done = [body for code, body, _ in answers if code == 200]
    assert len(answers) == 20 and len(done) >= 1 and len(busy) + len(done) == 20
    assert all(body["busy"] is True and "busy" in str(body["error"]) for body, _ in busy)
    assert max(seconds for _, seconds in busy) < 5  # answered at once, never queued behind the search
    assert len(waits) >= 5 and statistics.median(waits) < 0.05, waits
    assert digest(db) == before


def test_a_stopped_server_stops_its_tracing_process(tmp_path: Path) -> None:
    import http.client

    from treelab.view.explorer.app import create_app
    from treelab.view.explorer.server import Background

    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    app = create_app(TreeFile.open(db))
    server = Background(app)
    try:
        host, port = server.sock.getsockname()[:2]
        conn = http.client.HTTPConnection(host, port, timeout=60)
        conn.request("GET", "/api/trace?path=44&iterations=5")
        assert conn.getresponse().status == 200
        conn.close()
        worker = app.state.tracer._proc
        assert worker.is_alive()
    finally:
        server.stop()
    assert not worker.is_alive()
