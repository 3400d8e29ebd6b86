"""Diagrams in Jupyter: a tree or node shown inline as SVG, bounded by default, and several in a row.

:class:`Diagram` wraps a tree, node or database with the options of
:func:`treelab.view.builder.to_dot`; Jupyter calls its ``_repr_mimebundle_``,
which is the ``graphviz`` package's own display of the DOT text
(``graphviz.Source``). Shown without options (a ``Tree`` or node at the end of
a cell, or ``draw(tree)``) a diagram is bounded to :data:`DISPLAY_DEPTH`
levels and the :data:`DISPLAY_TOP` most selected moves of each node (the principal variation's rule), so it fits
a notebook's width; pass ``top=None`` to draw every move. :func:`side_by_side`
lays several diagrams (or any SVG) out in a row that wraps: each keeps its
natural size, the next one moves to a new line when the row is full, and one
wider than the notebook is scaled to the full width, never to a fraction of it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import graphviz

from ..errors import RenderError
from ..nodes import wire
from ..tree import Tree, TreeNode
from .dot import Source, graphviz_error, graphviz_source, render, run_dot, source_dot

__all__ = ["DISPLAY_DEPTH", "DISPLAY_TOP", "Diagram", "SideBySide", "draw", "side_by_side"]

DISPLAY_DEPTH = 2
"""Levels a diagram draws below its root unless told (``depth=``): the moves and the replies."""
DISPLAY_TOP = 2
"""Moves drawn per node, the most selected first (the move-choice rule), unless told (``top=``; None draws all):
at most 1 + 2 + 4 nodes plus the "+N more" summaries, about 700 pt (930 px) wide: readable at its natural size in a
notebook (``top=3`` is about 1,300 pt, which a notebook shrinks to two thirds or less)."""


class Diagram:
    """A diagram of a tree, node or database that Jupyter shows inline as SVG.

    Args:
        source: a :class:`Tree`, a :class:`TreeNode` or a database file (only
            the drawn part is read from a database).
        options: the keywords of :func:`to_dot` (``path``, ``depth``, ``top``, ...);
            ``depth`` and ``top`` default to :data:`DISPLAY_DEPTH` and :data:`DISPLAY_TOP`.
    """

    def __init__(self, source: Source, **options: Any) -> None:
        self.source = source
        self.options = {"depth": DISPLAY_DEPTH, "top": DISPLAY_TOP, **options}
        self._dot: str | None = None

    @property
    def dot(self) -> str:
        """The DOT text."""
        if self._dot is None:
            self._dot = source_dot(self.source, **self.options)
        return self._dot

    def svg(self) -> str:
        """The SVG text, laid out by Graphviz."""
        return run_dot(self.dot, "svg").decode()

    def save(self, out: str | os.PathLike[str], *, format: str | None = None, dpi: float | None = None) -> Path:
        """Write the diagram to ``out`` (svg, png, pdf or dot, from the suffix)."""
        return render(self.source, out, format=format, dpi=dpi, **self.options)

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """The ``graphviz`` package's Jupyter display of the DOT text, or one line saying why not."""
        try:
            bundle: dict[str, str] = graphviz_source(self.dot)._repr_mimebundle_(include, exclude)
        except (graphviz.ExecutableNotFound, graphviz.CalledProcessError) as exc:
            return {"text/plain": f"{self!r}: {graphviz_error(exc)}"}
        except RenderError as exc:  # too large: say why instead of a traceback
            return {"text/plain": f"{self!r}: {exc}"}
        bundle["text/plain"] = repr(self)
        return bundle

    def __repr__(self) -> str:
        source = self.source
        where = source.sequence if isinstance(source, TreeNode) else repr(source if isinstance(source, Tree) else
                                                                           os.fspath(source))
        opts = "".join(f", {k}={v!r}" for k, v in sorted(self.options.items()))
        return f"Diagram({where}{opts})"


def draw(source: Source, **options: Any) -> Diagram:
    """A :class:`Diagram` of ``source`` (shown inline in Jupyter; ``.save(path)`` writes it)."""
    return Diagram(source, **options)


class SideBySide:
    """Several diagrams in a row that wraps (Jupyter shows it as HTML)."""

    def __init__(self, items: Sequence[Diagram | str], titles: Sequence[str] | None = None) -> None:
        self.items = list(items)
        self.titles = list(titles) if titles is not None else [""] * len(self.items)
        if len(self.titles) != len(self.items):
            raise ValueError(f"{len(self.titles)!r} titles for {len(self.items)!r} diagrams: give one title each")

    def _repr_html_(self) -> str:
        cells = []
        for item, title in zip(self.items, self.titles, strict=True):
            svg = item.svg() if isinstance(item, Diagram) else item
            if "<svg" in svg:  # drop the XML prolog inside HTML; a picture wider than the row shrinks to fit it
                svg = svg[svg.find("<svg"):].replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
            head = f'<div style="font-weight:bold;margin-bottom:4px">{escape(title)}</div>' if title else ""
            cells.append(f'<div style="flex:0 1 auto;max-width:100%;text-align:center">{head}{svg}</div>')
        return ('<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">'
                + "".join(cells) + "</div>")

    def __repr__(self) -> str:
        return f"SideBySide({len(self.items)} diagrams: {', '.join(self.titles)})"


def side_by_side(items: Sequence[Diagram | str], titles: Sequence[str] | None = None) -> SideBySide:
    """Show ``items`` (diagrams or SVG text) in a row that wraps, each under its title, at its natural size."""
    return SideBySide(items, titles)


def _show(obj: Tree | TreeNode, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """Jupyter's view of a tree or node (wired into the core: :data:`treelab.nodes.HOOKS`)."""
    return Diagram(obj)._repr_mimebundle_(include, exclude)


wire("display", _show)
