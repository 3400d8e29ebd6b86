"""Hostile OpenSpiel parameters, deep OpenSpiel paths in the
explorer, the explorer's Host check and exposure warning, special files, and trainers sharing a file."""

from __future__ import annotations

import http.client
import random
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run
from explorer_helpers import SAMPLE_C4, Server, copy_db, serving

import treelab
from tests.play.test_parallel import AS_ASKED, as_asked  # noqa: F401 (a fixture)
from treelab.view.explorer.app import host_of

pytest.importorskip("pyspiel")


@pytest.mark.parametrize(("size", "why"), [(1, "no legal action"), (-1, "no legal action"), (0, "malformed")])
@pytest.mark.openspiel
def test_openspiel_game_with_a_bad_board_is_refused_in_one_line(tmp_path: Path, size: int, why: str) -> None:
    """hex(board_size=1) reaches a position that is not over with no legal action (an IndexError once)."""
    db = tmp_path / "hex.db"
    result = run("train", f"openspiel:hex(board_size={size})", "--db", str(db), "--games", "1")
    assert_clean_error(result, f"board_size={size}", why)
    assert not db.exists()


@pytest.mark.parametrize("size", [100000, 65536, 50000])
@pytest.mark.openspiel
def test_openspiel_game_too_large_is_refused_before_it_allocates(tmp_path: Path, size: int) -> None:
    """hex(board_size=100000) once took 22 GB in 60 s; OpenSpiel's sizes wrap around for such boards."""
    db = tmp_path / "hex.db"
    result = run("train", f"openspiel:hex(board_size={size})", "--db", str(db), "--games", "1")
    assert_clean_error(result, f"board_size={size}", "too large", "100,000")
    assert not db.exists()


@pytest.mark.openspiel
def test_games_declare_their_longest_game() -> None:
    assert treelab.find_game("connect4").max_length == 42
    assert treelab.find_game("tictactoe").max_length == 9
    assert treelab.find_game("openspiel:hex(board_size=5)").max_length == 25


def _deep_hex_tree(db: Path, moves: int) -> str:
    """A stored hex(19) tree holding one random line of ``moves`` actions; its position (comma-separated)."""
    game = treelab.find_game("openspiel:hex(board_size=19)")
    rng = random.Random(7)
    state, line = game.initial(), []
    while len(line) < moves and not state.is_terminal:
        move = rng.choice(state.legal_moves())
        line.append(move)
        state = state.play(move)
    assert len(line) == moves, "the random hex game ended early: pick another seed"
    tree = treelab.Tree(game)
    position = game.notation(line)
    tree.record(position, winner=1)
    tree.save(db)
    return position


@pytest.mark.openspiel
def test_explorer_opens_a_deep_openspiel_position(tmp_path: Path) -> None:
    """A hex(19) position of 150 moves is far longer than 400 characters (the old limit)."""
    db = tmp_path / "hex.db"
    position = _deep_hex_tree(db, 150)
    assert len(position) > 400
    with serving(str(db)) as server:
        status, body = server.json(f"/api/node?path={position}")
        assert status == 200, body
        assert body["nb_visit"] == 1
        assert len(body["path"].split(",")) == 150
        too_long = ",".join(["0"] * 362)  # more moves than hex(19) (361 cells) can have
        status, body = server.json(f"/api/node?path={too_long}")
        assert status == 400 and "longer than any" in body["error"], body


