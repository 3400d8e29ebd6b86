"""The shape of a whole tree in one picture: an icicle or a sunburst, at any size.

Each node is a band whose width is its share of the subtree root's visits
(children split their parent's band in proportion to their visits, in move
order; the gap left at the end of a band is the simulations that stopped at
that node), rows (or rings) are depths, and the colour is the mean reward for
player 1, so the asymmetric growth of UCT shows at a glance: deep narrow
spikes where the search concentrated, shallow wide fans where it explored.

The layout is vectorised numpy (one pass per depth), and the icicle is
painted into a pixel grid, so a million-node tree draws in seconds; bands
narrower than half a pixel are blended into their pixel, as strong as the
share they cover (in the sunburst, bands under a quarter of a degree are left out).

From a database (:func:`plot_shape_db`, ``treelab shape``) it streams: the rows come one depth at a time
(:func:`treelab.store.rows.level_tables`), each depth is laid out from the one above and painted, and only
the bands that can be drawn on their own are kept, so the memory is that of the widest depth, not of the
tree (measured: docs/reliability.md). The figures are the same as from the arrays of the whole tree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DamagedDatabaseError
from ..store.files import save_figure
from .arrays import TreeArrays

__all__ = ["Level", "layout", "levels", "p1_mean", "plot_icicle", "plot_shape", "plot_shape_db", "plot_sunburst",
           "stream_levels"]


@dataclass(frozen=True)
class Level:
    """The nodes of one depth of a (sub)tree laid out as bands, in (depth, id) order."""

    depth: int
    """Depth below the subtree root."""
    x0: np.ndarray
    """Start of each node's band in [0, 1]."""
    width: np.ndarray
    """Width of each node's band (its share of the subtree root's visits)."""
    mean: np.ndarray
    """Mean reward for player 1 at each node (NaN where unvisited)."""
    visits: np.ndarray
    """``nb_visit`` of each node."""
    moves: np.ndarray
    """The move label into each node (object array of str; streamed levels: only down to the labelled depths)."""


def layout(arrays: TreeArrays) -> tuple[np.ndarray, np.ndarray]:
    """Start and width of each node's band in [0, 1] (the subtree root spans [0, 1]).

    Siblings are placed in move order (numeric labels numerically).
    """
    n = len(arrays)
    x0 = np.zeros(n)
    width = np.zeros(n)
    if n == 0:
        return x0, width
    width[0] = 1.0
    parent, visits = arrays.parent, arrays.visits.astype(float)
    key = _keys(arrays.moves)
    kids = np.arange(1, n)
    order = kids[np.lexsort((kids, key[kids], parent[kids]))]  # grouped by parent, in move order
    offset = np.zeros(n)
    offset[order] = _before(visits[order], parent[order])
    depth = arrays.depth
    for d in range(1, int(depth.max()) + 1):
        idx = np.flatnonzero(depth == d)
        x0[idx], width[idx] = _place(x0, width, visits, parent[idx], visits[idx], offset[idx])
    return x0, width


def _keys(moves: Any) -> np.ndarray:
    """Each move's place among its siblings: a numeric label's number, else 0 (then creation order)."""
    key = {m: int(m) if str(m).isdigit() else 0 for m in set(moves)}  # a few distinct labels, many nodes
    return np.fromiter(map(key.__getitem__, moves), dtype=np.int64, count=len(moves))


def _before(v: np.ndarray, par: np.ndarray) -> np.ndarray:
    """Visits of the earlier siblings of each node, given visits ``v`` and parents ``par`` grouped by parent."""
    cum = np.cumsum(v)
    first = np.searchsorted(par, par, side="left")
    return cum - v - (cum[first] - v[first])  # exact: sums of whole numbers below 2**53


