"""A parallel run's summary counts its own simulations: two trainers of one file each
once reported the other's simulations too, since "new simulations" was the file's root gain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import treelab
from treelab.mcts.loop import Limit
from treelab.mcts.uct import search
from treelab.store import deltas
from treelab.store.writer import simulations

_RUN = """
import json, sys
import treelab
moves = []
summary = treelab.train("connect4", sys.argv[1], 10, iterations=30, seed=int(sys.argv[2]), progress=False,
                        workers=2, on_game=lambda gid, m, w: moves.append(m))
print(json.dumps({"simulations": summary.simulations, "moves": moves}))
"""


def test_two_parallel_trainers_each_report_their_own_simulations(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    treelab.train("connect4", db, 1, iterations=30, seed=9, progress=False)
    start = treelab.load(db).root.nb_visit
    procs = [subprocess.Popen([sys.executable, "-c", _RUN, str(db), str(seed)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    game = treelab.load(db).game
    for got in outs:  # self-play: every move of a game is one search of 30 simulations
        assert got["simulations"] == 30 * sum(len(game.parse(m)) for m in got["moves"])
    assert sum(got["simulations"] for got in outs) == treelab.load(db).root.nb_visit - start


def test_a_deltas_simulations_are_its_roots_visit_increment(tmp_path: Path) -> None:
    """What the --workers and --ray writers add up per game: the root's gain, whatever else the game touched."""
    db = tmp_path / "c4.db"
    treelab.train("connect4", db, 3, iterations=40, seed=4, progress=False)
    tree = deltas.start(treelab.load(db))
    before = tree.root.nb_visit
    ran = sum(search(tree, moves, limit=Limit(iterations=25), rng=6) for moves in ("", "4", "44", "443"))
    delta, _ = deltas.take(tree)  # searches from deeper positions too: their paths still start at the root
    assert simulations(delta) == tree.root.nb_visit - before == ran == 100
    assert simulations(deltas.take(tree)[0]) == 0  # nothing since
