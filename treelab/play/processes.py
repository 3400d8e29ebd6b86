"""Worker processes on this machine, each adding its own games to the file; this process hands out game ids.

Each worker plays whole games on its own copy of the tree and adds what they
added (:class:`~treelab.store.deltas.Delta` s) to the file itself, with the
games' rows, in one ``BEGIN IMMEDIATE`` transaction (the merge rule of
:class:`~treelab.store.deltawriter.DeltaWriter`), so the writing is spread over
the cores instead of falling to one writer process. SQLite takes one write at
a time: a worker that finds the file being written does not wait (SQLite's busy
wait sleeps in steps of up to 100 ms) but plays its next game and writes both
after, up to :data:`HOLD` games (then it waits). This process only hands out
game ids, shows progress and watches for dead workers:

- a worker reads its pipe in a thread of its own and sends in another, so
  this process's messages never fill the pipe while the worker is in a game;
- it says when it has *played* a game (this process then sends the next id:
  each worker is kept :data:`AHEAD` game ids ahead, one near the end of the run,
  so no worker is left with two games while another idles) and, once written,
  which games the file holds;
- a game a worker holds unwritten when it is killed is lost with it, never
  half written: the file holds whole games only.

Each worker has a pipe of its own and ``stop`` is a lock-free shared flag: a
worker killed in the middle of a send or a transaction takes no lock with it
that the others would wait for (SQLite rolls its transaction back). A worker
whose parent died stops on its own, adding nothing more.
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
from collections import deque
from collections.abc import Callable
from typing import Any

from ..errors import DatabaseBusyError, WorkerError
from ..store.background import spawn
from ..store.deltawriter import simulations
from .console import stop_on_signals
from .workers import Job, Result, Worker, Writer

__all__ = ["AHEAD", "HOLD", "run_processes"]

AHEAD = 2
"""Game ids a worker is sent ahead while more games than workers are left."""

HOLD = 3
"""Games a worker may hold unwritten while another process writes the file (then it waits for its turn)."""

_POLL = 0.2
"""Seconds the writer waits for results before checking on the workers."""

_GAME = "game"
"""The message a worker receives: a game id to play (None: stop)."""

_PLAYED, _ROWS = "played", "rows"
"""The messages a worker sends: it finished this many games; the file holds these games (their rows)."""


def _work(job: Job, number: int, seed: int, stop: Any, conn: Any) -> None:
    """A worker process: play and store each game id sent over ``conn`` (None: done), answering with its rows."""
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
    held: dict[str, deque[Any]] = {_GAME: deque()}

    def receive(kind: str) -> Any:
        while not held[kind]:
            message = inbox.get()
            if message is None:
                raise EOFError
            held[message[0]].append(message[1])
        return held[kind].popleft()

    worker = Worker(job, number, seed)
    worker.stopped = stopped
    writer = Writer(job)  # this worker adds its own games to the file: SQLite takes the writes in turn
    unwritten: list[Result] = []  # games played and not written yet (the file was busy)

    def write(wait: bool) -> None:
        """Write the games held, in one transaction; with ``wait`` False, not if another process is writing."""
        if not unwritten:
            return
        try:
            rows, stored = writer.write(unwritten, chained=True, wait=wait)
        except DatabaseBusyError:
            return
        own = sum(simulations(r.delta) for r, ids in zip(unwritten, stored, strict=True) if ids is not None)
        unwritten.clear()
        worker.stored([i for ids in stored if ids is not None for i in ids])  # cut-short games: reload next
        outbox.put((_ROWS, (rows, own)))  # the games the file holds now, and this run's own simulations in them

    try:
        while True:
            if unwritten and worker.due():
                write(wait=True)  # a reload drops the copy whose local ids the held games use
            game_id = receive(_GAME)
            if game_id is None or os.getppid() != parent:
                break
            result = worker.play(game_id)
            if os.getppid() != parent:  # the run was killed: a game cut short by that is not added
                break
            unwritten.append(result)
            outbox.put((_PLAYED, 1))
            write(wait=len(unwritten) >= HOLD or result.row is None)
        if os.getppid() == parent:
            write(wait=True)  # the games still held: the run ended or was stopped
    except EOFError:  # the parent is gone
        pass
    finally:
        outbox.put(None)
        sender.join()
        writer.close()


def run_processes(
    job: Job, writer: Writer, ids: list[int], workers: int, rng: random.Random,
    logged: Callable[[list[dict[str, Any]], int], None],
) -> bool:
    """Run ``workers`` processes on the game ``ids``, writing their batches; True if interrupted.

    ``logged(rows, simulations)`` is called with the games the workers logged and the simulations they added.
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

    def top_up(i: int, interrupted: Callable[[], bool]) -> None:
        """Send worker ``i`` game ids until it holds AHEAD of them (one near the end), or None once none are left."""
        while i not in closed and owes[i] < (AHEAD if left[0] > workers else 1):
            game_id = None if stop.value or interrupted() else next(todo, None)
            conns[i].send((_GAME, game_id))
            if game_id is None:
                closed.add(i)
            else:
                owes[i] += 1
                left[0] -= 1

    for i in owes:  # fresh interpreters that never run the caller's script again
        procs[i], conns[i] = spawn(_work, (job, i, rng.getrandbits(64), stop), f"treelab-worker-{i}")
    reading = set(owes)  # workers whose pipe is open: they may still send the rows of the games they hold
    with stop_on_signals() as interrupted:
        try:
            for i in owes:
                top_up(i, interrupted)
            while reading:
                by_conn = {conns[i]: i for i in reading}
                ready = mp_connection.wait(list(by_conn), timeout=_POLL)  # a dead worker's pipe reads EOF
                rows: list[dict[str, Any]] = []
                added = 0
                for item in ready:
                    i = by_conn[item]  # type: ignore[index]
                    try:
                        kind, payload = conns[i].recv()
                    except (EOFError, OSError):  # it ended (EOF), or died before its result came or right after
                        reading.discard(i)
                        if _died(i, owes, closed, procs[i]):
                            owes[i] = 0
                            closed.add(i)
                            dead.append(f"worker {i}")
                            stop.value = 1
                        continue
                    if kind == _ROWS:
                        got, sims = payload
                        rows.extend(got)
                        added += sims
                    else:
                        owes[i] -= payload
                        top_up(i, interrupted)
                logged(rows, added)
                if interrupted():
                    stop.value = 1
                    for i in owes:
                        if owes[i] == 0:
                            top_up(i, interrupted)  # tell the idle ones to stop now
        finally:
            stop.value = 1
            for i in owes:
                if i not in closed:
                    with contextlib.suppress(OSError):
                        conns[i].send((_GAME, None))
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