def _place(x0: np.ndarray, width: np.ndarray, visits: np.ndarray, p: np.ndarray, v: np.ndarray,
           offset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and width of nodes with visits ``v`` and earlier siblings' visits ``offset`` below parents ``p``
    (indexes into the parents' ``x0``, ``width``, ``visits``)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(visits[p] > 0, width[p] / visits[p], 0.0)
    return x0[p] + offset * scale, v * scale


def p1_mean(arrays: TreeArrays) -> np.ndarray:
    """Mean reward for player 1 at each node (NaN where unvisited).

    The mover of a node is the parity of its depth, or (games whose players need not
    alternate: dots and boxes, OpenSpiel) the stored :attr:`TreeArrays.mover`.
    """
    parity = arrays.mover is None  # the built-in games' fast path
    mover_is_p1 = (arrays.depth + arrays.root_depth) % 2 == 1 if parity else arrays.mover == 1
    m = np.where(mover_is_p1, arrays.mean, 1.0 - arrays.mean)
    return np.where(arrays.visits > 0, m, np.nan)


def levels(arrays: TreeArrays) -> Iterator[Level]:
    """The levels of a tree held whole as arrays (:func:`layout`)."""
    if not len(arrays):
        return
    x0, width = layout(arrays)
    mean = p1_mean(arrays)
    for d in range(int(arrays.depth.max()) + 1):
        idx = np.flatnonzero(arrays.depth == d)
        yield Level(d, x0[idx], width[idx], mean[idx], arrays.visits[idx], arrays.moves[idx])


@dataclass
class _Tally:
    """What a title says of the levels drawn: filled in as they stream past."""

    nodes: int = 0
    simulations: int = 0


def stream_levels(db: str | os.PathLike[str], path: Any = None, *, max_depth: int | None = None,
                  labelled: int = 2) -> Iterator[Level]:
    """The levels of the subtree at ``path`` of a database, read one depth at a time (see the module).

    Laid out and coloured exactly as :func:`levels` of :meth:`TreeArrays.from_db` would; the moves are
    given down to depth ``labelled`` only (the labels drawn), deeper levels have none.

    Raises:
        DamagedDatabaseError: counts, proofs, moves or depths no treelab wrote.
    """
    from ..games import find_game
    from ..store.dbfile import reading
    from ..store.rows import level_tables, path_rows

    name = os.fspath(db)
    with reading(name) as (conn, meta):
        game = find_game(meta["game"])
        chain = path_rows(conn, game, path, name)
        top, root_depth = chain[-1][0], len(chain) - 1
        above: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None  # ids, x0, width, visits
        for d, (table, moves) in enumerate(level_tables(conn, top, root_depth, max_depth, name, game, _keys,
                                                        labelled=labelled)):
            ids, parents, visits, wins, draws = (table[:, k] for k in (0, 1, 3, 4, 5))
            v = visits.astype(float)
            bad = np.flatnonzero(table[:, 2] != root_depth + d)
            if above is None:
                x0, width = np.zeros(len(table)), np.ones(len(table))
                if len(table) != 1 or ids[0] != top:
                    bad = np.arange(len(table))
            else:
                p_ids, p_x0, p_width, p_visits = above
                p = np.minimum(np.searchsorted(p_ids, parents), len(p_ids) - 1)
                bad = np.flatnonzero((p_ids[p] != parents) | (table[:, 2] != root_depth + d))
                order = np.lexsort((np.arange(len(table)), table[:, 6], p))  # by parent, in move order
                offset = np.zeros(len(table))
                offset[order] = _before(v[order], p[order])
                x0, width = _place(p_x0, p_width, p_visits, p, v, offset)
            if len(bad):
                raise DamagedDatabaseError(f"{name!r}: node {int(ids[bad[0]])} at depth {int(table[bad[0], 2])} "
                                           "has no parent one depth above it: the file is damaged")
            value_sum = table[:, 8].view(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):  # as TreeArrays.mean (treelab.nodes.mean_reward)
                mean = np.where(visits > 0, (wins + 0.5 * draws + 0.5 * value_sum) / visits, 0.5)
            mover_is_p1 = np.full(len(table), (d + root_depth) % 2 == 1) if game.alternating else table[:, 7] == 1
            mean = np.where(visits > 0, np.where(mover_is_p1, mean, 1.0 - mean), np.nan)  # as p1_mean
            yield Level(d, x0, width, mean, visits, np.array(moves, dtype=object))
            above = (ids, x0, width, v)


def _colours(values: np.ndarray) -> np.ndarray:
    from matplotlib import colormaps

    rgba = colormaps["RdBu"](np.nan_to_num(values, nan=0.5))
    rgba[np.isnan(values)] = (0.85, 0.85, 0.85, 1.0)
    return rgba


def _title(game: str | None, root_depth: int, tally: _Tally, kind: str) -> str:
    game = f"{game} " if game else ""
    where = f" below depth {root_depth}" if root_depth else ""
    return f"{kind} of the {game}tree{where}: {tally.nodes:,} nodes, {tally.simulations:,} simulations"


def _paint(row: np.ndarray, level: Level, width_px: int) -> None:
    """Paint one depth's bands into ``row`` (``width_px`` RGBA pixels, white where nothing is drawn)."""
    x0, width = level.x0, level.width
    colour = _colours(level.mean)
    # bands under half a pixel: blend them into their pixel, as strong as the share they cover
    thin = np.flatnonzero((width * width_px < 0.5) & (width > 0))
    if len(thin):
        px = np.minimum((x0[thin] + width[thin] / 2) * width_px, width_px - 1).astype(int)
        cover = np.bincount(px, weights=width[thin] * width_px, minlength=width_px)
        mix = np.stack([np.bincount(px, weights=width[thin] * width_px * colour[thin, k], minlength=width_px)
                        for k in range(3)], axis=1)
        hit = cover > 0
        alpha = np.minimum(1.0, cover[hit])[:, None]
        row[hit, :3] = (1 - alpha) + alpha * (mix[hit] / cover[hit][:, None])
    idx = np.flatnonzero(width * width_px >= 0.5)
    a = np.round(x0[idx] * width_px).astype(int)
    b = np.maximum(a + 1, np.round((x0[idx] + width[idx]) * width_px).astype(int))
    gap = (b - a) >= 4  # a white hairline between bands that are wide enough to tell apart
    for i, lo, hi, g in zip(idx, a, b, gap, strict=True):
        row[lo:hi - 1 if g else hi] = colour[i]


def plot_icicle(arrays: TreeArrays | Iterable[Level], ax: Any = None, *, width_px: int = 1600, label_levels: int = 2,
                game: str | None = None, root_depth: int = 0) -> Any:
    """Draw the icicle of ``arrays`` (or of streamed levels) on ``ax`` (a new figure if None); returns the axes.

    ``game`` and ``root_depth`` name the tree in the title when levels are given (arrays know them).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(12, 5.5), layout="constrained")
    source, tally, game, root_depth = _source(arrays, game, root_depth)
    strips, labels = [], []
    for level in source:
        row = np.ones((width_px, 4))
        _paint(row, level, width_px)
        strips.append(row)
        if 1 <= level.depth <= label_levels:
            for i in np.flatnonzero(level.width > 0.035):
                labels.append((level.depth, level.x0[i] + level.width[i] / 2, str(level.moves[i])))
        _count(tally, level)
    rows = len(strips)
    row_px = max(6, min(40, 700 // rows))
    img = np.ones((rows * row_px, width_px, 4))
    for d, row in enumerate(strips):
        img[d * row_px:(d + 1) * row_px - 1] = row  # the last line of each depth stays white
    ax.imshow(img, aspect="auto", extent=(0, 1, rows, 0), interpolation="nearest")
    fig = ax.figure
    row_pt = ax.get_position().height * fig.get_figheight() * 72 / rows  # height of one row in points
    if row_pt < 9:  # labels would spill into the next row: label only the first level, if any
        label_levels = min(label_levels, 1) if row_pt >= 5 else 0
    for d, x, text in labels:
        if d < min(rows, label_levels + 1):
            ax.text(x, d + 0.5, text, ha="center", va="center", fontsize=min(8, max(5, row_pt * 0.8)))
    ax.set_xlabel("share of the simulations through the subtree root")
    ax.set_ylabel("depth below the subtree root")
    ax.set_title(_title(game, root_depth, tally, "Icicle"), fontsize=11)
    _colourbar(ax)
    return ax


def _source(arrays: TreeArrays | Iterable[Level], game: str | None, root_depth: int
            ) -> tuple[Iterable[Level], _Tally, str | None, int]:
    if isinstance(arrays, TreeArrays):
        return levels(arrays), _Tally(), arrays.game, arrays.root_depth
    return arrays, _Tally(), game, root_depth


def _count(tally: _Tally, level: Level) -> None:
    tally.nodes += len(level.x0)
    if level.depth == 0 and len(level.visits):
        tally.simulations = int(level.visits[0])


def plot_sunburst(arrays: TreeArrays | Iterable[Level], ax: Any = None, *, min_degrees: float = 0.25,
                  game: str | None = None, root_depth: int = 0) -> Any:
    """Draw the sunburst of ``arrays`` (or of streamed levels) on polar ``ax`` (a new figure if None); returns
    the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig = plt.figure(figsize=(8, 8), layout="constrained")
        ax = fig.add_subplot(projection="polar")
    source, tally, game, root_depth = _source(arrays, game, root_depth)
    theta, widths, bottoms, colours, labels = [], [], [], [], []
    root_colour = None
    for level in source:
        colour = _colours(level.mean)
        if level.depth == 0:
            root_colour = colour[:1]
        else:
            keep = np.flatnonzero(level.width * 360 >= min_degrees)
            theta.append(2 * np.pi * level.x0[keep])
            widths.append(2 * np.pi * level.width[keep])
            bottoms.append(np.full(len(keep), float(level.depth)))
            colours.append(colour[keep])
            if level.depth == 1:
                labels += [(2 * np.pi * (level.x0[i] + level.width[i] / 2), str(level.moves[i]))
                           for i in keep[level.width[keep] > 0.03]]
        _count(tally, level)
    ax.bar(np.concatenate([np.zeros(0), *theta]), 1.0, width=np.concatenate([np.zeros(0), *widths]),
           bottom=np.concatenate([np.zeros(0), *bottoms]), align="edge",
           color=np.concatenate([np.zeros((0, 4)), *colours]), edgecolor="white", linewidth=0.2)
    ax.bar([0.0], 1.0, width=2 * np.pi, bottom=0.0, align="edge", color=root_colour, edgecolor="white")
    for angle, text in labels:
        ax.text(angle, 1.5, text, ha="center", va="center", fontsize=8)
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.set_axis_off()
    ax.set_title(_title(game, root_depth, tally, "Sunburst") + "\nrings: depth · angle: share of visits", fontsize=10)
    _colourbar(ax, shrink=0.5)
    return ax


def _colourbar(ax: Any, shrink: float = 0.9) -> None:
    import matplotlib as mpl

    mappable = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, 1), cmap="RdBu")
    bar = ax.figure.colorbar(mappable, ax=ax, shrink=shrink, pad=0.02)
    bar.set_label("mean reward for player 1 (grey: unvisited)")


