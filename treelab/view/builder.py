"""The DOT text of any subtree, with UCB1 scores on the edges: pure, deterministic, and safe from its data.

:func:`to_dot` is pure: the same tree and options always give the same DOT
text (:mod:`treelab.view.dot` runs Graphviz on it).

DOT node identifiers are the node's move path joined by ``/`` (``"4/4/5"``;
the root is ``"root"``), and the same string is the SVG element id, so every
shape in the output can be traced back to the tree. A node shows its move,
``nb_win/nb_visit`` and mean reward; its fill is the mean (red: bad for the
player who moved, blue: good); an edge shows the child's UCB1 score, with the
exploitation and exploration terms in the tooltip, and its width grows with
the log of the child's visits; the principal variation is orange; proven
nodes have a double border.

Nothing read from a tree steers Graphviz: a database is a shared file, and its
move labels are data. Every identifier and attribute value is written as a
quoted DOT string (quotes, backslashes and line breaks escaped); the only
unquoted values are numbers and :class:`Html` labels, which this module builds
from fixed markup with every text in them escaped (:func:`~treelab.view.style.html_text`).
"""


from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import PathNotFoundError
from ..games import Game, find_game, written
from ..mcts.scores import node_score
from ..positions import PositionTable
from ..store.binding import cut_of
from ..tree import Moves, Tree, TreeNode
from .style import (
    FONT,
    PROVEN_COLOURS,
    PROVEN_WORDS,
    PV_COLOUR,
    board_label,
    edge_width,
    fmt,
    html_text,
    legend_table,
    mean_colour,
)
from .subtree import MAX_NODES, Cut, Selection, select

__all__ = ["LAYOUTS", "DiagramOptions", "Html", "node_id", "to_dot"]

LAYOUTS = ("tree", "radial")
"""``to_dot``'s layouts: Graphviz ``dot`` (levels as rows) and ``twopi`` (levels as rings)."""


def node_id(node: TreeNode) -> str:
    """The DOT (and SVG) identifier of ``node``: its move path joined by ``/``, ``"root"`` for the root."""
    return node.sequence


class Html(str):
    """An HTML-like Graphviz label (the text between its ``<`` and ``>``), written unquoted.

    Only this module makes them, from fixed markup with every text from the
    tree escaped by :func:`~treelab.view.style.html_text`. Any other string is quoted, however
    it looks: a move label ``<a>, image="x.png", x=<b>`` stays one label.
    """

    __slots__ = ()


def _q(text: str) -> str:
    """A double-quoted DOT string: backslashes, quotes and line breaks escaped, so it reads back literally."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n") + '"'


def _attrs(**attrs: Any) -> str:
    """A DOT attribute list: :class:`Html` between ``<>``, numbers as they are, everything else quoted."""
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, Html):
            parts.append(f"{key}=<{value}>")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={_q(str(value))}")
    return "[" + ", ".join(parts) + "]"


def _resolve(
    source: Tree | TreeNode, path: Moves, game: Game | str | None
) -> tuple[TreeNode, Game | None, float | None]:
    """The subtree root, the game (if known) and the tree's ``c`` (if known)."""
    if isinstance(source, Tree):
        return source.find(path), source.game, source.c
    if isinstance(source, TreeNode):
        g = find_game(game) if game is not None else None
        node = source
        for label in _labels(path, g):
            kid = node.child(label)
            if kid is None:
                raise PathNotFoundError(f"path {path!r} is not below node {node.sequence!r}: check the moves")
            node = kid
        return node, g, None
    raise TypeError(f"cannot draw {type(source).__name__!r}: pass a Tree, a TreeNode or a database path")


def _labels(path: Moves, game: Game | None) -> list[str]:
    """Move labels of ``path`` (parsed by ``game`` if known, else ``"445"``, ``"4,4,5"`` or ``"4/4/5"``)."""
    if game is not None:
        return [game.label(m) for m in game.parse(path)]
    if path is None:
        return []
    if not isinstance(path, str):
        return [str(m) for m in path]
    text = path.strip().strip("/")
    parts = text.replace(",", "/").replace(" ", "/").split("/") if any(s in text for s in ",/ ") else list(text)
    return [p for p in parts if p and p != "root"]


