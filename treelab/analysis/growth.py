"""How a tree grew over its training games: data from the database, and the plot.

Every training game is logged in ``games``, and ``history`` keeps one row per
game with the tree's size, depth profile and the root's children counts right
after that game (see :mod:`treelab.store`). :func:`growth_data` reads them;
for a database without history rows it rebuilds the node counts from the
nodes' ``created_game`` stamps (the root's visit shares then stay unknown).

"The tree as it was after game g" (:func:`tree_at`) is exact in its shape:
the nodes stamped with a game up to ``g`` (and nodes never stamped, made
outside training). Per-node counts at that moment are not stored, except for
the root and its children (from ``history``); every other node carries its
counts of today, so treat them as an upper bound.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..games import find_game
from ..store.dbfile import diagnosed, reading
from ..store.files import save_figure
from ..store.rows import growth_rows, rows_until
from ..tree import SQRT2, Tree, TreeNode

__all__ = ["GrowthData", "growth_data", "plot_growth", "tree_at"]


@dataclass(frozen=True, eq=False)
class GrowthData:
    """The tree's growth, one entry per logged training game."""

    game: str
    """The game's name."""
    games: np.ndarray
    """Game ids (the x axis), increasing."""
    nodes: np.ndarray
    """Nodes in the tree after each game."""
    depth_counts: np.ndarray
    """Nodes per depth after each game, shape ``(games, max depth + 1)``."""
    root_visits: np.ndarray | None
    """Simulations recorded at the root after each game (None without history)."""
    root_children: dict[str, np.ndarray]
    """Visits of each root move after each game (empty without history)."""
    winners: np.ndarray
    """Each game's winner: 1, 2, or 0 for a draw."""
    tree_player: np.ndarray
    """The colour the tree played in each game against an opponent (0: self-play, both)."""
    opponent: str | None
    """The opponent of the last game (``"self"``, ``"random"``, ``"heuristic"``), if logged."""
    source: str
    """``"history"`` or ``"created_game"`` (rebuilt from node stamps)."""

    @property
    def max_depth(self) -> np.ndarray:
        """Deepest level after each game."""
        if not self.depth_counts.size:
            return np.zeros(0, dtype=np.int64)
        filled = self.depth_counts > 0
        return filled.shape[1] - 1 - np.argmax(filled[:, ::-1], axis=1)

    def shares(self) -> dict[str, np.ndarray]:
        """Each root move's share of the root's children's visits after each game."""
        if not self.root_children:
            return {}
        total = np.sum(list(self.root_children.values()), axis=0).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return {m: np.nan_to_num(v / total) for m, v in self.root_children.items()}


@diagnosed
def growth_data(db: str | os.PathLike[str]) -> GrowthData:
    """Read the growth of the tree in ``db`` (history rows, else ``created_game`` stamps)."""
    name = os.fspath(db)
    with reading(name) as (conn, meta):
        game = find_game(meta["game"])
        logged, history, stamps = growth_rows(conn)
    games = [(gid, w) for gid, w, _, _ in logged]
    player_by_id = {gid: (p or 0) for gid, _, p, _ in logged}
    opponent = logged[-1][3] if logged else None
    winners_by_id = {gid: (w or 0) for gid, w in games}
    if history:
        ids = np.array([h[0] for h in history], dtype=np.int64)
        profiles = [json.loads(h[3]) for h in history]
        width = max(len(p) for p in profiles)
        counts = np.array([p + [0] * (width - len(p)) for p in profiles], dtype=np.int64)
        kids_rows = [json.loads(h[4]) for h in history]
        order = sorted({m for row in kids_rows for m in row}, key=lambda m: (int(m) if m.isdigit() else 0, m))
        children = {m: np.array([row.get(m, [0])[0] for row in kids_rows], dtype=np.int64) for m in order}
        return GrowthData(
            game=game.name, games=ids, nodes=np.array([h[1] for h in history], dtype=np.int64),
            depth_counts=counts, root_visits=np.array([h[2] for h in history], dtype=np.int64),
            root_children=children, winners=np.array([winners_by_id.get(i, 0) for i in ids], dtype=np.int8),
            tree_player=np.array([player_by_id.get(i, 0) for i in ids], dtype=np.int8), opponent=opponent,
            source="history",
        )
    ids = np.array([gid for gid, _ in games], dtype=np.int64)
    width = max((d for _, d, _ in stamps), default=0) + 1
    per_game = np.zeros((len(ids), width), dtype=np.int64)
    base = np.zeros(width, dtype=np.int64)
    for created, depth, count in stamps:
        k = int(np.searchsorted(ids, created))
        if created == 0 or k == len(ids) or ids[k] != created:
            base[depth] += count  # unstamped nodes (or an unlogged game): there from the start
        else:
            per_game[k, depth] += count
    counts = np.cumsum(per_game, axis=0) + base
    return GrowthData(
        game=game.name, games=ids, nodes=counts.sum(axis=1), depth_counts=counts, root_visits=None,
        root_children={}, winners=np.array([w or 0 for _, w in games], dtype=np.int8),
        tree_player=np.array([player_by_id[i] for i in ids], dtype=np.int8), opponent=opponent, source="created_game",
    )


