"""The explorer wired together: the view's web app with the analysis layer's diff for its compare view.

The web app lives in the view layer (:mod:`treelab.view.explorer`), the diff
of two trees in the analysis layer (:mod:`treelab.analysis.compare`); view and
analysis are peers and neither imports the other, so the two meet here, one
layer up: ``treelab serve`` (:mod:`treelab.cli.explorer`) and
:func:`explore` (notebooks) both build their app with :func:`explorer_app`.

In a notebook, :func:`explore` starts the server on a background thread on
127.0.0.1 and shows the page in an ``<iframe>``: the same page, API and
controls as ``treelab serve``, in JupyterLab, classic Jupyter and VS Code
(their output cells allow frames to localhost; a kernel on another machine
needs the port forwarded). An in-memory :class:`~treelab.tree.Tree` is served
from a snapshot written to a temporary file; the tree itself is not touched.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
import weakref
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..analysis.compare import diff
from ..errors import GameMismatchError
from ..store.persistence import save
from ..tree import Tree, TreeNode
from ..view.explorer.app import LOOPBACK_NAMES, create_app
from ..view.explorer.data import ORACLE_BUDGET, Extras, TreeFile
from ..view.explorer.server import Background

__all__ = ["Explorer", "explore", "explorer_app"]


def _compare(a: Path, b: Path, path: str) -> dict[str, Any]:
    return diff(a, b, path, count_nodes=False).to_dict()


def explorer_app(db: str | os.PathLike[str], compare: str | os.PathLike[str] | None = None, *,
                 hosts: Sequence[str] = LOOPBACK_NAMES, model: str | os.PathLike[str] | None = None,
                 oracle: bool = False) -> Any:
    """The explorer's ASGI app over ``db`` (and ``compare``, a tree of the same game), both checked now.

    ``hosts`` are the names requests may give in their ``Host`` header (loopback names by default;
    :func:`treelab.view.explorer.server.allowed_hosts` for a server bound elsewhere). ``model`` (a model
    file of the tree's game) and ``oracle`` add a model's prior and value and each move's perfect-play
    value to the answers (:class:`~treelab.view.explorer.data.Extras`).

    Raises:
        StoreError, NotATreelabDatabaseError: a file that is missing or not a treelab database.
        GameMismatchError: ``compare`` holds a tree of another game.
        ModelFileError, ModelMismatchError: ``model`` is not a model file of the tree's game.
        UnsupportedGameError: ``oracle`` for a game without one.
    """
    main = TreeFile.open(db)
    extras = _extras(main, model, oracle)
    if compare is None:
        return create_app(main, hosts=hosts, extras=extras)
    other = TreeFile.open(compare)
    if other.game.name != main.game.name:
        raise GameMismatchError(
            f"{main.name!r} holds a {main.game.name!r} tree and {other.name!r} a {other.game.name!r} tree: "
            "compare two trees of one game"
        )
    return create_app(main, other=other, compare=functools.partial(_compare, main.path, other.path), hosts=hosts,
                      extras=extras)


def _extras(main: TreeFile, model: str | os.PathLike[str] | None, oracle: bool) -> Extras | None:
    """The model and the oracle the explorer shows beside ``main``'s statistics, checked now (None: neither)."""
    if model is None and not oracle:
        return None
    from ..learn.model import load_model
    from ..oracle import require_oracle

    return Extras(model=None if model is None else load_model(model, main.game),
                  oracle=require_oracle(main.game, max_nodes=ORACLE_BUDGET) if oracle else None)


def _snapshot(tree: Tree) -> Path:
    """Write a copy of ``tree`` to a temporary database (removed at exit); ``tree`` is not changed."""
    copy = Tree(tree.game, c=tree.c)
    pairs: list[tuple[TreeNode, TreeNode]] = [(tree.root, copy.root)]
    while pairs:
        src, dst = pairs.pop()
        dst.nb_visit, dst.nb_win, dst.nb_draw = src.nb_visit, src.nb_win, src.nb_draw
        dst.proven, dst.created_game = src.proven, src.created_game
        if src.value_sum:
            dst.value_sum, copy.valued = src.value_sum, True
        if src in tree.priors:
            copy.priors[dst] = tree.priors[src]
        pairs.extend((kid, copy.add_child(dst, kid.name)) for kid in src.children_view)
    folder = Path(tempfile.mkdtemp(prefix="treelab-explore-"))
    atexit.register(shutil.rmtree, folder, True)
    out = folder / f"{tree.game.name.replace(':', '_').replace('/', '_')}.db"
    save(copy, out)
    return out


class Explorer:
    """A running explorer (notebook cells show it as an inline frame).

    Args:
        source: a database file or an in-memory :class:`Tree`.
        path: the position shown first.
        compare: a second database of the same game, for the compare view.
        height: the frame's height in pixels.
    """

    def __init__(self, source: Tree | str | os.PathLike[str], *, path: str = "",
                 compare: str | os.PathLike[str] | None = None, height: int = 760) -> None:
        self.db = _snapshot(source) if isinstance(source, Tree) else Path(source)
        self.server = Background(explorer_app(self.db, compare))
        self._stop = weakref.finalize(self, self.server.stop)  # when dropped, and at the kernel's exit
        self.url = self.server.url
        self.path = path
        self.height = height
        self.query: dict[str, Any] = {"compare": 1} if compare is not None else {}
        """More of the page's URL state shown in the frame (the compare view opens when there is a second tree)."""

    def page(self, path: str | None = None, **query: Any) -> str:
        """The address of the page at ``path`` (and more of the page's query, e.g. ``compare=1``)."""
        params = {"path": self.path if path is None else path, **self.query, **query}
        return self.url + "?" + urllib.parse.urlencode(params)

    def api(self, endpoint: str = "node", **query: Any) -> Any:
        """Ask the running server (``node``, ``info``, ``compare``): the decoded JSON answer."""
        with urllib.request.urlopen(f"{self.url}api/{endpoint}?{urllib.parse.urlencode(query)}", timeout=30) as r:
            return json.load(r)

    def stop(self) -> None:
        """Stop the server (also done when the object is dropped, and when the kernel exits)."""
        self._stop()

    @property
    def running(self) -> bool:
        """Whether the server still serves (:meth:`stop` not called, the object not dropped)."""
        return self._stop.alive

    def _repr_html_(self) -> str:
        src = escape(self.page(), quote=True)
        return (
            f'<iframe src="{src}" width="100%" height="{int(self.height)}" style="border:1px solid #ccc" '
            f'title="treelab explorer"></iframe><div style="font-size:12px">treelab explorer at '
            f'<a href="{src}" target="_blank">{escape(self.url)}</a> (serving {escape(str(self.db))})</div>'
        )

    def __repr__(self) -> str:
        return f"Explorer({str(self.db)!r}, url={self.url!r})"


def explore(source: Tree | str | os.PathLike[str], *, path: str = "",
            compare: str | os.PathLike[str] | None = None, height: int = 760) -> Explorer:
    """Explore a tree or database inline in a notebook (JupyterLab, Jupyter, VS Code).

    Starts the explorer's server on a background thread (127.0.0.1, a free port)
    and returns an :class:`Explorer`, which a notebook cell shows as the page in a frame.
    Running the cell again reuses the server of the same database (and ``compare``) while
    it runs; a server stops when its :class:`Explorer` is dropped or stopped, and when the
    kernel exits. A :class:`Tree` is served from a snapshot taken now, so each call starts one.

    Example:
        >>> import treelab
        >>> view = treelab.explore("data/connect4.db", path="44")  # a notebook cell shows it
        >>> view.page().startswith("http://127.0.0.1:")
        True
        >>> view.api("node", path="44")["path"]
        '44'
        >>> view.stop()
    """
    if isinstance(source, Tree):
        return Explorer(source, path=path, compare=compare, height=height)
    key = (os.path.realpath(source), None if compare is None else os.path.realpath(compare))
    running = _RUNNING.get(key)
    if running is not None and running.running:
        running.path, running.height = path, height
        return running
    view = _RUNNING[key] = Explorer(source, path=path, compare=compare, height=height)
    return view


_RUNNING: weakref.WeakValueDictionary[tuple[str, str | None], Explorer] = weakref.WeakValueDictionary()
"""The explorers :func:`explore` started for database files, by their files: one server each, reused."""