@dataclass(frozen=True)
class DiagramOptions:
    """What a diagram of a subtree shows and how it is laid out (:func:`to_dot`, ``treelab render``)."""

    path: Moves = None
    """The subtree root as moves (``"44"``, ``"4,4"``); None for the source itself."""
    depth: int = 2
    """Levels drawn below the subtree root."""
    top: int | None = None
    """Draw only the ``top`` first children of each node by the move-choice rule (the most selected; proofs first)."""
    min_visits: int = 0
    """Draw only children with at least this many visits."""
    around_pv: bool = False
    """Expand only the principal variation (other children drawn unexpanded)."""
    c: float | None = None
    """UCB1's exploration constant for the edge labels (default: the tree's, else sqrt(2))."""
    board: bool = True
    """Show the position at the subtree root (needs the game)."""
    legend: bool = True
    """Add a legend of colours and widths."""
    max_nodes: int = MAX_NODES
    """The size guard; more nodes raise :class:`~treelab.errors.TooLargeError`."""
    rankdir: str = "TB"
    """Graphviz layout direction, ``"TB"`` (top down) or ``"LR"``."""
    layout: str = "tree"
    """``"tree"`` (Graphviz ``dot``, levels as rows) or ``"radial"`` (``twopi``: the subtree root in the
    centre, each level a ring, so a lopsided tree looks lopsided)."""

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}: use one of {', '.join(LAYOUTS)}")
        if self.rankdir not in ("TB", "LR"):
            raise ValueError(f"unknown rankdir {self.rankdir!r}: use TB (top down) or LR (left to right)")

    @classmethod
    def of(cls, options: DiagramOptions | None = None, **fields: Any) -> DiagramOptions:
        """``options`` (or the defaults) with ``fields`` replaced; an unknown field is a ``TypeError``."""
        return replace(options or cls(), **fields) if fields else (options or cls())


def to_dot(
    source: Tree | TreeNode,
    options: DiagramOptions | None = None,
    *,
    game: Game | str | None = None,
    counts_below: Mapping[TreeNode, tuple[int, int]] | None = None,
    **fields: Any,
) -> str:
    """The DOT text of the subtree at ``options.path`` (pure and deterministic).

    Args:
        source: a :class:`Tree`, or a :class:`TreeNode` (then the path is relative to it).
        options: what to draw and how (:class:`DiagramOptions`).
        game: the game, when ``source`` is a bare node (for the board and path parsing).
        counts_below: real ``(children, visits)`` of nodes whose children were not loaded.
        fields: fields of ``options`` as keywords (``path="44", depth=2, top=3``), replacing them.

    Returns:
        The DOT source; node ids are move paths (``"4/4/5"``, ``"root"``).
    """
    o = DiagramOptions.of(options, **fields)
    path, c = o.path, o.c
    start, g, tree_c = _resolve(source, path, game)
    if c is None:
        c = tree_c if tree_c is not None else 2**0.5
    truncated = cut_of(source) if isinstance(source, Tree) else set()
    sel = select(
        start, depth=o.depth, top_k=o.top, min_visits=o.min_visits, around_pv=o.around_pv,
        max_nodes=o.max_nodes, unloaded=truncated, counts_below=counts_below,
    )
    writer = _Writer(sel, g, c, board=o.board, legend=o.legend, rankdir=o.rankdir, radial=o.layout == "radial")
    if isinstance(source, Tree) and source.statistics == "graph":
        writer.positions = PositionTable.of(source)
    return writer.text()


