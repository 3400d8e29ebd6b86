"""Hostile input files, each case as it was reported, through the real commands.

Counts past 64 bits are refused before anything is written (also as the sum of two imports or a
merge); a line too long, JSON nested too deep, text that is not UTF-8, a CSV field too long, broken
GML, a damaged trace or model, ``/dev/zero`` or a gzip bomb as input are each one ``Error:`` line
with a non-zero exit, quickly and in bounded memory, and the database is left byte for byte as it was.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import resource
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab.errors import ImportFormatError, TraceError

TREELAB = [sys.executable, "-m", "treelab"]
MAXINT = 2**63 - 1


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rows_file(path: Path, *rows: dict[str, object], game: str = "tictactoe") -> Path:
    path.write_text("\n".join(json.dumps(r) for r in [{"treelab_rows": 1, "game": game}, *rows]) + "\n")
    return path


def imported(rows: Path, db: Path) -> object:
    return run("import", "rows", str(rows), "--game", "tictactoe", "--db", str(db))


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    db = tmp_path / "t.db"
    assert run("train", "tictactoe", "--db", str(db), "--games", "2", "--iterations", "30", "--seed", "1",
               "-q").exit_code == 0
    return db


# counts that cannot overflow


def test_importing_the_largest_count_twice_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    """A ``maxint.jsonl`` of the largest count, imported twice: the second import once stored a REAL (1.8e19) root."""
    rows = rows_file(tmp_path / "maxint.jsonl", {"path": "", "visits": MAXINT}, {"path": "5", "visits": 1})
    db = tmp_path / "m.db"
    assert imported(rows, db).exit_code == 0
    before = digest(db)
    assert_clean_error(imported(rows, db), "m.db", "past 9,223,372,036,854,775,807", "nothing was written")
    assert digest(db) == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") or p.name.endswith(("-wal", "-journal"))]
    stats = run("stats", str(db), "--json")
    assert stats.exit_code == 0 and json.loads(stats.output)["simulations"] == MAXINT
    small = rows_file(tmp_path / "one.jsonl", {"path": "", "visits": 1})  # one more visit overflows the root too
    assert_clean_error(imported(small, db), "past")
    assert digest(db) == before


def test_merging_two_trees_whose_sum_overflows_is_refused(tmp_path: Path) -> None:
    rows = rows_file(tmp_path / "big.jsonl", {"path": "", "visits": MAXINT - 5}, {"path": "5", "visits": 3})
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    assert imported(rows, a).exit_code == 0 and imported(rows, b).exit_code == 0
    out = tmp_path / "out.db"
    assert_clean_error(run("merge", str(out), str(a), str(b)), "past")
    assert not out.exists()
    before = digest(a)
    assert_clean_error(run("merge", str(a), str(b)), "past")
    assert digest(a) == before


@pytest.mark.parametrize("visits", ["2**70", "1e300", "-1", "1e19"])
@pytest.mark.parametrize("fmt", ["rows", "node-link"])
def test_a_count_past_64_bits_is_one_line(tmp_path: Path, fmt: str, visits: str) -> None:
    value = eval(visits)  # the test's own constants
    if fmt == "rows":
        source = rows_file(tmp_path / "r.jsonl", {"path": "", "visits": value})
    else:
        source = tmp_path / "g.json"
        source.write_text(json.dumps({"graph": {"game": "tictactoe"}, "nodes": [{"path": "", "visits": value}]}))
    db = tmp_path / "x.db"
    assert_clean_error(run("import", fmt, str(source), "--game", "tictactoe", "--db", str(db)), "visits",
                       str(source))
    assert not db.exists()


# one line, never a traceback


@pytest.mark.parametrize("proven", ["--1", "²", "01", "+1"])
def test_a_proof_that_is_no_number_is_one_line(tmp_path: Path, proven: str) -> None:
    rows = rows_file(tmp_path / "p.jsonl", {"path": "", "visits": 2}, {"path": "5", "visits": 2, "proven": proven})
    assert_clean_error(imported(rows, tmp_path / "x.db"), "proven", repr(proven))


@pytest.mark.parametrize("fmt", ["rows", "node-link", "gml"])
def test_text_that_is_not_utf8_is_one_line(tmp_path: Path, fmt: str) -> None:
    source = tmp_path / "latin1.txt"
    source.write_bytes(b'{"treelab_rows": 1, "game": "tictactoe"}\n{"path": "", "visits": 1, "x": "\xe9\xff"}\n')
    assert_clean_error(run("import", fmt, str(source), "--game", "tictactoe", "--db", str(tmp_path / "x.db")),
                       "UTF-8", "latin1.txt")
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(("text", "needle"), [
    ('graph [ game "tictactoe" node [ path "" visits 1.2.3 ] ]', "1.2.3"),
    ("graph 5", "no complete 'graph"),
    ("graph [ node 5 ]", "node 1"),
])
def test_broken_gml_is_one_line(tmp_path: Path, text: str, needle: str) -> None:
    source = tmp_path / "g.gml"
    source.write_text(text)
    assert_clean_error(run("import", "gml", str(source), "--game", "tictactoe", "--db", str(tmp_path / "x.db")),
                       needle, "g.gml")


def test_a_csv_field_too_long_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "r.csv"
    source.write_text("# treelab rows: game=tictactoe\npath,visits\n\"" + "5" * 200_000 + "\",1\n")
    assert_clean_error(imported(source, tmp_path / "x.db"), "r.csv", "row 3")


@pytest.mark.parametrize("fmt", ["rows", "node-link", "trace"])
def test_json_nested_100000_levels_is_one_line(tmp_path: Path, fmt: str) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    source = tmp_path / "deep.json"
    if fmt == "rows":
        source.write_text('{"treelab_rows": 1, "game": "tictactoe"}\n{"path": "", "visits": ' + deep + "}\n")
        result = imported(source, tmp_path / "x.db")
    elif fmt == "node-link":
        source.write_text('{"nodes": ' + deep + "}")
        result = run("import", fmt, str(source), "--game", "tictactoe", "--db", str(tmp_path / "x.db"))
    else:
        source.write_text(deep + "\n")
        result = run("converge", "tictactoe", "--trace", str(source))
    assert_clean_error(result, "deep.json", "nested too deeply")


def test_a_trace_whose_path_outruns_its_backup_is_one_line(tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    assert run("analyse", "tictactoe", "--iterations", "5", "--seed", "1", "--trace", str(good)).exit_code == 0
    records = [json.loads(line) for line in good.read_text().splitlines()]
    records[2]["path"] = [*records[2]["path"], "1", "2", "3"]  # longer than its backup steps
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert_clean_error(run("converge", "tictactoe", "--trace", str(bad)), "record 3", "backup")
    with pytest.raises(TraceError, match="record 3"):
        treelab.read_trace(bad)
    assert run("converge", "tictactoe", "--trace", str(good)).exit_code == 0


def _model_with(path: Path, source: Path, **meta: object) -> Path:
    with np.load(source) as archive:
        arrays = {k: archive[k] for k in archive.files}
    info = json.loads(str(arrays["meta"]))
    info.update(meta)
    arrays["meta"] = np.array(json.dumps(info))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())
    return path


@pytest.mark.parametrize("first_move", [-1000, 0])
def test_a_model_with_a_wrong_first_move_is_one_line(tmp_path: Path, small_db: Path, first_move: int) -> None:
    """``meta.first_move`` -1000 was an IndexError; 0 was read silently, every prior shifted by one."""
    model = tmp_path / "m.npz"
    assert run("fit", str(small_db), "-o", str(model), "--epochs", "2", "--min-visits", "1").exit_code == 0
    bad = _model_with(tmp_path / "bad.npz", model, first_move=first_move)
    assert_clean_error(run("analyse", "tictactoe", "--algorithm", "puct", "--model", str(bad), "--iterations", "5"),
                       "bad.npz", "not a treelab model file")
    assert zipfile.is_zipfile(bad)


def test_a_model_that_unpacks_to_too_much_is_refused_before_unpacking(tmp_path: Path, small_db: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from treelab.learn import model as models

    out = tmp_path / "m.npz"
    assert run("fit", str(small_db), "-o", str(out), "--epochs", "2", "--min-visits", "1").exit_code == 0
    with zipfile.ZipFile(out) as packed:
        size = sum(info.file_size for info in packed.infolist())
    monkeypatch.setattr(models, "MAX_MODEL_BYTES", size - 1)  # a zip bomb, as far as the check can tell
    assert_clean_error(run("analyse", "tictactoe", "--algorithm", "puct", "--model", str(out), "--iterations", "5"),
                       "m.npz", f"unpacks to {size:,} bytes")


def test_an_mctx_child_index_out_of_range_is_an_import_error() -> None:
    kids = -np.ones((1, 3, 9), dtype=np.int32)
    kids[0, 0, 4], kids[0, 1, 0] = 1, 7  # node 7 of a 3-node tree
    tree = {"node_visits": np.array([[3, 2, 1]]), "node_values": np.zeros((1, 3)), "children_index": kids,
            "children_prior_logits": np.zeros((1, 3, 9)), "children_rewards": np.zeros((1, 3, 9)),
            "children_discounts": -np.ones((1, 3, 9))}
    with pytest.raises(ImportFormatError, match="children_index 7"):
        treelab.from_mctx(tree, "tictactoe")
    with pytest.raises(ImportFormatError, match="batch 4"):
        treelab.from_mctx(tree, "tictactoe", batch=4)


# bounded memory


def cli(*args: object, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    done = subprocess.run([*TREELAB, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)
    return done, time.perf_counter() - started


def one_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_a_gzip_bomb_trace_stops_at_the_first_long_line_in_bounded_memory(tmp_path: Path) -> None:
    """A few MB of gzip holding 1 GiB of NUL bytes (the reported one had 6 GiB): once a MemoryError traceback."""
    bomb = tmp_path / "bomb.jsonl.gz"
    block = bytes(1 << 24)
    with gzip.open(bomb, "wb", compresslevel=1) as out:
        for _ in range(64):
            out.write(block)
    done, seconds = cli("converge", "tictactoe", "--moves", "15", "--trace", bomb, cwd=tmp_path)
    one_error(done, "bomb.jsonl.gz", "longer than")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the largest child so far
    assert peak < 700e6, peak  # one line of at most 16 Mi characters, not the gigabyte
    assert seconds < 60
    with pytest.raises(TraceError, match="longer than"):
        treelab.read_trace(bomb)


def test_gzip_bombs_of_newlines_or_of_records_stop_in_one_line(tmp_path: Path) -> None:
    """Blank lines treelab never writes, and records unpacking to far more than a trace's usual 12.5 times."""
    lines = tmp_path / "lines.jsonl.gz"
    with gzip.open(lines, "wb", compresslevel=1) as out:
        out.write(b"\n" * (1 << 26))
    started = time.perf_counter()
    with pytest.raises(TraceError, match="blank lines in a row"):
        treelab.read_trace(lines)
    assert time.perf_counter() - started < 5
    records = tmp_path / "records.jsonl.gz"
    record = {"game": "tictactoe", "position": "", "path": [], "expanded": None, "playout": [], "winner": None,
              "levels": [], "backup": [[1, 0, 1, 1]], "simulation": 0}
    line = json.dumps({**record, "simulation": 123456789}).replace("123456789", "%d") + "\n"
    with gzip.open(records, "wt", compresslevel=6) as out:
        out.write("".join(line % n for n in range(1, 250_000)))
    unpacked = len(line) * 250_000
    assert max(os.path.getsize(records) * 25, 1 << 24) < unpacked  # past the 16 MiB floor and 25 times its size
    with pytest.raises(TraceError, match="gzip bomb"):
        treelab.read_trace(records)


