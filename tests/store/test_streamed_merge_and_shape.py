"""``treelab shape`` and ``treelab merge`` stream: the same results as the in-memory versions they
replaced, on random trees, whatever the chunk sizes; and a killed merge leaves OUT as it was."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_games import random_game

import treelab
from treelab.analysis.arrays import TreeArrays
from treelab.analysis.shape import layout, levels, p1_mean, plot_icicle, plot_sunburst, stream_levels
from treelab.mcts.uct import Limit, search
from treelab.store import merging, rows
from treelab.store import merging as increments
from treelab.store.binding import last_game
from treelab.store.merging import SOURCES, add, log_sources, read
from treelab.store.persistence import GAME_FIELDS, open_tree, save
from treelab.tree import Tree

GAMES = ["tictactoe", "connect4", "nim"]


def random_tree(game: str, seed: int, games: int, searches: int = 0) -> Tree:
    """Random recorded games (some cut short) and a few UCT searches with the solver (proofs)."""
    rng = random.Random(seed)
    tree = Tree(game)
    for _ in range(games):
        moves, winner = random_game(tree.game, rng)
        cut = rng.random() < 0.3 and len(moves) > 1
        if cut:
            moves, winner = moves[: rng.randrange(1, len(moves))], rng.choice([1, 2, None])
        tree.record(moves, winner)
    for _ in range(searches):
        search(tree, limit=Limit(iterations=rng.randrange(20, 120)), solver=True, rng=rng)
    return tree


def saved(tree: Tree, db: Path, games: int) -> Path:
    """``tree`` saved to ``db`` with ``games`` logged random games (merge copies the rows as they are)."""
    rng = random.Random(games)
    logged = []
    for m in range(1, games + 1):
        moves, winner = random_game(tree.game, rng)
        logged.append({"moves": tree.game.notation(moves), "winner": winner, "iterations": m})
    tree.save(db, games=logged)
    return db


# -- merge ----------------------------------------------------------------------------------------


def old_merge(out: Path, *inputs: Path) -> tuple[int, int, int, int]:
    """The in-memory merge streaming replaced (treelab 2026-11, store/merging.py): the reference."""
    game = treelab.info(inputs[0])["game"]
    tree = open_tree(out, game)
    start_nodes, next_id = tree.size, last_game(tree) + 1
    games, sources = [], []
    for db in inputs:
        with sqlite3.connect(db) as conn:
            inc = read(conn)
            cols = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
            picked = [f for f in GAME_FIELDS if f in cols]
            found = [dict(zip(picked, row, strict=True))
                     for row in conn.execute(f"SELECT {', '.join(picked)} FROM games ORDER BY id")]
        conn.close()
        add(tree, inc)
        for row in found:
            sources.append((next_id, f"{os.fspath(db)}#{row['id']}"))
            row["id"] = next_id
            games.append(row)
            next_id += 1
    save(tree, out, games=games, extra=lambda conn: log_sources(conn, sources))
    return tree.size, tree.size - start_nodes, tree.root.nb_visit, max(last_game(tree), next_id - 1)


def contents(db: Path) -> dict[str, Any]:
    """Everything a merge writes, by move path (row ids may differ), times left out."""
    conn = sqlite3.connect(db)
    try:
        paths: dict[int, str] = {}
        nodes = {}
        have_movers = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'movers'").fetchone()
        movers = dict(conn.execute("SELECT node_id, mover FROM movers")) if have_movers else {}
        for nid, pid, move, *rest in conn.execute(
                "SELECT id, parent_id, move, depth, nb_visit, nb_win, nb_draw, nb_select, proven, created_game "
                "FROM nodes ORDER BY id"):
            paths[nid] = "" if pid is None else f"{paths[pid]}/{move}"
            nodes[paths[nid]] = (*rest, movers.get(nid))
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key NOT IN "
                                 "('saved_at', 'created_at', 'tree_id', 'treelab_version')"))
        return {
            "nodes": nodes, "meta": meta,
            "games": conn.execute("SELECT * FROM games ORDER BY id").fetchall(),
            "history": conn.execute("SELECT game_id, nodes, max_depth, root_visits, depth_counts, root_children "
                                    "FROM history ORDER BY game_id").fetchall(),
            "sources": conn.execute(f"SELECT * FROM {SOURCES} ORDER BY game_id").fetchall()
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (SOURCES,)).fetchone() else None,
        }
    finally:
        conn.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seeds=st.lists(st.integers(0, 10**6), min_size=1, max_size=3),
       into_existing=st.booleans(), chunk=st.sampled_from([1, 3, 17, 50_000]))
def test_streamed_merge_writes_what_the_in_memory_merge_wrote(game: str, seeds: list[int], into_existing: bool,
                                                             chunk: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(merging, "_CHUNK", chunk)
        folder = Path(tmp)
        inputs = [saved(random_tree(game, seed, 12, searches=2), folder / f"in{i}.db", games=1 + i)
                  for i, seed in enumerate(seeds)]
        outs = [folder / "old.db", folder / "new.db"]
        if into_existing:
            for out in outs:
                saved(random_tree(game, 7, 10, searches=1), out, games=2)
        want = old_merge(outs[0], *inputs)
        summary = treelab.merge(outs[1], *inputs)
        # (sources name the inputs by path: the same paths for both)
        assert (summary.nodes, summary.new_nodes, summary.simulations, summary.games) == want
        assert contents(outs[1]) == contents(outs[0])
        treelab.load(outs[1])  # an ordinary tree file


@pytest.mark.openspiel
def test_streamed_merge_of_a_game_with_stored_movers_matches(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    game = "openspiel:dots_and_boxes(num_rows=1,num_cols=2)"
    inputs = [saved(random_tree(game, seed, 15), tmp_path / f"in{seed}.db", games=1) for seed in (1, 2)]
    want = old_merge(tmp_path / "old.db", *inputs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(merging, "_CHUNK", 5)
        summary = treelab.merge(tmp_path / "new.db", *inputs)
    assert (summary.nodes, summary.new_nodes, summary.simulations, summary.games) == want
    got = contents(tmp_path / "new.db")
    assert got == contents(tmp_path / "old.db") and all(node[-1] in (1, 2) for path, node in got["nodes"].items()
                                                        if path)


def test_merge_counts_come_from_the_one_column_list() -> None:
    """Other count columns are added to deltas.COUNT_COLUMNS and the one UPDATE; merge reads that list."""
    from treelab.store import deltas

    assert all(f"{col} = {col} + ?" in deltas._ADD for col in deltas.COUNT_COLUMNS)
    assert set(deltas.COUNT_COLUMNS) == set(increments.COUNTS)


def by_root(db: Path) -> tuple[Any, ...]:
    """The root's row as :func:`contents` shows it, read through SQLite while another process writes."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT depth, nb_visit, nb_win, nb_draw, nb_select, proven, created_game FROM nodes "
                           "WHERE parent_id IS NULL").fetchone()
    conn.close()
    return (*row, None)