class _Writer:
    """Turns a :class:`Selection` into DOT lines."""

    def __init__(
        self, sel: Selection, game: Game | None, c: float, *, board: bool, legend: bool, rankdir: str, radial: bool
    ):
        self.sel, self.game, self.c = sel, game, c
        self.board, self.legend, self.rankdir, self.radial = board, legend, rankdir, radial
        self.pv = set(sel.pv)
        self.total = max(1, sel.top.nb_visit)
        self.positions: PositionTable | None = None
        """The tree's position table when its searches use graph statistics: edges show that score."""

    def text(self) -> str:
        sel, top = self.sel, self.sel.top
        where = written(top.moves, self.game) or "the start"
        game = f"{self.game.name} · " if self.game else ""
        title = f"{game}subtree at {where} · {top.nb_visit:,} visits · c = {self.c:.3g}"
        graph: dict[str, Any] = {
            "rankdir": self.rankdir, "bgcolor": "white", "fontname": FONT, "fontsize": 12,
            "nodesep": 0.18, "ranksep": 0.5, "tooltip": title,
        }
        if self.radial:  # twopi: rings around the subtree root; it draws no clusters, so the title goes below
            graph.update(layout="twopi", root=node_id(top), ranksep=1.1, overlap="false", splines="true")
            graph.update(label=title, labelloc="b", labeljust="c")
        if self.legend:
            label = Html(self.legend_text())
            if self.radial:
                label = Html('<TABLE BORDER="0" CELLSPACING="0"><TR><TD ALIGN="LEFT">' + self.legend_text()
                             + f"</TD></TR><TR><TD>{html_text(title)}</TD></TR></TABLE>")
            graph.update(label=label, labelloc="b", labeljust="l")
        lines = [
            'digraph "treelab" {',
            "  graph " + _attrs(**graph) + ";",
            "  node " + _attrs(
                shape="box", style="rounded,filled", fontname=FONT, fontsize=10,
                margin="0.08,0.04", color="#606060", penwidth=1,
            ) + ";",
            "  edge " + _attrs(fontname=FONT, fontsize=9, color="#6f6f6f", fontcolor="#303030", arrowsize=0.5) + ";",
            '  subgraph "cluster_tree" {',
            "    graph " + _attrs(label=title, labelloc="t", labeljust="c", fontsize=13, peripheries=0) + ";",
        ]
        for node in sel.nodes:
            lines.append(self.node_line(node))
        for parent in sel.nodes:
            for kid in sel.children.get(parent, ()):
                lines.append(self.edge_line(parent, kid))
            if parent in sel.hidden:
                lines.extend(self.summary_lines(parent, sel.hidden[parent]))
        lines.append("  }")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def node_line(self, node: TreeNode) -> str:
        nid = node_id(node)
        visited = node.nb_visit > 0
        rows = [f"{node.nb_win:,}/{node.nb_visit:,}"]
        rows.append(f'<FONT POINT-SIZE="8">{"mean " + fmt(node.mean) if visited else "unvisited"}</FONT>')
        if node is not self.sel.top and node.nb_select != node.nb_visit:  # the count the principal variation follows
            rows.append(f'<FONT POINT-SIZE="8">chosen {node.nb_select:,}</FONT>')
        if node.value_sum:  # imported searches, PUCT with an evaluator: values counted as draws (mean_reward)
            rows.append(f'<FONT POINT-SIZE="8">value sum {node.value_sum:+.4g}</FONT>')
        elif node.nb_draw:
            rows.append(f'<FONT POINT-SIZE="8">{node.nb_draw:,} {"draw" if node.nb_draw == 1 else "draws"}</FONT>')
        if node.proven is not None:
            colour, word = PROVEN_COLOURS[node.proven], PROVEN_WORDS[node.proven]
            rows.append(f'<FONT POINT-SIZE="9" COLOR="{colour}"><B>{word}</B></FONT>')
        cut = self.sel.below.get(node)
        if cut is not None:
            rows.append(f'<FONT POINT-SIZE="8" COLOR="#555555">{_cut_text(cut, below=True)}</FONT>')
        if node is self.sel.top:
            head = written(node.moves, self.game) or "root"
            if self.board and self.game is not None:
                board = board_label(self.game, self.game.replay(node.moves), head)
                label = Html(_table([board, *rows]))
            else:
                label = Html("<BR/>".join([f'<B>{html_text(head)}</B>', *rows]))
        else:
            label = Html("<BR/>".join([f'<FONT POINT-SIZE="13"><B>{html_text(node.name)}</B></FONT>'
                                       + self.action_text(node), *rows]))
        attrs: dict[str, Any] = {
            "id": nid, "label": label, "tooltip": _node_tooltip(node),
            "fillcolor": mean_colour(node.mean if visited else None),
        }
        if node.proven is not None:
            attrs.update(peripheries=2, color=PROVEN_COLOURS[node.proven])
        if node in self.pv:
            attrs.update(color=PV_COLOUR, penwidth=2.5)
        return f"  {_q(nid)} {_attrs(**attrs)};"

    def action_text(self, node: TreeNode) -> str:
        """OpenSpiel's action string beside the id (``" a2a3"``), for games that show them; else nothing."""
        game = self.game
        parent = node.parent
        if game is None or not game.shows_actions or parent is None:
            return ""
        states = self.__dict__.setdefault("_states", {})
        if parent not in states:
            states[parent] = game.replay(parent.moves)
        text = game.action_text(states[parent], game.parse_move(node.name))
        return f' <FONT POINT-SIZE="9">{html_text(text)}</FONT>'

    def legend_text(self) -> str:
        """The legend's table, naming the graph score on edges when the tree's searches use it."""
        text = legend_table(self.c)
        return text if self.positions is None else text.replace("edge: UCB1", "edge: graph score (position value + "
                                                                 "edge exploration)")

    def edge_line(self, parent: TreeNode, kid: TreeNode) -> str:
        score = node_score(kid, self.c, self.positions)  # the search's score: graph with the table, else UCB1
        ucb, value = math.inf if score.total is None else score.total, score.value
        explore = math.inf if score.exploration is None else score.exploration
        if self.positions is not None:
            tip = (f"graph score {fmt(ucb, 4)} = position value {fmt(value, 4)} + exploration {fmt(explore, 4)}"
                   f" (c={self.c:.4g}, S={sum(k.nb_select for k in parent.children_view)}, s={kid.nb_select}:"
                   " selections of"
                   " this edge, never pass-through visits; the value merges every path to the position)"
                   if kid.nb_select else "graph score ∞: an edge never selected here is tried first")
        elif kid.nb_visit:
            tip = (
                f"UCB1 {fmt(ucb, 4)} = mean {fmt(value, 4)} + exploration {fmt(explore, 4)}"
                f" (c={self.c:.4g}, N={parent.nb_visit}, n={kid.nb_visit}); N and n include visits passing through"
                " from searches rooted deeper in a game, so a rarely chosen move can score high"
            )
        else:
            tip = "UCB1 ∞: an unvisited child is tried first"
        attrs: dict[str, Any] = {
            "id": f"{node_id(parent)}->{node_id(kid)}", "label": _boxed(fmt(ucb)), "tooltip": tip,
            "labeltooltip": tip, "penwidth": edge_width(kid.nb_visit, self.total),
        }
        if kid in self.pv:
            attrs.update(color=PV_COLOUR, fontcolor=PV_COLOUR, label=_boxed(fmt(ucb), PV_COLOUR))
        return f"  {_q(node_id(parent))} -> {_q(node_id(kid))} {_attrs(**attrs)};"

    def summary_lines(self, parent: TreeNode, cut: Cut) -> list[str]:
        pid = node_id(parent)
        sid = "more" if pid == "root" else f"{pid}/more"
        text = _cut_text(cut, below=False)
        return [
            f"  {_q(sid)} " + _attrs(
                id=sid, label=Html(text), shape="box", style="rounded,dashed", color="#9a9a9a",
                fontcolor="#555555", fontsize=9, tooltip=f"{text.replace('<BR/>', ', ')} under {pid}, not drawn",
            ) + ";",
            f"  {_q(pid)} -> {_q(sid)} "
            + _attrs(style="dashed", color="#9a9a9a", arrowhead="none", weight=1 if self.radial else 0) + ";",
        ]


