"""Drawing diagrams with Graphviz, through the ``graphviz`` package.

The DOT text comes from :func:`treelab.view.builder.to_dot` (pure, re-exported
here); this module is the one with side effects: :func:`run_dot` lays DOT text
out with ``graphviz.Source(...).pipe`` (the real ``dot`` program), and
:func:`render` writes a diagram to a file (SVG, PNG, PDF, or the DOT text
itself). :class:`treelab.view.jupyter.Diagram` shows one inline in Jupyter.
The ``graphviz`` package's own errors become treelab's one-line errors: a
missing ``dot`` is :class:`ExecutableNotFoundError` (how to install it), a
failing one :class:`RenderError` (its last message line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import graphviz

from ..errors import ExecutableNotFoundError, RenderError
from ..store.files import write_whole
from ..tree import Tree, TreeNode
from .builder import LAYOUTS, Html, node_id, to_dot

__all__ = [
    "FORMATS",
    "LAYOUTS",
    "Html",
    "graphviz_error",
    "graphviz_source",
    "node_id",
    "render",
    "run_dot",
    "source_dot",
    "to_dot",
    "to_svg",
]

FORMATS = ("svg", "png", "pdf", "dot")
"""Output formats :func:`render` writes (``dot`` is the DOT text itself)."""

Source = Tree | TreeNode | str | os.PathLike[str]
"""What can be drawn: a tree, a node, or a database file (only the drawn part is read)."""

_NO_DOT = (
    "graphviz's 'dot' program was not found on PATH: install Graphviz "
    "(apt-get install graphviz, brew install graphviz, or `make dot`), or write .dot output"
)


def graphviz_source(dot: str, *, dpi: float | None = None) -> graphviz.Source:
    """``dot`` as a ``graphviz.Source`` (its Jupyter display, ``pipe`` and ``render``).

    Args:
        dot: DOT text.
        dpi: resolution of bitmap output, set as a graph attribute after the
            opening brace (Graphviz default 96).
    """
    if dpi is not None:
        brace = dot.index("{") + 1
        dot = f"{dot[:brace]}\n  graph [dpi={dpi:g}];{dot[brace:]}"
    return graphviz.Source(dot, engine="dot")


def run_dot(dot: str, fmt: str = "svg", *, dpi: float | None = None) -> bytes:
    """Lay out ``dot`` with Graphviz (``graphviz.Source.pipe``) and return the ``fmt`` output.

    The graph's own ``layout`` attribute picks the engine (``twopi`` for the
    radial layout); the size guard of :func:`to_dot` keeps layouts short.

    Raises:
        ExecutableNotFoundError: ``dot`` is not installed.
        RenderError: ``dot`` failed (its last message line is quoted).
    """
    try:
        return graphviz_source(dot, dpi=dpi).pipe(format=fmt, quiet=True)
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError) as exc:
        raise graphviz_error(exc) from None


def graphviz_error(exc: graphviz.ExecutableNotFound | graphviz.CalledProcessError) -> RenderError:
    """Treelab's one-line error for an error of the ``graphviz`` package (no ``dot``, or ``dot`` failed)."""
    if isinstance(exc, graphviz.ExecutableNotFound):
        return ExecutableNotFoundError(_NO_DOT)
    err = exc.stderr or b""
    lines = (err.decode(errors="replace") if isinstance(err, bytes) else str(err)).strip().splitlines()
    return RenderError(f"dot failed with exit code {exc.returncode!r}: {(lines or ['no message'])[-1]!r}")


def to_svg(source: Source, **options: Any) -> str:
    """The SVG text of a diagram of a tree, node or database (``options`` as for :func:`to_dot`)."""
    return run_dot(source_dot(source, **options), "svg").decode()


def source_dot(source: Source, **options: Any) -> str:
    """The DOT text of a :class:`Tree`, a :class:`TreeNode` or a database file.

    From a database only the drawn part is read (:func:`treelab.view.loading.load_view`);
    ``options`` are the keywords of :func:`to_dot`.
    """
    if isinstance(source, (str, os.PathLike)):
        from .loading import load_view

        keys = ("path", "depth", "top", "min_visits", "around_pv", "max_nodes")
        tree, below = load_view(source, **{k: options[k] for k in keys if k in options})
        return to_dot(tree, counts_below=below, **options)
    return to_dot(source, **options)


def render(
    source: Source,
    out: str | os.PathLike[str],
    *,
    format: str | None = None,
    dpi: float | None = None,
    **options: Any,
) -> Path:
    """Draw a subtree into the file ``out`` (svg, png, pdf or dot).

    Args:
        source: a :class:`Tree`, a :class:`TreeNode`, or a database file; from a
            database only the drawn part is read (see :func:`treelab.view.loading.load_view`).
        out: the output file; its suffix picks the format unless ``format`` is given.
        format: one of :data:`FORMATS`.
        dpi: resolution of PNG output (Graphviz default 96).
        options: the keywords of :func:`to_dot` (``path``, ``depth``, ``top``,
            ``min_visits``, ``around_pv``, ``c``, ``board``, ...).

    Returns:
        The path written.
    """
    out = Path(out)
    fmt_ = (format or out.suffix.lstrip(".") or "svg").lower()
    fmt_ = "dot" if fmt_ == "gv" else fmt_
    if fmt_ not in FORMATS:
        raise RenderError(f"unknown diagram format {fmt_!r}: use one of {', '.join(FORMATS)} (the file suffix)")
    text = source_dot(source, **options)
    data = text.encode() if fmt_ == "dot" else run_dot(text, fmt_, dpi=dpi)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_whole(out, lambda tmp: tmp.write_bytes(data))

