"""The explorer's web app: the page, its static files and the JSON API, as one Starlette app.

Why Starlette (with uvicorn as the server): it is a small, well-kept ASGI
toolkit (routing, query parsing, static files with path-traversal checks,
responses) with two pure-Python dependencies, so treelab writes no HTTP
parsing of its own; uvicorn serves it from one process, in the foreground for
``treelab serve`` and on a background thread for notebooks. Datasette (the
sqlite-utils family's explorer) was the other candidate: it browses tables,
but this page needs tree-shaped answers (a position, its children with UCB1,
the principal variation, a Graphviz diagram), which would all be custom
plugin code on a much larger stack.

Routes (the API is a contract, docs/design.md *Explorer*; ``db=b`` reads the
compared tree): ``/`` the page (its state is the URL), ``/static/...`` its
script and styles, ``GET /api/node``, ``GET /api/subtree.svg``, ``GET
/api/info`` (size and a version that changes on every save, for live
updates), ``GET /api/compare`` (when a second tree is served) and ``GET /api/trace`` (a traced
search of the position for the step mode, :mod:`treelab.view.explorer.stepping`; one at a time,
:data:`MAX_TRACES`: another meanwhile answers 503 ``{"error": "busy: ...", "busy": true}``). A bad
query answers 400 and an unknown position 404, both as ``{"error": ...}``;
nothing a client sends makes a 500.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...errors import (
    ExecutableNotFoundError,
    GameMismatchError,
    PathNotFoundError,
    QueryError,
    RenderError,
    ServeError,
    StoreError,
    TooLargeError,
    TreelabError,
)
from ...games import Game
from .data import Extras, Replay, TreeFile
from .diagram import DiagramCache
from .stepping import MAX_TRACE, TraceQuery, TraceWorker

__all__ = ["LOOPBACK_NAMES", "MAX_TRACES", "STATIC", "Compare", "HostCheck", "create_app", "host_of"]

STATIC = Path(__file__).with_name("static")
"""The page's own files: the only files the server reads besides the databases."""

Compare = Callable[[str], Mapping[str, Any]]
"""The compare view's answer for a position: the ``treelab diff --json`` object (wired in by the caller)."""

MAX_TRACES = 1
"""Traced searches (``/api/trace``) run at once; another asked meanwhile is answered 503 ``busy`` at once: the
searches hold the interpreter, and ``/api/info`` and the page's other answers stay fast."""

LONGEST_UNKNOWN = 100_000
"""The most moves accepted in a ``path`` of a game that does not declare its longest game."""
MAX_DEPTH = 6
"""The deepest diagram the page may ask for (levels below the node)."""
MAX_TOP = 20
"""The most children per node the diagram may draw."""

