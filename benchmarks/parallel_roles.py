"""Where parallel training's CPU goes: each role's microseconds a simulation, and the writer's SQL by statement.

``benchmarks/parallel.py`` times whole runs; this script plays the same pipeline in one process
so that each role's CPU time can be read on its own (``time.process_time``, which a loaded machine
distorts far less than wall time): ``--workers`` workers (:class:`treelab.play.training.workers.Worker`,
Connect Four self-play, the games dealt in turn) and their writer
(:class:`treelab.play.training.workers.Writer`, one batch per game, as the run's own process writes
them). Per simulation it prints the workers' top-of-tree shares (``share_top``), searches,
``take`` (the delta's arrays and position keys), pickling and unpickling a result (the hand-over),
the writer's ``write``, and the renumbering of the new nodes; then the SQL the writer ran, by
statement, and what is left of ``write`` (Python around it).

``--floor`` then measures what SQLite itself costs for the same rows, with no Python at all: on a
copy of the file, the nodes the later half of the games added are deleted and put back by one
``INSERT INTO nodes SELECT ...`` from a temporary table (the same ids, parents and moves, so the
same unique-index inserts), and as many ``positions`` rows the same way through the writer's
upsert. That floor, per simulation, is what no tuning of the writer's Python can go below
(``--workers 2`` at 1.4x ``--workers 1`` needs a writer under 0.43x a worker's cost).

    .venv/bin/python benchmarks/parallel_roles.py --budgets 200,400 --workers 1,2 --games 24
    .venv/bin/python benchmarks/parallel_roles.py --budgets 200 --workers 1 --games 24 --floor
    .venv/bin/python benchmarks/parallel_roles.py --algorithm puct --evaluator heuristic --budgets 200 --games 12
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
from treelab.play.training import exploration, make_players
from treelab.play.training import workers as worker_module
from treelab.play.training.config import split_options
from treelab.play.training.workers import Job, Worker, Writer
from treelab.store.writer import simulations

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


def floor(db: Path, games: int, sims: int, position_rows: int) -> None:
    """Print SQLite's own CPU time for the rows the later half of ``games`` games wrote, per simulation (see the
    module doc); ``sims``: those games' simulations, ``position_rows``: the ``positions`` rows they upserted."""
    import shutil

    copy = db.with_name("floor.db")
    shutil.copy(db, copy)
    conn = sqlite3.connect(copy, isolation_level=None)
    try:
        for pragma in ("synchronous = NORMAL", "cache_size = -65536", "temp_store = MEMORY"):
            conn.execute(f"PRAGMA {pragma}")
        half = games // 2
        conn.execute("CREATE TEMP TABLE new_nodes AS SELECT * FROM nodes WHERE created_game > ? ORDER BY id", (half,))
        conn.execute("CREATE TEMP TABLE new_positions AS SELECT * FROM positions ORDER BY random() LIMIT ?",
                     (position_rows,))
        nodes = conn.execute("SELECT count(*) FROM temp.new_nodes").fetchone()[0]
        spent = []
        for _ in range(3):
            conn.execute("BEGIN")
            conn.execute("DELETE FROM nodes WHERE id IN (SELECT id FROM temp.new_nodes)")
            conn.execute("DELETE FROM positions WHERE key IN (SELECT key FROM temp.new_positions)")
            began = time.process_time()
            conn.execute("INSERT INTO nodes SELECT * FROM temp.new_nodes")
            middle = time.process_time()
            conn.execute("INSERT INTO positions SELECT * FROM temp.new_positions WHERE true ON CONFLICT(key) DO UPDATE "
                         "SET nb_visit = nb_visit + excluded.nb_visit")
            spent.append((middle - began, time.process_time() - middle))
            conn.execute("ROLLBACK")
        node_s, position_s = sorted(spent)[1]
    finally:
        conn.close()
        copy.unlink()
    print(f"  SQLite's own cost, no Python (median of 3): {nodes:,} nodes rows {node_s / nodes * 1e6:.2f} us a row, "
          f"{position_rows:,} positions rows {position_s / max(position_rows, 1) * 1e6:.2f} us a row; "
          f"per simulation of the later games: {(node_s + position_s) / sims * 1e6:.2f} us")


def measure(iterations: int, workers: int, games: int, with_floor: bool = False, **searching: Any) -> None:
    """Play ``games`` games with ``workers`` workers and their writer in this process; print each role's cost
    (``searching``: search options, ``algorithm="puct", evaluator="heuristic"`` say)."""
    game = find_game("connect4")
    db = Path(tempfile.mkdtemp(prefix="treelab-roles-")) / "roles.db"
    search, training = split_options(None, None, {"iterations": iterations, "workers": workers, "seed": 1,
                                                  **searching}, game.num_moves)
    job = Job(game.name, str(db), search, training, workers=workers, players=make_players,
              logged_as=exploration(search, training))
    spent = dict.fromkeys(ROLES, 0.0)

    def timed(role: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[role] += time.process_time() - began
        return call

    saved = {name: getattr(worker_module, name) for name in ("share_top", "play_recorded", "take")}
    for name, role in (("share_top", "share"), ("play_recorded", "search"), ("take", "take")):
        setattr(worker_module, name, timed(role, saved[name]))
    try:
        writer = Writer(job)
        players = [Worker(job, i + 1, 1000 + i) for i in range(workers)]
        SQL.clear()
        chains: dict[str, Any] = {}
        sims = later_sims = later_rows = 0
        for g in range(games):
            worker = players[g % workers]
            result = worker.play(g + 1)
            blob = timed("pickle", pickle.dumps)(result, pickle.HIGHEST_PROTOCOL)
            result = timed("unpickle", pickle.loads)(blob)
            sims += simulations(result.delta)
            if g + 1 > games // 2:
                later_sims += simulations(result.delta)
                later_rows += len(result.delta.keys or ())
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
    if with_floor:
        floor(db, games, later_sims, later_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", default="200,400", help="simulations a move, comma-separated")
    parser.add_argument("--workers", default="1,2", help="workers, comma-separated")
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--floor", action="store_true", help="also measure SQLite's own cost of the same rows")
    parser.add_argument("--algorithm", choices=("uct", "puct"), default="uct")
    parser.add_argument("--evaluator", choices=("rollout", "heuristic"), help="PUCT's evaluator (default: rollout)")
    parser.add_argument("--model", help="a Connect Four model file: PUCT searches with it")
    args = parser.parse_args()
    searching = {name: value for name in ("algorithm", "evaluator", "model") if (value := getattr(args, name))}
    connect = sqlite3.connect
    sqlite3.connect = lambda *a, **k: connect(*a, factory=_Timed, **k)  # type: ignore[assignment]
    try:
        for budget in (int(b) for b in args.budgets.split(",")):
            for workers in (int(w) for w in args.workers.split(",")):
                measure(budget, workers, args.games, args.floor, **searching)
    finally:
        sqlite3.connect = connect  # type: ignore[assignment]


if __name__ == "__main__":
    main()
