"""The parts of parallel training: a worker playing on its own copy of the tree, and the writer of what it learns.

Each worker holds its own copy of the stored tree (loaded from the file, or
handed over by the writer on Ray), plays whole games on it with the same
players as :func:`treelab.train`, and after every game sends what the game
added: a :class:`~treelab.store.deltas.Delta` (count increments of stored nodes by
row id, new nodes as arrays, proofs). One writer, holding no tree (the run's own
process with local workers, :mod:`treelab.play.training.processes`; an actor on Ray), adds the
deltas of every batch that has arrived straight to the file in one
transaction with the batch's games, and tells each worker the row ids of its
new nodes, so the worker keeps its copy from game to game. A worker does not wait
for them: its next delta names the nodes still without a row id by local id, and the
writer maps them (:attr:`Result.named_from`). Additions commute,
so the order of arrival does not matter, and nothing is lost: after a
self-play run the root's visits grew by exactly iterations x moves played.

Before each game a worker gives the top of its copy (down to :data:`SHARED`)
the file's counts, so it sees the other workers' games where every game
passes, for a few thousand rows read (on Ray, where the file may be on another
machine, it reloads its whole copy now and then instead). A
``kill -9`` of a worker or of the writer leaves the file at its last batch;
the writer reports a dead worker, and workers whose writer died stop on their
own. Training again resumes. Runs with workers do not replay exactly from a
seed: which snapshot a game sees depends on timing.
"""

from __future__ import annotations

import gc
import random
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import StoreError
from ...games import find_game
from ...mcts.config import SearchConfig
from ...store.binding import binding_of
from ...store.deltas import AssignedIds, Delta, renumber, share_top, stamp, start, take
from ...store.persistence import now, open_tree
from ...store.writer import DeltaWriter, trimmed
from ...tree import Tree, TreeNode
from ..players import Player
from .config import TrainingConfig
from .games import keep_game_nodes, play_recorded, tree_player_of

__all__ = ["REFRESH", "SHARED", "SHARE_EVERY", "Job", "PlayersFn", "Result", "Worker", "Writer"]

PlayersFn = Callable[..., tuple[Any, Player | None]]
"""Makes a run's players on a tree: ``players(tree, rng, search, training)`` -> (the tree's player, the opponent
or None) (:func:`treelab.play.training.make_players`; passed in, since training sits above this module)."""

REFRESH = 25.0
"""On Ray, a worker reloads its copy once it has played this many times as long as the last load took."""

SHARED = 4
"""Depth down to which a worker gives its copy the file's counts before each game (Connect Four: at most 2,801 nodes).

There every game passes, so that is where the other workers' games matter; deeper, a worker's copy
grows by its own games. Reloading whole copies instead (once a worker had played 25 times as long
as a load took) cost a quarter of the workers' CPU in a 24-game, 2,000-iteration run with two
workers (``benchmarks/parallel.py``: 10.2 against 8.1 microseconds a simulation)."""


SHARE_EVERY = 10.0
"""A worker shares the file's counts (:data:`SHARED`) again once it has played this many times as long as the
last share took: about a tenth of its time at most. At 200 simulations a move a share cost as much as a game
(2,800 rows read and set), so sharing before every game spent a third of the workers' time on it."""


@dataclass(frozen=True)
class Job:
    """What every worker plays: the game, the database and :func:`treelab.train`'s two values."""

    game: str
    """The game's name."""
    db: str
    """The database file (workers read snapshots from it; local workers, or Ray's one writer, write it)."""
    search: SearchConfig = field(default_factory=SearchConfig)
    """How the tree searches (the run's :class:`~treelab.mcts.config.SearchConfig`, its root noise decided)."""
    training: TrainingConfig = field(default_factory=TrainingConfig)
    """How the games are played (resolved: :meth:`~treelab.play.training.config.TrainingConfig.resolved`)."""
    players: PlayersFn | None = None
    """Makes the players on a worker's copy (a module-level function: it is sent to worker processes)."""
    logged_as: str = "{}"
    """The exploration settings logged with every game (``games.exploration``, JSON)."""
    workers: int = 2
    """How many workers play at once (a lone one never reloads: its copy holds the whole stored tree)."""


@dataclass(frozen=True)
class Result:
    """What a worker sends the writer after a game."""

    worker: int
    """The worker's number (from 1)."""
    row: dict[str, Any] | None
    """The game's ``games`` row, or None for a game cut short (the writer drops it: whole games or nothing)."""
    delta: Delta
    """What the game added to the tree."""
    named_from: int | None = None
    """The lowest local id this delta may name (the nodes of the worker's earlier deltas whose row ids it had not
    had yet, :class:`~treelab.store.deltas.AssignedIds`): the writer forgets the row ids of local ids below it."""