def plot_growth(data: GrowthData, out: str | os.PathLike[str] | None = None, *, window: int | None = None,
                dpi: int = 110) -> Any:
    """Four panels against games played: nodes and depth, nodes per depth, root visit shares, results.

    Saves to ``out`` if given (and closes the figure). Returns the figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5), layout="constrained")
    (a, b), (c, d) = axes
    x = data.games
    fig.suptitle(f"Growth of the {data.game} tree over {len(x):,} training games", fontsize=13)
    if not len(x):
        for ax in axes.flat:
            ax.text(0.5, 0.5, "no training games logged yet", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
        return save_figure(fig, out, dpi)
    a.plot(x, data.nodes, color="#2166ac", lw=2)
    a.set_title("nodes in the tree")
    a.set_xlabel("games played")
    a.set_ylabel("nodes", color="#2166ac")
    a.ticklabel_format(axis="y", style="plain")
    a.grid(alpha=0.3)
    a2 = a.twinx()
    a2.step(x, data.max_depth, where="post", color="#e66101", lw=1.5)
    a2.set_ylabel("max depth", color="#e66101")

    share = data.depth_counts / np.maximum(1, data.depth_counts.sum(axis=1, keepdims=True))
    im = b.imshow(share.T, aspect="auto", origin="lower", cmap="viridis", interpolation="nearest",
                  extent=(x[0] - 0.5, x[-1] + 0.5, -0.5, share.shape[1] - 0.5))
    b.set_title("where the nodes are: share of nodes per depth")
    b.set_xlabel("games played")
    b.set_ylabel("depth")
    fig.colorbar(im, ax=b, label="share of nodes", pad=0.01)

    shares = data.shares()
    if shares:
        colours = plt.get_cmap("tab10")
        c.stackplot(x, *shares.values(), labels=list(shares), colors=[colours(i % 10) for i in range(len(shares))],
                    alpha=0.9)
        c.set_ylim(0, 1)
        c.set_xlim(x[0], x[-1])
        c.legend(title="move", loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, title_fontsize=8)
    else:
        c.text(0.5, 0.5, "no history table: root visit shares unknown", ha="center", va="center",
               transform=c.transAxes)
    c.set_title("root: share of visits per move")
    c.set_xlabel("games played")
    c.set_ylabel("share of the root's visits")

    w = min(window or max(1, len(x) // 10), len(x))  # a window past the games played is all of them
    kernel = np.ones(w) / w
    against = bool(len(x)) and bool((data.tree_player > 0).all())
    if against:  # results from the tree's side
        outcome = np.where(data.winners == 0, 0, np.where(data.winners == data.tree_player, 1, 2))
        curves = ((1, "tree wins", "#1b7837"), (0, "draws", "#7f7f7f"), (2, "tree losses", "#b2182b"))
    else:
        outcome = data.winners
        curves = ((1, "player 1 wins", "#b2182b"), (0, "draws", "#7f7f7f"), (2, "player 2 wins", "#2166ac"))
    for value, label, colour in curves:
        rate = np.convolve((outcome == value).astype(float), kernel, mode="valid")
        d.plot(x[w - 1:], rate, label=label, color=colour, lw=1.8)
    d.set_ylim(-0.02, 1.02)
    versus = f" against {data.opponent}" if against and data.opponent else (" (self-play)" if not against else "")
    d.set_title(f"game results{versus}, rolling mean over {w} {'game' if w == 1 else 'games'}")
    d.set_xlabel("games played")
    d.set_ylabel("share of games")
    d.legend(fontsize=8)
    d.grid(alpha=0.3)
    for ax in (a, b, c, d, a2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    a2.yaxis.set_major_locator(MaxNLocator(integer=True))
    return save_figure(fig, out, dpi)




@diagnosed
def tree_at(db: str | os.PathLike[str], game_id: int) -> Tree:
    """The tree in ``db`` as it was after training game ``game_id`` (see the module notes on counts).

    Returns a read-only view: the nodes that existed then; the root and its
    children carry their counts at that moment when ``history`` has them,
    every other node its counts of today.
    """
    name = os.fspath(db)
    with reading(name) as (conn, meta):
        rows, snap = rows_until(conn, game_id)
        tree = Tree(meta["game"], c=float(meta.get("c", SQRT2)))
    nodes: dict[int, TreeNode] = {}
    tree.depth_counts = []
    for nid, pid, move, n, w, d, proven, created, value in rows:
        parent = nodes.get(pid) if pid is not None else None
        if pid is not None and parent is None:
            continue  # under a node that did not exist yet
        node = TreeNode(move, parent, node_id=nid, nb_visit=n, nb_win=w, nb_draw=d, proven=proven,
                        created_game=created)
        if value:
            node.value_sum = value
        nodes[nid] = node
        while len(tree.depth_counts) <= node.depth:
            tree.depth_counts.append(0)
        tree.depth_counts[node.depth] += 1
    tree.root = next(iter(nodes.values()))
    tree.size = len(nodes)
    if snap is not None:
        root = tree.root
        logged = json.loads(snap[1])
        for kid in root.children_view:  # [visits, wins, draws], a value sum fourth if any
            kid.nb_visit, kid.nb_win, kid.nb_draw, kid.value_sum = [*logged.get(kid.name, [0, 0, 0]), 0.0][:4]
        # the root's own wins (player 2's), draws and value sum follow from its children's
        root.nb_visit = snap[0]
        root.nb_draw = sum(k.nb_draw for k in root.children_view)
        root.nb_win = sum(k.nb_visit - k.nb_win - k.nb_draw for k in root.children_view)
        root.value_sum = -sum(k.value_sum for k in root.children_view)
        root.proven = None
    tree.forget_changes()
    return tree
