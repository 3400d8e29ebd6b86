"""A wheel that works where users install it: the built wheel, installed into a new virtual environment
without the development set or any extra, trains, draws and serves from another folder.

This catches what the editable development install hides: a file the package needs but does not ship (the
explorer's page, its static files), an import of a development or extra-only package on a plain path, a command
that reads something relative to the source tree. pip reaches the registry as configured on the machine.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from explorer_helpers import stop_server
from paths import ROOT

pytestmark = pytest.mark.slow


def _sh(*cmd: str | Path, cwd: Path, timeout: int = 900) -> str:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")})
    assert proc.returncode == 0, (cmd, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv holding the wheel built from the tracked sources (no extras, no dev group): its bin/."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    files = _sh("git", "ls-files", "-z", cwd=ROOT).split("\0")
    for name in (f for f in files if f and not f.startswith(("data/", "tests/", "benchmarks/", "notebooks/"))):
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_file():
            target.write_bytes((ROOT / name).read_bytes())
    wheels = base / "dist"
    _sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source, cwd=base)
    (wheel,) = wheels.glob("treelab-*.whl")
    venv = base / "venv"
    _sh(getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv, cwd=base)
    _sh(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=base)
    return venv / "bin"


def test_the_plain_install_has_no_dev_tool_and_no_extra(installed: Path, tmp_path: Path) -> None:
    freeze = _sh(installed / "python", "-m", "pip", "list", "--format=freeze", cwd=tmp_path)
    listed = {line.split("==")[0].lower() for line in freeze.splitlines()}
    assert "treelab" in listed
    assert not listed & {"pytest", "ruff", "mypy", "playwright", "ipython", "anywidget", "scikit-learn", "ray",
                         "open-spiel", "jupyterlab", "mkdocs"}, sorted(listed)
    probe = ("import atexit, sys; sys.argv = ['treelab', '--help']\nfrom treelab.cli import main\n"  # main() ends
             "atexit.register(lambda: print('IPython' in sys.modules))\nmain()")  # the process: its exit handlers run
    assert _sh(installed / "python", "-c", probe, cwd=tmp_path).strip().splitlines()[-1] == "False"


def test_train_and_render_from_another_folder(installed: Path, tmp_path: Path) -> None:
    out = _sh(installed / "treelab", "train", "tictactoe", "--db", "t.db", "--games", "4", "--iterations", "50",
              "--seed", "1", "--quiet", cwd=tmp_path)
    assert "trained 4 games of tictactoe" in out
    _sh(installed / "treelab", "render", "t.db", "--depth", "1", "-o", "t.svg", cwd=tmp_path)
    assert (tmp_path / "t.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    compiled = _sh(installed / "python", "-c", "import treelab.speedups as s; print(s.describe())", cwd=tmp_path)
    assert compiled.startswith("compiled"), compiled  # the wheel carries the C hot paths


def test_serve_answers_the_page_and_its_static_files(installed: Path, tmp_path: Path) -> None:
    _sh(installed / "treelab", "train", "tictactoe", "--db", "t.db", "--games", "2", "--iterations", "30",
        "--seed", "1", "--quiet", cwd=tmp_path)
    proc = subprocess.Popen([str(installed / "treelab"), "serve", "t.db", "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://" in line, (line, proc.stderr.read() if proc.stderr else "")
        host, port = line[line.index("http://") + 7:].split()[0].rstrip("/").split(":")

        def get(target: str) -> tuple[int, bytes]:
            deadline = time.monotonic() + 20
            while True:
                try:
                    conn = http.client.HTTPConnection(host, int(port), timeout=20)
                    conn.request("GET", target)
                    resp = conn.getresponse()
                    return resp.status, resp.read()
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

        status, page = get("/")
        assert status == 200 and b"<html" in page.lower()
        for name in ("explorer.js", "explorer.css", "stepper.js"):
            status, body = get(f"/static/{name}")
            assert status == 200 and len(body) > 100, name
        status, body = get("/api/node?path=5")
        assert status == 200 and json.loads(body)["path"] == "5"
    finally:
        stop_server(proc)
