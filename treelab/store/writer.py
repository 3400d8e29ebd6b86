"""Saving a training run's games from another process while this one plays the next.

:func:`treelab.train` saves the tree after every game. On a big tree that
save costs as much as the game's searches: at a million Connect Four nodes
and 400 simulations a move, about 22 ms of every 46 ms go to SQLite, adding
the game's 7,000 new rows and 2,000 count increments to pages spread over
the file. A :class:`BackgroundSaver` hands each game's changes to a writer
process instead, as a :class:`~treelab.store.deltas.Delta` (a few arrays), and
plays on; the writer adds them to the file with the game's row in one
transaction (:class:`~treelab.store.deltawriter.DeltaWriter`: the merge rule of
parallel training, so someone else writing the file meanwhile is merged as
always). Nothing about the file changes:

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
by row id.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import StoreError, WorkerError
from ..tree import Tree, TreeNode
from .binding import binding_of
from .deltas import AssignedIds, renumber, stamp, start, take
from .deltawriter import DeltaWriter
from .persistence import run_meta, save
from .schema import DbPath, display

__all__ = ["BackgroundSaver", "spawn", "start_method"]

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
    handles it and tells the child what to do), so it never dies with a traceback.
    A forked child must not use a database connection of the parent: start children before any is open.
    """
    ctx: Any = multiprocessing.get_context(start_method())  # a fork or spawn context: both have Process
    forked = ctx.get_start_method() == "fork"
    mine, theirs = ctx.Pipe(duplex=True)
    _PARENT_ENDS.add(mine)  # before the fork: the child closes its copy
    main = sys.modules.get("__main__")
    hidden = {} if forked else {key: getattr(main, key) for key in ("__file__", "__spec__") if hasattr(main, key)}
    calm = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if calm else None
    try:
        if hidden:  # else multiprocessing imports the script as __mp_main__ in the child, running it
            main.__spec__ = None  # type: ignore[union-attr]
            if "__file__" in hidden:
                del main.__file__  # type: ignore[union-attr]
        if calm:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # an ignored signal stays ignored across exec
        if forked:
            proc = ctx.Process(target=_forked, args=(target, args, theirs), name=name, daemon=True)
        else:
            proc = ctx.Process(target=target, args=(*args, theirs), name=name, daemon=True)
        proc.start()
    finally:
        for key, value in hidden.items():
            setattr(main, key, value)
        if calm:
            signal.signal(signal.SIGINT, before if before is not None else signal.SIG_DFL)
        theirs.close()
    return proc, mine


_PARENT_ENDS: weakref.WeakSet[Any] = weakref.WeakSet()
"""This process's ends of its children's pipes: a forked child closes its copies, so that each pipe reads its end
(EOF) once the process holding the other end is gone (a child's way to see its parent killed)."""


def _forked(target: Callable[..., None], args: tuple[Any, ...], conn: Any) -> None:
    """A forked child: close the copies of the parent's pipe ends, then run ``target(*args, conn)``.

    The objects the child inherits are frozen first: its collections never walk the parent's heap (which
    would also copy every page of it; a long-lived caller, a notebook, may hold trees of earlier runs)."""
    gc.freeze()
    for end in list(_PARENT_ENDS):
        with suppress(OSError):
            end.close()
    target(*args, conn)
