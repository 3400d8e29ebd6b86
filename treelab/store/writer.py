"""The writer: the one process that adds a tree's changes to its file, for a training run's writer process and
for parallel training.

A :class:`DeltaWriter` holds no tree. It adds each batch of :class:`~treelab.store.deltas.Delta` s (what
workers' trees gained, or what a training run's last game added) to the file in one transaction with the
batch's games (the merge rule of :func:`~treelab.store.deltas.apply`), and says which row ids the new nodes
got. It remembers which stored rows its batches gave children, so a new node under any other stored row
needs no lookup: only a node another writer may have stored since the worker's copy was loaded is looked
up by ``(parent, move)``.

A :class:`BackgroundSaver` saves a training run's games from another process while this one plays the next.
:func:`treelab.train` saves the tree after every game. On a big tree that save costs as much as the game's
searches: at a million Connect Four nodes and 400 simulations a move, about 22 ms of every 46 ms go to
SQLite, adding the game's 7,000 new rows and 2,000 count increments to pages spread over the file. The
saver hands each game's changes to a writer process instead, as a :class:`~treelab.store.deltas.Delta` (a
few arrays), and plays on; the writer adds them to the file with the game's row in one transaction (a
:class:`DeltaWriter`: the merge rule of parallel training, so someone else writing the file meanwhile is
merged as always). Nothing about the file changes:

- each game is still one transaction, and a ``kill -9`` of either process
  leaves the file at its last committed game (the writer finishes the game it
  holds, then sees its parent gone and stops);
- a game counts as logged (the ``on_game`` callback, the progress bar) once the
  writer has committed it, at most one game after it was played;
- an error of the writer (a contradicting proof, a locked or vanished file)
  is raised here at the next save.

Which process writes is decided once per run, never per game: :meth:`BackgroundSaver.track`
creates a new file here (its root only, before any game), then waits for the
writer to be ready; every game of the run is then saved by the writer, or, if
no writer could start (one core, a daemonic process, a writer not ready in
time), every game is saved here. Both apply the same
:class:`~treelab.store.deltas.Delta` with :func:`~treelab.store.deltas.apply`,
so the file is the same either way. Before each hand-over the tree gets the row
ids of the previous game's new nodes, so a delta always names stored nodes
by row id. Worker processes are started by :func:`spawn` (:func:`start_method`).
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StoreError, UnknownGameError, WorkerError
from ..games import find_game
from ..tree import Tree, TreeNode
from .binding import binding_of, stored_counts
from .dbfile import KeptConnection, is_empty, reading, writing
from .deltas import AssignedIds, Delta, apply, depth_counts, renumber, stamp, start, take
from .merging import Increment, log_sources, read
from .persistence import run_meta, save
from .schema import DbPath, check_meta, display, migrate

__all__ = ["GROWN_LOG", "BackgroundSaver", "DeltaWriter", "simulations", "spawn", "start_method", "trimmed"]

# -- the one writer: deltas straight into the file ---------------------------------------------------------------------
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

        A game's source (its worker, its machine) is logged in :data:`~treelab.store.merging.SOURCES`;
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

# -- the writer process of a training run ------------------------------------------------------------------------------


_READY = "ready"

_STORED = "stored"

_FAILED = "failed"


def _write(db: str, game: str, conn: Any) -> None:
    """The writer process: store each ``(row, delta)`` received, answering with the rows and the new ids.

    Once its parent is gone (a ``kill -9``), it stores what it holds and stops without a word.
    """
    if not _answer(conn, (_READY,)):  # imported: the file is opened at the first game (the parent may create it)
        return
    writer: DeltaWriter | None = None
    earlier: AssignedIds | None = None  # the last game's new nodes: the next delta may name them by local id
    known = -1  # the file's save count the tree knows everything up to (its own games, not others' saves)
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the parent is gone: what it sent is stored, nothing more comes
                return
            if message is None:
                return
            row, delta, meta = message
            try:
                if writer is None:
                    writer, known = DeltaWriter(db, game), delta.seen
                writer.meta = meta
                rows, stored = writer.store([(None, row, replace(delta, seen=known))], earlier=earlier)
                if writer.found == known:  # no one else saved: the tree knows this save too
                    known = writer.generation
            except Exception as exc:  # every failure goes back to the parent, which raises it
                _answer(conn, (_FAILED, _portable(exc)))
                return
            ids = stored[0] or []
            earlier = AssignedIds(delta.first, np.array(ids, dtype=np.int64))
            if not _answer(conn, (_STORED, rows, ids, known)):
                return
    finally:
        if writer is not None:
            writer.close()


def _answer(conn: Any, message: tuple[Any, ...]) -> bool:
    """Send ``message`` to the parent; False if it is gone."""
    try:
        conn.send(message)
    except OSError:
        return False
    return True


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling as itself (treelab's errors do), else a :class:`StoreError` saying it."""
    import pickle

    try:
        return pickle.loads(pickle.dumps(exc))  # type: ignore[no-any-return]
    except Exception:
        return StoreError(f"the writer process failed: {type(exc).__name__}: {exc}")