def _get_with_host(server: Server, host: str, target: str = "/api/info") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.putrequest("GET", target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_explorer_refuses_requests_addressed_to_another_host(tmp_path: Path) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: that Host is refused."""
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    with serving(str(db)) as server:
        status, body = _get_with_host(server, "attacker.example:80")
        assert status == 400 and b"attacker.example" in body
        for good in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost"):
            status, body = _get_with_host(server, good)
            assert status == 200, (good, body)


def test_explorer_allow_host_adds_a_name(tmp_path: Path) -> None:
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    with serving(str(db), "--allow-host", "explorer.lan") as server:
        assert _get_with_host(server, "explorer.lan:8765")[0] == 200
        assert _get_with_host(server, "other.lan")[0] == 400


def test_serve_on_all_interfaces_warns_and_prints_reachable_addresses(tmp_path: Path) -> None:
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    cmd = [sys.executable, "-m", "treelab", "serve", str(db), "--host", "0.0.0.0", "--port", "0", "--no-browser"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        warning = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "read-only at http://" in first
    assert "from other machines:" in second
    assert warning.startswith("warning: --host 0.0.0.0 serves") and "no password" in warning


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:8765", "127.0.0.1"), ("[::1]:8765", "::1"), ("LocalHost", "localhost"), ("::1", "::1"),
    ("a.example:80", "a.example"),
])
def test_host_of_strips_the_port_and_ipv6_brackets(header: str, name: str) -> None:
    assert host_of(header) == name


@pytest.mark.openspiel
def test_stats_and_render_show_openspiel_paths_that_read_back(tmp_path: Path) -> None:
    """``stats --path 14,17`` once showed ``"1417"``, which reads back as other moves."""
    import json

    game = treelab.find_game("openspiel:hex(board_size=5)")
    tree = treelab.Tree(game)
    tree.record("14,17,3", winner=1)
    tree.record("14,17,22", winner=2)
    db = tmp_path / "hex.db"
    tree.save(db)
    result = run("stats", str(db), "--path", "14,17", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)["path"]
    assert shown == "14,17"
    again = run("stats", str(db), "--path", shown, "--json")
    assert json.loads(again.output)["simulations"] == 2
    out = tmp_path / "sub.dot"
    assert run("render", str(db), "--path", shown, "--depth", "1", "-o", str(out)).exit_code == 0
    assert "subtree at 14,17" in out.read_text()


def test_explorer_notices_a_served_file_replaced_by_another_game(tmp_path: Path) -> None:
    """``serve s.db``, then a tic-tac-toe tree copied or moved over it: 409 and a clear message, never
    tic-tac-toe counts under the connect4 name; a connect4 tree moved over it is served from then on."""
    import os
    import shutil

    from explorer_helpers import SAMPLE_TTT

    db = copy_db(SAMPLE_C4, tmp_path / "s.db")
    with serving(str(db)) as server:
        status, info = server.json("/api/info")
        assert status == 200 and info["game"] == "connect4"
        shutil.copyfile(SAMPLE_TTT, db)  # same inode, other content
        for target in ("/api/info", "/api/node?path=4"):
            status, body = server.json(target)
            assert status == 409 and "tictactoe" in body["error"], (target, body)
        other = copy_db(SAMPLE_TTT, tmp_path / "ttt.db")
        os.replace(other, db)  # another inode
        status, body = server.json("/api/info")
        assert status == 409 and "start treelab serve again" in body["error"]
        fresh = tmp_path / "c4b.db"
        tree = treelab.Tree("connect4")
        tree.record("44", winner=1)
        tree.save(fresh)
        os.replace(fresh, db)
        status, info = server.json("/api/info")
        assert status == 200 and info["game"] == "connect4" and info["root_visits"] == 1


def test_explore_reuses_one_server_per_database_and_stops_it_when_dropped() -> None:
    import gc
    import urllib.error
    import urllib.request

    from explorer_helpers import SAMPLE_TTT

    first = treelab.explore(SAMPLE_C4, path="4")
    again = treelab.explore(SAMPLE_C4, path="44")
    assert again is first and again.path == "44"
    other = treelab.explore(SAMPLE_TTT)
    assert other.url != first.url
    url = first.url
    del first, again
    gc.collect()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "api/info", timeout=5)
    assert other.running
    other.stop()
    assert not other.running
    fresh = treelab.explore(SAMPLE_TTT)
    assert fresh.running and fresh.api("info")["game"] == "tictactoe"
    fresh.stop()


def _special_files(tmp_path: Path) -> list[tuple[str, Path]]:
    import os

    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    made = [("named pipe", fifo)]
    if os.geteuid() == 0:  # mknod of a character device needs root (CI runs as root)
        null = tmp_path / "mynull"
        os.mknod(null, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))
        made.append(("character device", null))
    return made


@pytest.mark.parametrize("command", ["train", "analyse", "merge"])
def test_a_special_file_is_refused_in_one_line_and_never_replaced(tmp_path: Path, command: str) -> None:
    """``--db mynull`` (a character device) once left a 40 KB SQLite file where the device was."""
    import stat

    for kind, special in _special_files(tmp_path):
        before = special.lstat()
        if command == "train":
            result = run("train", "tictactoe", "--db", str(special), "--games", "1", "--iterations", "10")
        elif command == "analyse":
            result = run("analyse", "tictactoe", "--db", str(special), "--iterations", "10")
        else:
            result = run("merge", str(special), str(SAMPLE_C4))
        assert_clean_error(result, special.name, kind)
        after = special.lstat()
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino


def test_a_link_to_an_empty_file_is_written_through_not_replaced(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    link = tmp_path / "link.db"
    link.symlink_to(empty)
    result = run("train", "tictactoe", "--db", str(link), "--games", "1", "--iterations", "10")
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and empty.stat().st_size > 0
    assert treelab.info(link)["games"] == 1


def test_merging_a_file_into_itself_through_a_hard_link_is_refused(tmp_path: Path) -> None:
    """``ln a.db a_link.db; treelab merge a_link.db a.db`` once doubled every count."""
    import os

    from explorer_helpers import digest

    a = copy_db(SAMPLE_C4, tmp_path / "a.db")
    link = tmp_path / "a_link.db"
    os.link(a, link)
    before = digest(a)
    for args in ((str(link), str(a)), (str(tmp_path / "new.db"), str(a), str(link))):
        result = run("merge", *args)
        assert_clean_error(result, "named twice", "a link or another spelling")
        assert digest(a) == before
    assert not (tmp_path / "new.db").exists()


@pytest.mark.usefixtures("as_asked")
@pytest.mark.parametrize("mode", [("--workers", "2"), pytest.param(("--ray",), marks=pytest.mark.ray)])
def test_parallel_training_into_a_file_that_is_no_database_is_one_line(tmp_path: Path, mode: tuple[str, ...]) -> None:
    """``train --workers 2 --db hello.txt`` once ended in a raw sqlite3.DatabaseError traceback."""
    text = tmp_path / "hello.txt"
    text.write_text("hello\n")
    result = run("train", "connect4", "--db", str(text), "--games", "2", "--iterations", "20", *mode)
    assert_clean_error(result, "hello.txt", "not a treelab database")
    assert text.read_text() == "hello\n"


@pytest.mark.parametrize("workers", [(), ("--workers", "2")])
def test_two_trainers_of_one_file_queue_and_add_their_games(tmp_path: Path, workers: tuple[str, ...]) -> None:
    """Two runs started together once both numbered their games from max(id) + 1 and the second died on
    ``UNIQUE constraint failed: games.id`` (with --workers leaving simulations without their game)."""
    import sqlite3

    db = tmp_path / "c4.db"
    treelab.train("connect4", db, 1, iterations=30, seed=9, progress=False)  # both resume one file
    cmd = [*AS_ASKED, "train", "connect4", "--db", str(db), "--games", "12",
           "--iterations", "30", "-q", *workers]
    procs = [subprocess.Popen([*cmd, "--seed", str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for seed in (1, 2)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    conn = sqlite3.connect(db)
    try:
        ids = [i for (i,) in conn.execute("SELECT id FROM games ORDER BY id")]
        orphans = conn.execute("SELECT count(*) FROM nodes WHERE created_game IS NOT NULL AND created_game NOT IN "
                               "(SELECT id FROM games)").fetchone()[0]
    finally:
        conn.close()
    assert ids == list(range(1, 26))  # 1 + 12 + 12 games, every id once
    assert orphans == 0  # every node names a logged game
    tree = treelab.load(db)
    moves = sum(len(tree.game.parse(g["moves"])) for g in treelab.read_games(db))
    assert tree.root.nb_visit == 30 * moves  # no simulations without their game


def test_a_notebook_kernel_that_exits_while_exploring_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """Kernel shutdown once left ``-wal``/``-shm`` beside the served file in 2 of 3 runs: a kernel
    (here a plain Python process) explores a copy, asks for a node and a diagram, and exits without
    stopping the explorer."""
    import hashlib

    tmp_path = tmp_path / "kernel"
    tmp_path.mkdir()
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    script = (
        "import sys, urllib.request, treelab\n"
        f"e = treelab.explore({str(db)!r}, path='4')\n"
        "for part in ('api/node?path=44', 'api/subtree.svg?path=4&depth=2', 'api/info'):\n"
        "    urllib.request.urlopen(e.url + part, timeout=30).read()\n"
        "sys.exit(0)\n"
    )
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == [db.name], list(tmp_path.iterdir())
        assert hashlib.sha256(db.read_bytes()).hexdigest() == before
