"""Shared pieces of the explorer tests: a real ``treelab serve`` process, and HTTP without a client library."""

from __future__ import annotations

import hashlib
import http.client
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from paths import ROOT

SAMPLE_C4 = ROOT / "data" / "connect4.db"
SAMPLE_TTT = ROOT / "data" / "tictactoe.db"


class Server:
    """A ``treelab serve`` process on a free port of 127.0.0.1."""

    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc, self.url = proc, url
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80

    def get(self, target: str) -> tuple[int, dict[str, str], bytes]:
        """GET ``target`` sent exactly as written (no normalising of ``..`` or escapes)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.putrequest("GET", target, skip_accept_encoding=True)
            conn.endheaders()
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def json(self, target: str) -> tuple[int, Any]:
        status, headers, body = self.get(target)
        assert headers["content-type"].startswith("application/json"), (target, headers, body[:200])
        return status, json.loads(body)


@contextmanager
def serving(*args: str, cwd: Path | None = None) -> Iterator[Server]:
    """Run ``treelab serve ARGS --port 0 --no-browser`` and yield it once it listens."""
    cmd = [sys.executable, "-m", "treelab", "serve", *args, "--port", "0", "--no-browser"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "http://" not in line:
            err = proc.stderr.read() if proc.stderr else ""
            raise AssertionError(f"serve did not start: {line!r} {err!r}")
        url = line[line.index("http://"):].split()[0]
        server = Server(proc, url)
        deadline = time.monotonic() + 20
        while True:
            try:
                server.get("/api/info")
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        yield server
    finally:
        stop_server(proc)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop a ``treelab serve`` process as a user would (Ctrl-C), killing it if it does not end in 10 s."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def copy_db(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sibling_files(path: Path) -> list[str]:
    """The files beside ``path`` that share its name (``-wal``, ``-shm``, temporary files)."""
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name) and p != path)


def children_in_db(db: Path, moves: list[str]) -> dict[str, tuple[int, int, int]]:
    """``{move: (visits, wins, draws)}`` of the node at ``moves``, read with plain sqlite3."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    try:
        (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()
        for move in moves:
            (node,) = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (node, move)).fetchone()
        rows = conn.execute("SELECT move, nb_visit, nb_win, nb_draw FROM nodes WHERE parent_id = ?", (node,))
        return {m: (n, w, d) for m, n, w, d in rows}
    finally:
        conn.close()