def plot_shape(arrays: TreeArrays | Iterable[Level], out: str | os.PathLike[str] | None = None, *,
               kind: str = "icicle", dpi: int = 110, game: str | None = None, root_depth: int = 0) -> Any:
    """Draw an icicle or sunburst; save it to ``out`` if given (and close it). Returns the figure."""

    if kind not in ("icicle", "sunburst"):
        raise ValueError(f"unknown shape {kind!r}: use 'icicle' or 'sunburst'")
    plot = plot_icicle if kind == "icicle" else plot_sunburst
    ax = plot(arrays, game=game, root_depth=root_depth)
    return save_figure(ax.figure, out, dpi)


def plot_shape_db(db: str | os.PathLike[str], out: str | os.PathLike[str] | None = None, *, path: Any = None,
                  kind: str = "icicle", max_depth: int | None = None, dpi: int = 110) -> tuple[Any, int]:
    """Draw the shape of the subtree at ``path`` of a database, streamed (see the module); save it to ``out``
    if given (and close it). Returns the figure and the nodes drawn."""
    from ..store.dbfile import diagnosed

    tally = _Tally()

    def counted(levels: Iterable[Level]) -> Iterator[Level]:
        for level in levels:
            tally.nodes += len(level.x0)
            yield level

    @diagnosed
    def draw(db: str | os.PathLike[str]) -> Any:
        game, root_depth = _where(db, path)
        return plot_shape(counted(stream_levels(db, path, max_depth=max_depth)), out, kind=kind, dpi=dpi,
                          game=game, root_depth=root_depth)

    return draw(db), tally.nodes


def _where(db: str | os.PathLike[str], path: Any) -> tuple[str, int]:
    """The game of a database and the depth of ``path`` in it."""
    from ..games import find_game
    from ..store.dbfile import reading
    from ..store.rows import path_rows

    name = os.fspath(db)
    with reading(name) as (conn, meta):
        game = find_game(meta["game"])
        return game.name, len(path_rows(conn, game, path, name)) - 1
