"""The explorer's subtree diagram: :func:`treelab.view.dot.to_dot` on the drawn part only, cached.

The nodes are read with :func:`treelab.view.loading.load_view` (the drawn
nodes and their siblings, never the whole tree) and laid out by the real
``dot``, started with only the plugins an SVG needs (:mod:`.lean`). In growth
replay the nodes created after the replayed game are cut away before drawing,
and those created since the previous step get the CSS class ``new`` (Graphviz
writes each node as ``<g id="4/4/5" class="node">``; the page styles ``.new``).
Laying out still costs milliseconds, so answers are kept in a small cache keyed
by the query and the database's version, which every save changes: a diagram
is never stale.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from html import escape

from ...nodes import unlink, walk
from ...tree import Tree, TreeNode
from ..dot import node_id, to_dot
from ..loading import load_view
from .data import Replay, TreeFile
from .lean import lean_svg, plugin_dir

__all__ = ["DiagramCache"]

CACHE_SIZE = 64
"""Diagrams kept per server (a few megabytes at most)."""


class DiagramCache:
    """Draws subtree diagrams and keeps the latest :data:`CACHE_SIZE` of them."""

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[object, ...], str] = OrderedDict()
        self._lock = threading.Lock()
        # the lean dot's plugin directory, made while the server starts: the first diagram does not wait for it
        threading.Thread(target=plugin_dir, name="treelab-dot-plugins", daemon=True).start()

    def svg(self, source: TreeFile, path: str, *, depth: int, top: int | None, replay: Replay | None) -> str:
        """The SVG of the subtree at ``path`` (``depth`` levels, ``top`` children per node).

        Raises:
            NotationError, PathNotFoundError, TooLargeError, RenderError: as :func:`treelab.view.dot.render`.
        """
        key = (source.path, source.game.parse(path), depth, top, replay, source.info()["version"])
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        text = draw(source, path, depth=depth, top=top, replay=replay)
        with self._lock:
            self._kept[key] = text
            while len(self._kept) > CACHE_SIZE:
                self._kept.popitem(last=False)
        return text


def draw(source: TreeFile, path: str, *, depth: int, top: int | None, replay: Replay | None) -> str:
    """Lay out the diagram (no cache)."""
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
    return text


def _prune(tree: Tree, replay: Replay) -> None:
    """Cut away the nodes created after ``replay.game`` (they were not in the tree yet).

    Nodes cannot be moved through anytree (a node's place is its move path), so the
    late children of this private, throw-away view are unlinked directly.
    """
    for node in walk(tree.root):  # a node's children are read after it is yielded: the late ones are gone
        for kid in [k for k in node.kids if k.created_game is not None and k.created_game > replay.game]:
            unlink(kid)