def test_a_killed_merge_leaves_out_as_it_was(tmp_path: Path) -> None:
    """kill -9 while the merge writes: OUT holds its tree as before (one transaction), and merges again."""
    out = saved(random_tree("connect4", 1, 200), tmp_path / "out.db", games=3)
    inputs = [saved(random_tree("connect4", seed, 400), tmp_path / f"in{seed}.db", games=2) for seed in (2, 3)]
    before = contents(out)
    marker = tmp_path / "halfway"
    script = (  # the merge, stopped inside its transaction at its 200th chunk of 50 rows
        "import sys, time, pathlib, treelab.store.merging as m\n"
        "m._CHUNK, real, calls = 50, m.apply, []\n"
        "def apply(*args, **kwargs):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 200:  # (in the second input: the first has about 8,000 nodes)\n"
        "        pathlib.Path(sys.argv[1]).touch()\n"
        "        time.sleep(600)\n"
        "    return real(*args, **kwargs)\n"
        "m.apply = apply\n"
        "m.merge(sys.argv[2], *sys.argv[3:])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(marker), str(out), *map(str, inputs)],
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not marker.exists():
        time.sleep(0.01)
    assert marker.exists(), proc.stderr.read() if proc.stderr else ""
    assert by_root(out) == before["nodes"][""]  # a reader sees OUT as before while the merge is under way
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert contents(out) == before
    reference = saved(random_tree("connect4", 1, 200), tmp_path / "ref.db", games=3)
    old_merge(reference, *inputs)
    treelab.merge(out, *inputs)
    got, want = contents(out), contents(reference)
    assert got["nodes"] == want["nodes"] and len(got["games"]) == len(want["games"])


# -- shape ----------------------------------------------------------------------------------------


def old_icicle_pixels(arrays: TreeArrays, width_px: int = 1600) -> np.ndarray:
    """The icicle's pixels as the in-memory version painted them (treelab 2026-11, analysis/shape.py)."""
    from matplotlib import colormaps

    x0, width = layout(arrays)
    values = p1_mean(arrays)
    colour = colormaps["RdBu"](np.nan_to_num(values, nan=0.5))
    colour[np.isnan(values)] = (0.85, 0.85, 0.85, 1.0)
    rows = int(arrays.depth.max()) + 1
    row_px = max(6, min(40, 700 // rows))
    img = np.ones((rows * row_px, width_px, 4))
    for d in range(rows):
        top, bottom = d * row_px, (d + 1) * row_px - 1
        thin = np.flatnonzero((arrays.depth == d) & (width * width_px < 0.5) & (width > 0))
        if len(thin):
            px = np.minimum((x0[thin] + width[thin] / 2) * width_px, width_px - 1).astype(int)
            cover = np.bincount(px, weights=width[thin] * width_px, minlength=width_px)
            mix = np.stack([np.bincount(px, weights=width[thin] * width_px * colour[thin, k], minlength=width_px)
                            for k in range(3)], axis=1)
            hit = cover > 0
            alpha = np.minimum(1.0, cover[hit])[:, None]
            img[top:bottom, hit, :3] = (1 - alpha) + alpha * (mix[hit] / cover[hit][:, None])
        idx = np.flatnonzero((arrays.depth == d) & (width * width_px >= 0.5))
        a = np.round(x0[idx] * width_px).astype(int)
        b = np.maximum(a + 1, np.round((x0[idx] + width[idx]) * width_px).astype(int))
        gap = (b - a) >= 4
        for i, lo, hi, g in zip(idx, a, b, gap, strict=True):
            img[top:bottom, lo:hi - 1 if g else hi] = colour[i]
    return img


def drawn(ax: Any) -> tuple[Any, ...]:
    """What an axes shows: its image (icicle) or bars (sunburst), its texts and title."""
    import matplotlib.pyplot as plt

    image = ax.images[0].get_array().data.tobytes() if ax.images else None
    bars = [(p.get_x(), p.get_y(), p.get_width(), p.get_height(), tuple(p.get_facecolor())) for p in ax.patches]
    texts = [(t.get_position(), t.get_text(), t.get_fontsize()) for t in ax.texts]
    title = ax.get_title()
    plt.close(ax.figure)
    return image, bars, texts, title


def same_levels(streamed: Iterator[Any], whole: Iterator[Any]) -> None:
    got, want = list(streamed), list(whole)
    assert [g.depth for g in got] == [w.depth for w in want]
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g.x0, w.x0) and np.array_equal(g.width, w.width)
        assert np.array_equal(g.mean, w.mean, equal_nan=True) and np.array_equal(g.visits, w.visits)
        if g.depth <= 2:
            assert list(g.moves) == list(w.moves)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10**6), games=st.integers(1, 60),
       below=st.booleans(), max_depth=st.sampled_from([None, 1, 3]), chunk=st.sampled_from([1, 7, 65_536]))