class Worker:
    """Plays games on its own copy of the tree and hands on what each game added.

    Its nodes carry their row ids (new ones a local id until the writer
    stored them, :mod:`treelab.store.deltas`), so it keeps its copy from game
    to game, and reloads it only now and then to see the other workers' games.

    Args:
        job: what to play.
        number: the worker's number (from 1), logged with its games.
        seed: its random seed.
        snapshot: returns a fresh copy of the stored tree (default: load it from ``job.db``).
    """

    def __init__(self, job: Job, number: int, seed: int, snapshot: Callable[[], Tree] | None = None) -> None:
        self.job = job
        self.number = number
        self.rng = random.Random(seed)
        self.game = find_game(job.game)
        self._snapshot = snapshot or (lambda: open_tree(job.db, self.game, c=job.search.stored_c))
        self._share = snapshot is None and job.workers > 1  # on Ray the file may be on another machine
        self.stopped: Callable[[], bool] = lambda: False
        self.owed: deque[list[TreeNode]] = deque()
        """The new nodes of each delta handed on whose row ids have not come back yet, oldest first."""
        self._ignore = 0  # answers still to come for deltas of a copy since replaced
        self._refresh()

    def _refresh(self) -> None:
        began = time.process_time()
        if hasattr(self, "tree"):  # frozen objects are never collected: the old copy's cycles must be, once replaced
            gc.unfreeze()
        self.tree = start(self._snapshot())
        self.seen = getattr(binding_of(self.tree), "generation", -1)  # the file's save count it was loaded at
        if self.job.players is None:
            raise StoreError("a parallel training job needs its players function (Job.players)")
        self.me, self.other = self.job.players(self.tree, self.rng, self.job.search, self.job.training)
        gc.collect()
        gc.freeze()
        self._ignore += len(self.owed)  # ids still owed for the old copy's nodes: ignore them
        self.owed.clear()
        self.load_seconds = time.process_time() - began
        self.played_seconds = 0.0
        self.share_seconds = self.since_share = 0.0  # a fresh copy holds the file's counts: nothing to share yet
        self.stale = False

    def due(self) -> bool:
        """Whether the next :meth:`play` reloads the copy first (a worker holding games writes them before)."""
        on_ray = not self._share and self.job.workers > 1  # Ray: the other workers' games come with a reload
        return self.stale or (on_ray and self.played_seconds > REFRESH * self.load_seconds)

    def stored(self, ids: Sequence[int] | None) -> None:
        """The row ids the writer gave the new nodes of the oldest delta still owed them (None: it was not stored, so
        reload before the next game). Answers for the deltas of a copy since reloaded are ignored."""
        if self._ignore:  # the copy was reloaded since: these nodes are gone
            self._ignore -= 1
        elif not self.owed:  # nothing owed (a restarted worker, or a first game): nothing to renumber
            self.stale = self.stale or bool(ids)
        elif ids is None or len(ids) != len(self.owed[0]):  # a game dropped, or a retried batch
            self.stale = True
            self._ignore += len(self.owed) - 1
            self.owed.clear()
        else:
            renumber(self.owed.popleft(), ids)

    def _named_from(self) -> int:
        """The lowest local id still waiting for its row id (the next new node's if none)."""
        return next((nodes[0].node_id for nodes in self.owed if nodes), self.tree.next_id)

    def play(self, game_id: int, settle: Callable[[], None] | None = None) -> Result:
        """Play game ``game_id`` (colours from its id, as in :func:`treelab.train`) and take what it added.

        ``settle`` is called between the game and the take: it hands the row ids that came back
        meanwhile to :meth:`stored`, so the delta names those nodes by row id.
        """
        if self.due():
            self._refresh()  # a copy whose ids went astray; on Ray, now and then, the other workers' games
        elif self._share and self.since_share > 0 and self.since_share >= SHARE_EVERY * self.share_seconds:
            began = time.process_time()  # CPU time: a share that waits on a busy machine is not dearer
            share_top(self.job.db, self.tree, SHARED)
            self.share_seconds, self.since_share = time.process_time() - began, 0.0
        began = time.process_time()
        self.me.should_stop = self.stopped
        opponent = self.job.training.opponent
        tree_player = tree_player_of(opponent, game_id)
        first = now()
        played = play_recorded(self.game, self.me, self.other, tree_player, self.stopped)
        row = None
        if played.state.is_terminal and not self.stopped():  # a game whose searches were cut is not logged
            row = played.record(self.game, game_id, opponent, tree_player, self.job.training.iterations, first,
                                self.job.logged_as).as_dict()
        if settle is not None:
            settle()
        named_from = self._named_from()
        stamp(self.tree, game_id)  # the game's new nodes name it (a game cut short is dropped by the writer)
        delta, new = take(self.tree, self.seen)
        self.owed.append(new)
        keep_game_nodes()
        self.played_seconds += time.process_time() - began
        self.since_share += time.process_time() - began
        return Result(self.number, row, delta, named_from)


class Writer(DeltaWriter):
    """Owns the database: adds the workers' deltas straight to the file, each batch in one transaction.

    A :class:`~treelab.store.writer.DeltaWriter` taking :class:`Result` s; it holds no tree.
    """

    def __init__(self, job: Job) -> None:
        super().__init__(job.db, job.game, c=job.search.stored_c)

    def write(self, results: list[Result], *, chained: bool = False, wait: bool = True,
              chains: dict[str, AssignedIds | None] | None = None
              ) -> tuple[list[dict[str, Any]], list[list[int] | None]]:
        """Add ``results`` to the file, with their games, in one transaction (see :meth:`DeltaWriter.store`).

        A result without its game row (a game cut short when the run stopped) is dropped: the file holds
        whole games or nothing, so the root's visits stay the simulations of the games logged.
        ``chained``: the results are one worker's consecutive games (only the last may be cut short).
        ``chains``: the results come from workers that go on playing while theirs are written (each
        result's :attr:`~Result.named_from`): the row ids of each worker's deltas, kept from batch to batch.
        ``wait`` False: a :class:`~treelab.errors.DatabaseBusyError` if another process writes the file now.
        """
        whole = [(f"worker {r.worker}", r.row, r.delta) for r in results if r.row is not None]
        if chains is not None:
            links, firsts = dict(chains), set[str]()
            for r in results:
                source = f"worker {r.worker}"
                if r.row is not None and source not in firsts:  # later ones of a worker follow on in the batch
                    firsts.add(source)
                    named = r.delta.first if r.named_from is None else r.named_from
                    links[source] = trimmed(links.get(source), named, r.delta.first)
            chains.update(links)
        rows, stored = self.store(whole, chained=chained, wait=wait, chains=chains) if whole else ([], [])
        ids = iter(stored)
        return rows, [None if r.row is None else next(ids) for r in results]
