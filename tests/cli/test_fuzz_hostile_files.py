"""A seeded fuzz of the command line over hostile files and parameters (every command, every kind of file).

Each round picks a command that reads or writes a database (train, analyse, merge, info, stats,
render, shape, fit) and points it at one kind of file: a FIFO, a character device, a directory, a symbolic
link to an empty file, a hard link of a valid tree, a text file, a tree of another game, a missing
folder, a valid tree; or picks an OpenSpiel game with hostile parameters; or starts two or three
writers (trainers, workers, a saving search, a merge, a reader) at once on one file. Every outcome must be
clean: exit 0, or one ``Error:``/``Usage`` line with a non-zero exit; never a traceback; a special
file keeps its kind and inode; a valid tree refused keeps its bytes. The seed makes every round
replay; ``TREELAB_FUZZ_ROUNDS`` runs more of them.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import run

import treelab
from tests.play.test_parallel import AS_ASKED

ROUNDS = int(os.environ.get("TREELAB_FUZZ_ROUNDS", "30"))

COMMANDS: list[tuple[str, ...]] = [
    ("train", "connect4", "--db", "{db}", "--games", "1", "--iterations", "10", "-q"),
    ("train", "connect4", "--db", "{db}", "--games", "2", "--iterations", "10", "-q", "--workers", "2"),
    ("analyse", "connect4", "--db", "{db}", "--iterations", "10"),
    ("merge", "{db}", "{valid}"),
    ("merge", "{out}/m.db", "{db}", "{valid}"),
    ("info", "{db}"),
    ("stats", "{db}", "--json"),
    ("render", "{db}", "-o", "{out}/r.svg", "--depth", "1"),
    ("shape", "{db}", "-o", "{out}/s.png"),
    ("fit", "{db}", "-o", "{out}/m.npz", "--min-visits", "1", "--epochs", "1"),
]

OPENSPIEL = ["hex(board_size=1)", "hex(board_size=0)", "hex(board_size=-3)", "hex(board_size=65536)",
             "hex(board_size=100000)", "hex(board_size=abc)", "nosuchgame", "tic_tac_toe", "hex(board_size=3)",
             "kuhn_poker", "hex(", "hex(board_size=3", "breakthrough(rows=2,columns=2)"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _valid_tree(path: Path, game: str = "connect4", line: str = "4453") -> Path:
    tree = treelab.Tree(game)
    tree.record(line, winner=1)
    tree.record(line[:2], winner=2)
    tree.save(path)
    return path


def _kinds(folder: Path, valid: Path) -> dict[str, Callable[[], Path]]:
    """Makers of the hostile files, each returning the path a command is given."""

    def fifo() -> Path:
        path = folder / "pipe.db"
        os.mkfifo(path)
        return path

    def device() -> Path:
        path = folder / "null.db"
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return path

    def directory() -> Path:
        path = folder / "dir.db"
        path.mkdir()
        return path

    def link_to_empty() -> Path:
        (folder / "empty.db").touch()
        (folder / "link.db").symlink_to(folder / "empty.db")
        return folder / "link.db"

    def hard_link() -> Path:
        os.link(valid, folder / "hard.db")
        return folder / "hard.db"

    def text() -> Path:
        (folder / "hello.txt").write_text("hello\n")
        return folder / "hello.txt"

    def other_game() -> Path:
        return _valid_tree(folder / "ttt.db", "tictactoe", "5123")

    def missing_folder() -> Path:
        return folder / "no" / "such" / "c4.db"

    def copy_of_valid() -> Path:
        return Path(shutil.copyfile(valid, folder / "copy.db"))

    kinds = {f.__name__: f for f in (fifo, directory, link_to_empty, hard_link, text, other_game, missing_folder,
                                      copy_of_valid)}
    if os.geteuid() == 0:  # mknod of a device needs root (CI runs as root)
        kinds["device"] = device
    return kinds


def _clean(result: object, args: tuple[str, ...]) -> None:
    output = result.output  # type: ignore[attr-defined]
    assert "Traceback" not in output, (args, output)
    if result.exit_code != 0:  # type: ignore[attr-defined]
        lines = [line for line in output.strip().splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]
        assert len(errors) == 1, (args, output)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_commands_on_hostile_files_end_cleanly(tmp_path: Path, round_: int) -> None:
    rng = random.Random(2100 + round_)
    valid = _valid_tree(tmp_path / "valid.db")
    valid_digest = _digest(valid)
    folder = tmp_path / "work"
    folder.mkdir()
    kinds = _kinds(folder, valid)
    kind = rng.choice(sorted(kinds))
    target = kinds[kind]()
    before = target.lstat() if os.path.lexists(target) else None
    command = rng.choice(COMMANDS)
    args = tuple(a.format(db=target, valid=valid, out=folder) for a in command)
    result = run(*args)
    _clean(result, args)
    if kind in ("fifo", "device", "directory"):  # never opened as a database, never replaced
        after = target.lstat()
        assert before is not None and stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode), args
        assert after.st_ino == before.st_ino, args
        assert result.exit_code != 0, args
    if kind == "link_to_empty":
        assert target.is_symlink(), args  # written through, or refused: the link itself stays
    if kind == "hard_link" and command[0] == "merge" and command[1] == "{db}":
        assert result.exit_code != 0 and _digest(valid) == valid_digest, args  # never merged into itself
    if kind in ("text", "other_game") and result.exit_code != 0 and command[0] != "merge":
        assert "Error:" in result.output, args


@pytest.mark.parametrize("round_", range(max(4, ROUNDS // 3)))
@pytest.mark.openspiel
def test_openspiel_parameters_end_cleanly_and_write_nothing_when_refused(tmp_path: Path, round_: int) -> None:
    pytest.importorskip("pyspiel")
    rng = random.Random(3100 + round_)
    name = "openspiel:" + rng.choice(OPENSPIEL)
    db = tmp_path / "g.db"
    args = ("train", name, "--db", str(db), "--games", "1", "--iterations", "5", "-q")
    result = run(*args)
    _clean(result, args)
    if result.exit_code != 0:
        assert not db.exists(), args  # refused before anything was written


WRITERS: list[tuple[str, ...]] = [
    ("train", "connect4", "--db", "{db}", "--games", "{games}", "--iterations", "{iterations}", "-q",
     "--seed", "{seed}"),
    ("train", "connect4", "--db", "{db}", "--games", "{games}", "--iterations", "{iterations}", "-q",
     "--seed", "{seed}", "--workers", "2"),
    ("analyse", "connect4", "--db", "{db}", "--moves", "{moves}", "--iterations", "{iterations}", "--seed", "{seed}"),
    ("merge", "{db}", "{other}"),
    ("stats", "{db}", "--json"),
]
"""Commands started together on one file: trainers (one process or two workers), a search that
saves, a merge into it, and a reader."""


def _games_simulations(db: Path) -> int:
    """Iterations x moves summed over the logged games: what self-play added to the root."""
    game = treelab.find_game("connect4")
    return sum(g["iterations"] * len(game.parse(g["moves"])) for g in treelab.read_games(db))


@pytest.mark.parametrize("round_", range(max(3, ROUNDS // 6)))
def test_concurrent_writers_of_one_file_add_up_exactly(tmp_path: Path, round_: int) -> None:
    """Two or three writers started at once on one file (real processes) each end cleanly, and the
    file holds exactly what the successful ones added: the root's visits are iterations x moves of
    every logged game plus the iterations of every search that saved, every node names a logged
    game, and no node has fewer visits than its children together."""
    rng = random.Random(4100 + round_)
    db = tmp_path / "c4.db"
    if rng.random() < 0.7:  # a file that exists, or one the writers race to create
        treelab.train("connect4", db, 1, iterations=20, seed=round_, progress=False)
    other = tmp_path / "other.db"
    treelab.train("connect4", other, 2, iterations=15, seed=100 + round_, progress=False)
    picked = [rng.choice(WRITERS) for _ in range(rng.choice((2, 3)))]
    runs = []
    for i, command in enumerate(picked):
        moves = "".join(rng.choice("1234567") for _ in range(rng.randint(0, 3)))
        fields = {"db": db, "other": other, "games": rng.randint(1, 3), "iterations": rng.randint(10, 30),
                  "seed": rng.randint(0, 999) + i, "moves": moves}
        args = [a.format(**fields) for a in command]
        command_line = AS_ASKED if "--workers" in args else [sys.executable, "-m", "treelab"]  # workers, not advice
        proc = subprocess.Popen([*command_line, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        runs.append((args, proc))
    searched = 0
    for args, proc in runs:
        out, _ = proc.communicate(timeout=300)
        assert "Traceback" not in out, (args, out)
        if proc.returncode != 0:  # refused: one line, and it wrote nothing (checked by the sums below)
            assert len([line for line in out.splitlines() if line.startswith("Error:")]) == 1, (args, out)
        elif args[0] == "analyse":
            searched += int(args[args.index("--iterations") + 1])
    tree = treelab.load(db)
    assert tree.root.nb_visit == _games_simulations(db) + searched, picked
    for node in tree.root.descendants:
        assert node.nb_visit >= sum(child.nb_visit for child in node.children)
    conn = sqlite3.connect(db)
    try:
        orphans = conn.execute("SELECT count(*) FROM nodes WHERE created_game IS NOT NULL AND created_game "
                               "NOT IN (SELECT id FROM games)").fetchone()[0]
    finally:
        conn.close()
    assert orphans == 0, picked
