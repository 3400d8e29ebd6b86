"""``benchmarks/opening_lock.py`` on a real learning loop's tree: its counts add up to the games logged.

A short Connect Four loop (:func:`treelab.learning_loop`, a few games, a refit) makes the file; the
benchmark's functions and its command line read it, and every count is checked against the file itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from paths import ROOT

import treelab
from treelab.learn.fitting import FitConfig
from treelab.oracle import solve

SCRIPT = ROOT / "benchmarks" / "opening_lock.py"
GAMES, ITERATIONS = 6, 30


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("opening_lock", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["opening_lock"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


lock = _script()


@pytest.fixture(scope="module")
def loop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lock")
    db = folder / "c4.db"
    treelab.learning_loop("connect4", db, folder / "c4.npz", GAMES, refit_every=3, iterations=ITERATIONS, seed=3,
                          fitting=FitConfig(min_visits=5, hidden=(16,), epochs=5), progress=False)
    return db


def _logged(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("SELECT moves FROM games ORDER BY id")]
    finally:
        conn.close()


def test_the_root_and_the_openings_add_up_to_the_games(loop_db: Path) -> None:
    before = hashlib.sha256(loop_db.read_bytes()).hexdigest()
    logged = _logged(loop_db)
    report = lock.measure(loop_db, bucket=4, depth1=True, solve_nodes=1000)
    assert report.games == len(logged) == GAMES and report.iterations == GAMES * ITERATIONS
    root = report.root
    assert {c.move for c in root.children} == set(range(1, 8))
    # each game's first search (a tree of its own) began by evaluating the empty board, making no child; every
    # other simulation of it chose a first move
    assert root.visits == root.children_visits + GAMES and root.selections == GAMES * (ITERATIONS - 1)
    assert {c.move: c.games for c in root.children} == {m: sum(g[0] == str(m) for g in logged) for m in range(1, 8)}
    assert root.games == GAMES
    # 1,000 positions solve no first move: the known values fill in, and the report says so
    assert "".join(lock.LETTERS[c.exact] for c in sorted(root.children, key=lambda c: c.move)) == "LLDWDLL"
    assert {c.source for c in root.children} == {"given"} and "1,000 positions" in root.note
    reply = report.lines[0]
    top = max(root.children, key=lambda c: (c.visits, c.selections))
    assert reply.moves == str(top.move) and reply.games == top.games
    assert sum(c.games for c in reply.children) == top.games and reply.visits <= top.visits
    assert [(b.first, b.last, b.games) for b in report.buckets] == [(1, 4, 4), (5, 6, 2)]
    for bucket in report.buckets:
        assert sum(bucket.first_moves.values()) == bucket.games
        assert sum(bucket.share(n) for n in bucket.first_moves.values()) == pytest.approx(1.0)
        assert sum(bucket.by_value.values()) == sum(bucket.results.values()) == bucket.games
        assert sum(bucket.prefixes.values()) == bucket.games
        assert sum(bucket.root_share.values()) == pytest.approx(1.0)
    last = report.buckets[-1].root_share  # the history row of the last game: the root as it is now
    assert last == pytest.approx({c.move: c.visits / root.children_visits for c in root.children})
    assert report.buckets[1].models == (1, 1)  # the games after the first refit played with version 1
    assert hashlib.sha256(loop_db.read_bytes()).hexdigest() == before


def test_exact_values_are_the_solvers_where_it_finishes(loop_db: Path) -> None:
    moves = max(_logged(loop_db), key=len)[:-4]  # a stored position a few moves before a game's end
    report = lock.measure(loop_db, lines=[moves], solve_nodes=100_000)
    line = report.lines[0]
    assert line.moves == moves and line.children
    values = solve("connect4", moves)
    assert {c.move: c.exact for c in line.children} == {c.move: values[c.move] for c in line.children}
    assert {c.source for c in line.children} == {"solved"} and not line.note


def test_the_sample_judges_the_fit_targets_per_class(loop_db: Path) -> None:
    report = lock.measure(loop_db, sample=6, sample_seconds=60, min_visits=3, depths=(22, 36), fit_min_visits=5,
                          max_nodes=300_000, seed=1, solve_nodes=0)  # late positions: quick solves
    sample = report.sample
    assert 0 < sample.drawn <= 6 and sample.judged + sample.over_budget <= sample.drawn <= sample.candidates
    assert sum(c.judged for c in sample.classes) == sample.judged > 0
    for row in sample.classes:
        assert row.policy_ok <= row.decisive <= row.judged and row.choice_ok <= row.decisive
        assert row.value_ok <= row.decided <= row.judged


def test_the_command_prints_tables_writes_json_and_refuses_bad_input(loop_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "lock.json"
    done = subprocess.run([sys.executable, str(SCRIPT), str(loop_db), "--bucket", "3", "--prefixes", "2",
                           "--solve-nodes", "0", "--json", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"## {loop_db}: {GAMES} logged games"
    assert lines[4].startswith("| move | visits | visit share | selections |")
    assert "### openings per 3 games" in lines and "### the 2 most played two-move openings per bucket" in lines
    assert any(line.startswith("Exact values not solved (--solve-nodes 0): ") for line in lines)
    assert lines[6].endswith(" (given) |")  # the known first-move values fill in
    data = json.loads(out.read_text())
    assert data["games"] == GAMES and data["root"]["selections"] == GAMES * (ITERATIONS - 1)
    assert [b["games"] for b in data["buckets"]] == [3, 3]
    assert sum(c["games"] for c in data["root"]["children"]) == GAMES
    for args, named in ((["--bucket", "0"], "--bucket 0"), (["--first-move-values", "WWW"], "'WWW'"),
                        (["--depths", "9-3"], "'9-3'"), (["--line", "4444444"], "4444444")):
        bad = subprocess.run([sys.executable, str(SCRIPT), str(loop_db), "--solve-nodes", "0", *args],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 1 and bad.stdout == "", args
        assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("Error: ") and named in bad.stderr, bad.stderr
    ttt = tmp_path / "ttt.db"
    tree = treelab.Tree("tictactoe")
    tree.record("5", winner=None)
    tree.save(ttt)
    other = subprocess.run([sys.executable, str(SCRIPT), str(ttt)], capture_output=True, text=True, timeout=60)
    assert other.returncode == 1 and other.stderr.startswith("Error: ") and "connect4" in other.stderr
    assert other.stderr.count("\n") == 1
