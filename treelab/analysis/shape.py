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
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..store.outfile import save_figure
from .arrays import TreeArrays

__all__ = ["layout", "p1_mean", "plot_icicle", "plot_shape", "plot_sunburst"]


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
    key = np.array([int(m) if str(m).isdigit() else 0 for m in arrays.moves], dtype=np.int64)
    kids = np.arange(1, n)
    order = kids[np.lexsort((kids, key[kids], parent[kids]))]  # grouped by parent, in move order
    v = visits[order]
    cum = np.cumsum(v)
    par = parent[order]
    first = np.searchsorted(par, par, side="left")
    before = cum - v - (cum[first] - v[first])  # visits of earlier siblings
    offset = np.zeros(n)
    offset[order] = before
    depth = arrays.depth
    for d in range(1, int(depth.max()) + 1):
        idx = np.flatnonzero(depth == d)
        p = parent[idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(visits[p] > 0, width[p] / visits[p], 0.0)
        width[idx] = visits[idx] * scale
        x0[idx] = x0[p] + offset[idx] * scale
    return x0, width


def p1_mean(arrays: TreeArrays) -> np.ndarray:
    """Mean reward for player 1 at each node (NaN where unvisited).

    The mover of a node is the parity of its depth, or (games whose players need not
    alternate: dots and boxes, OpenSpiel) the stored :attr:`TreeArrays.mover`.
    """
    parity = arrays.mover is None  # the built-in games' fast path
    mover_is_p1 = (arrays.depth + arrays.root_depth) % 2 == 1 if parity else arrays.mover == 1
    m = np.where(mover_is_p1, arrays.mean, 1.0 - arrays.mean)
    return np.where(arrays.visits > 0, m, np.nan)


def _colours(values: np.ndarray) -> np.ndarray:
    from matplotlib import colormaps

    rgba = colormaps["RdBu"](np.nan_to_num(values, nan=0.5))
    rgba[np.isnan(values)] = (0.85, 0.85, 0.85, 1.0)
    return rgba


def _title(arrays: TreeArrays, kind: str) -> str:
    game = f"{arrays.game} " if arrays.game else ""
    where = f" below depth {arrays.root_depth}" if arrays.root_depth else ""
    return f"{kind} of the {game}tree{where}: {len(arrays):,} nodes, {int(arrays.visits[0]):,} simulations"


def plot_icicle(arrays: TreeArrays, ax: Any = None, *, width_px: int = 1600, label_levels: int = 2) -> Any:
    """Draw the icicle of ``arrays`` on ``ax`` (a new figure if None); returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(12, 5.5), layout="constrained")
    x0, width = layout(arrays)
    colour = _colours(p1_mean(arrays))
    rows = int(arrays.depth.max()) + 1
    row_px = max(6, min(40, 700 // rows))
    img = np.ones((rows * row_px, width_px, 4))
    for d in range(rows):
        top, bottom = d * row_px, (d + 1) * row_px - 1
        # bands under half a pixel: blend them into their pixel, as strong as the share they cover
        thin = np.flatnonzero((arrays.depth == d) & (width * width_px < 0.5) & (width > 0))
        if len(thin):
            px = np.minimum((x0[thin] + width[thin] / 2) * width_px, width_px - 1).astype(int)
            cover = np.bincount(px, weights=width[thin] * width_px, minlength=width_px)
            mix = np.stack([np.bincount(px, weights=width[thin] * width_px * colour[thin, k], minlength=width_px)
                            for k in range(3)], axis=1)
            hit = cover > 0
            alpha = np.minimum(1.0, cover[hit])[:, None]
            img[top:bottom, hit, :3] = (1 - alpha) + alpha * (mix[hit] / cover[hit][:, None])
        idx = np.flatnonzero((arrays.depth == d) & (width * width_px >= 0.5))
        a = np.round(x0[idx] * width_px).astype(int)
        b = np.maximum(a + 1, np.round((x0[idx] + width[idx]) * width_px).astype(int))
        gap = (b - a) >= 4  # a white hairline between bands that are wide enough to tell apart
        for i, lo, hi, g in zip(idx, a, b, gap, strict=True):
            img[top:bottom, lo:hi - 1 if g else hi] = colour[i]
    ax.imshow(img, aspect="auto", extent=(0, 1, rows, 0), interpolation="nearest")
    fig = ax.figure
    row_pt = ax.get_position().height * fig.get_figheight() * 72 / rows  # height of one row in points
    if row_pt < 9:  # labels would spill into the next row: label only the first level, if any
        label_levels = min(label_levels, 1) if row_pt >= 5 else 0
    for d in range(1, min(rows, label_levels + 1)):
        for i in np.flatnonzero((arrays.depth == d) & (width > 0.035)):
            ax.text(x0[i] + width[i] / 2, d + 0.5, str(arrays.moves[i]), ha="center", va="center",
                    fontsize=min(8, max(5, row_pt * 0.8)))
    ax.set_xlabel("share of the simulations through the subtree root")
    ax.set_ylabel("depth below the subtree root")
    ax.set_title(_title(arrays, "Icicle"), fontsize=11)
    _colourbar(ax)
    return ax


def plot_sunburst(arrays: TreeArrays, ax: Any = None, *, min_degrees: float = 0.25) -> Any:
    """Draw the sunburst of ``arrays`` on polar ``ax`` (a new figure if None); returns the axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig = plt.figure(figsize=(8, 8), layout="constrained")
        ax = fig.add_subplot(projection="polar")
    x0, width = layout(arrays)
    colour = _colours(p1_mean(arrays))
    keep = np.flatnonzero((width * 360 >= min_degrees) & (arrays.depth > 0))
    theta = 2 * np.pi * x0[keep]
    ax.bar(theta, 1.0, width=2 * np.pi * width[keep], bottom=arrays.depth[keep].astype(float), align="edge",
           color=colour[keep], edgecolor="white", linewidth=0.2)
    ax.bar([0.0], 1.0, width=2 * np.pi, bottom=0.0, align="edge", color=colour[:1], edgecolor="white")
    for i in keep[(arrays.depth[keep] == 1) & (width[keep] > 0.03)]:
        ax.text(2 * np.pi * (x0[i] + width[i] / 2), 1.5, str(arrays.moves[i]), ha="center", va="center", fontsize=8)
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.set_axis_off()
    ax.set_title(_title(arrays, "Sunburst") + "\nrings: depth · angle: share of visits", fontsize=10)
    _colourbar(ax, shrink=0.5)
    return ax


def _colourbar(ax: Any, shrink: float = 0.9) -> None:
    import matplotlib as mpl

    mappable = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, 1), cmap="RdBu")
    bar = ax.figure.colorbar(mappable, ax=ax, shrink=shrink, pad=0.02)
    bar.set_label("mean reward for player 1 (grey: unvisited)")


def plot_shape(arrays: TreeArrays, out: str | os.PathLike[str] | None = None, *, kind: str = "icicle",
               dpi: int = 110) -> Any:
    """Draw an icicle or sunburst; save it to ``out`` if given (and close it). Returns the figure."""

    if kind not in ("icicle", "sunburst"):
        raise ValueError(f"unknown shape {kind!r}: use 'icicle' or 'sunburst'")
    ax = plot_icicle(arrays) if kind == "icicle" else plot_sunburst(arrays)
    return save_figure(ax.figure, out, dpi)
