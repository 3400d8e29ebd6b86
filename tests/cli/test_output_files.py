"""The one rule of every file treelab writes through the real commands.

A regular file is written beside and moved into place; a symbolic link is followed and its target
written, the link kept; a device, FIFO or socket is refused in one line before any work, and left as
it was; ``-o -`` and a path that is standard output (``/dev/stdout``, a link to ``/proc/self/fd/1``)
write a stream to standard output. Commands that could block on a FIFO run in a subprocess with a
timeout, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab import StoreError
from treelab.errors import ModelFileError

TREELAB = [sys.executable, "-m", "treelab"]
TIMEOUT = 60


def trained(path: Path) -> Path:
    assert run("train", "tictactoe", "--db", str(path), "--games", "4", "--iterations", "60", "--seed", "1",
               "-q").exit_code == 0
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return trained(tmp_path / "t.db")


def cli(*args: object, cwd: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """``treelab ARGS`` in a subprocess (a hang fails after TIMEOUT s); ``limit``: the largest file it may write."""

    def fsize() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # Python ignores SIGXFSZ: writes fail EFBIG

    return subprocess.run([*TREELAB, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          preexec_fn=fsize if limit is not None else None)


def one_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode != 0, done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def is_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


WRITERS = [
    ("export", "rows", "{db}", "-o", "{out}"),
    ("export", "node-link", "{db}", "-o", "{out}"),
    ("export", "gml", "{db}", "-o", "{out}"),
    ("render", "{db}", "-o", "{out}.svg"),
    ("growth", "{db}", "-o", "{out}.png"),
    ("shape", "{db}", "-o", "{out}.png"),
    ("analyse", "tictactoe", "--iterations", "20", "--trace", "{out}"),
    ("analyse", "tictactoe", "--iterations", "20", "--trace", "{out}.gz"),
    ("converge", "tictactoe", "--iterations", "20", "--searches", "uct", "-o", "{out}.png"),
    ("fit", "{db}", "-o", "{out}.npz", "--epochs", "2", "--min-visits", "1"),
]


@pytest.mark.parametrize("command", WRITERS, ids=lambda c: " ".join(c[:2]))
def test_a_fifo_is_refused_in_one_line_and_never_blocks_or_replaced(tmp_path: Path, db: Path,
                                                                    command: tuple[str, ...]) -> None:
    out = tmp_path / "out"
    args = [a.format(db=db, out=out) for a in command]
    target = Path(args[args.index("-o") + 1] if "-o" in args else args[args.index("--trace") + 1])
    fifo(target)
    done = cli(*args, cwd=tmp_path)
    one_error(done, repr(str(target)), "named pipe (FIFO)", "regular file")
    assert is_fifo(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["t.db", target.name])  # nothing beside it


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_device_is_refused_and_stays_a_device(tmp_path: Path, db: Path, device: str) -> None:
    for args in (("export", "rows", db, "-o", device), ("analyse", "tictactoe", "--iterations", "5", "--trace",
                                                         device), ("fit", db, "-o", device, "--min-visits", "1")):
        assert_clean_error(run(*map(str, args)), repr(device), "character device")
        assert stat.S_ISCHR(os.stat(device).st_mode)


def test_a_private_device_node_is_refused(tmp_path: Path, db: Path) -> None:
    """``mknod mynull c 1 3``: a device node anywhere, not only in /dev."""
    node = tmp_path / "mynull"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD (root)")
    assert_clean_error(run("export", "node-link", str(db), "-o", str(node)), "mynull", "character device")
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_a_socket_is_refused(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "s.jsonl"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        assert_clean_error(run("export", "rows", str(db), "-o", str(path)), "socket")
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        server.close()


def test_a_link_is_followed_and_kept(tmp_path: Path, db: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real.name)
    assert run("export", "rows", str(db), "-o", str(link)).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == real.name
    assert json.loads(real.read_text().splitlines()[0]) == {"treelab_rows": 1, "game": "tictactoe"}
    dangling = tmp_path / "dangling.svg"
    dangling.symlink_to("drawn.svg")  # a link to a file not made yet: the file is made, the link kept
    assert run("render", str(db), "-o", str(dangling)).exit_code == 0
    assert dangling.is_symlink() and (tmp_path / "drawn.svg").read_text().lstrip().startswith("<")


def test_a_link_to_a_fifo_is_refused(tmp_path: Path, db: Path) -> None:
    pipe = fifo(tmp_path / "p")
    link = tmp_path / "l.jsonl"
    link.symlink_to(pipe)
    one_error(cli("export", "rows", db, "-o", link, cwd=tmp_path), "named pipe (FIFO)")
    assert link.is_symlink() and is_fifo(pipe)


def test_dash_writes_the_export_to_standard_output(tmp_path: Path, db: Path) -> None:
    done = cli("export", "rows", db, "-o", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows[0] == {"treelab_rows": 1, "game": "tictactoe"} and rows[1]["path"] == "" and len(rows) > 100
    assert "wrote -" in done.stderr  # the report on standard error: the stream stays clean
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.db"]


@pytest.mark.parametrize("spelling", ["/dev/stdout", "link-to-fd-1"])
def test_a_path_that_is_standard_output_is_written_as_a_stream_never_replaced(tmp_path: Path, db: Path,
                                                                             spelling: str) -> None:
    """``ln -s /proc/self/fd/1 out`` once replaced the link, and nothing reached standard output."""
    if spelling == "link-to-fd-1":
        (tmp_path / spelling).symlink_to("/proc/self/fd/1")
    done = cli("export", "rows", db, "-o", spelling, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["game"] == "tictactoe"
    if spelling == "link-to-fd-1":
        assert (tmp_path / spelling).is_symlink()
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_a_trace_to_standard_output(tmp_path: Path) -> None:
    done = cli("analyse", "tictactoe", "--iterations", "15", "--seed", "1", "--trace", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]  # the trace alone
    assert [r["simulation"] for r in records] == list(range(1, 16))
    assert "wrote 15 simulations to -" in done.stderr and "best move" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_model_to_standard_output_loads_back(tmp_path: Path, db: Path) -> None:
    done = subprocess.run([*TREELAB, "fit", str(db), "-o", "-", "--epochs", "2", "--min-visits", "1"], cwd=tmp_path,
                          capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    (tmp_path / "m.npz").write_bytes(done.stdout)
    assert treelab.load_model(tmp_path / "m.npz", "tictactoe").game == "tictactoe"
    assert b"fitted -" in done.stderr


def test_a_model_file_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    """Item 6: ``analyse --model fifo.npz`` blocked forever."""
    pipe = fifo(tmp_path / "fifo.npz")
    one_error(cli("analyse", "connect4", "--algorithm", "puct", "--model", pipe, "--iterations", "5", cwd=tmp_path),
              "fifo.npz", "named pipe (FIFO)")
    with pytest.raises(ModelFileError, match="named pipe"):
        treelab.load_model(pipe)
    assert is_fifo(pipe)


def test_library_writers_follow_the_rule(tmp_path: Path, db: Path) -> None:
    pipe = fifo(tmp_path / "p")
    rec = treelab.Recorder("tictactoe")
    rec.simulation("5", value=1.0)
    with pytest.raises(StoreError, match="named pipe"):
        rec.write(pipe)
    with pytest.raises(StoreError, match="named pipe"):
        treelab.trace("tictactoe", iterations=5, seed=1).write(pipe)
    drawing = fifo(tmp_path / "p.svg")
    with pytest.raises(StoreError, match="named pipe"):
        treelab.render(db, drawing)
    assert is_fifo(pipe) and is_fifo(tmp_path / "p.svg")
    assert rec.write(tmp_path / "r.jsonl") == 2


def test_a_full_disk_is_one_line_and_leaves_no_file(tmp_path: Path, db: Path) -> None:
    """``analyse --trace`` onto a full disk was an ``OSError`` traceback (a file size limit stands in for it)."""
    (tmp_path / "old.jsonl").write_text("kept\n")
    one_error(cli("analyse", "tictactoe", "--iterations", "300", "--trace", "old.jsonl", cwd=tmp_path, limit=4096),
              "old.jsonl", "free some space")
    one_error(cli("export", "rows", db, "-o", "old.jsonl", cwd=tmp_path, limit=65536), "old.jsonl")  # -shm: 32 KiB
    assert (tmp_path / "old.jsonl").read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl", "t.db"]


def test_messages_point_at_the_right_file(tmp_path: Path, db: Path) -> None:
    """Item 7: a missing or empty database, importing a file into itself, a trace into a missing folder."""
    assert_clean_error(run("export", "rows", str(tmp_path / "new.db"), "-o", str(tmp_path / "n.jsonl")),
                       "no such database", "new.db")
    (tmp_path / "empty.db").touch()
    assert_clean_error(run("export", "rows", str(tmp_path / "empty.db"), "-o", str(tmp_path / "n.jsonl")),
                       "empty.db", "not a treelab database")
    assert not (tmp_path / "n.jsonl").exists()
    rows = tmp_path / "same.jsonl"
    assert run("export", "rows", str(db), "-o", str(rows)).exit_code == 0
    result = run("import", "rows", str(rows), "--game", "tictactoe", "--db", str(rows))
    assert result.exit_code != 0 and "--db" in result.output and "picture" not in result.output
    result = run("analyse", "tictactoe", "--iterations", "5", "--trace", str(tmp_path / "nodir" / "x.jsonl"))
    assert_clean_error(result, "nodir/x.jsonl", "no such directory")
    assert ".part" not in result.output and ".tmp" not in result.output
