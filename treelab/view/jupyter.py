"""Diagrams in Jupyter: a tree or node shown inline as SVG, and several side by side.

:class:`Diagram` wraps a tree or node with the options of
:func:`treelab.render.to_dot`; Jupyter calls its ``_repr_mimebundle_`` and
shows the SVG made by ``dot``. :func:`side_by_side` puts several diagrams (or
any SVG/HTML) in one row with titles, e.g. the same subtree after successive
stages of training.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from ..errors import RenderError
from ..tree import Tree, TreeNode
from .dot import Source, render, run_dot, source_dot

__all__ = ["Diagram", "SideBySide", "draw", "side_by_side"]


class Diagram:
    """A diagram of a tree or node that Jupyter shows inline as SVG.

    Args:
        source: a :class:`Tree`, a :class:`TreeNode` or a database file (only
            the drawn part is read from a database).
        options: the keywords of :func:`to_dot` (``path``, ``depth``, ``top``, ...).
    """

    def __init__(self, source: Source, **options: Any) -> None:
        self.source = source
        self.options = options
        self._dot: str | None = None

    @property
    def dot(self) -> str:
        """The DOT text."""
        if self._dot is None:
            self._dot = source_dot(self.source, **self.options)
        return self._dot

    def svg(self) -> str:
        """The SVG text, made by ``dot``."""
        return run_dot(self.dot, "svg").decode()

    def save(self, out: str | os.PathLike[str], *, format: str | None = None, dpi: float | None = None) -> Path:
        """Write the diagram to ``out`` (svg, png, pdf or dot, from the suffix)."""
        return render(self.source, out, format=format, dpi=dpi, **self.options)

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        try:
            return {"image/svg+xml": self.svg(), "text/plain": repr(self)}
        except RenderError as exc:  # no dot, or too large: say why instead of a traceback
            return {"text/plain": f"{self!r}: {exc}"}

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
    """Several diagrams in one row (Jupyter shows it as HTML)."""

    def __init__(self, items: Sequence[Diagram | str], titles: Sequence[str] | None = None) -> None:
        self.items = list(items)
        self.titles = list(titles) if titles is not None else [""] * len(self.items)
        if len(self.titles) != len(self.items):
            raise ValueError(f"{len(self.titles)!r} titles for {len(self.items)!r} diagrams: give one title each")

    def _repr_html_(self) -> str:
        cells = []
        for item, title in zip(self.items, self.titles, strict=True):
            svg = item.svg() if isinstance(item, Diagram) else item
            if "<svg" in svg:  # drop the XML prolog inside HTML, and let the picture shrink to fit
                svg = svg[svg.find("<svg"):].replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)
            head = f'<div style="font-weight:bold;margin-bottom:4px">{escape(title)}</div>' if title else ""
            cells.append(f'<div style="flex:1 1 0;min-width:0;text-align:center">{head}{svg}</div>')
        return '<div style="display:flex;gap:12px;align-items:flex-start">' + "".join(cells) + "</div>"

    def __repr__(self) -> str:
        return f"SideBySide({len(self.items)} diagrams: {', '.join(self.titles)})"


def side_by_side(items: Sequence[Diagram | str], titles: Sequence[str] | None = None) -> SideBySide:
    """Show ``items`` (diagrams or SVG text) in one row, each under its title."""
    return SideBySide(items, titles)
