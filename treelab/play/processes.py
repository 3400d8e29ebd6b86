"""Worker processes on this machine, each with a pipe to the one writer (this process).

The writer hands each worker game ids and, once a game's batch is stored, the
row ids of its new nodes; a worker answers each game with a
:class:`~treelab.play.parallel.Result`. Nobody waits on a busy peer:

- a worker reads its pipe in a thread of its own and sends in another, so
  a result of several megabytes leaves it at once, and the writer's messages
  never fill the pipe while the worker is in the middle of a game;
- the writer keeps each worker :data:`AHEAD` game ids ahead (one near the end
  of the run, so no worker is left with two games while another idles), so a
  worker starts its next game while the writer is still storing the last batch.

Each worker has a pipe of its own and ``stop`` is a lock-free shared flag: a
worker killed in the middle of a send takes no lock with it that the others
would wait for. A worker whose writer died stops on its own.
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

from ..errors import WorkerError
from .parallel import Job, Result, Worker, Writer
from .training import _stop_on_signals

__all__ = ["AHEAD", "run_processes"]

AHEAD = 2
"""Game ids a worker holds at once while more games than workers are left."""

_POLL = 0.2
"""Seconds the writer waits for results before checking on the workers."""

_GAME, _IDS = "game", "ids"
"""The two kinds of message a worker receives: a game id to play (None: stop), or the row ids of a game's new nodes."""


def _work(job: Job, number: int, seed: int, conn: Any, stop: Any) -> None:
    """A worker process: play each game id the writer sends over ``conn`` (None: done), answering with a Result."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the writer, which tells us to stop
    parent = os.getppid()
    seen = [0, False]  # calls so far; stopped (once true, for good)

    def stopped() -> bool:  # polled every simulation: looks at the flag every 256th call
        if seen[1]:
            return True
        seen[0] += 1
        if seen[0] & 255:
            return False
        seen[1] = bool(stop.value) or os.getppid() != parent  # the writer is gone: nothing to send to
        return bool(seen[1])

    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    outbox: queue.SimpleQueue[Result | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                inbox.put(conn.recv())
        except (EOFError, OSError):
            inbox.put(None)  # the writer is gone

    def send() -> None:
        while (result := outbox.get()) is not None:
            try:
                conn.send(result)
            except OSError:
                return

    threading.Thread(target=read, name="treelab-reader", daemon=True).start()
    sender = threading.Thread(target=send, name="treelab-sender", daemon=True)
    sender.start()
    held: dict[str, deque[Any]] = {_GAME: deque(), _IDS: deque()}

    def receive(kind: str) -> Any:
        while not held[kind]:
            message = inbox.get()
            if message is None:
                raise EOFError
            held[message[0]].append(message[1])
        return held[kind].popleft()

    worker = Worker(job, number, seed)
    worker.stopped = stopped
    owed = [False]  # the row ids of the last game's new nodes are still to come

    def settle() -> None:
        if owed[0]:
            worker.stored(receive(_IDS))
        owed[0] = True

    try:
        while True:
            game_id = receive(_GAME)
            if game_id is None or os.getppid() != parent:
                break
            outbox.put(worker.play(game_id, settle))
    except EOFError:  # the writer is gone
        pass
    finally:
        outbox.put(None)
        sender.join()


def run_processes(
    job: Job, writer: Writer, ids: list[int], workers: int, rng: random.Random,
    logged: Callable[[list[dict[str, Any]]], None],
) -> bool:
    """Run ``workers`` processes on the game ``ids``, writing their batches; True if interrupted."""
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

    for i in owes:
        mine, theirs = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=_work, args=(job, i, rng.getrandbits(64), theirs, stop),
                           name=f"treelab-worker-{i}", daemon=True)
        proc.start()
        theirs.close()
        procs[i], conns[i] = proc, mine
    with _stop_on_signals() as interrupted:
        try:
            for i in owes:
                top_up(i, interrupted)
            while busy := [i for i, n in owes.items() if n > 0]:
                by_conn = {conns[i]: i for i in busy}
                ready = mp_connection.wait(list(by_conn), timeout=_POLL)  # a dead worker's pipe reads EOF
                batch: list[Result] = []
                for item in ready:
                    i = by_conn[item]  # type: ignore[index]
                    try:
                        batch.append(conns[i].recv())
                        owes[i] -= 1
                        top_up(i, interrupted)
                    except (EOFError, OSError):  # it died before its result came (EOF) or right after (EPIPE)
                        owes[i] = 0
                        closed.add(i)
                        dead.append(f"worker {i}")
                        stop.value = 1
                if batch:
                    rows, stored = writer.write(batch)
                    for result, row_ids in zip(batch, stored, strict=True):
                        if owes[result.worker] > 0:  # it plays on: it waits for its new nodes' ids
                            with contextlib.suppress(OSError):
                                conns[result.worker].send((_IDS, row_ids))
                    logged(rows)
                if interrupted():
                    stop.value = 1
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


def _how(procs: list[Any]) -> str:
    codes = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
    return ", ".join(f"signal {-c}" if c < 0 else f"exit code {c}" for c in codes) or "no result"
