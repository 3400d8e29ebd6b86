"""The command line ends its process at once when a command is done (a large tree is never freed node by node),
with everything it wrote committed, its output flushed, its exit status kept and the exit handlers run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import treelab


def _probe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = (f"import atexit, sys\nsys.argv = ['treelab', *{args!r}]\nfrom treelab.cli import main\n"
            "atexit.register(lambda: print('exit handler ran'))\nmain()\nprint('main returned')\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_a_finished_command_ends_the_process_with_its_work_saved_and_its_output_flushed(tmp_path: Path) -> None:
    proc = _probe(["train", "tictactoe", "--db", "t.db", "--games", "3", "--iterations", "30", "--seed", "1",
                   "--quiet"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("trained 3 games of tictactoe") and lines[-1] == "exit handler ran"
    assert "main returned" not in proc.stdout  # main() ended the process
    assert treelab.info(tmp_path / "t.db")["games"] == 3
    assert not (tmp_path / "t.db-wal").exists() or (tmp_path / "t.db-wal").stat().st_size == 0


def test_the_exit_status_of_a_refused_command_is_kept(tmp_path: Path) -> None:
    proc = _probe(["train", "chess", "--db", "t.db"], tmp_path)
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "'chess'" in errors[0] and "Traceback" not in proc.stderr
    assert proc.stdout.strip() == "exit handler ran"
    assert not (tmp_path / "t.db").exists()


def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``treelab ... | head -1``: the reader goes away, the command still ends without a traceback."""
    treelab.train("tictactoe", tmp_path / "t.db", 40, iterations=200, seed=2, progress=False)
    assert treelab.info(tmp_path / "t.db")["nodes"] > 5_000  # more rows than a pipe holds
    script = f"{sys.executable} -m treelab export rows {tmp_path / 't.db'} -o - | head -1"
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr, proc.stderr
