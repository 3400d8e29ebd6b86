"""A seeded fuzz of valid databases: rows, meta values, byte flips, truncation.

Each round copies one valid database, damages it one way, and runs the commands that read it and
``load``. Every outcome must be a clean one: an answer (exit 0, and for ``load`` a tree whose root
visits are at least its children's), or one ``Error:`` line with a non-zero exit; never a traceback,
and the damaged file is never changed by a refusal. The seed makes every round replay;
``TREELAB_FUZZ_ROUNDS`` runs more of them.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import run

import treelab
from treelab import TreelabError

ROUNDS = int(os.environ.get("TREELAB_FUZZ_ROUNDS", "24"))
COLUMNS = ("parent_id", "move", "depth", "nb_visit", "nb_win", "nb_draw", "proven", "created_game")
VALUES: list[object] = [-5, -1, 0, 1, 2, 5, 2**62, -(2**63), 1.5, float("inf"), "abc", "Z", "", "7", None,
                        b"\x00\xff", "4" * 500]
META_KEYS = ("c", "generation", "depth_counts", "schema_version", "game", "tree_id")
COMMANDS = [
    ("info", "{db}"), ("stats", "{db}", "--json"), ("render", "{db}", "-o", "{out}/r.svg", "--depth", "2"),
    ("shape", "{db}", "-o", "{out}/s.png"), ("growth", "{db}", "-o", "{out}/g.png"),
    ("analyse", "connect4", "--db", "{db}", "--iterations", "15", "--seed", "1"),
]


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("fuzz") / "valid.db"
    tree = treelab.Tree("connect4")
    for seed in range(4):
        treelab.search(tree, "", limit=treelab.Limit(iterations=150), rng=seed)
        treelab.save(tree, db, games=[{"moves": "4" * (seed + 1)}])
    return db


def damage(db: Path, rng: random.Random) -> str:
    """Damage ``db`` one random way; return what was done."""
    kind = rng.choice(["row", "row", "meta", "flip", "truncate"])
    if kind in ("row", "meta"):
        conn = sqlite3.connect(db, isolation_level=None)
        try:
            if kind == "row":
                column, value = rng.choice(COLUMNS), rng.choice(VALUES)
                nid = rng.randint(1, conn.execute("SELECT max(id) FROM nodes").fetchone()[0])
                try:
                    conn.execute(f"UPDATE nodes SET {column} = ? WHERE id = ?", (value, nid))
                except sqlite3.Error as exc:  # NOT NULL, unique: the file stays valid
                    return f"row {column}={value!r} refused by SQLite ({exc})"
                return f"node {nid} {column}={value!r}"
            key, value = rng.choice(META_KEYS), rng.choice(VALUES)
            conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
            return f"meta {key}={value!r}"
        finally:
            conn.close()
    data = bytearray(db.read_bytes())
    if kind == "flip":
        spots = [rng.randrange(100, len(data)) for _ in range(rng.choice([1, 4, 32]))]
        for at in spots:
            data[at] ^= 1 << rng.randrange(8)
        db.write_bytes(bytes(data))
        return f"flipped bits at {spots[:4]}..."
    cut = rng.randrange(100, len(data))
    db.write_bytes(bytes(data[:cut]))
    return f"truncated to {cut} bytes"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_damaged_databases_meet_clean_errors_or_correct_answers(valid: Path, tmp_path: Path, round_: int) -> None:
    rng = random.Random(1400 + round_)
    db = tmp_path / "x.db"
    shutil.copy(valid, db)
    what = damage(db, rng)
    for command in COMMANDS:
        before = digest(db)
        result = run(*[a.format(db=db, out=tmp_path) for a in command])
        assert "Traceback" not in result.output, (what, command, result.output)
        if result.exit_code:
            lines = result.output.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("Error: "), (what, command, result.output)
            assert digest(db) == before, (what, command)
    try:
        tree = treelab.load(db)
    except TreelabError:
        return
    root = tree.root
    assert root.nb_visit >= sum(k.nb_visit for k in root.children_view) or "nb_visit" in what, what
    assert all(isinstance(n.nb_visit, int) and n.nb_visit >= 0 for n in (root, *root.descendants)), what
