"""One command-line vocabulary: the database as DB or --db, a position as --moves or --path, defaults
shown one way, every number finite, and no output written over its input (real files, the real `dot`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_helpers import assert_clean_error, run

from treelab.cli import cli
from treelab.cli.options import FiniteFloat

COMMANDS = sorted(cli.list_commands(None))  # type: ignore[arg-type]
DATABASE_COMMANDS = ["compact", "growth", "info", "render", "shape", "stats"]
"""Commands whose subject is the database: DB positional, or --db."""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("vocabulary") / "ttt.db"
    result = run("train", "tictactoe", "--db", str(path), "--games", "4", "--iterations", "60", "--seed", "3", "-q")
    assert result.exit_code == 0, result.output
    return str(path)


def command(name: str) -> click.Command:
    found = cli.get_command(None, name)  # type: ignore[arg-type]
    assert found is not None
    return found


def options(name: str) -> list[click.Option]:
    return [p for p in command(name).params if isinstance(p, click.Option) and p.name != "help"]


def test_every_command_that_reads_a_database_takes_db() -> None:
    for name in COMMANDS:
        params = command(name).params
        opts = {o for p in params if isinstance(p, click.Option) for o in p.opts}
        positional = [p.name for p in params if isinstance(p, click.Argument)]
        if name in DATABASE_COMMANDS:
            assert "--db" in opts and positional == ["db"], name
        elif name in ("train", "analyse", "play"):
            assert "--db" in opts, name


@pytest.mark.parametrize("name", ["info", "stats"])
def test_db_positional_and_db_option_read_the_same(db: str, name: str) -> None:
    extra = ["--json"]
    positional = run(name, db, *extra)
    option = run(name, "--db", db, *extra)
    both = run(name, db, "--db", db, *extra)
    assert positional.exit_code == 0, positional.output
    assert json.loads(positional.output) == json.loads(option.output) == json.loads(both.output)


@pytest.mark.parametrize("name,out", [("render", "t.svg"), ("growth", "g.png"), ("shape", "s.png")])
def test_pictures_read_db_either_way(db: str, tmp_path: Path, name: str, out: str) -> None:
    first, second = tmp_path / f"a-{out}", tmp_path / f"b-{out}"
    assert run(name, db, "-o", str(first)).exit_code == 0
    result = run(name, "--db", db, "-o", str(second))
    assert result.exit_code == 0, result.output
    assert second.stat().st_size > 0
    if out.endswith(".svg"):
        assert first.read_text() == second.read_text()


def test_compact_takes_db_either_way(db: str, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    for args in ([str(copy)], ["--db", str(copy)]):
        result = run("compact", *args)
        assert result.exit_code == 0 and "bytes" in result.output


@pytest.mark.parametrize("name", DATABASE_COMMANDS)
def test_two_databases_or_none_is_a_usage_error(db: str, tmp_path: Path, name: str) -> None:
    out = ["-o", str(tmp_path / "x.png")] if name in ("growth", "shape", "render") else []
    other = str(tmp_path / "other.db")
    assert_clean_error(run(name, db, "--db", other, *out), repr(db), repr(other), "two databases")
    assert_clean_error(run(name, *out), "DB or --db")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["analyse", "stats", "render", "shape"])
def test_moves_and_path_are_one_option(name: str) -> None:
    opts = [o.opts for o in options(name) if o.name in ("path", "moves")]
    assert len(opts) == 1 and set(opts[0]) == {"--moves", "--path"}


def test_moves_and_path_give_the_same_answers(db: str, tmp_path: Path) -> None:
    stats = [json.loads(run("stats", db, flag, "5", "--json").output) for flag in ("--moves", "--path")]
    assert stats[0] == stats[1] and stats[0]["path"] == "5"
    found = [json.loads(run("analyse", "tictactoe", flag, "5", "--iterations", "200", "--seed", "4", "--json").output)
             for flag in ("--moves", "--path")]
    assert found[0] == found[1] and found[0]["moves"] == "5" and found[0]["to_move"] == 2
    drawn = []
    for flag in ("--moves", "--path"):
        out = tmp_path / f"{flag[2:]}.dot"
        assert run("render", db, flag, "5", "-o", str(out)).exit_code == 0
        drawn.append(out.read_text())
    assert drawn[0] == drawn[1] and '"5" [id="5"' in drawn[0]


def test_db_and_moves_spellings_in_real_processes(db: str, tmp_path: Path) -> None:
    """`treelab info --db X`, `stats --db X --moves 5`, `render X --moves 5 -o a.svg`, `analyse --path 5`."""
    treelab = [sys.executable, "-m", "treelab"]

    def call(*args: str) -> str:
        done = subprocess.run([*treelab, *args], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0 and done.stderr == "", (args, done.stderr)
        return done.stdout

    assert json.loads(call("info", "--db", db, "--json"))["game"] == "tictactoe"
    assert "subtree at 5" in call("stats", "--db", db, "--moves", "5")
    assert call("render", db, "--moves", "5", "-o", "a.svg").strip() == "wrote a.svg"
    assert (tmp_path / "a.svg").read_text().startswith("<?xml")
    assert json.loads(call("analyse", "tictactoe", "--path", "5", "--iterations", "100", "--json"))["moves"] == "5"


@pytest.mark.parametrize("name", COMMANDS)
def test_defaults_are_shown_one_way(name: str) -> None:
    """Every option with a default shows it as click's `[default: ...]`; none in words in its help."""
    text = run(name, "--help").output
    assert "[default: (" not in text
    shown = 0
    for opt in options(name):
        assert not re.search(r"\bdefault\b", opt.help or "", re.I), (name, opt.opts, opt.help)
        if opt.is_flag or opt.required or opt.name == "db_option":  # --db PATH stands for DB
            continue
        assert opt.default is not None or isinstance(opt.show_default, str), (name, opt.opts)
        assert opt.show_default is not False, (name, opt.opts)
        shown += 1
    assert text.count("[default:") >= shown


