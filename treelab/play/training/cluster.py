"""Parallel training on Ray: worker actors play, one writer actor owns the SQLite file.

Ray (``pip install 'treelab[ray]'``) is the engine self-play systems in Python
run on (RLlib, muzero-general, LightZero). Here each worker is an actor
holding a :class:`~treelab.play.training.workers.Worker`; its snapshot comes from the
writer through Ray's object store, so workers may run on other machines than
the file. The writer is one actor, a :class:`~treelab.play.training.workers.Writer`,
placed on the driver's machine (where the file is) and restarted from the
database if it dies (``max_restarts``); a batch retried after a restart skips
the games already logged, so nothing is added twice. Worker actors restart
too, and their game is played again.

No address starts a local Ray (using this machine's CPUs); an address
(``HOST:PORT`` or ``ray://HOST:PORT``, or ``auto``) joins a running cluster.
"""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Callable
from typing import Any

from ...errors import WorkerError
from ...tree import Tree
from ..console import stop_on_signals
from .workers import Job, Result, Worker, Writer

__all__ = ["RemoteWriter", "connect", "run_on_ray"]

_CONNECT_SECONDS = 5.0
"""How long to try reaching a cluster's address before giving up."""

_started_here = False


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise WorkerError(
            "ray is not installed: install the extra with pip install 'treelab[ray]', or use --workers N"
        ) from None
    return ray


def _reachable(address: str) -> None:
    """Refuse an address nothing listens on, in seconds rather than Ray's minute of retries."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise WorkerError(f"ray address {address!r} is not HOST:PORT: give e.g. 10.0.0.5:6379, or none for a local Ray")
    try:
        socket.create_connection((host, int(port)), timeout=_CONNECT_SECONDS).close()
    except OSError as exc:
        raise WorkerError(
            f"cannot reach a ray cluster at {address!r} ({exc.strerror or exc}): start one with "
            "'ray start --head' there, or leave out the address for a local Ray"
        ) from None


def connect(address: str | None) -> None:
    """Join the Ray cluster at ``address``, or start a local Ray (None); nothing if already connected.

    Raises:
        WorkerError: Ray is not installed, or nothing answers at ``address``.
    """
    global _started_here
    ray = _ray()
    if ray.is_initialized():
        return
    if address is not None:
        _reachable(address)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise WorkerError(f"cannot start or join ray at {address or 'a local ray'!r}: {exc}") from None
    _started_here = address is None


def _tree_from(job: Job, snapshot: tuple[list[int], Any]) -> Tree:
    """A worker's copy of the stored tree from the writer's snapshot: its nodes carry their row ids."""
    from ...store.deltas import renumber
    from ...store.merging import add

    ids, inc = snapshot
    c = job.search.stored_c  # None (PUCT): the tree's own default, as a load of a new file gives it
    tree = Tree(job.game) if c is None else Tree(job.game, c=c)
    add(tree, inc)
    renumber(tree.new_nodes, ids)  # a fresh tree creates the rows' nodes in row order, its root first
    return tree


class RemoteWriter:
    """The writer actor behind the same methods as a local :class:`Writer` (each call waits for it)."""

    def __init__(self, job: Job) -> None:
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        actor = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(Writer)
        self.name = f"treelab-writer-{os.getpid()}-{os.urandom(4).hex()}"
        self.actor = actor.options(scheduling_strategy=here, name=self.name).remote(job)
        self._get = ray.get

    def stats(self) -> tuple[int, int, int]:
        return self._get(self.actor.stats.remote())  # type: ignore[no-any-return]

    def write(self, results: list[Result]) -> tuple[list[dict[str, Any]], list[list[int] | None]]:
        return self._get(self.actor.write.remote(results))  # type: ignore[no-any-return]

    def close(self) -> None:
        global _started_here
        ray = _ray()
        try:
            self._get(self.actor.close.remote())
            ray.kill(self.actor)
        finally:
            if _started_here:
                ray.shutdown()
                _started_here = False


class _RayWorker:
    """A worker actor: a :class:`Worker` whose snapshots come from the writer actor."""

    def __init__(self, job: Job, number: int, seed: int, writer: str) -> None:
        import ray

        def snapshot() -> Tree:  # the writer found by name: a restarted worker finds it again
            fetch: Any = ray.get  # typed by the remote method's annotation, which Ray's stubs lose
            return _tree_from(job, fetch(ray.get_actor(writer).snapshot.remote()))

        self.worker = Worker(job, number, seed, snapshot=snapshot)

    def play(self, game_id: int, ids: list[int] | None) -> Result:
        """Play ``game_id``, after taking the row ids of the last game's new nodes (None: reload first)."""
        self.worker.stored(ids)
        return self.worker.play(game_id)


_POLL = 0.25
"""Seconds between checks for Ctrl-C while the Ray workers play."""


def run_on_ray(
    job: Job, writer: RemoteWriter, ids: list[int], workers: int | None, rng: random.Random,
    logged: Callable[[list[dict[str, Any]], int], None],
) -> bool:
    """Play the game ``ids`` on ``workers`` Ray actors (default: one per CPU), writing each batch.

    ``logged(rows, simulations)`` is called with the games the writer logged and the simulations they added.
    """
    from ...store.writer import simulations

    ray = _ray()
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    make = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=-1)(_RayWorker)
    actors = [make.remote(job, i, rng.getrandbits(64), writer.name) for i in range(1, count + 1)]
    todo = iter(ids)
    pending: dict[Any, Any] = {}
    for actor in actors:
        game_id = next(todo, None)
        if game_id is not None:
            pending[actor.play.remote(game_id, [])] = actor
    with stop_on_signals() as interrupted:  # Ctrl-C: the games finished are saved, those under way dropped
        try:
            while pending and not interrupted():
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=_POLL)
                if not ready:
                    continue
                ready += ray.wait([f for f in pending if f not in ready], num_returns=len(pending) - 1,
                                  timeout=0)[0] if len(pending) > 1 else []
                batch, players = [], []
                for future in ready:
                    players.append(pending.pop(future))
                    try:
                        batch.append(ray.get(future))
                    except ray.exceptions.RayError as exc:
                        if interrupted():  # the actors had the signal too
                            break
                        raise WorkerError(f"a ray worker failed ({type(exc).__name__}); every game finished "
                                          f"before is saved in {job.db!r}: train again to resume") from None
                rows, stored = writer.write(batch)  # the games that came back whole
                for actor, row_ids in zip(players, stored, strict=False):  # a worker needs its new nodes' row ids
                    game_id = None if interrupted() else next(todo, None)
                    if game_id is not None:
                        pending[actor.play.remote(game_id, row_ids)] = actor
                logged(rows, sum(simulations(result.delta) for result, row_ids in zip(batch, stored, strict=True)
                                 if row_ids is not None))  # this run's own, not other writers' of the file
        finally:
            for actor in actors:
                ray.kill(actor)
        return interrupted()
