"""Serving the explorer: a socket bound first (so a busy port is one clear error), then uvicorn.

:func:`bind` takes the port before anything else happens; :func:`serve`
runs uvicorn on it in the foreground (``treelab serve``, until Ctrl-C);
:class:`Background` runs it on a daemon thread and returns at once
(notebooks, tests, benchmarks). The server binds to 127.0.0.1 unless told
otherwise, and serves only the app given to it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Sequence
from typing import Any

import uvicorn

from ...errors import ServeError
from .app import LOOPBACK_NAMES

__all__ = [
    "DEFAULT_HOST", "DEFAULT_PORT", "Background", "allowed_hosts", "bind", "is_loopback", "machine_addresses", "serve",
    "url_of",
]

DEFAULT_HOST = "127.0.0.1"
"""Only this machine can connect unless ``--host`` says otherwise."""
DEFAULT_PORT = 8765
"""The explorer's default port (0: any free port)."""


def bind(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (port 0: a free one).

    Raises:
        ServeError: the port is taken, or the host is not an address of this machine.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ServeError(
            f"cannot listen on host {host!r} ({exc}): use an address of this machine, e.g. 127.0.0.1"
        ) from None
    family, kind, proto, _, address = infos[0]
    # proto IPPROTO_TCP, not 0: asyncio turns Nagle's algorithm off only on sockets that say TCP, and
    # with it on, every answer after the first on a kept-alive connection waits ~40 ms for a delayed ACK
    sock = socket.socket(family, kind, proto or socket.IPPROTO_TCP)
    if hasattr(socket, "SO_REUSEADDR"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = "is busy" if exc.errno in (98, 48, 10048) else f"cannot be used ({exc.strerror or exc})"
        raise ServeError(f"port {port!r} on {host!r} {reason}: pick another with --port (0 for any free one)") from None
    sock.set_inheritable(True)
    return sock


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``127.0.0.1``, ``localhost``, ``::1``)."""
    try:
        return all(ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None))
    except (socket.gaierror, UnicodeError, ValueError):
        return False


def machine_addresses() -> list[str]:
    """This machine's name and the addresses it resolves to (what other machines may type to reach it)."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        with contextlib.suppress(OSError, UnicodeError):
            names.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
    return sorted(n for n in names if n)


def allowed_hosts(host: str, extra: Sequence[str] = ()) -> list[str]:
    """The ``Host`` names the explorer answers when bound to ``host``: loopback names, ``host`` itself,
    and for a wildcard bind (``0.0.0.0``, ``::``) this machine's names and addresses; plus ``extra``."""
    names = [*LOOPBACK_NAMES, host, *extra]
    if host in ("0.0.0.0", "::", ""):
        names += machine_addresses()
    return sorted(set(names))


def url_of(sock: socket.socket) -> str:
    """The page's address for a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the interpreter before another may run, in ``treelab serve`` (Python's default is
0.005): with a traced search running, each of ``/api/info``'s hand-overs would wait up to that long."""


def _server(app: Any) -> uvicorn.Server:
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    return uvicorn.Server(config)


def serve(app: Any, sock: socket.socket, *, open_browser: bool = True, path: str = "",
          announce: Callable[[str], None] = print) -> None:
    """Serve ``app`` on ``sock`` until interrupted, after announcing the address (and opening it)."""
    url = url_of(sock)
    announce(url)
    if open_browser:
        threading.Timer(0.5, lambda: webbrowser.open(url + (f"?path={path}" if path else ""))).start()
    server = _server(app)
    sys.setswitchinterval(SWITCH_INTERVAL)  # this process only serves: a running trace hands over the GIL soon
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    finally:
        state = getattr(app, "state", None)
        diagrams = getattr(state, "diagrams", None)
        if diagrams is not None:
            diagrams.close()
        tracer = getattr(state, "tracer", None)
        if tracer is not None:
            tracer.close()


STOP_WAIT = 30.0
"""Seconds :meth:`Background.stop` waits for the requests in flight."""


class Background:
    """A server on a daemon thread (notebooks, tests): ``url`` is ready when the constructor returns."""

    def __init__(self, app: Any, host: str = DEFAULT_HOST, port: int = 0) -> None:
        self.sock = bind(host, port)
        self.url = url_of(self.sock)
        self.app = app
        self.server = _server(app)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> None:
        """Stop serving and close the socket.

        Waits for the server to finish the requests in flight (at most :data:`STOP_WAIT` seconds): a
        kernel that exits sooner would leave their read connections, and SQLite's ``-wal``/``-shm``
        beside the file (seen on a loaded machine with a 5-second wait).
        """
        self.server.should_exit = True
        self.thread.join(timeout=STOP_WAIT)
        self.sock.close()
        tracer = getattr(getattr(self.app, "state", None), "tracer", None)
        if tracer is not None:  # the tracing process, if a trace started it
            tracer.close()
