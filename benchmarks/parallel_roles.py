"""Where parallel training's CPU goes: each role's microseconds a simulation, and the writer's SQL by statement.

``benchmarks/parallel.py`` times whole runs; this script plays the same pipeline in one process
so that each role's CPU time can be read on its own (``time.process_time``, which a loaded machine
distorts far less than wall time): ``--workers`` workers (:class:`treelab.play.workers.Worker`,
Connect Four self-play, the games dealt in turn) and their writer
(:class:`treelab.play.workers.Writer`, one batch per game, as the run's own process writes
them). Per simulation it prints the workers' top-of-tree shares (``share_top``), searches,
``take`` (the delta's arrays and position keys), pickling and unpickling a result (the hand-over),
the writer's ``write``, and the renumbering of the new nodes; then the SQL the writer ran, by
statement, and what is left of ``write`` (Python around it).

    .venv/bin/python benchmarks/parallel_roles.py --budgets 200,400 --workers 1,2 --games 24
"""

from __future__ import annotations

import argparse
import collections
import os
import pickle
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from treelab.games import find_game
from treelab.play import workers as worker_module
from treelab.play.training import exploration, make_players, settings_of
from treelab.play.training_config import split_options
from treelab.play.workers import Job, Worker, Writer
from treelab.store.deltawriter import simulations

ROLES = ("share", "search", "take", "pickle", "unpickle", "write", "renumber")
SQL: collections.defaultdict[str, float] = collections.defaultdict(float)
WRITING = [False]  # the statements are counted while the writer writes (a worker's share_top runs SQL too)


class _Timed(sqlite3.Connection):
    """A connection that adds up the CPU time of each statement (by its first words) in :data:`SQL`."""

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
        began = time.process_time()
        try:
            return super().execute(sql, *args)
        finally:
            if WRITING[0]:
                SQL[" ".join(sql.split()[:4])] += time.process_time() - began

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:  # type: ignore[override]
        began = time.process_time()
        try:
            return super().executemany(sql, rows)
        finally:
            if WRITING[0]:
                SQL[" ".join(sql.split()[:4])] += time.process_time() - began


def measure(iterations: int, workers: int, games: int) -> None:
    """Play ``games`` games with ``workers`` workers and their writer in this process; print each role's cost."""
    game = find_game("connect4")
    db = Path(tempfile.mkdtemp(prefix="treelab-roles-")) / "roles.db"
    search, training = split_options(None, None, {"iterations": iterations, "workers": workers, "seed": 1},
                                     game.num_moves)
    settings = settings_of(search, training)
    job = Job(game.name, str(db), settings, workers=workers, players=make_players, logged_as=exploration(settings))
    spent = dict.fromkeys(ROLES, 0.0)

    def timed(role: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[role] += time.process_time() - began
        return call

    saved = {name: getattr(worker_module, name) for name in ("share_top", "play_game", "take")}
    for name, role in (("share_top", "share"), ("play_game", "search"), ("take", "take")):
        setattr(worker_module, name, timed(role, saved[name]))
    try:
        writer = Writer(job)
        players = [Worker(job, i + 1, 1000 + i) for i in range(workers)]
        SQL.clear()
        chains: dict[str, Any] = {}
        sims = 0
        for g in range(games):
            worker = players[g % workers]
            result = worker.play(g + 1)
            blob = timed("pickle", pickle.dumps)(result, pickle.HIGHEST_PROTOCOL)
            result = timed("unpickle", pickle.loads)(blob)
            sims += simulations(result.delta)
            WRITING[0] = True
            _, stored = timed("write", writer.write)([result], chains=chains)
            WRITING[0] = False
            timed("renumber", worker.stored)(stored[0])
        nodes = writer.stats()[0]
        writer.close()
    finally:
        for name, fn in saved.items():
            setattr(worker_module, name, fn)
    per = 1e6 / sims
    print(f"\n{iterations} simulations a move, {workers} worker(s), {games} games: {sims:,} simulations, "
          f"{nodes:,} nodes (load average {os.getloadavg()[0]:.2f})")
    print("  CPU us a simulation: " + ", ".join(f"{role} {spent[role] * per:.2f}" for role in ROLES)
          + f"; workers {sum(spent[r] for r in ROLES[:4]) * per:.2f}, writer "
          + f"{(spent['unpickle'] + spent['write']) * per:.2f}")
    sql = sum(SQL.values())
    print(f"  the writer's SQL {sql * per:.2f} of its write {spent['write'] * per:.2f}:")
    for statement, seconds in sorted(SQL.items(), key=lambda item: -item[1])[:8]:
        print(f"    {seconds * per:5.2f}  {statement}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", default="200,400", help="simulations a move, comma-separated")
    parser.add_argument("--workers", default="1,2", help="workers, comma-separated")
    parser.add_argument("--games", type=int, default=24)
    args = parser.parse_args()
    connect = sqlite3.connect
    sqlite3.connect = lambda *a, **k: connect(*a, factory=_Timed, **k)  # type: ignore[assignment]
    try:
        for budget in (int(b) for b in args.budgets.split(",")):
            for workers in (int(w) for w in args.workers.split(",")):
                measure(budget, workers, args.games)
    finally:
        sqlite3.connect = connect  # type: ignore[assignment]


if __name__ == "__main__":
    main()
