"""The explorer's JSON API, over HTTP against a real ``treelab serve`` process (docs/design.md, *Explorer*)."""

from __future__ import annotations

import json
import math
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from explorer_helpers import SAMPLE_C4, Server, children_in_db, copy_db, digest, serving, sibling_files
from hypothesis import given, settings
from hypothesis import strategies as st

import treelab

NODE_KEYS = {"game", "path", "to_move", "nb_visit", "nb_win", "nb_draw", "mean", "proven", "principal_variation",
             "children"}
CHILD_KEYS = {"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven"}


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("explorer")
    a = copy_db(SAMPLE_C4, folder / "a.db")
    b = folder / "b.db"
    treelab.train("connect4", b, games=8, iterations=100, opponent="heuristic", seed=2, progress=False)
    return a, b


@pytest.fixture(scope="module")
def server(trees: tuple[Path, Path]) -> Iterator[Server]:
    a, b = trees
    with serving(str(a), "--compare", str(b)) as srv:
        yield srv


def _db(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _node_id(conn: sqlite3.Connection, moves: list[str]) -> int:
    (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()
    for m in moves:
        (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (node, m)).fetchone()
    return int(node)


def _pv_sql(db: Path, moves: list[str]) -> list[str]:
    """Per level: a proven win, never a proven loss while a sibling is not, then the most selected
    child (then the most visited, then the first created), by plain SQL."""
    conn = _db(db)
    try:
        (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()
        for m in moves:
            (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (node, m)).fetchone()
        line = []
        while True:
            row = conn.execute(
                "SELECT id, move, nb_visit FROM nodes WHERE parent_id = ? ORDER BY "
                "CASE proven WHEN 1 THEN 2 WHEN -1 THEN 0 ELSE 1 END DESC, nb_select DESC, nb_visit DESC, id",
                (node,),
            ).fetchone()
            if row is None or row[2] == 0:
                return line
            node = row[0]
            line.append(row[1])
    finally:
        conn.close()


@pytest.mark.parametrize("moves", [[], ["5"], ["5", "3"], ["4", "4"]])
def test_node_answers_the_stored_numbers(server: Server, trees: tuple[Path, Path], moves: list[str]) -> None:
    a, _ = trees
    status, data = server.json("/api/node?path=" + "".join(moves))
    assert status == 200
    assert set(data) >= NODE_KEYS and data["game"] == "connect4" and data["path"] == "".join(moves)
    assert data["to_move"] == 1 + len(moves) % 2
    stored = children_in_db(a, moves)
    assert {k["move"]: (k["nb_visit"], k["nb_win"], k["nb_draw"]) for k in data["children"]} == stored
    conn = _db(a)
    try:
        selected = dict(conn.execute(
            "SELECT n.move, n.nb_select FROM nodes n WHERE n.parent_id = ?", (_node_id(conn, moves),)).fetchall())
    finally:
        conn.close()
    assert {k["move"]: k["nb_select"] for k in data["children"]} == selected
    assert data["principal_variation"] == _pv_sql(a, moves)
    line = data["principal_variation"]
    assert data["pv_paths"] == ["".join(moves + line[:i + 1]) for i in range(len(line))]
    c = data["c"]
    for k in data["children"]:
        assert set(k) >= CHILD_KEYS
        n, w, d = stored[k["move"]]
        if n:
            mean = (w + 0.5 * d) / n
            assert k["mean"] == pytest.approx(mean)
            explore = c * math.sqrt(math.log(data["nb_visit"]) / n)
            assert k["ucb1"] == pytest.approx(mean + explore)
            assert k["exploitation"] + k["exploration"] == pytest.approx(k["ucb1"])
        else:
            assert k["ucb1"] is None
        assert k["path"] == data["path"] + k["move"]


def test_comma_notation_and_root_spellings(server: Server) -> None:
    assert server.json("/api/node?path=5,3")[1]["path"] == "53"
    for target in ("/api/node", "/api/node?path=", "/api/node?path=root"):
        status, data = server.json(target)
        assert status == 200 and data["path"] == ""


@pytest.mark.parametrize("target", [
    "/api/node?path=4x", "/api/node?path=8", "/api/node?path=4444444", "/api/node?path=%00",
    "/api/node?path=" + quote("<script>alert(1)</script>"), "/api/node?path=" + "4" * 5000,
    "/api/node?path=%ff%fe", "/api/node?path=" + quote("٤٤"), "/api/node?path=../../etc/passwd",
    "/api/node?path=4&game=-1", "/api/node?path=4&game=1e3", "/api/node?path=4&since=2",
    "/api/node?db=c", "/api/node?db=../a.db", "/api/subtree.svg?depth=-1", "/api/subtree.svg?depth=abc",
    "/api/subtree.svg?depth=99999999999999", "/api/subtree.svg?top=0", "/api/subtree.svg?depth=7",
    "/api/info?db=" + quote("'; DROP TABLE nodes; --"), "/api/compare?path=9",
])
def test_bad_queries_answer_400_with_one_json_error(server: Server, target: str) -> None:
    status, data = server.json(target)
    assert status == 400, (target, data)
    assert set(data) == {"error"} and "\n" not in data["error"] and "Traceback" not in data["error"]


@pytest.mark.parametrize("target", ["/api/node?path=1234567123",
                                    "/api/subtree.svg?path=1234567123", "/api/nothing", "/favicon.ico"])
def test_unknown_paths_answer_404(server: Server, target: str) -> None:
    status, data = server.json(target)
    assert status == 404 and set(data) == {"error"}, (target, data)


@pytest.mark.parametrize("target", [
    "/static/../../etc/passwd", "/static/..%2f..%2f..%2fetc%2fpasswd", "/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd", "/static//etc/passwd", "/static/..\\..\\etc\\passwd", "/../a.db",
    "/static/%2e%2e/app.py", "/static/../app.py", "/static/%2e%2e%2fdata.py",
])
def test_nothing_outside_the_static_files_is_served(server: Server, target: str) -> None:
    status, _, body = server.get(target)
    assert status == 404, (target, status, body[:200])
    assert b"root:" not in body and b"SQLite format" not in body and b"import" not in body


def test_post_is_refused_with_json(server: Server) -> None:
    conn = __import__("http.client").client.HTTPConnection(server.host, server.port, timeout=10)
    conn.request("POST", "/api/node?path=4", body=b"x")
    resp = conn.getresponse()
    assert resp.status == 405 and "error" in json.loads(resp.read())
    conn.close()


def test_page_and_static_files(server: Server) -> None:
    status, headers, body = server.get("/?path=44")
    assert status == 200 and headers["content-type"].startswith("text/html") and b"explorer.js" in body
    assert "script-src 'self'" in headers["content-security-policy"]
    status, headers, body = server.get("/static/explorer.js")
    assert status == 200 and b"textContent" in body


def test_subtree_svg_links_nodes_by_move_path(server: Server) -> None:
    status, headers, body = server.get("/api/subtree.svg?path=5&depth=2&top=2")
    assert status == 200 and headers["content-type"].startswith("image/svg+xml")
    text = body.decode()
    assert text.lstrip().startswith("<?xml") or "<svg" in text[:400]
    assert '<g id="5" class="node">' in text
    first = [k["move"] for k in server.json("/api/node?path=5")[1]["children"][:2]]  # --top: the move-choice rule's
    for move in first:
        assert f'<g id="5/{move}" class="node">' in text


def test_growth_replay_shows_the_tree_as_of_a_game(server: Server, trees: tuple[Path, Path]) -> None:
    a, _ = trees
    conn = _db(a)
    try:
        (root_id,) = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()
        then = {m for (m,) in conn.execute(
            "SELECT move FROM nodes WHERE parent_id = ? AND (created_game IS NULL OR created_game <= 2)", (root_id,))}
        new = {m for (m,) in conn.execute(
            "SELECT move FROM nodes WHERE parent_id = ? AND created_game = 2", (root_id,))}
        visits, logged = conn.execute("SELECT root_visits, root_children FROM history WHERE game_id = 2").fetchone()
    finally:
        conn.close()
    status, data = server.json("/api/node?path=&game=2&since=1")
    assert status == 200 and {k: data["replay"][k] for k in ("game", "since")} == {"game": 2, "since": 1}
    assert {k["move"] for k in data["children"]} == then
    assert {k["move"] for k in data["children"] if k["new"]} == new
    assert data["nb_visit"] == visits
    for k in data["children"]:
        assert [k["nb_visit"], k["nb_win"], k["nb_draw"]] == json.loads(logged)[k["move"]][:3]
        assert k["share"] == k["nb_visit"] / visits <= 1
        assert k["nb_select"] is None  # selections were not logged per game
    assert data["principal_variation"] == [] and "not logged" in data["replay"]["note"]
    # a diagram would show today's counts of the deeper nodes beside that game's: refused, saying why
    status, answer = server.json("/api/subtree.svg?path=&game=2&since=1&depth=1")
    assert status == 400 and "past game" in answer["error"]


def test_growth_replay_never_shows_a_share_over_100_percent(server: Server, trees: tuple[Path, Path]) -> None:
    """Below the start's moves a past game's counts were not logged: shown as unknown, never today's beside then's."""
    conn = _db(trees[0])
    try:
        games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
    finally:
        conn.close()
    for game in (1, 5, games // 2):
        for path in ("", "4", "5", "44", "53"):
            status, data = server.json(f"/api/node?path={path}&game={game}")
            if status == 404:  # not created yet by that game
                continue
            assert status == 200
            known = [k for k in data["children"] if k["share"] is not None]
            assert all(0 <= k["share"] <= 1 for k in known), (path, game)
            if len(path) >= 1:  # this position's moves: counts not logged per game, so none shown
                assert not known and all(k["nb_visit"] is None and k["mean"] is None for k in data["children"])
            if len(path) >= 2:
                assert data["nb_visit"] is None and data["value"] is None
            elif data["children"] and len(path) == 0:
                assert sum(k["nb_visit"] for k in data["children"]) <= data["nb_visit"]


def test_children_come_in_the_order_the_principal_variation_is_chosen_by(server: Server) -> None:
    for path in ("", "4", "5", "44"):
        data = server.json(f"/api/node?path={path}")[1]
        ranks = [(2 if k["proven"] == "win" else 0 if k["proven"] == "loss" else 1, k["nb_select"], k["nb_visit"])
                 for k in data["children"]]
        assert ranks == sorted(ranks, reverse=True)
        if data["principal_variation"]:
            assert data["children"][0]["move"] == data["principal_variation"][0]


def test_replay_before_a_node_was_created_is_404(server: Server, trees: tuple[Path, Path]) -> None:
    conn = _db(trees[0])
    try:
        nid, created = conn.execute(
            "SELECT id, created_game FROM nodes WHERE depth BETWEEN 2 AND 8 AND created_game > 2 "
            "ORDER BY depth, id LIMIT 1"
        ).fetchone()
        moves = []
        while nid is not None:
            move, nid = conn.execute("SELECT move, parent_id FROM nodes WHERE id = ?", (nid,)).fetchone()
            moves.append(move)
    finally:
        conn.close()
    path = "".join(reversed(moves[:-1]))  # without the root's 'root'
    assert server.json(f"/api/node?path={path}&game={created}")[0] == 200
    status, data = server.json(f"/api/node?path={path}&game={created - 1}")
    assert status == 404 and f"game {created!r}" in data["error"]


def test_compare_is_the_diff_of_the_two_trees(server: Server, trees: tuple[Path, Path]) -> None:
    a, b = trees
    for path in ("", "4", "44"):
        status, data = server.json(f"/api/compare?path={path}")
        assert status == 200
        expected = json.loads(json.dumps(treelab.diff(a, b, path, count_nodes=False).to_dict()))
        for row in expected["children"]:
            row["path"] = path + row["move"]
        assert data == expected
    status, data = server.json("/api/node?path=&db=b")
    assert data["nb_visit"] == sum(n for n, _, _ in children_in_db(b, []).values())


def test_info_and_version(server: Server, trees: tuple[Path, Path]) -> None:
    a, b = trees
    status, data = server.json("/api/info")
    assert status == 200 and data["game"] == "connect4" and data["compare"] == str(b)
    conn = _db(a)
    nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    conn.close()
    assert data["games"] == 40 and data["last_game"] == 40 and data["nodes"] == nodes


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=60))
def test_any_path_text_gets_json_never_a_500(server: Server, text: str) -> None:
    for endpoint in ("node", "compare"):
        status, data = server.json(f"/api/{endpoint}?path={quote(text, safe='')}")
        assert status in (200, 400, 404), (text, status, data)
        assert ("error" in data) == (status != 200)


def test_serving_leaves_the_files_byte_identical(tmp_path: Path) -> None:
    a = copy_db(SAMPLE_C4, tmp_path / "a.db")
    before, files = digest(a), sibling_files(a)
    with serving(str(a)) as srv:
        for target in ("/api/node?path=44", "/api/subtree.svg?path=4", "/api/info", "/?path=4"):
            assert srv.get(target)[0] == 200
    assert digest(a) == before and sibling_files(a) == files


def test_overlapping_reads_of_one_file_leave_no_log_beside_it(tmp_path: Path) -> None:
    """The cause of the serving test's rare -wal/-shm: a request's read and a diagram laid out ahead overlap,
    the first ends while the second is open (so its tidying could not remove the log), and the second, which
    found the first one's log, left it. Now the last reader of the process tidies."""
    from treelab.store.dbfile import reading

    a = copy_db(SAMPLE_C4, tmp_path / "a.db")
    files = sibling_files(a)
    first, second = reading(a), reading(a)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first read ends while the second is still open
    second.__exit__(None, None, None)
    assert sibling_files(a) == files
    barrier = threading.Barrier(4)

    def read() -> None:
        with reading(a) as (conn, _):
            barrier.wait(timeout=30)
            conn.execute("SELECT count(*) FROM nodes").fetchone()

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sibling_files(a) == files


def test_live_numbers_follow_training_without_blocking_it(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    treelab.train("connect4", db, games=1, iterations=50, seed=3, progress=False)
    with serving(str(db)) as srv:
        versions, failures = set(), []
        stop = threading.Event()

        def reader() -> None:
            while not stop.is_set():
                for target in ("/api/info", "/api/node?path=", "/api/node?path=4"):
                    status, data = srv.json(target)
                    if status != 200 and not (status == 404 and target.endswith("=4")):
                        failures.append((target, status, data))
                    if target == "/api/info":
                        versions.add(data["version"])
                time.sleep(0.02)

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "treelab", "train", "connect4", "--db", str(db), "--games", "12",
                 "--iterations", "60", "--seed", "4"], capture_output=True, text=True, timeout=300,
            )
        finally:
            time.sleep(0.3)
            stop.set()
            thread.join()
        assert done.returncode == 0, done.stderr
        assert not failures
        final = srv.json("/api/info")[1]
    assert len(versions) >= 3, versions  # the page saw the tree grow, game by game
    assert final["games"] == 13 and final["last_game"] == 13


def test_a_tictactoe_board_with_its_moves(tmp_path: Path) -> None:
    from explorer_helpers import SAMPLE_TTT

    db = copy_db(SAMPLE_TTT, tmp_path / "ttt.db")
    with serving(str(db)) as srv:
        status, data = srv.json("/api/node?path=15")
    assert status == 200 and data["to_move"] == 1
    board = data["board"]
    assert board["kind"] == "grid" and board["look"]["marks"] == ["", "X", "O"]
    assert board["cells"] == [[1, 0, 0], [0, 2, 0], [0, 0, 0]]  # X in cell 1, O in cell 5
    cells = {m: (int(m) - 1) // 3 * 3 + (int(m) - 1) % 3 for m in "2346789"}
    assert {m: rc[0] * 3 + rc[1] for m, rc in board["targets"].items()} == cells
    assert {k["move"] for k in data["children"]} <= set(board["targets"])


@pytest.mark.openspiel
def test_an_openspiel_tree_by_action_ids_with_action_strings(tmp_path: Path) -> None:
    db = tmp_path / "os.db"
    treelab.train("openspiel:tic_tac_toe", db, games=2, iterations=40, seed=1, progress=False)
    with serving(str(db)) as srv:
        status, root = srv.json("/api/node?path=")
        assert status == 200 and root["game"] == "openspiel:tic_tac_toe" and root["board"]["kind"] == "text"
        first = root["children"][0]
        assert first["path"] == first["move"] and first["action"].startswith("x(")
        status, node = srv.json(f"/api/node?path={first['path']}")
        assert status == 200 and node["path"] == first["move"]
        for k in node["children"]:
            assert k["path"] == f"{first['move']},{k['move']}" and k["action"].startswith("o(")
        line = root["principal_variation"]
        assert root["pv_paths"] == [",".join(line[:i + 1]) for i in range(len(line))]
        status, _, body = srv.get(f"/api/subtree.svg?path={first['path']}&depth=1")
        assert status == 200 and f'<g id="{first["move"]}" class="node">'.encode() in body


def test_explore_an_in_memory_tree_leaves_it_untouched() -> None:
    tree = treelab.Tree("tictactoe")
    treelab.search(tree, "", limit=treelab.Limit(iterations=400), rng=3)
    unsaved, size = tree.unsaved, len(tree)
    view = treelab.explore(tree, path="5")
    try:
        assert view.url.startswith("http://127.0.0.1:") and 'src="http://127.0.0.1:' in view._repr_html_()
        node = view.api("node", path="5")
        here = tree.find("5")
        assert node["nb_visit"] == here.nb_visit
        assert {k["move"]: k["nb_visit"] for k in node["children"]} == {k.name: k.nb_visit for k in here.children_view}
        assert view.api("info")["nodes"] == size
    finally:
        view.stop()
    assert (tree.unsaved, len(tree)) == (unsaved, size)
