"""Read-only media and full disks, on real file systems where the machine allows.

As root, a read-only directory is a read-only bind mount and a full disk a 1 MiB tmpfs; a
read-only file is read by the ``nobody`` user (root may write any file). Where mounting or
switching users is not allowed, those tests skip with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
TREELAB = [sys.executable, "-m", "treelab"]
READS = [("info", "{db}"), ("stats", "{db}", "--json"), ("render", "{db}", "-o", "{out}/t.svg")]


def trained(path: Path, iterations: int = 300) -> Path:
    tree = treelab.Tree("connect4")
    for seed in range(3):
        treelab.search(tree, "", limit=treelab.Limit(iterations=iterations), rng=seed)
    treelab.save(tree, path, games=[{"moves": "4"}, {"moves": "44"}])
    return path


@contextlib.contextmanager
def mounted(args: list[str], target: Path) -> Iterator[Path]:
    target.mkdir(exist_ok=True)
    done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True, check=False)
    if done.returncode:
        pytest.skip(f"cannot mount here ({done.stderr.strip() or 'not allowed'})")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


@contextlib.contextmanager
def read_only(folder: Path, tmp_path: Path) -> Iterator[Path]:
    """``folder`` seen through a read-only bind mount (root), or made read-only (others)."""
    if ROOT:
        with mounted(["--bind", str(folder)], tmp_path / "ro") as view:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
            yield view
    else:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)


def test_reads_work_in_a_read_only_directory_and_leave_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    trained(data / "t.db")
    out = tmp_path / "out"
    out.mkdir()
    with read_only(data, tmp_path) as view:
        db = view / "t.db"
        for command in READS:
            result = run(*[a.format(db=db, out=out) for a in command])
            assert result.exit_code == 0, result.output
        assert treelab.load(db).root.nb_visit == 900
        assert sorted(p.name for p in view.iterdir()) == ["t.db"]
        # a write says what is true: the medium is read-only (not "if a writer crashed")
        result = run("train", "connect4", "--db", str(db), "--games", "1", "--iterations", "10", "-q")
        assert_clean_error(result, "read-only")
    assert sorted(p.name for p in data.iterdir()) == ["t.db"]


def test_reads_of_a_read_only_file_leave_no_wal_or_shm() -> None:
    open_to_all = Path(tempfile.mkdtemp(prefix="treelab-ro-"))  # pytest's folders are private to root
    open_to_all.chmod(0o755)
    try:
        read_only_file(open_to_all / "shared")
    finally:
        shutil.rmtree(open_to_all)


def read_only_file(folder: Path) -> None:
    folder.mkdir()
    db = trained(folder / "t.db")
    db.chmod(0o444)
    if ROOT:
        if shutil.which("setpriv") is None:
            pytest.skip("root, and no setpriv to read as another user")
        folder.chmod(0o777)
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    else:
        prefix = []
    for command in (["info", str(db)], ["stats", str(db), "--json"], ["render", str(db), "-o", str(folder / "t.svg")]):
        done = subprocess.run([*prefix, *TREELAB, *command], capture_output=True, text=True, check=False)
        if done.returncode and "Permission denied" in done.stderr and ROOT:
            pytest.skip(f"the nobody user cannot run this checkout: {done.stderr.strip()[:100]}")
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["t.db", "t.svg"]


@pytest.mark.parametrize("command", [
    ("render", "{db}", "-o", "{out}/big.svg", "--depth", "3"),
    ("render", "{db}", "-o", "{out}/big.png", "--depth", "3"),
    ("growth", "{db}", "-o", "{out}/growth.png"),
    ("shape", "{db}", "-o", "{out}/shape.png"),
])
def test_a_full_disk_is_one_line_and_leaves_no_file(tmp_path: Path, command: tuple[str, ...]) -> None:
    db = trained(tmp_path / "t.db", iterations=1_500)
    if not ROOT:
        pytest.skip("a small tmpfs needs root (mount)")
    with mounted(["-t", "tmpfs", "-o", "size=16k", "tmpfs"], tmp_path / "full") as full:
        (full / "filler").write_bytes(b"\0" * 12_000 if command[0] == "render" else b"")
        filler = full / "filler"
        with contextlib.suppress(OSError), filler.open("ab") as fh:  # fill what is left to the last block
            while True:
                fh.write(b"\0" * 1024)
                fh.flush()
        result = run(*[a.format(db=db, out=full) for a in command])
        assert_clean_error(result, "No space left on device")
        assert sorted(p.name for p in full.iterdir()) == ["filler"]


def test_growth_with_a_huge_window_draws_all_games(tmp_path: Path) -> None:
    """``growth --window 99999999999`` asked numpy for 745 GiB; a window past the games is all of them."""
    db = trained(tmp_path / "t.db")
    result = run("growth", str(db), "-o", str(tmp_path / "g.png"), "--window", "99999999999")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
