"""The command line for train, analyse, play and info (click's CliRunner, real files)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

from treelab.cli import cli
from treelab.store.schema import SCHEMA_VERSION


@pytest.mark.parametrize("command", sorted(cli.list_commands(None)))  # type: ignore[arg-type]
def test_every_help_ends_with_an_example(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output
    after = result.output.rsplit("Example:", 1)[1]
    assert "Options:" not in after  # the example comes last, after the options
    assert after.strip().startswith("treelab " + command)


def test_train_info_analyse_session(tmp_path: Path) -> None:
    db = str(tmp_path / "c4.db")
    result = run("train", "connect4", "--db", db, "--games", "3", "--iterations", "50", "--seed", "1", "-q")
    assert result.exit_code == 0, result.output
    assert "trained 3 games" in result.output and "nodes" in result.output
    info = json.loads(run("info", db, "--json").output)
    assert info["game"] == "connect4" and info["games"] == 3 and info["schema_version"] == SCHEMA_VERSION
    nodes = sqlite3.connect(db).execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    assert info["nodes"] == nodes
    text = run("info", db).output
    assert "connect4" in text and f"{nodes:,}" in text
    result = run("analyse", "connect4", "--db", db, "--moves", "4,4", "--iterations", "300", "--seed", "2", "--json")
    data = json.loads(result.output)
    assert data["moves"] == "44" and data["iterations"] == 300
    after = json.loads(run("info", db, "--json").output)
    assert after["simulations"] == info["simulations"] + 300  # the search was saved into the database
    table = run("analyse", "connect4", "--moves", "4453", "--iterations", "200", "--seed", "1").output
    assert "best move" in table and "ucb1" in table


def test_python_dash_m_runs_the_cli() -> None:
    out = subprocess.run([sys.executable, "-m", "treelab", "analyse", "tictactoe", "--moves", "1425",
                          "--iterations", "200", "--seed", "1", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["best_move"] in ("3", "7")


@pytest.mark.parametrize(
    "args,needles",
    [
        (["analyse", "chess"], ["'chess'", "connect4"]),
        (["analyse", "connect4", "--moves", "4444444"], ["'4444444'", "full"]),
        (["analyse", "connect4", "--moves", "48"], ["'8'"]),
        (["analyse", "connect4", "--moves", "4x"], ["'x'"]),
        (["analyse", "tictactoe", "--moves", "11"], ["taken"]),
        (["analyse", "tictactoe", "--moves", "142536"], ["ended"]),
        (["analyse", "connect4", "--iterations", "-3"], ["-3"]),
        (["analyse", "connect4", "--seconds", "0"], ["0"]),
        (["train", "connect4", "--db", "{tmp}/new.db", "--games", "-1"], ["-1"]),
        (["train", "connect4", "--db", "{tmp}/new.db", "--opponent", "god"], ["god"]),
        (["info", "{tmp}/missing.db"], ["missing.db"]),
    ],
)
def test_bad_input_is_one_line_and_creates_nothing(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    result = run(*args)
    assert_clean_error(result, *needles)
    assert list(tmp_path.iterdir()) == []


def test_files_that_are_not_treelab_databases_are_left_alone(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("hello")
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    before = {p.name: p.read_bytes() for p in (text, other)}
    for path in (text, other):
        assert_clean_error(run("info", str(path)), path.name)
        assert_clean_error(run("train", "connect4", "--db", str(path), "--games", "1"), path.name)
        assert_clean_error(run("analyse", "connect4", "--db", str(path)), path.name)
    assert {p.name: p.read_bytes() for p in (text, other)} == before
    ttt = tmp_path / "ttt.db"
    assert run("train", "tictactoe", "--db", str(ttt), "--games", "1", "--iterations", "10", "-q").exit_code == 0
    snapshot = ttt.read_bytes()
    assert_clean_error(run("train", "connect4", "--db", str(ttt), "--games", "1"), "tictactoe")
    assert_clean_error(run("analyse", "connect4", "--db", str(ttt)), "tictactoe")
    assert ttt.read_bytes() == snapshot


def test_play_a_whole_game_with_bad_input_asked_again(tmp_path: Path) -> None:
    db = str(tmp_path / "ttt.db")
    # the human tries rubbish, a taken cell, then enough legal moves to finish the game
    answers = "\n".join(["x", "10", "5", "5", "1", "2", "3", "4", "6", "7", "8", "9"]) + "\n"
    result = run("play", "tictactoe", "--db", db, "--iterations", "300", "--seed", "1", input=answers)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "not a tictactoe cell" in out  # 'x' and '10' explained
    assert "cannot be played" in out or "taken" in out
    assert "AI plays" in out
    assert out.rstrip().splitlines()[-2] in ("draw", "the AI wins", "you win!") or "saved the tree" in out
    games = sqlite3.connect(db).execute("SELECT moves, winner, opponent FROM games").fetchall()
    assert len(games) == 1 and games[0][2] == "human"


def test_play_quit(tmp_path: Path) -> None:
    result = run("play", "connect4", "--iterations", "50", "--human", "2", input="q\n")
    assert result.exit_code == 0
    assert "AI plays" in result.output and "the tree was in memory only" in result.output.splitlines()[-1]


@pytest.mark.parametrize("stdin", ["", "4\n"], ids=["at-once", "after-a-move"])
def test_play_ended_by_end_of_input_says_whether_the_tree_was_saved(tmp_path: Path, stdin: str) -> None:
    """The real command with its input closed (as `treelab play ... < moves.txt` or Ctrl-D): one clean last line
    saying the file was not changed, no bare 'Aborted!', the file as it was."""
    db = tmp_path / "t.db"
    assert run("train", "tictactoe", "--db", str(db), "--games", "2", "--iterations", "20", "--seed", "1",
               "--quiet").exit_code == 0
    before = db.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "treelab", "play", "tictactoe", "--db", str(db), "--iterations",
                           "20", "--seed", "1"], input=stdin, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("end of input: quit before the game ended") and f"{db} was not changed" in last
    assert "Aborted" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
    assert db.read_bytes() == before


def test_analyse_with_puct_temperature_and_bad_choices(tmp_path: Path) -> None:
    result = run("analyse", "connect4", "--moves", "445566", "--algorithm", "puct", "--evaluator", "heuristic",
                 "--iterations", "200", "--seed", "1", "--json")
    data = json.loads(result.output)
    assert data["best_move"] in ("3", "7") and data["proven"] == "win"  # a winning move is proven at once
    sampled = {json.loads(run("analyse", "tictactoe", "--iterations", "300", "--temperature", "50", "--seed", str(s),
                              "--json").output)["best_move"] for s in range(12)}
    assert len(sampled) > 2  # a high temperature samples among the moves
    assert_clean_error(run("analyse", "connect4", "--algorithm", "alphabeta"), "alphabeta")
    assert_clean_error(run("analyse", "connect4", "--temperature", "-1"), "-1")


def test_compact_keeps_the_tree_and_refuses_other_files(tmp_path: Path) -> None:
    db = str(tmp_path / "c4.db")
    trained = run("train", "connect4", "--db", db, "--games", "4", "--iterations", "60", "--seed", "3", "-q")
    assert trained.exit_code == 0
    conn = sqlite3.connect(db)
    before = conn.execute("SELECT * FROM nodes ORDER BY id").fetchall()
    conn.close()
    size = json.loads(run("info", db, "--json").output)["size_bytes"]
    with sqlite3.connect(db) as conn:  # as files of earlier versions have it
        conn.execute("CREATE INDEX nodes_parent ON nodes (parent_id)")
    result = run("compact", db)
    assert result.exit_code == 0 and "bytes" in result.output
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT * FROM nodes ORDER BY id").fetchall() == before
    assert [row[1] for row in conn.execute("PRAGMA index_list(nodes)")] == ["nodes_parent_move"]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    facts = json.loads(run("info", db, "--json").output)
    assert facts["size_bytes"] <= size
    assert facts["bytes_per_node"] == pytest.approx(facts["size_bytes"] / len(before), 0.01)
    text = tmp_path / "notes.db"
    text.write_text("not a database")
    assert_clean_error(run("compact", str(text)), "notes.db")
    assert text.read_text() == "not a database"


def test_version_says_which_hot_paths_run() -> None:
    from treelab import speedups

    result = run("--version")
    assert result.exit_code == 0
    assert "treelab 0.1.0" in result.output and speedups.describe() in result.output


def test_choice_ucb1_plays_the_best_ucb1_score(tmp_path: Path) -> None:
    data = json.loads(run("analyse", "connect4", "--choice", "ucb1", "--iterations", "300", "--seed", "1",
                          "--json").output)
    best = max(data["children"], key=lambda k: k["ucb1"])
    assert data["best_move"] == best["move"]
    result = run("train", "tictactoe", "--db", str(tmp_path / "t.db"), "--games", "2", "--iterations", "50",
                 "--choice", "ucb1", "--seed", "1", "-q")
    assert result.exit_code == 0 and "trained 2 games" in result.output
    assert_clean_error(run("analyse", "connect4", "--choice", "random"), "random")


def test_the_lazy_group_knows_every_command() -> None:
    """Every command of the command modules is listed in the group's table, under its own module."""
    from treelab.cli import (
        _COMMANDS,
        analyse_cmd,
        cli,
        compact_cmd,
        converge_cmd,
        explorer,
        fit_cmd,
        info_cmd,
        interop_cmd,
        match,
        merge_cmd,
        play_cmd,
        train_cmd,
        view,
    )

    modules = (train_cmd, analyse_cmd, play_cmd, info_cmd, compact_cmd, view, match, explorer, merge_cmd, fit_cmd,
               converge_cmd, interop_cmd)
    listed = {c.name: m.__name__.rsplit(".", 1)[1] for m in modules for c in m.COMMANDS}
    assert listed == _COMMANDS
    assert cli.list_commands(None) == sorted(listed)  # type: ignore[arg-type]


def test_a_command_imports_only_what_it_needs() -> None:
    """`treelab analyse` starts without the drawing, storage or match code (start-up time)."""
    probe = (
        "import sys; from treelab.cli import main; sys.argv = ['treelab', 'analyse', 'ttt', '--iterations', '5'];"
        "import atexit; atexit.register(lambda: print(sorted(m for m in sys.modules if m.startswith("
        "('treelab.cli.', 'sqlite_utils', 'graphviz', 'numpy', 'treelab.store.persistence', 'treelab.view.dot')))));"
        "main()"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['treelab.cli.analyse_cmd', 'treelab.cli.options']"