@pytest.mark.parametrize("fmt", ["rows", "gml", "node-link"])
def test_a_link_to_dev_zero_is_one_line_at_once(tmp_path: Path, fmt: str) -> None:
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    done, seconds = cli("import", fmt, zero, "--game", "tictactoe", "--db", tmp_path / "z.db", cwd=tmp_path)
    one_error(done, "zero.jsonl")
    assert seconds < 20 and not (tmp_path / "z.db").exists()


def test_rows_out_of_order_through_a_pipe_say_so(tmp_path: Path) -> None:
    """Item 7: the second read of a pipe once said "the CSV header '' lacks 'path'"."""
    pipe = tmp_path / "rows.jsonl"
    os.mkfifo(pipe)
    text = "".join(json.dumps(r) + "\n" for r in [{"path": "5", "visits": 1}, {"path": "", "visits": 1}])

    def feed() -> None:
        with open(pipe, "w") as out:
            out.write(text)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    assert_clean_error(imported(pipe, tmp_path / "x.db"), "depth-first order", "rows.jsonl", "regular file")
    writer.join(timeout=10)
    assert not (tmp_path / "x.db").exists()


def test_graph_errors_name_the_file_not_rows(tmp_path: Path) -> None:
    """Item 7: node-link and GML errors once said ``rows: row 83``."""
    source = tmp_path / "g.json"
    source.write_text(json.dumps({"graph": {"game": "tictactoe"}, "nodes": [
        {"path": "", "visits": 2}, {"path": "5", "visits": 1}, {"path": "5,5", "visits": 1}]}))
    result = run("import", "node-link", str(source), "--game", "tictactoe", "--db", str(tmp_path / "x.db"))
    assert_clean_error(result, str(source), "row 3", "not legal")
    assert "rows:" not in result.output