def test_streamed_shape_is_the_in_memory_shape(game: str, seed: int, games: int, below: bool, max_depth: int | None,
                                               chunk: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(rows, "LEVEL_CHUNK", chunk)
        tree = random_tree(game, seed, games, searches=1)
        db = saved(tree, Path(tmp) / "t.db", games=1)
        path = None
        if below:  # a subtree: the most visited child's
            path = max(tree.root.children_view, key=lambda kid: kid.nb_visit).name
        arrays = TreeArrays.from_db(db, path, max_depth=max_depth)
        same_levels(stream_levels(db, path, max_depth=max_depth), levels(arrays))
        ax = plot_icicle(stream_levels(db, path, max_depth=max_depth), game=arrays.game,
                         root_depth=arrays.root_depth)
        assert np.array_equal(ax.images[0].get_array().data, old_icicle_pixels(arrays))
        assert drawn(ax) == drawn(plot_icicle(arrays))
        assert drawn(plot_sunburst(stream_levels(db, path, max_depth=max_depth), game=arrays.game,
                                   root_depth=arrays.root_depth)) == drawn(plot_sunburst(arrays))


@pytest.mark.openspiel
def test_streamed_shape_of_a_game_with_stored_movers(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    db = saved(random_tree("openspiel:dots_and_boxes(num_rows=1,num_cols=2)", 3, 40), tmp_path / "d.db", games=1)
    arrays = TreeArrays.from_db(db)
    assert arrays.mover is not None
    same_levels(stream_levels(db), levels(arrays))


def test_shape_cli_streams_the_same_picture(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from treelab.analysis.shape import plot_shape
    from treelab.cli import cli

    db = saved(random_tree("connect4", 5, 300, searches=3), tmp_path / "c4.db", games=1)
    result = CliRunner().invoke(cli, ["shape", str(db), "-o", str(tmp_path / "new.png")])
    assert result.exit_code == 0, result.output
    arrays = TreeArrays.from_db(db)
    assert f"({len(arrays):,} nodes)" in result.output
    plot_shape(arrays, tmp_path / "whole.png")
    assert (tmp_path / "new.png").read_bytes() == (tmp_path / "whole.png").read_bytes()


def test_a_damaged_depth_is_one_clear_error(tmp_path: Path) -> None:
    from treelab.errors import DamagedDatabaseError

    db = saved(random_tree("tictactoe", 5, 30), tmp_path / "t.db", games=1)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE nodes SET depth = depth + 1 WHERE id = (SELECT max(id) FROM nodes)")
    conn.close()
    with pytest.raises(DamagedDatabaseError, match="depth"):
        list(stream_levels(db))
