"""How diagrams look: the colour scale, edge widths, number formats and board pictures.

Kept apart from :mod:`treelab.view.builder` so the DOT text builder stays small and
the look can be tuned in one place. Everything here is pure and deterministic.
"""

from __future__ import annotations

import math
from html import escape
from itertools import pairwise

from ..games import Game, State

__all__ = [
    "FONT",
    "PROVEN_COLOURS",
    "PV_COLOUR",
    "SCALE",
    "board_label",
    "edge_width",
    "fmt",
    "html_text",
    "legend_table",
    "mean_colour",
]

FONT = "Helvetica"
"""Font of every label (fontconfig maps it to a sans face when Helvetica is absent)."""

SCALE: tuple[tuple[float, str], ...] = (
    (0.0, "#d6604d"),
    (0.25, "#f4a582"),
    (0.5, "#f7f7f7"),
    (0.75, "#92c5de"),
    (1.0, "#4393c3"),
)
"""Diverging fill scale (ColorBrewer RdBu, inner stops so black text stays readable):
red = bad for the player who moved, near-white = even, blue = good."""

PV_COLOUR = "#e66101"
"""Orange: edges and borders of the principal variation."""

PROVEN_COLOURS = {1: "#1b7837", 0: "#525252", -1: "#b2182b"}
"""Border colour of proven nodes: a proven win (green), draw (grey), loss (dark red)."""

PROVEN_WORDS = {1: "proven win", 0: "proven draw", -1: "proven loss"}
"""How proofs read in labels, from the view of the player who moved into the node."""

UNVISITED_FILL = "#ffffff"


def _hex(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def mean_colour(mean: float | None) -> str:
    """The fill colour of a node with this mean reward (None: unvisited, white)."""
    if mean is None or math.isnan(mean):
        return UNVISITED_FILL
    x = min(1.0, max(0.0, mean))
    for (x0, c0), (x1, c1) in pairwise(SCALE):
        if x <= x1:
            t = (x - x0) / (x1 - x0)
            a, b = _hex(c0), _hex(c1)
            return "#" + "".join(f"{round(p + (q - p) * t):02x}" for p, q in zip(a, b, strict=True))
    return SCALE[-1][1]


def edge_width(visits: int, total: int, *, thin: float = 0.6, thick: float = 6.0) -> float:
    """Edge pen width for ``visits`` out of ``total`` on a log scale (thin edges stay visible)."""
    if total <= 0 or visits <= 0:
        return thin
    return round(thin + (thick - thin) * math.log1p(visits) / math.log1p(total), 2)


def html_text(text: str) -> str:
    """``text`` for an HTML-like Graphviz label, drawn literally: markup escaped, backslashes doubled.

    Graphviz expands ``\\N`` (the node's name), ``\\G`` (the graph's) and the like
    even inside HTML-like labels, after decoding entities; a doubled backslash is
    drawn as one. A line break becomes ``<BR/>`` (Graphviz would drop it).
    """
    text = escape(text).replace("\\", "\\\\")
    return text.replace("\r\n", "<BR/>").replace("\n", "<BR/>").replace("\r", "<BR/>")


def fmt(x: float, digits: int = 3) -> str:
    """A fixed-point number for labels; ``∞`` for +inf (an unvisited child's UCB1)."""
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{digits}f}"


def board_label(game: Game, state: State, title: str) -> str:
    """An HTML-like Graphviz table: ``title`` over a picture of ``state``.

    The picture is the state's :meth:`~treelab.games.State.grid` drawn with the
    game's :attr:`~treelab.games.Game.look` (Connect Four: red and yellow discs
    on a blue board; tic-tac-toe: X and O marks); a game without a grid shows
    its plain-text :meth:`~treelab.games.State.board`. Every text is escaped.
    """
    grid = state.grid()
    if grid is None:
        text = "<BR/>".join(html_text(line) for line in state.board().split("\n"))
        head = f'<TR><TD COLSPAN="1"><B>{html_text(title)}</B></TD></TR>'
        return f'<TABLE BORDER="0">{head}<TR><TD><FONT FACE="monospace">{text}</FONT></TD></TR></TABLE>'  # a text board
    look = game.look
    cols = max((len(row) for row in grid), default=1)
    size = f'WIDTH="{look.cell_size}" HEIGHT="{look.cell_size}" FIXEDSIZE="TRUE"'
    rows = []
    for row in grid:
        cells = []
        for who in row:
            mark = ""
            if look.marks is not None:
                text = html_text(look.marks[who]) or "&#160;"
                mark = f'<FONT COLOR="{look.mark_colours[who]}"><B>{text}</B></FONT>'
            cells.append(f'<TD {size} BGCOLOR="{look.fills[who]}">{mark}</TD>')
        rows.append(f"<TR>{''.join(cells)}</TR>")
    if look.footer:
        numbers = "".join(f'<TD><FONT POINT-SIZE="7" COLOR="#ffffff">{html_text(x)}</FONT></TD>' for x in look.footer)
        rows.append(f"<TR>{numbers}</TR>")
    return (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="{look.cell_padding}" '
        f'BGCOLOR="{look.background}">'
        f'<TR><TD COLSPAN="{cols}"><FONT COLOR="#ffffff"><B>{html_text(title)}</B></FONT></TD></TR>'
        + "".join(rows)
        + "</TABLE>"
    )


def legend_table(c: float) -> str:
    """The legend under a diagram: the fill scale and what nodes, edges and borders mean."""
    swatches = "".join(
        f'<TD BGCOLOR="{colour}" WIDTH="22"><FONT POINT-SIZE="8">{x:g}</FONT></TD>' for x, colour in SCALE
    )
    scale = (
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="1" CELLPADDING="1">'
        '<TR><TD COLSPAN="5"><FONT POINT-SIZE="8">fill: mean reward of the player who moved</FONT></TD></TR>'
        f"<TR>{swatches}</TR></TABLE>"
    )
    notes = (
        f"node: move, wins/visits, mean, chosen (where fewer than visits)<BR ALIGN=\"LEFT\"/>edge: UCB1 (c = {c:.3g}),"
        ' width: visits (log scale)<BR ALIGN="LEFT"/>'
        f'<FONT COLOR="{PV_COLOUR}">orange: principal variation</FONT> (most chosen; proofs first)'
        ' · double border: proven<BR ALIGN="LEFT"/>'
        'visits include searches rooted deeper in a game (pass-through);'
        ' chosen: the simulations that chose the move<BR ALIGN="LEFT"/>'
    )
    return (
        '<TABLE BORDER="1" COLOR="#c8c8c8" CELLBORDER="0" CELLSPACING="4" CELLPADDING="0"><TR>'
        f'<TD>{scale}</TD><TD ALIGN="LEFT"><FONT POINT-SIZE="8">{notes}</FONT></TD></TR></TABLE>'
    )
