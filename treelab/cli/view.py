"""Commands that look at a stored tree: ``render``, ``stats``, ``growth``, ``shape``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from .options import (
    ExampleLast,
    database,
    finite,
    json_option,
    library_errors,
    option,
    path_option,
    refuse_overwriting,
)

__all__ = ["COMMANDS", "growth", "render", "shape", "stats"]

_SUFFIXES = (".svg", ".png", ".pdf", ".dot", ".gv")


def _c_option(f: Any) -> Any:
    return option(
        "--c", "c", type=finite(min=0.0), default=None, show_default="the tree's stored c",
        help="UCB1 exploration constant for the scores shown.",
    )(f)


def _out_option(suffixes: tuple[str, ...], example: str) -> Any:
    def check(ctx: click.Context, param: click.Parameter, value: str) -> str:
        if Path(value).suffix.lower() not in suffixes:
            raise click.BadParameter(
                f"{value!r} has no known suffix: use one of {', '.join(suffixes)} (e.g. {example})"
            )
        return value

    return option(
        "-o", "--out", required=True, type=click.Path(dir_okay=False), callback=check,
        help=f"Output file ({', '.join(suffixes)}).",
    )


@click.command(cls=ExampleLast)
@database
@path_option
@option("--depth", type=click.IntRange(min=0), default=2, help="Levels drawn below --path.")
@option("--top", type=click.IntRange(min=1), default=None, show_default="all",
        help="Draw only the first K moves per node by the move-choice rule (the most selected; proofs first).")
@option("--min-visits", type=click.IntRange(min=0), default=0,
        help="Draw only moves with at least N visits.")
@option("--around-pv", is_flag=True, help="Expand only the principal variation (the most selected line).")
@_c_option
@option("--no-board", is_flag=True, help="Do not draw the position at the subtree root.")
@option("--no-legend", is_flag=True, help="Leave out the legend.")
@option("--lr", is_flag=True, help="Lay the tree out left to right instead of top down.")
@option("--layout", type=click.Choice(["tree", "radial"]), default="tree",
        help="tree: levels as rows (Graphviz dot); radial: levels as rings around the subtree root (twopi).")
@option("--max-nodes", type=click.IntRange(min=1), default=400,
        help="Size guard: refuse diagrams with more nodes.")
@option("--dpi", type=finite(min=10, max=1200), default=None, show_default="96", help="PNG resolution.")
@_out_option(_SUFFIXES, "-o tree.svg")
@library_errors
def render(db: str, out: str, no_board: bool, no_legend: bool, lr: bool, **options: Any) -> None:
    """Draw the subtree at --path with Graphviz (svg, png, pdf or dot).

    Only the drawn part is read from DB. Nodes show the move, wins/visits and
    mean; edges the child's UCB1 score; cut moves are summarised. --layout
    radial puts the subtree root in the centre and each level on a ring.

    \b
    Example:
      treelab render data/connect4.db --path 44 --depth 2 --top 3 -o subtree.svg
    """
    from ..view.dot import render as draw

    refuse_overwriting(out, db)
    written = draw(db, out, board=not no_board, legend=not no_legend, rankdir="LR" if lr else "TB", **options)
    click.echo(f"wrote {written}")


def _num(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "-"
    return "inf" if math.isinf(x) else f"{x:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))
    return [line, *("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in rows)]


def describe(facts: dict[str, Any]) -> str:
    """The readable ``stats`` report of a stats object."""
    from ..play.console import selected_note

    where = facts["path"] or "the start"
    out = [
        f"{facts['game']} tree, subtree at {where} (player {facts['to_move']} to move)",
        f"  nodes {facts['nodes']:,} · leaves {facts['leaves']:,} · max depth {facts['max_depth']}"
        f" · simulations {facts['simulations']:,}",
        f"  value {facts['value']:.3f} for the player to move"
        + (f" · proven {facts['proven']}" if facts["proven"] else ""),
        f"  visit concentration at this node: entropy {_num(facts['entropy'])}, gini {_num(facts['gini'])}"
        f" · tree asymmetry {_num(facts['asymmetry'])}",
        "",
    ]
    hist, leaves, branching = facts["depth_histogram"], facts["leaf_depth_histogram"], facts["branching_factor"]
    rows = [
        [str(d), f"{hist[d]:,}", f"{leaves[d]:,}", f"{branching[d]:.2f}" if d < len(branching) else "-"]
        for d in range(len(hist))
    ]
    out += _table(["depth", "nodes", "leaves", "branching"], rows)
    pv = facts["principal_variation"]
    shares = " ".join(f"{m}({s:.0%})" for m, s in zip(pv, facts["pv_share"], strict=True))
    out += ["", f"principal variation: {' '.join(pv) or '-'}", f"  visit share per move: {shares or '-'}", ""]
    actions = any("action" in k for k in facts["children"])  # OpenSpiel's action strings beside the ids
    kids = [
        [k["move"], *([k["action"]] if actions else []), f"{k['nb_select']:,}", f"{k['nb_visit']:,}",
         f"{k['nb_win']:,}", f"{k['nb_draw']:,}", _num(k["mean"]), _num(k["ucb1"]) if k["ucb1"] is not None else "inf",
         k["proven"] or ""]
        for k in facts["children"]
    ]
    rule = "graph score: position value + edge exploration" if facts.get("statistics") == "graph" else "UCB1"
    out += [f"moves ({rule} with c = {facts['c']:.3g}), in the order the principal variation is chosen by:"]
    out += _table(["move", *(["action"] if actions else []), "selected", "visits", "wins", "draws", "mean", "ucb1",
                   "proven"], kids)
    out += selected_note(facts["children"])
    return "\n".join(out)



@click.command(cls=ExampleLast)
@database
@path_option
@_c_option
@json_option
@click.option("--oracle", "with_oracle", is_flag=True,
              help="Add each move's perfect-play value for its player (1 win, 0 draw, -1 loss) from the game's "
                   "oracle (connect4, tictactoe); an early Connect Four position can take minutes.")
@library_errors
def stats(db: str, path: str, c: float | None, as_json: bool, with_oracle: bool = False) -> None:
    """Statistics of the tree (or the subtree at --path) in DB, from SQL aggregates.

    Nodes, leaves, depth and leaf-depth histograms, branching factor per depth,
    the principal variation and its visit shares, visit concentration, and the
    table of the moves (the `analyse` children table) with the score the tree's
    searches select by: UCB1, or on a file trained with --statistics graph the
    graph score and its terms.

    \b
    Example:
      treelab stats data/connect4.db --path 4 --json
      treelab stats data/connect4.db --path 44536 --json --oracle
    """
    from ..analysis.sqlstats import db_stats

    facts = db_stats(db, path or None, c=c)
    if with_oracle:
        from ..oracle import annotate

        annotate(facts["game"], path or None, facts["children"])
    click.echo(json.dumps(facts) if as_json else describe(facts))
    if with_oracle and not as_json:
        from ..oracle import oracle_line

        click.echo(oracle_line(facts["children"]))


@click.command(cls=ExampleLast)
@database
@_out_option((".png", ".svg", ".pdf"), "-o growth.png")
@option("--window", type=click.IntRange(min=1), default=None, show_default="about a tenth of the games",
        help="Games per point of the rolling results curve.")
@library_errors
def growth(db: str, out: str, window: int | None) -> None:
    """Plot how the tree in DB grew over the training games.

    Nodes and depth against games, nodes per depth (a heat map), the root's
    visit shares per move, and the game results.

    \b
    Example:
      treelab growth data/connect4.db -o growth.png
    """
    from ..analysis.growth import growth_data, plot_growth

    refuse_overwriting(out, db)
    data = growth_data(db)
    plot_growth(data, out, window=window)
    if not len(data.games):  # an imported or merged tree without games: nothing to plot against
        click.echo(f"wrote {out} (empty: {db} logs no training games, so there is no growth to plot; an imported "
                   "tree has none: see treelab stats or treelab shape)")
        return
    click.echo(f"wrote {out} ({len(data.games)} games, {data.nodes[-1]:,} nodes)")


@click.command(cls=ExampleLast)
@database
@path_option
@_out_option((".png", ".svg", ".pdf"), "-o shape.png")
@option("--kind", type=click.Choice(["icicle", "sunburst"]), default="icicle",
        help="Rows of depth (icicle) or rings (sunburst).")
@option("--max-depth", type=click.IntRange(min=1), default=None, show_default="all",
        help="Draw only this many levels.")
@library_errors
def shape(db: str, path: str, out: str, kind: str, max_depth: int | None) -> None:
    """Draw the shape of the whole tree: width is the share of visits, colour the mean.

    Scales to millions of nodes: the tree is read one depth at a time (the
    memory of its widest depth), laid out with numpy, drawn with matplotlib.

    \b
    Example:
      treelab shape data/connect4.db --kind sunburst -o shape.png
    """
    from ..analysis.shape import plot_shape_db

    refuse_overwriting(out, db)
    _, nodes = plot_shape_db(db, out, path=path or None, kind=kind, max_depth=max_depth)
    click.echo(f"wrote {out} ({nodes:,} nodes)")


COMMANDS = [render, stats, growth, shape]
