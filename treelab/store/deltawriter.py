"""The one writer of parallel training and of a training run's writer process: deltas straight into the file.

A :class:`DeltaWriter` holds no tree. It adds each batch of
:class:`~treelab.store.deltas.Delta` s (what workers' trees gained) to the file
in one transaction with the batch's games (the merge rule of
:func:`~treelab.store.deltas.apply`), and says which row ids the new nodes got.
It remembers which stored rows its batches gave children, so a new node under
any other stored row needs no lookup: only a node another writer may have
stored since the worker's copy was loaded is looked up by ``(parent, move)``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StoreError, UnknownGameError
from ..games import find_game
from .binding import stored_counts
from .dbfile import KeptConnection, is_empty, reading, writing
from .deltas import AssignedIds, Delta, apply, depth_counts
from .increments import Increment, log_sources, read
from .schema import DbPath, check_meta, display, migrate

__all__ = ["GROWN_LOG", "DeltaWriter", "simulations", "trimmed"]

GROWN_LOG = 4_000_000
"""Row ids a writer remembers as given new children, to look up fewer new nodes (32 MB); older saves: look up all."""



class DeltaWriter:
    """Owns a database file: adds deltas straight to it, each batch in one transaction with its games.

    It holds no tree. Saving is idempotent per game: a delta whose game is
    already logged is skipped (a batch retried after the writer restarted is
    not added twice).

    Args:
        db: the database file (created, holding only a root, if missing).
        game: the game its tree is of.
        c: the exploration constant a new file records (None: sqrt(2)).
        meta: ``meta`` rows to write with every batch (the run's ``c``, treelab's version).
    """

    def __init__(self, db: DbPath, game: str, *, c: float | None = None, meta: dict[str, str] | None = None) -> None:
        from .persistence import open_tree, save

        self.db = db
        self.game = game
        self.meta = dict(meta or {})
        if not Path(db).exists() or is_empty(db):
            save(open_tree(db, game, c=c), db)  # a new file: workers load their snapshots from it
        try:
            wanted = find_game(game).name
        except UnknownGameError:  # a game registered only in the process that started this writer: its name
            wanted = game
        self.game = wanted
        with reading(db, wanted) as (conn, meta):
            cols = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
            when = "started_at" if "started_at" in cols else "NULL"
            self.logged = {gid: (moves, at) for gid, moves, at in conn.execute(f"SELECT id, moves, {when} FROM games")}
            """Each game logged (a retried batch's are skipped): its id -> (moves, started_at). Another
            writer's game can have the id this run asked for; only the same game is a retry."""
            self._generation = self.found = int(meta.get("generation", 0))
        self._kept = KeptConnection()
        self._grown: list[tuple[int, np.ndarray, str | None]] = []  # (save count, stored rows given new children
        # then, by whom: a source's own additions are known to its tree; None: to none)
        self._grown_since = self._generation  # the log above is complete for the saves after this one
        self._grown_size = 0  # the row ids the log holds
        self._top: int | None = None  # the largest row id after this writer's last batch (None: none yet)

    def _grown_after(self, seen: int, now: list[tuple[np.ndarray, str | None]],
                     source: str | None) -> np.ndarray | None:
        """The stored rows given new children after save ``seen`` by others than ``source`` (None: not known that far
        back). A source's tree holds the children its own earlier deltas added (a source None: any other)."""
        if seen < self._grown_since:
            return None
        parts = [ids for gen, ids, by in self._grown if gen > seen and (by is None or by != source)]
        parts += [ids for ids, by in now if by is None or by != source]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _note_others(self, conn: Any, generation: int, top: int) -> None:
        """Log as grown at save ``generation`` the parents of the rows others inserted since this writer's last batch
        (rows above its last top: ids only grow). Others' merges into existing rows give no row new children."""
        if self._top is None or top < self._top:  # unknown, or rows went away: forget the log
            self._grown, self._grown_since, self._grown_size = [], generation, 0
            return
        parents = [pid for (pid,) in conn.execute("SELECT DISTINCT parent_id FROM nodes WHERE id > ?", (self._top,))]
        self._grown.append((generation, np.array(parents, dtype=np.int64), None))
        self._grown_size += len(parents)

    def _log_grown(self, generation: int, now: list[tuple[np.ndarray, str | None]]) -> None:
        by_source: dict[str | None, list[np.ndarray]] = {}
        for ids, by in now:
            by_source.setdefault(by, []).append(ids)
        for by, parts in by_source.items():  # repeats and all: np.isin copes
            self._grown.append((generation, np.concatenate(parts), by))
            self._grown_size += len(self._grown[-1][1])
        while self._grown_size > GROWN_LOG and len(self._grown) > 1:  # a running total: no sum over every save
            gen, ids, _ = self._grown.pop(0)
            self._grown_since, self._grown_size = gen, self._grown_size - len(ids)

    def stats(self) -> tuple[int, int, int]:
        """The tree's nodes, its root's visits, and the id of the last game logged."""
        with reading(self.db) as (conn, meta):
            nodes = sum(stored_counts(conn, meta))
            visits = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()[0]
            last = conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0
        return nodes, visits, max(last, max(self.logged, default=0))

    def snapshot(self) -> tuple[list[int], Increment]:
        """The whole stored tree as an increment, with its rows' ids (what a worker on another machine starts from)."""
        with reading(self.db) as (conn, _):
            return [nid for (nid,) in conn.execute("SELECT id FROM nodes ORDER BY id")], read(conn)

    found: int
    """The file's save count when the last batch began (above :attr:`generation` before it: someone else saved)."""

    @property
    def generation(self) -> int:
        """The file's save count after this writer's last batch (what a tree that knows every batch has seen)."""
        return self._generation

    def store(self, batch: Sequence[tuple[str | None, dict[str, Any] | None, Delta]], *,
              earlier: AssignedIds | None = None, chained: bool = False, wait: bool = True,
              chains: dict[str, AssignedIds | None] | None = None
              ) -> tuple[list[dict[str, Any]], list[list[int] | None]]:
        """Add a batch of ``(source, game row or None, delta)`` to the file in one transaction.

        A game's source (its worker, its machine) is logged in :data:`~treelab.store.increments.SOURCES`;
        None logs none (a game of this process's own run). ``earlier``: the previous delta of the
        tree the batch's deltas come from, as :func:`~treelab.store.deltas.apply` takes it.
        ``chained``: the batch's deltas are consecutive takes of one tree (a worker that held its
        games while the file was busy), so each may name the new nodes of those before it by local id.
        ``chains``: instead, one tree per source (workers that go on playing while their deltas are
        written): each source's :class:`~treelab.store.deltas.AssignedIds` (see :func:`trimmed`), used for
        its deltas and extended by them (the dict is updated only once the batch is committed).
        ``wait`` False: a file another process is writing now is a
        :class:`~treelab.errors.DatabaseBusyError` at once, and nothing is written.

        Returns:
            The game rows logged (deltas of games logged before are skipped), and
            for each delta its new nodes' row ids (None for one skipped).
        """
        from .persistence import log_games, put_meta
        from .persistence import now as timestamp  # ``now`` is this method's list of grown rows

        rows, sources, stored = [], [], list[list[int] | None]()
        name = display(self.db)
        with writing(self.db, self._kept, wait=wait) as (conn, meta):
            if meta is None:
                raise StoreError(f"{name!r} was emptied or replaced mid-run: train again into it to resume")
            migrate(conn, check_meta(meta, name, self.game))
            generation = self.found = int(meta.get("generation", 0))
            top = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
            before = top  # the rows this batch adds are above it
            if generation != self._generation:  # someone else saved: the rows they gave children are grown too
                self._note_others(conn, generation, top)
            counts = stored_counts(conn, meta)
            now: list[tuple[np.ndarray, str | None]] = []
            links = dict(chains) if chains is not None else None
            for source, row, delta in batch:
                if row is not None and self.logged.get(row["id"]) == _key(row):  # a retried batch
                    stored.append(None)
                    continue
                own = None  # whose additions the delta's tree holds (None: any writer's may be missing)
                if links is not None:
                    earlier, own = links.get(source or ""), source
                ids, fresh, grew = apply(conn, delta, top=top, name=name, created=row is not None,
                                         grown=self._grown_after(delta.seen, now, own), earlier=earlier)
                stored.append(ids.tolist())
                if chained or links is not None:  # the next delta may name these nodes, and earlier ones, by local id
                    earlier = _chain(earlier, delta, ids)
                if links is not None:
                    links[source or ""] = earlier
                    now.append((grew, source))  # what the source added, its tree holds ...
                    now.append((ids[~fresh], None))  # ... but not the children others gave the rows it merged into
                else:
                    now.append((grew, None))
                top = max(top, int(ids.max(initial=0)))
                counts = depth_counts(counts, delta.depths[fresh])
                if row is not None:
                    rows.append(row)
                    if source is not None:
                        sources.append((row, source))  # the id it gets is known once logged
            root = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()[0]
            asked = [row["id"] for row in rows]  # a retried batch names its games by the ids it asked for
            log_games(conn, root, rows, counts, since=before)
            if sources:
                log_sources(conn, [(row["id"], source) for row, source in sources])
            put_meta(conn, {**self.meta, "generation": str(generation + 1), "depth_counts": json.dumps(counts),
                            "saved_at": timestamp()})
        if chains is not None and links is not None:
            chains.update(links)
        self.logged.update({i: _key(row) for i, row in zip(asked, rows, strict=True)})  # what a retry asks
        self.logged.update({row["id"]: _key(row) for row in rows})
        self._generation = generation + 1
        self._top = top
        self._log_grown(self._generation, now)
        return rows, stored

    def close(self) -> None:
        """Let go of the database connection kept open between batches."""
        self._kept.close()


def trimmed(earlier: AssignedIds | None, named_from: int, first: int) -> AssignedIds | None:
    """The part of a source's ``earlier`` that a delta with new nodes from local id ``first`` on, naming no local id
    below ``named_from``, may name (None: none); the rest is forgotten.

    Raises:
        StoreError: the delta may name local ids ``earlier`` does not map (a delta lost or out of order).
    """
    if named_from >= first:  # it names no earlier delta's nodes by local id (its tree was perhaps reloaded)
        return None
    if earlier is None or named_from < earlier.first or earlier.first + len(earlier.ids) != first:
        raise StoreError("a worker's delta names nodes of deltas that were not stored: store them in order")
    return AssignedIds(named_from, earlier.ids[named_from - earlier.first:])


def _chain(earlier: AssignedIds | None, delta: Delta, ids: np.ndarray) -> AssignedIds:
    """``earlier`` extended by ``delta``'s new nodes and their row ids (its local ids follow on from earlier's)."""
    if earlier is None or not len(earlier.ids):
        return AssignedIds(delta.first, ids)
    if delta.first != earlier.first + len(earlier.ids):
        raise StoreError("a chained batch's deltas are not consecutive takes of one tree: store them one by one")
    return AssignedIds(earlier.first, np.concatenate([earlier.ids, ids]))


def simulations(delta: Delta) -> int:
    """The simulations ``delta`` adds: its root's visit increment.

    Every stored path starts at the root, so no node gains more visits than the root (a stored
    node, so among :attr:`Delta.known`): the largest visit increment is the root's.
    """
    most = [int(part[:, 0].max()) for part in (delta.known_counts, delta.counts) if len(part)]
    return max(most, default=0)


def _key(row: dict[str, Any]) -> tuple[Any, Any]:
    """What tells a game from another logged under the same id: its moves and when it started."""
    return (row.get("moves"), row.get("started_at"))