_HEADERS = {
    # the page's own script only, no inline script, nothing from elsewhere; SVG is inserted as parsed nodes
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors *"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_INT = re.compile(r"[0-9]{1,9}")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=_HEADERS)


def _int(request: Request, key: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query_params.get(key)
    if raw is None or raw == "":
        return default
    if not _INT.fullmatch(raw) or not low <= int(raw) <= high:
        raise QueryError(f"{key} {raw[:40]!r} is not a whole number from {low} to {high}: fix the query")
    return int(raw)


def _path(request: Request, game: Game) -> str:
    """The query's ``path``, at most as many moves as the game's longest game (``Game.max_length``)."""
    raw = request.query_params.get("path", "")
    longest = game.max_length or LONGEST_UNKNOWN
    # a move takes at most its label's digits and a separator: cheap to refuse before parsing
    if len(raw) > longest * (len(str(game.num_moves)) + 2) + 16:
        raise QueryError(f"path of {len(raw):,} characters is longer than any {game.name} game: "
                         f"use at most {longest:,} moves")
    if any(ord(ch) < 32 for ch in raw):
        raise QueryError(f"path {raw[:40]!r} holds control characters: write moves like 4453 or 4,4,5,3")
    moves = len(game.parse(raw))
    if moves > longest:
        raise QueryError(f"path of {moves:,} moves is longer than any {game.name} game: use at most {longest:,}")
    return raw


def _replay(request: Request) -> Replay | None:
    game = _int(request, "game", None, 0, 10**9)
    since = _int(request, "since", None, 0, 10**9)
    if game is None:
        if since is not None:
            raise QueryError("since needs game: give the replay's game too")
        return None
    return Replay(game, since)


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
"""The names a request may give in its ``Host`` header when nothing else is allowed."""


def host_of(header: str) -> str:
    """The name in a ``Host`` header without its port: ``"[::1]:8765"`` -> ``"::1"``, ``"a.b:80"`` -> ``"a.b"``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class HostCheck:
    """ASGI middleware answering 400 to a request whose ``Host`` is not one of ``hosts`` (``"*"``: any).

    A page on another site can make a browser send requests here through a DNS name that resolves to
    this machine (DNS rebinding); such requests carry that name, not one this server was bound to, so
    they are refused before they reach the app. (Starlette's ``TrustedHostMiddleware`` cuts IPv6 hosts
    at their first ``:``.)
    """

    def __init__(self, app: Any, hosts: Sequence[str]) -> None:
        self.app = app
        self.hosts = frozenset(h.lower().strip("[]") for h in hosts)
        self.state = getattr(app, "state", None)
        """The app's state (the server closes its diagram cache through it)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and "*" not in self.hosts:
            header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host_of(header) not in self.hosts:
                answer = _error(400, f"host {header[:80]!r} is not served here: open the address that "
                                     "treelab serve printed, or allow the name with --allow-host")
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(main: TreeFile, *, other: TreeFile | None = None, compare: Compare | None = None,
               hosts: Sequence[str] = LOOPBACK_NAMES, extras: Extras | None = None) -> Any:
    """The explorer's ASGI app over ``main`` (and ``other``, the compared tree, with its ``compare`` answer).

    Args:
        main: the database explored.
        other: a second database of the same game (``db=b`` in the API, and the compare view).
        compare: the compare view's answer for a position (``treelab.analysis.compare`` wired in
            by the caller: the view layer does not import the analysis layer).
        hosts: the names requests may give in their ``Host`` header (:class:`HostCheck`; ``"*"``: any).
        extras: a model's priors and value and the oracle's values beside each move (:class:`Extras`).
    """
    files = {"a": main, **({"b": other} if other is not None else {})}
    diagrams = DiagramCache()

    def tree_file(request: Request) -> TreeFile:
        key = request.query_params.get("db", "a")
        if key not in files:
            raise QueryError(f"db {key[:40]!r} is not served: use 'a'" + (" or 'b'" if other else ""))
        files[key] = files[key].current()  # a file moved over the path is read from then on
        return files[key]

    def guarded(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                return handler(request)
            except PathNotFoundError as exc:
                return _error(404, str(exc))
            except TooLargeError as exc:
                return _error(400, str(exc))
            except GameMismatchError as exc:  # the served file was replaced by another game's tree
                return _error(409, str(exc))
            except (ExecutableNotFoundError, RenderError, StoreError) as exc:  # the machine, not the query
                return _error(503, str(exc))
            except (TreelabError, ValueError, KeyError) as exc:
                return _error(400, str(exc))
        return endpoint

    def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=_HEADERS)

    def node(request: Request) -> Response:
        source = tree_file(request)
        answer = source.node(_path(request, source.game), _replay(request))
        if extras is not None:
            extras.add(answer, source.game)
        return JSONResponse(answer, headers=_HEADERS)

    def info(request: Request) -> Response:
        data = tree_file(request).info()
        data["compare"] = other.name if other is not None else None
        return JSONResponse(data, headers=_HEADERS)

    def subtree(request: Request) -> Response:
        source = tree_file(request)
        if _replay(request) is not None:  # its nodes' counts as of that game were not logged
            raise QueryError("a past game's diagram is not drawn: only the start's moves have their counts logged "
                             "per game (see /api/node with game=); leave out game= for today's diagram")
        svg = diagrams.svg(
            source, _path(request, source.game), depth=_int(request, "depth", 2, 0, MAX_DEPTH) or 0,
            top=_int(request, "top", None, 1, MAX_TOP), replay=_replay(request),
        )
        return Response(svg, media_type="image/svg+xml", headers=_HEADERS)

    tracing = threading.BoundedSemaphore(MAX_TRACES)
    tracer = TraceWorker()  # the searches run in a child process: this one stays free for the other requests

    def traced(request: Request) -> Response:
        source = tree_file(request)
        tree = request.query_params.get("tree", "fresh")
        if tree not in ("fresh", "stored"):
            raise QueryError(f"tree {tree[:40]!r} is not one of fresh, stored: fix the query")
        query = TraceQuery(search=request.query_params.get("search", "uct"),
                           iterations=_int(request, "iterations", 200, 1, MAX_TRACE) or 200,
                           seed=_int(request, "seed", 1, 0, 10**9) or 0, stored=tree == "stored")
        path = _path(request, source.game)
        if not tracing.acquire(blocking=False):  # busy: say so at once, never queue behind the running ones
            return JSONResponse({"error": f"busy: {MAX_TRACES} traced search{'es' * (MAX_TRACES != 1)} running "
                                          "now; ask again in a moment", "busy": True}, status_code=503,
                                headers={**_HEADERS, "Retry-After": "1"})
        try:
            return JSONResponse(tracer.answer(source.path, path, query), headers=_HEADERS)
        except ServeError as exc:
            return _error(503, str(exc))
        finally:
            tracing.release()

    def compared(request: Request) -> Response:
        if compare is None:
            return _error(404, "no second tree is served: start the explorer with --compare DB2")
        path = _path(request, main.game)
        data = dict(compare(path))
        for row in data.get("children", []):
            row["path"] = main.child_path(path, row["move"])
        return JSONResponse(data, headers=_HEADERS)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        if status == 405:
            return _error(405, f"{request.method} is not served: the explorer only answers GET")
        return _error(404 if status >= 500 else status, f"nothing at {request.url.path[:80]!r}: see / for the page")

    routes = [
        Route("/", guarded(page)),
        Route("/api/node", guarded(node)),
        Route("/api/info", guarded(info)),
        Route("/api/subtree.svg", guarded(subtree)),
        Route("/api/compare", guarded(compared)),
        Route("/api/trace", guarded(traced)),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found, 404: not_found})
    app.state.diagrams = diagrams  # closed by the server as it stops
    app.state.tracer = tracer
    return HostCheck(app, hosts)
