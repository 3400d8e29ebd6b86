"""``treelab serve``: bad input ends in one line and a non-zero exit, before anything is served."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from explorer_helpers import SAMPLE_C4, SAMPLE_TTT, copy_db, digest, serving, sibling_files

from treelab.cli import cli


def _one_line_error(args: list[str], needle: str) -> None:
    out = CliRunner().invoke(cli, ["serve", *args, "--no-browser"])
    assert out.exit_code != 0, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0], out.output


def test_missing_file(tmp_path: Path) -> None:
    _one_line_error([str(tmp_path / "nope.db")], "no such database")
    assert not (tmp_path / "nope.db").exists()


def test_not_a_treelab_database(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("not sqlite\n")
    _one_line_error([str(text)], "notes.db")
    assert text.read_text() == "not sqlite\n"
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.commit()
    conn.close()
    before = digest(other)
    _one_line_error([str(other)], "other.db")
    assert digest(other) == before


def test_two_games_cannot_be_compared(tmp_path: Path) -> None:
    a = copy_db(SAMPLE_C4, tmp_path / "a.db")
    _one_line_error([str(a), "--compare", str(SAMPLE_TTT)], "compare two trees of one game")
    _one_line_error([str(a), "--compare", str(tmp_path / "missing.db")], "no such database")


def test_busy_port() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        _one_line_error([str(SAMPLE_C4), "--port", str(port)], f"port {port!r} on '127.0.0.1' is busy")


@pytest.mark.parametrize("host", ["no-such-host.invalid", "999.1.1.1"])
def test_bad_host(host: str) -> None:
    _one_line_error([str(SAMPLE_C4), "--host", host], repr(host))


def test_bad_port_value() -> None:
    out = CliRunner().invoke(cli, ["serve", str(SAMPLE_C4), "--port", "70000", "--no-browser"])
    assert out.exit_code == 2 and "70000" in out.output


def test_serves_on_localhost_by_default_and_stops_cleanly(tmp_path: Path) -> None:
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    before, files = digest(db), sibling_files(db)
    with serving(str(db)) as srv:
        assert srv.host == "127.0.0.1"
        status, data = srv.json("/api/info")
        assert status == 200 and data["db"] == str(db)
    assert srv.proc.returncode == 0
    assert digest(db) == before and sibling_files(db) == files