class BackgroundSaver:
    """Saves the games of one training run into ``db``, from a writer process once that is ready.

    The writer starts at once, so it gets ready while the tree loads; then
    :meth:`track` the tree (which decides who writes: :attr:`by_writer`),
    :meth:`save` after every game (it returns the game rows committed since the last call)
    and :meth:`finish` at the end, which
    waits for the last game. As a context manager, leaving the block stops the
    writer after the game it holds, whatever happened.

    Args:
        db: the database file.
        game: the game of its tree.
        background: False saves every game here, as :func:`~treelab.store.persistence.save` does.
    """

    def __init__(self, db: DbPath, game: str, *, background: bool = True) -> None:
        self.db = db
        self.tree: Tree | None = None
        self._proc: Any = None
        self._conn: Any = None
        if background:  # a daemonic Pool worker may start no children, a full machine no process: then every
            with suppress(AssertionError, OSError, RuntimeError, ValueError):  # game is saved here, as before
                self._proc, self._conn = spawn(_write, (os.fspath(db), game), "treelab-writer")
        self._ready = False
        self._handing = False  # games go to the writer (decided once, by track)
        self.handed = 0
        """Saves handed to the writer process so far (the rest were done in this process)."""
        self._owed: list[TreeNode] | None = None  # the new nodes of the game the writer holds
        self._seen = -1  # the file's save count the tree knows everything up to

    def track(self, tree: Tree, *, timeout: float = 60.0) -> None:
        """Save ``tree`` from now on (as loaded from the file, or new), and decide which process writes its games.

        A new file is created here first (the root, no game). Then, if a writer was
        started, this waits for it (``timeout`` seconds at most): from then on it saves
        every game; if it is not ready in time it is stopped, and every game is saved here.
        """
        self.tree = tree
        binding = binding_of(tree)
        if binding is None or binding.tree_id is None:
            save(tree, self.db)  # a new file, before any game: the writer process and this one both add to it
        if self._conn is not None and not self._ready and self._conn.poll(timeout):
            with suppress(WorkerError, StoreError, OSError, EOFError):
                self._poll_ready()
        if not self._ready or tree.new_nodes or tree.baselines:
            self._end(wait=False)  # decided: every game of this run is saved here
            return
        self._seen = binding_of(tree).generation  # type: ignore[union-attr]
        start(tree)  # new nodes get local ids until the writer stores them
        self._handing = True

    @property
    def by_writer(self) -> bool:
        """True if the writer process saves this run's games (decided by :meth:`track`)."""
        return self._handing

    def _receive(self) -> tuple[Any, ...]:
        try:
            message: tuple[Any, ...] = self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(timeout=5)
            code = self._proc.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            self._end(wait=False)
            raise WorkerError(
                f"the writer process died ({how}); every game logged before is saved in {display(self.db)!r}: "
                "train again to resume"
            ) from None
        if message[0] == _FAILED:
            self._end(wait=False)
            raise message[1]
        return message

    def _poll_ready(self) -> bool:
        """Whether the writer is ready (never waiting for it)."""
        if not self._ready and self._conn is not None and self._conn.poll():
            self._receive()
            self._ready = True
        return self._ready

    def _settle(self) -> list[dict[str, Any]]:
        """Wait for the game the writer holds; give its new nodes their row ids; return its row(s)."""
        if self._owed is None:
            return []
        _, rows, ids, known = self._receive()
        renumber(self._owed, ids)
        self._owed = None
        binding = binding_of(self.tree) if self.tree is not None else None
        if binding is not None and known > binding.generation:  # the file's save count the tree matches now (no
            binding.generation = known                          # one else saved since), as an in-process save sets it
        return list(rows)

    # -- saving ------------------------------------------------------------
    def save(self, row: dict[str, Any] | None) -> list[dict[str, Any]]:
        """Save the last game (``row``; None: only what searches of a game cut short learned), its new nodes
        stamped with its id (:func:`~treelab.store.deltas.stamp`; a game cut short: no ``created_game``).

        Returns:
            The game rows committed since the last call (this one's, if it was saved
            here; the previous game's, if the writer holds this one).
        """
        tree = self.tree
        if tree is None:
            raise StoreError("no tree to save: track() it first")
        stamp(tree, None if row is None else row.get("id"))  # the game's nodes name it (not logged: none)
        if not self._handing:
            save(tree, self.db, games=[] if row is None else [row])
            return [] if row is None else [row]
        # taken while the writer may still store the last game: its new nodes keep their local ids here
        delta, new = take(tree, self._seen)  # (the writer counts the saves the tree knows from here on)
        logged = self._settle()
        try:
            self._conn.send((row, delta, run_meta(tree)))
        except OSError:
            self._receive()  # it died: say how
        self._owed = new
        self.handed += 1
        binding = binding_of(tree)
        assert binding is not None  # track() saved or loaded it
        for done in ([] if row is None else [row]) + logged:  # committed ids may differ (another writer's games)
            binding.last_game = max(binding.last_game, int(done["id"]))
        return logged

    def finish(self) -> list[dict[str, Any]]:
        """Wait until every game handed over is committed; stop the writer. Returns their rows."""
        try:
            return self._settle()
        finally:
            self._stop()

    def _stop(self) -> None:
        """Stop the writer after what it holds; one still starting up holds nothing and is ended at once."""
        with suppress(WorkerError, StoreError, OSError, EOFError):
            self._poll_ready()
        self._end(wait=self._ready)

    def _end(self, *, wait: bool) -> None:
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        self._handing, self._owed = False, None
        if proc is None:
            return
        if wait:
            with suppress(OSError):
                conn.send(None)
            proc.join(timeout=60)
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        conn.close()

    def __enter__(self) -> BackgroundSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()


