"""The explorer's subtree diagram: :func:`treelab.view.dot.to_dot` on the drawn part only, cached.

The nodes are read with :func:`treelab.view.loading.load_view` (the drawn
nodes and their siblings, never the whole tree) and laid out by the real
``dot``, started with only the plugins an SVG needs (:mod:`.svgdot`). In growth
replay the nodes created after the replayed game are cut away before drawing,
and those created since the previous step get the CSS class ``new`` (Graphviz
writes each node as ``<g id="4/4/5" class="node">``; the page styles ``.new``).
Laying out still costs milliseconds, so answers are kept in a small cache keyed
by the query and the database's version, which every save changes: a diagram
is never stale.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from html import escape

from ...nodes import unlink, walk
from ...tree import Tree, TreeNode
from ..dot import node_id, to_dot
from ..loading import load_view
from ..subtree import filter_children
from .data import Replay, TreeFile
from .svgdot import lean_svg, plugin_dir

__all__ = ["DiagramCache"]

CACHE_SIZE = 64
"""Diagrams kept per server (a few megabytes at most)."""
PREFETCH = 2
"""How many of a drawn node's children (the first by the move-choice rule) get their diagrams laid out ahead
(0: none)."""


class DiagramCache:
    """Draws subtree diagrams, keeps the latest :data:`CACHE_SIZE`, and lays out the likely next ones ahead.

    After a diagram is drawn for a request, the diagrams of its :data:`PREFETCH`
    most visited children (the clicks the page offers first; same depth, top and
    replay) are laid out on one background thread, so a click down the tree
    usually finds its diagram ready. A request for a diagram being laid out
    ahead waits for that layout rather than starting a second one.
    """

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[object, ...], tuple[str, list[str]]] = OrderedDict()  # SVG, children
        self._lock = threading.Lock()
        self._running: dict[tuple[object, ...], Future[tuple[str, list[str]]]] = {}
        # one daemon thread: a server that stops never waits for the layouts asked ahead (an executor's
        # threads would run every queued one before the process could exit)
        self._ahead: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        self._closed = False
        threading.Thread(target=self._work, name="treelab-diagram-ahead", daemon=True).start()
        # the lean dot's plugin directory, made while the server starts: the first diagram does not wait for it
        self._ahead.put(plugin_dir)

    def svg(self, source: TreeFile, path: str, *, depth: int, top: int | None, replay: Replay | None) -> str:
        """The SVG of the subtree at ``path`` (``depth`` levels, ``top`` children per node).

        Raises:
            NotationError, PathNotFoundError, TooLargeError, RenderError: as :func:`treelab.view.dot.render`.
        """
        text, kids = self._get(source, path, depth, top, replay)
        for kid in kids[:PREFETCH] if not self._closed else ():
            self._ahead.put(functools.partial(self._get, source, kid, depth, top, replay))
        return text

    def _get(self, source: TreeFile, path: str, depth: int, top: int | None,
             replay: Replay | None) -> tuple[str, list[str]]:
        """The diagram (from the cache, a layout under way, or drawn now) and its children's paths."""
        key = (source.path, source.game.parse(path), depth, top, replay, source.info()["version"])
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
            running = self._running.get(key)
            if running is None:
                running = self._running[key] = Future()
                mine = True
            else:
                mine = False
        if not mine:
            return running.result()
        try:
            text, kids = draw(source, path, depth=depth, top=top, replay=replay)
        except BaseException as exc:
            with self._lock:
                del self._running[key]
            running.set_exception(exc)
            raise
        with self._lock:
            del self._running[key]
            self._kept[key] = (text, kids)
            while len(self._kept) > CACHE_SIZE:
                self._kept.popitem(last=False)
        running.set_result((text, kids))
        return text, kids

    def close(self, timeout: float = 10.0) -> bool:
        """Stop laying out ahead: drop the layouts not started, wait for the one under way (its reads end,
        so SQLite removes the ``-wal``/``-shm`` files beside the database as the process exits)."""
        self._closed = True
        with contextlib.suppress(queue.Empty):
            while True:
                self._ahead.get_nowait()
        return self.settled(timeout)

    def settled(self, timeout: float | None = None) -> bool:
        """Wait until the layouts asked ahead so far are done (tests, benchmarks); whether they were in time."""
        done = threading.Event()
        self._ahead.put(done.set)
        return done.wait(timeout)

    def _work(self) -> None:
        """Run the jobs asked ahead, in turn; a failure is left for the request that asks for it to report."""
        while True:
            job = self._ahead.get()
            with contextlib.suppress(Exception):
                job()


def draw(source: TreeFile, path: str, *, depth: int, top: int | None,
         replay: Replay | None) -> tuple[str, list[str]]:
    """Lay out the diagram (no cache); also the paths of the drawn node's children (laid out ahead)."""
    moves = source.game.parse(path)
    tree, below = load_view(source.path, path=moves, depth=depth, top=top)
    fresh: list[TreeNode] = []
    if replay is not None:
        _prune(tree, replay)
        if replay.since is not None:
            fresh = [n for n in walk(tree.find(moves)) if (n.created_game or 0) > replay.since]
    text = lean_svg(to_dot(tree, path=moves, depth=depth, top=top, counts_below=below))
    for node in fresh:
        gid = escape(node_id(node), quote=True)
        text = text.replace(f'<g id="{gid}" class="node">', f'<g id="{gid}" class="node new">', 1)
    kids = filter_children(tree.find(moves).children_view, top, 0) if depth else []  # the drawn ones
    return text, [source.game.notation([*moves, source.game.parse_move(k.name)]) for k in kids]


def _prune(tree: Tree, replay: Replay) -> None:
    """Cut away the nodes created after ``replay.game`` (they were not in the tree yet).

    Nodes cannot be moved through anytree (a node's place is its move path), so the
    late children of this private, throw-away view are unlinked directly.
    """
    for node in walk(tree.root):  # a node's children are read after it is yielded: the late ones are gone
        for kid in [k for k in node.children_view if k.created_game is not None and k.created_game > replay.game]:
            unlink(kid)
