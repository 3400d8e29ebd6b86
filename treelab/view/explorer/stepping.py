"""The explorer's step mode: a traced search of the position in view, for the page's stepper.

``GET /api/trace?path=SEQ&search=uct|puct|solver&iterations=N&seed=S&tree=fresh|stored`` runs a
search of the position with a :class:`~treelab.mcts.tracer.Tracer` and answers
:func:`treelab.view.step_widget.stepper_data`'s object, which ``static/stepper.js`` draws (the
notebook widget's very module). ``tree=stored`` searches a copy of the stored subtree in memory, read
only as far as the search reaches (:func:`treelab.store.reach.load_reach`: a one-simulation search reads a
line of nodes, not the subtree): the database is only read, never written. The page keeps the step in its
URL (``step=K``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import QueryError, ServeError
from ...mcts.config import SearchConfig
from ...mcts.dispatch import run_search, traced_search
from ...mcts.policies import make_rng
from ...mcts.tracer import Tracer
from ...mcts.uct import Limit
from ...tree import Tree
from ..step_widget import stepper_data
from .data import TreeFile

__all__ = ["MAX_TRACE", "SEARCHES", "TraceQuery", "TraceWorker", "trace_answer"]

MAX_TRACE = 2000
"""The most simulations the page may ask a search for."""

WHOLE_BELOW = 10_000
WHOLE_PER_SIMULATION = 50
"""A stored subtree of at most ``WHOLE_BELOW + WHOLE_PER_SIMULATION * iterations`` visits (about as many nodes) is
read whole for a traced search; a larger one only as far as the search reaches."""

SEARCHES = {"uct": SearchConfig(), "puct": SearchConfig(algorithm="puct"), "solver": SearchConfig(solver=True)}
"""The searches the page offers by name."""


@dataclass(frozen=True)
class TraceQuery:
    """What the page asks of a traced search."""

    search: str = "uct"
    """A name of :data:`SEARCHES`."""
    iterations: int = 200
    """Simulations (at most :data:`MAX_TRACE`)."""
    seed: int = 1
    """The search's seed: the same query replays the same search."""
    stored: bool = False
    """Search the stored subtree (a copy in memory) instead of a fresh tree."""

    def __post_init__(self) -> None:
        if self.search not in SEARCHES:
            raise QueryError(f"search {self.search[:40]!r} is not offered: use one of {', '.join(SEARCHES)}")


def trace_answer(source: TreeFile, path: str, query: TraceQuery) -> dict[str, Any]:
    """The stepper's data for a traced search of ``path`` (see the module doc)."""
    game = source.game
    moves = game.parse(path)
    state = game.replay(moves)
    if state.is_terminal:
        raise QueryError(f"the game is over at {game.notation(moves)!r}: step through a search of an earlier position")
    config = SEARCHES[query.search]
    limit = Limit(iterations=query.iterations)
    if query.stored:
        tracer = _stored_search(source, moves, query, limit)
    else:
        tracer = Tracer()
        traced_search(Tree(game), moves, limit=limit, search=config, rng=make_rng(query.seed), tracer=tracer)
    data = stepper_data(tracer.records, max_steps=MAX_TRACE)
    data["search"], data["tree"] = query.search, "stored" if query.stored else "fresh"
    return data


def _stored_search(source: TreeFile, moves: Sequence[int], query: TraceQuery, limit: Limit) -> Tracer:
    """The traced search of ``moves`` on the stored tree, reading only what it reaches
    (:func:`treelab.store.reach.load_reach`): search what was read; if the search changed a node whose stored
    children were not read, read those too and search again from the same seed, until it stays inside."""
    from ...store.reach import load_reach

    labels = [source.game.label(m) for m in moves]
    reach = load_reach(source.path, labels)
    search, seed = SEARCHES[query.search], query.seed
    small = reach.tree.find(labels).nb_visit <= WHOLE_BELOW + WHOLE_PER_SIMULATION * query.iterations
    if small or reach.tree.statistics == "graph":  # graph statistics read the file's whole positions table anyway
        from ...store.persistence import load

        tree = load(source.path, path=moves)  # a small subtree: read at once, searched once
        tree.forget_changes()  # a copy to search, never saved
        tracer = Tracer()
        traced_search(tree, moves, limit=limit, search=search, rng=make_rng(seed), tracer=tracer)
        return tracer
    traced = False  # first found with the untraced search (the same path, many times faster), then traced
    while True:
        before = {nid: node.nb_visit for nid, node in reach.frontier.items()}
        tracer = Tracer()
        if traced:
            traced_search(reach.tree, moves, limit=limit, search=search, rng=make_rng(seed), tracer=tracer)
        else:
            run_search(reach.tree, moves, search, limit, rng=make_rng(seed))
        touched = [nid for nid, node in reach.frontier.items() if node.nb_visit != before[nid]]
        if not touched:  # the search never left what was read: it ran as on the whole stored tree
            if traced:
                return tracer
            traced = True
            reach = load_reach(source.path, labels, reach.expanded, known=reach)  # the same nodes, unsearched
            continue
        reach = load_reach(source.path, labels, reach.expanded, touched, known=reach)


class TraceWorker:
    """A child process that runs the traced searches for a server, one at a time, so the server's own
    interpreter stays free for the page's other requests (a search in a thread of the server held the
    interpreter: ``/api/info`` took seconds while traces ran). Started at the first trace, kept for the next.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: Any = None
        self._conn: Any = None

    def answer(self, db: str | os.PathLike[str], path: str, query: TraceQuery) -> dict[str, Any]:
        """:func:`trace_answer` of the database ``db`` in the child process (its errors raised here).

        Raises:
            ServeError: the child process died.
        """
        from ...store.writer import spawn

        with self._lock:
            try:
                if self._proc is None or not self._proc.is_alive():
                    self._proc, self._conn = spawn(_serve_traces, (), "treelab-tracer")
                self._conn.send((os.fspath(db), path, query))
                ok, value = self._conn.recv()
            except (EOFError, OSError) as exc:
                self._proc = None
                raise ServeError(f"the tracing process stopped ({exc or type(exc).__name__}): ask again") from None
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def close(self) -> None:
        """Stop the child process (it also ends with this process)."""
        with self._lock:
            if self._proc is not None:
                with contextlib.suppress(OSError):
                    self._conn.send(None)
                self._proc.join(timeout=5)
                self._proc = None


def _serve_traces(conn: Any) -> None:
    """The child of :class:`TraceWorker`: answer ``(db, path, query)`` with ``(True, answer)`` or ``(False,
    error)`` until ``None`` or the parent's end closes."""
    while True:
        try:
            asked = conn.recv()
        except (EOFError, OSError):
            return
        if asked is None:
            return
        db, path, query = asked
        try:
            reply: tuple[bool, Any] = (True, trace_answer(TreeFile.open(db), path, query))
        except Exception as exc:  # sent back and raised there, as the search would have raised it in the server
            try:
                pickle.dumps(exc)
                reply = (False, exc)
            except Exception:
                reply = (False, ServeError(f"{type(exc).__name__}: {exc}"))
        conn.send(reply)