def start_method() -> str:
    """How :func:`spawn` starts a child here: ``"fork"`` on Linux while this process runs one thread, else ``"spawn"``.

    A forked child starts at once from a copy of this process, its modules imported; a spawned one is a
    fresh interpreter that imports treelab again first (about half a second of CPU, a tenth of a
    200-game run's writing). Forking is safe only where no other thread could hold a lock the copy
    would keep forever (a notebook's kernel, a test runner's threads: then spawn), and on Linux only
    (macOS's system libraries may not be used in a forked child).
    """
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


def spawn(target: Callable[..., None], args: tuple[Any, ...], name: str) -> tuple[Any, Any]:
    """Start ``target(*args, conn)`` in a child process; return the process and this end of its pipe.

    The child is forked or a fresh interpreter (:func:`start_method`). Either way it does not
    run the parent's ``__main__`` script again (unlike :mod:`multiprocessing`'s own spawn): a
    user's script that calls :func:`treelab.train` without an ``if __name__ == "__main__":``
    guard would otherwise train once more in every child. ``target`` must be importable.
    Ctrl-C is ignored in the child from its first instruction (the parent
    handles it and tells the child what to do), so it never dies with a traceback; one that comes while
    the child starts is not lost to the parent (held, or kept pending, then handled as usual).
    A forked child must not use a database connection of the parent: start children before any is open.
    """
    ctx: Any = multiprocessing.get_context(start_method())  # a fork or spawn context: both have Process
    forked = ctx.get_start_method() == "fork"
    mine, theirs = ctx.Pipe(duplex=True)
    _PARENT_ENDS.add(mine)  # before the fork: the child closes its copy
    main = sys.modules.get("__main__")
    hidden = {} if forked else {key: getattr(main, key) for key in ("__file__", "__spec__") if hasattr(main, key)}
    calm = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if calm and forked else None
    held: list[int] = []  # a Ctrl-C that came while the child forked: the parent's, handled once it has
    masking = calm and not forked and hasattr(signal, "pthread_sigmask")
    try:
        if hidden:  # else multiprocessing imports the script as __mp_main__ in the child, running it
            main.__spec__ = None  # type: ignore[union-attr]
            if "__file__" in hidden:
                del main.__file__  # type: ignore[union-attr]
        if masking:
            # Blocked here, a Ctrl-C stays pending (or goes to another thread, whose handler trips this one's); the
            # spawned child inherits the mask and ignores the signal before it unblocks it (_child). The resource
            # tracker's first start unblocks SIGINT: it is started before.
            from multiprocessing import resource_tracker

            resource_tracker.ensure_running()
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        if calm and forked:  # the forked child ignores it as its first instruction (_child); until then it holds
            signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))  # it, as the parent does
        proc = ctx.Process(target=_child, args=(target, args, theirs), name=name, daemon=True)
        proc.start()
    finally:
        for key, value in hidden.items():
            setattr(main, key, value)
        if calm and forked:
            signal.signal(signal.SIGINT, before if before is not None else signal.SIG_DFL)
        if masking:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending Ctrl-C reaches its handler now
        theirs.close()
    if held:  # the Ctrl-C is the parent's: its own handler takes it now (a flag, or KeyboardInterrupt)
        signal.raise_signal(signal.SIGINT)
    return proc, mine


_PARENT_ENDS: weakref.WeakSet[Any] = weakref.WeakSet()
"""This process's ends of its children's pipes: a forked child closes its copies, so that each pipe reads its end
(EOF) once the process holding the other end is gone (a child's way to see its parent killed)."""


def _child(target: Callable[..., None], args: tuple[Any, ...], conn: Any) -> None:
    """A child of :func:`spawn`: ignore Ctrl-C (a spawned child then unblocks it, inherited blocked: one pending is
    dropped), close the copies of the parent's pipe ends (forked), then run ``target(*args, conn)``.

    The objects a forked child inherits are frozen first: its collections never walk the parent's heap (which
    would also copy every page of it; a long-lived caller, a notebook, may hold trees of earlier runs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    gc.freeze()
    for end in list(_PARENT_ENDS):
        with suppress(OSError):
            end.close()
    target(*args, conn)
