"""Worker processes on this machine play; this process writes what they learn to the file and hands out game ids.

Each worker plays whole games on its own copy of the tree and sends what each
game added (a :class:`~treelab.store.deltas.Delta`, with the game's row) to this
process, which adds every batch that has arrived to the file in one
transaction (:class:`~treelab.play.training.workers.Writer`, one warm connection) and sends
each worker the row ids of its new nodes. A worker never waits for the file: it plays
on while its games are written, naming the nodes still without a row id by their
local ids (up to :data:`OWED` games ahead of the writer; then it waits for its ids).
One writer means no two processes take turns on SQLite's lock or spoil each other's
page cache, and a batch of several games is one commit. This process also shows
progress and watches for dead workers:

- a worker reads its pipe in a thread of its own and sends in another, so
  this process's messages never fill the pipe while the worker is in a game;
- each worker is kept :data:`AHEAD` game ids ahead (one near the end of the run), so
  no worker is left with two games while another idles;
- a game is in the file once this process committed it; a worker killed with games
  not yet sent loses them with it, never half written: the file holds whole games only.

Each worker has a pipe of its own and ``stop`` is a lock-free shared flag: a
worker killed in the middle of a send takes no lock with it that the others would
wait for. A worker whose parent (the writer) died stops on its own, adding nothing.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import queue
import random
import signal
import threading
from collections.abc import Callable
from typing import Any

from ...errors import WorkerError
from ...store.deltas import AssignedIds
from ...store.writer import simulations, spawn
from ..console import stop_on_signals
from .workers import Job, Result, Worker, Writer

__all__ = ["AHEAD", "OWED", "run_processes"]

AHEAD = 2
"""Game ids a worker is sent ahead while more games than workers are left."""

OWED = 4
"""Games a worker may have handed on without their row ids back; then it waits for the writer (which keeps
the writer's backlog, and the local ids it maps, bounded)."""

_POLL = 0.2
"""Seconds the writer waits for results before checking on the workers."""

_GAME, _STORED = "game", "stored"
"""The messages a worker receives: a game id to play (None: stop); the row ids of its oldest delta's new nodes."""

_RESULT = "result"
"""The message a worker sends: a game played (a :class:`~treelab.play.training.workers.Result`)."""


def _work(job: Job, number: int, seed: int, stop: Any, conn: Any) -> None:
    """A worker process: play each game id sent over ``conn`` (None: done) and send each game's result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which tells us to stop
    parent = os.getppid()
    seen = [0, False]  # calls so far; stopped (once true, for good)

    def stopped() -> bool:  # polled every simulation: looks at the flag every 256th call
        if seen[1]:
            return True
        seen[0] += 1
        if seen[0] & 255:
            return False
        seen[1] = bool(stop.value) or os.getppid() != parent  # the parent is gone: nobody to answer
        return bool(seen[1])

    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    outbox: queue.SimpleQueue[tuple[str, Any] | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                inbox.put(conn.recv())
        except (EOFError, OSError):
            inbox.put(None)  # the parent is gone

    def send() -> None:
        while (message := outbox.get()) is not None:
            try:
                conn.send(message)
            except OSError:
                return

    threading.Thread(target=read, name="treelab-reader", daemon=True).start()
    sender = threading.Thread(target=send, name="treelab-sender", daemon=True)
    sender.start()
    games: list[int | None] = []
    worker = Worker(job, number, seed)
    worker.stopped = stopped

    def handle(message: Any) -> None:
        if message is None:
            raise EOFError
        kind, payload = message
        if kind == _STORED:
            worker.stored(payload)  # between games only: the copy's ids change here, never mid-search
        else:
            games.append(payload)

    def settle() -> None:
        """Take the row ids that came back meanwhile; wait for them while OWED games are owed."""
        with contextlib.suppress(queue.Empty):
            while True:
                handle(inbox.get_nowait())
        while len(worker.owed) >= OWED:
            handle(inbox.get())

    try:
        while True:
            while not games:
                handle(inbox.get())
            game_id = games.pop(0)
            if game_id is None or os.getppid() != parent:
                break
            result = worker.play(game_id, settle)
            if os.getppid() != parent:  # the run was killed: a game cut short by that is not added
                break
            outbox.put((_RESULT, result))
    except EOFError:  # the parent is gone
        pass
    finally:
        outbox.put(None)
        sender.join()


def run_processes(
    job: Job, writer: Writer, ids: list[int], workers: int, rng: random.Random,
    logged: Callable[[list[dict[str, Any]], int], None],
) -> bool:
    """Run ``workers`` processes on the game ``ids``, writing their games as they come; True if interrupted.

    ``logged(rows, simulations)`` is called with the games written and the simulations they added.
    """
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.RawValue("b", 0)
    todo = iter(ids)
    left = [len(ids)]
    procs: dict[int, Any] = {}
    conns: dict[int, Any] = {}
    owes = dict.fromkeys(range(1, workers + 1), 0)  # games sent and not answered yet
    closed: set[int] = set()  # workers told to stop (None sent)
    dead: list[str] = []
    chains: dict[str, AssignedIds | None] = {}  # each worker's deltas' row ids, for local ids its next deltas name

    def top_up(i: int, interrupted: Callable[[], bool]) -> None:
        """Send worker ``i`` game ids until it holds AHEAD of them (one near the end), or None once none are left."""
        while i not in closed and owes[i] < (AHEAD if left[0] > workers else 1):
            game_id = None if stop.value or interrupted() else next(todo, None)
            _send(conns[i], (_GAME, game_id))
            if game_id is None:
                closed.add(i)
            else:
                owes[i] += 1
                left[0] -= 1

    for i in owes:  # fresh interpreters that never run the caller's script again
        procs[i], conns[i] = spawn(_work, (job, i, rng.getrandbits(64), stop), f"treelab-worker-{i}")
    reading = set(owes)  # workers whose pipe is open: they may still send the games they played
    with stop_on_signals() as interrupted:
        try:
            for i in owes:
                top_up(i, interrupted)
            while reading:
                by_conn = {conns[i]: i for i in reading}
                ready = mp_connection.wait(list(by_conn), timeout=_POLL)  # a dead worker's pipe reads EOF
                batch: list[tuple[int, Result]] = []
                for item in ready:
                    i = by_conn[item]  # type: ignore[index]
                    try:
                        while True:  # everything this worker sent so far: one batch, one commit
                            _, result = conns[i].recv()
                            owes[i] -= 1
                            batch.append((i, result))
                            if not conns[i].poll():
                                break
                    except (EOFError, OSError):  # it ended (EOF), or died before its result came or right after
                        reading.discard(i)
                        if _died(i, owes, closed, procs[i]):
                            owes[i] = 0
                            closed.add(i)
                            dead.append(f"worker {i}")
                            stop.value = 1
                    top_up(i, interrupted)
                if batch:
                    rows, stored = writer.write([r for _, r in batch], chains=chains)
                    for (i, _), row_ids in zip(batch, stored, strict=True):
                        if i in reading:
                            _send(conns[i], (_STORED, row_ids))
                    logged(rows, sum(simulations(r.delta) for (_, r), row_ids in zip(batch, stored, strict=True)
                                     if row_ids is not None))  # this run's own, not other writers' of the file
                if interrupted():
                    stop.value = 1
                    for i in owes:
                        if owes[i] == 0:
                            top_up(i, interrupted)  # tell the idle ones to stop now
        finally:
            stop.value = 1
            for i in owes:
                if i not in closed:
                    _send(conns[i], (_GAME, None))
            for i, proc in procs.items():
                proc.join(timeout=5)
                if proc.is_alive():
                    proc.kill()
                conns[i].close()
        stopped = interrupted()
    if dead:
        raise WorkerError(
            f"{', '.join(dead)} died ({_how(list(procs.values()))}); every game finished before is saved in "
            f"{job.db!r}: train again to resume"
        )
    return stopped


def _send(conn: Any, message: tuple[str, Any]) -> None:
    """Send ``message`` to a worker; one that died meanwhile is found by its pipe's end."""
    with contextlib.suppress(OSError):
        conn.send(message)


def _died(i: int, owes: dict[int, int], closed: set[int], proc: Any) -> bool:
    """Whether worker ``i``, whose pipe just closed, died: with games owed, before it was told to stop, or after
    it was (its exit code, once it is gone, says whether the games it held were written)."""
    if owes[i] > 0 or i not in closed:
        return True
    proc.join(timeout=5)
    return proc.exitcode not in (0, None)


def _how(procs: list[Any]) -> str:
    codes = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
    return ", ".join(f"signal {-c}" if c < 0 else f"exit code {c}" for c in codes) or "no result"