def _boxed(text: str, colour: str | None = None) -> Html:
    """An edge label on a white patch, so the edge line never runs through the digits."""
    font = f'<FONT COLOR="{colour}">{html_text(text)}</FONT>' if colour else html_text(text)
    return Html(f'<TABLE BORDER="0" CELLBORDER="0" CELLPADDING="1" BGCOLOR="white"><TR><TD>{font}</TD></TR></TABLE>')


def _table(cells: list[str]) -> str:
    body = "".join(f"<TR><TD>{cell}</TD></TR>" for cell in cells)
    return f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{body}</TABLE>'


def _cut_text(cut: Cut, *, below: bool) -> str:
    if cut.count < 0:
        return "▾ children not loaded"
    moves = "move" if cut.count == 1 else "moves"
    visits = f"{cut.visits:,} {'visit' if cut.visits == 1 else 'visits'}"
    if below:
        return f"▾ {cut.count} {moves}, {visits}"
    return f"+{cut.count} more {moves}<BR/>{visits}"


def _node_tooltip(node: TreeNode) -> str:
    proof = "" if node.proven is None else f"; {PROVEN_WORDS[node.proven]}"
    return (
        f"{node.sequence}: player {node.mover} moved; {node.nb_win} wins, {node.nb_draw} draws, "
        f"{node.nb_loss} losses in {node.nb_visit} visits; mean {fmt(node.mean, 4)}{proof}; {node.nb_select} chose "
        "this move, the other visits passed through from searches rooted deeper in a game"
    )