@pytest.mark.parametrize("name", COMMANDS)
def test_every_float_option_is_finite(name: str) -> None:
    for opt in options(name):
        if isinstance(opt.type, click.types.FloatParamType):
            assert isinstance(opt.type, FiniteFloat), (name, opt.opts)


@pytest.mark.parametrize("args", [
    ["analyse", "tictactoe", "--temperature"],
    ["analyse", "tictactoe", "--c"],
    ["analyse", "tictactoe", "--seconds"],
    ["train", "tictactoe", "--db", "{tmp}/t.db", "--temperature"],
    ["train", "tictactoe", "--db", "{tmp}/t.db", "--c"],
    ["play", "tictactoe", "--c"],
    ["render", "{db}", "-o", "{tmp}/x.png", "--dpi"],
    ["render", "{db}", "-o", "{tmp}/x.svg", "--c"],
    ["stats", "{db}", "--c"],
])
@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "1e400"])
def test_non_finite_numbers_are_refused(db: str, tmp_path: Path, args: list[str], bad: str) -> None:
    args = [a.replace("{tmp}", str(tmp_path)).replace("{db}", db) for a in args]
    assert_clean_error(run(*args, bad), repr(bad), "not a finite number", args[-1])
    assert list(tmp_path.iterdir()) == []


def test_arena_spec_says_an_overflowing_c_is_not_finite(tmp_path: Path) -> None:
    result = run("arena", "tictactoe", "--a", "uct:iterations=10,c=1e400", "--b", "random", "--games", "1")
    assert_clean_error(result, "c='1e400'", "not a finite number")


def _same_file_spellings(db: Path) -> list[str]:
    link = db.parent / f"link{db.suffix}"
    link.symlink_to(db)
    hard = db.parent / f"hard{db.suffix}"
    os.link(db, hard)
    return [str(db), f"{db.parent}/./{db.name}", os.path.relpath(db), str(link), str(hard)]


@pytest.mark.parametrize("name,suffix", [("render", ".svg"), ("render", ".png"), ("growth", ".png"),
                                         ("shape", ".pdf")])
def test_output_that_is_the_database_is_refused(db: str, tmp_path: Path, name: str, suffix: str) -> None:
    """`render same.db -o same.db` (named so its suffix is a picture's) would overwrite the tree."""
    same = tmp_path / f"tree{suffix}"
    shutil.copy(db, same)
    before = same.read_bytes()
    for out in _same_file_spellings(same):
        assert_clean_error(run(name, str(same), "-o", out), repr(out), "database")
        assert_clean_error(run(name, "--db", str(same), "-o", out), repr(out), "database")
    assert same.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["hard" + suffix, "link" + suffix, same.name])
    result = run(name, str(same), "-o", str(tmp_path / f"picture{suffix}"))  # another file is fine
    assert result.exit_code == 0, result.output
    assert same.read_bytes() == before


@pytest.mark.parametrize("name", ["render", "growth", "shape"])
def test_drawing_a_database_over_itself_leaves_it_whole(db: str, tmp_path: Path, name: str) -> None:
    """`render same.db -o same.db`, as it was reported: refused in one line, the database unchanged."""
    same = tmp_path / "same.db"
    shutil.copy(db, same)
    before = same.read_bytes()
    assert_clean_error(run(name, str(same), "-o", str(same)), repr(str(same)))
    assert same.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["same.db"]
    assert json.loads(run("info", str(same), "--json").output)["nodes"] > 0
