"""``dot`` started with only the plugins an SVG layout needs: the explorer's uncached diagrams, fast.

Measured on this machine (``benchmarks/explorer.py`` and a two-node graph), a
plain ``dot -Tsvg`` spends about 70 of its 80 ms starting up: it loads every
installed plugin library, and the text-rendering ones (pango with cairo and
fontconfig, gd, webp, X11) pull in dozens of shared libraries. An SVG needs
none of them: the layout engines (``dot``, ``neato`` for the radial ``twopi``)
and the core SVG writer suffice, and without pango Graphviz sizes labels from
its built-in Helvetica metrics (the diagrams' font, :data:`treelab.view.style.FONT`).

So the first layout in a process makes a private plugin directory: links to
those three libraries beside the installed ones and a configuration written by
``dot -c`` for them alone; every later layout runs ``dot`` with ``GVBINDIR``
pointing there (about 12 ms a start instead of 80). Where that cannot be set up
(no such libraries: another platform's Graphviz) or ``dot`` fails with it, the
diagram is laid out by :func:`treelab.view.dot.run_dot` as before, which also
gives the one-line errors: the lean path only ever makes things faster.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from ..dot import run_dot

__all__ = ["PLUGINS", "lean_svg", "plugin_dir"]

PLUGINS = ("core", "dot_layout", "neato_layout")
"""The Graphviz plugin libraries an SVG layout needs (``libgvplugin_NAME``): the SVG writer and the engines."""

_made: list[Path | None] = []  # the private directory once tried (None: not possible here)
_lock = threading.Lock()


def _installed() -> Path | None:
    """The directory of the installed Graphviz plugins, found beside the ``dot`` executable's libraries."""
    dot = shutil.which("dot")
    if dot is None:
        return None
    real = Path(dot).resolve()
    candidates = [real.parent.parent / "lib" / "graphviz", real.parent.parent / "lib64" / "graphviz"]
    candidates += [*sorted(Path("/usr/lib").glob("*/graphviz")), Path("/usr/lib/graphviz")]
    for folder in candidates:
        if any(folder.glob("libgvplugin_core.*")):
            return folder
    return None


def plugin_dir() -> Path | None:
    """The private plugin directory (made on the first call), or None where it cannot be made."""
    with _lock:
        if _made:
            return _made[0]
        _made.append(_make())
        return _made[0]


def _make() -> Path | None:
    source = _installed()
    if source is None:
        return None
    target = Path(tempfile.mkdtemp(prefix="treelab-gv-"))
    atexit.register(shutil.rmtree, target, True)
    for name in PLUGINS:
        found = sorted(source.glob(f"libgvplugin_{name}.so*"), key=lambda p: len(p.name))  # the shortest: .so.6
        found = [p for p in found if p.name != f"libgvplugin_{name}.so"] or found
        if not found:
            return None
        (target / found[0].name).symlink_to(found[0])
    made = subprocess.run(["dot", "-c"], env={**os.environ, "GVBINDIR": str(target)}, capture_output=True,
                          timeout=30, check=False)
    return target if made.returncode == 0 and any(target.glob("config*")) else None


def lean_svg(dot: str) -> str:
    """The SVG of the DOT text ``dot``: laid out by the lean ``dot`` when possible, else by ``run_dot``.

    Raises:
        ExecutableNotFoundError, RenderError: as :func:`treelab.view.dot.run_dot` (only when it runs).
    """
    folder = plugin_dir()
    if folder is not None:
        try:
            done = subprocess.run(["dot", "-Tsvg"], input=dot.encode(), capture_output=True, timeout=60,
                                  env={**os.environ, "GVBINDIR": str(folder)}, check=False)
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0 and done.stdout:
            return done.stdout.decode()
    return run_dot(dot, "svg").decode()
