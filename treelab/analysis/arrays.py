"""The tree as flat numpy arrays, and the statistics computed on them.

:class:`TreeArrays` holds one row per node in breadth-first order (the subtree root first, parents before
children, siblings in creation order), so every statistic is a few vectorised numpy operations and scales
to millions of nodes: node and leaf counts, nodes per depth, the leaf-depth histogram, the effective
branching factor per depth, the principal variation and its visit shares, how concentrated each node's
visits are on its children (normalised entropy, Gini) and an asymmetry index for the whole tree.

Definitions:
    - *branching factor at depth d*: children per expanded node, ``nodes(d+1) / internal nodes(d)``.
    - *principal variation*: the most visited child at each level (ties: the first created), down to a
      leaf or an unvisited child.
    - *entropy* of a node: the Shannon entropy of its children's visit shares divided by ``ln(k)`` for ``k``
      children: 1 = visits spread evenly, 0 = all in one child. *Gini*: the Gini coefficient of the same visits.
    - *asymmetry* of a tree: the Gini coefficient of children's visits at every node with two or more
      children, averaged with weights equal to the visits that went down into those children. 0: every
      node spreads its visits evenly (a breadth-first tree); towards 1: search concentrates on one line
      (the asymmetric growth UCT is known for).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

import numpy as np

from ..games import Game, State, find_game, written
from ..mcts.choice import best_index
from ..mcts.config import Statistics
from ..mcts.scores import Edge, score_terms
from ..mcts.summary import GraphStats
from ..nodes import PARENT_SLOT, mean_reward, preference, proof_word
from ..positions import PositionTable
from ..store.dbfile import diagnosed
from ..store.integrity import check_table
from ..tree import SQRT2, MoverNode, Moves, Tree, TreeNode

__all__ = ["TreeArrays", "child_rows", "gini", "normalised_entropy", "stats"]


NO_PROOF = 2
"""The value of :attr:`TreeArrays.proven` for an unproven node."""


@dataclass(frozen=True, eq=False)
class TreeArrays:
    """A (sub)tree as flat arrays, one entry per node, breadth first; index 0 is the subtree root."""

    parent: np.ndarray
    """Index of each node's parent (-1 for the subtree root), always smaller than the node's own."""
    depth: np.ndarray
    """Depth below the subtree root (0 for it)."""
    visits: np.ndarray
    """``nb_visit``."""
    wins: np.ndarray
    """``nb_win`` (wins of the player who moved into the node)."""
    draws: np.ndarray
    """``nb_draw``."""
    proven: np.ndarray
    """``proven`` (1, 0, -1; :data:`NO_PROOF` when unknown)."""
    created: np.ndarray
    """``created_game`` (-1 when unknown)."""
    selected: np.ndarray
    """``nb_select`` (simulations that selected the node at its parent: what moves are chosen by)."""
    moves: np.ndarray
    """The move label into each node (object array of str; ``"root"`` for the tree root)."""
    root_depth: int = 0
    """Depth of the subtree root in the whole tree."""
    game: str | None = None
    """The game's name, when known."""
    mover: np.ndarray | None = None
    """The player (1 or 2) who moved into each node, for games whose players need not alternate
    (:class:`treelab.tree.MoverTree`); None: the parity of the depth (the built-in games' fast path)."""
    value_sum: np.ndarray | None = None
    """Each node's :attr:`~treelab.nodes.TreeNode.value_sum` (float64; None: 0 everywhere)."""

    # -- building -------------------------------------------------------------
    @classmethod
    def from_tree(cls, source: Tree | TreeNode, path: Moves = None) -> TreeArrays:
        """The arrays of the subtree at ``path`` of an in-memory tree (or below a node).

        Nodes are ordered by (depth, node id), exactly as :meth:`from_db` orders
        the same tree read from its database.
        """
        start = source.find(path) if isinstance(source, Tree) else source
        nodes: list[TreeNode] = [start]
        for node in nodes:  # grows while iterating: breadth first
            nodes.extend(node.children_view)
        n = len(nodes)
        ids = np.fromiter((x.node_id for x in nodes), np.int64, n)
        parent_ids = np.fromiter((-1 if x is start else getattr(x, PARENT_SLOT).node_id for x in nodes), np.int64, n)
        ordered = np.sort(ids)  # (a sort: numpy's hashing unique takes 5x longer on a million ids)
        if (ordered[1:] == ordered[:-1]).any():  # nodes made outside a Tree: number them breadth first
            index = {id(x): i for i, x in enumerate(nodes)}
            ids = np.arange(n, dtype=np.int64)
            parent_ids = np.fromiter(
                (-1 if x is start else index[id(getattr(x, PARENT_SLOT))] for x in nodes), np.int64, n
            )
        table = np.empty((n, 9), dtype=np.int64)
        table[:, 0], table[:, 1] = ids, parent_ids
        table[:, 2] = np.fromiter((x.depth for x in nodes), np.int64, n)
        table[:, 3] = np.fromiter((x.nb_visit for x in nodes), np.int64, n)
        table[:, 4] = np.fromiter((x.nb_win for x in nodes), np.int64, n)
        table[:, 5] = np.fromiter((x.nb_draw for x in nodes), np.int64, n)
        table[:, 6] = np.fromiter((NO_PROOF if x.proven is None else x.proven for x in nodes), np.int64, n)
        table[:, 7] = np.fromiter((-1 if x.created_game is None else x.created_game for x in nodes), np.int64, n)
        table[:, 8] = np.fromiter((x.nb_select for x in nodes), np.int64, n)
        game = source.game.name if isinstance(source, Tree) else None
        mover = np.fromiter((x.mover for x in nodes), np.int8, n) if isinstance(start, MoverNode) else None
        values = np.fromiter((x.value_sum for x in nodes), np.float64, n)
        return cls.from_table(table, [x.name for x in nodes], int(ids[0]), start.depth, game, mover, values)

    @classmethod
    @diagnosed
    def from_db(cls, db: str | os.PathLike[str], path: Moves = None, *, max_depth: int | None = None) -> TreeArrays:
        """The arrays of the subtree at ``path`` (down to ``max_depth`` levels) straight from a database.

        Reads only the needed rows (a recursive query on ``parent_id`` for a
        subtree), without building tree nodes.
        """
        from ..games import find_game
        from ..store.dbfile import reading
        from ..store.rows import path_rows, subtree_table

        name = os.fspath(db)
        with reading(name) as (conn, meta):
            game = find_game(meta["game"])
            chain = path_rows(conn, game, path, name)
            top, root_depth = chain[-1][0], len(chain) - 1
            rows, moves, mover, values = subtree_table(conn, top, root_depth, max_depth, NO_PROOF, name, game)
        table = np.array(rows, dtype=np.int64).reshape(len(rows), 9)
        check_table(table, NO_PROOF, moves, game)
        return cls.from_table(table, moves, top, root_depth, game.name, None if mover is None else np.array(mover),
                              np.array(values, dtype=np.float64))

    @classmethod
    def from_table(
        cls, table: np.ndarray, moves: list[str], root_id: int, root_depth: int, game: str | None = None,
        mover: np.ndarray | None = None, values: np.ndarray | None = None,
    ) -> TreeArrays:
        """Build from an ``(N, 9)`` integer table and the N move labels, in any order.

        Columns: id, parent id (-1: none), depth, nb_visit, nb_win, nb_draw,
        proven (:data:`NO_PROOF` when unknown), created_game (-1: none), nb_select. Rows
        are sorted by (depth, id): breadth first, siblings in creation order; ``mover``, ``values`` (if any) per row.
        """
        n = len(table)
        order = np.lexsort((table[:, 0], table[:, 2]))
        t = table[order]
        ids, pid = t[:, 0], t[:, 1]
        by_id = np.argsort(ids)
        pos = np.clip(np.searchsorted(ids, pid, sorter=by_id), 0, max(n - 1, 0))
        parent = by_id[pos] if n else pos
        parent = np.where((ids[parent] == pid) & (ids != root_id), parent, -1) if n else parent
        return cls(
            parent=parent.astype(np.int64),
            depth=(t[:, 2] - root_depth).astype(np.int32),
            visits=t[:, 3].copy(),
            wins=t[:, 4].copy(),
            draws=t[:, 5].copy(),
            proven=t[:, 6].astype(np.int8),
            created=t[:, 7].copy(),
            selected=t[:, 8].copy(),
            moves=np.array(moves, dtype=object)[order] if n else np.array([], dtype=object),
            root_depth=root_depth,
            game=game,
            mover=None if mover is None else mover.astype(np.int8)[order],
            value_sum=None if values is None or not values.any() else values.astype(np.float64)[order],
        )

    # -- shape ----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.parent)

    @property
    def n_children(self) -> np.ndarray:
        """Number of children of each node."""
        return np.bincount(self.parent[1:], minlength=len(self)) if len(self) else np.zeros(0, np.int64)

    @property
    def is_leaf(self) -> np.ndarray:
        """True for nodes without children."""
        return self.n_children == 0

    @property
    def mean(self) -> np.ndarray:
        """The mover's mean reward of each node (0.5 when unvisited): :func:`~treelab.nodes.mean_reward`."""
        with np.errstate(invalid="ignore", divide="ignore"):
            m = (self.wins + 0.5 * self.draws + 0.5 * (0.0 if self.value_sum is None else self.value_sum)) / self.visits
        return np.where(self.visits > 0, m, 0.5)

    def depth_histogram(self) -> list[int]:
        """Nodes per depth below the subtree root, from 0."""
        return np.bincount(self.depth).tolist()

    def leaf_depth_histogram(self) -> list[int]:
        """Leaves per depth, from 0 (same length as :meth:`depth_histogram`)."""
        return np.bincount(self.depth[self.is_leaf], minlength=int(self.depth.max()) + 1).tolist()

    def children_of(self, i: int) -> np.ndarray:
        """Indices of the children of node ``i`` (in creation order; a scan, for one-off use)."""
        return np.flatnonzero(self.parent == i)

    def principal_variation(self) -> list[int]:
        """Indices along the principal variation (subtree root excluded): :func:`treelab.mcts.choice.best_index`."""
        csr_order = np.argsort(self.parent[1:], kind="stable") + 1
        starts = np.searchsorted(self.parent[csr_order], np.arange(len(self) + 1))
        line, i = [], 0
        while True:
            kids = csr_order[starts[i]:starts[i + 1]]
            if not len(kids):
                break
            rows = [(None if p == NO_PROOF else int(p), int(s), int(v))
                    for p, s, v in zip(self.proven[kids], self.selected[kids], self.visits[kids], strict=True)]
            at = best_index(rows)
            assert at is not None
            best = int(kids[at])
            if self.visits[best] == 0:
                break
            line.append(best)
            i = best
        return line

    def concentration(self) -> tuple[np.ndarray, np.ndarray]:
        """Per node: normalised entropy and Gini of its children's visits (NaN for < 2 children or no visits)."""
        n = len(self)
        kids_n = self.n_children
        par = self.parent[1:]
        x = self.visits[1:].astype(float)
        total = np.bincount(par, weights=x, minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            p = x / total[par]
            h = np.bincount(par, weights=np.where(p > 0, -p * np.log(p), 0.0), minlength=n)
            entropy = h / np.log(kids_n)
        # Gini by rank within each sibling group: G = 2*sum(i*x_i)/(k*S) - (k+1)/k
        order = np.lexsort((x, par))
        first = np.searchsorted(par[order], par[order], side="left")
        rank = np.arange(len(order)) - first + 1
        t = np.bincount(par[order], weights=rank * x[order], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            g = 2 * t / (kids_n * total) - (kids_n + 1) / kids_n
        bad = (kids_n < 2) | (total <= 0)
        return np.where(bad, np.nan, entropy), np.where(bad, np.nan, g)

    def asymmetry(self) -> float | None:
        """Visit-weighted mean Gini of children's visits (see the module notes); None if undefined."""
        _, g = self.concentration()
        weight = np.bincount(self.parent[1:], weights=self.visits[1:].astype(float), minlength=len(self))
        ok = ~np.isnan(g)
        if not ok.any() or weight[ok].sum() <= 0:
            return None
        return float(np.average(g[ok], weights=weight[ok]))


def normalised_entropy(visits: list[int]) -> float | None:
    """Shannon entropy of the visit shares divided by ``ln(len(visits))`` (None: < 2 moves or no visits)."""
    total = sum(visits)
    if len(visits) < 2 or total <= 0:
        return None
    h = -sum(v / total * math.log(v / total) for v in visits if v)
    return h / math.log(len(visits))


def gini(visits: list[int]) -> float | None:
    """Gini coefficient of the visits (0: even, towards 1: one move takes all; None: < 2 moves)."""
    total = sum(visits)
    k = len(visits)
    if k < 2 or total <= 0:
        return None
    xs = sorted(visits)
    return 2 * sum((i + 1) * x for i, x in enumerate(xs)) / (k * total) - (k + 1) / k


Kid = tuple[Any, ...]
"""A child for :func:`child_rows`: ``(move, visits, wins, draws, proven[, value_sum, prior[, nb_select, position]])``
(``position``: its position's merged row, for the graph score)."""


def child_rows(parent_visits: int, kids: list[Kid], c: float, action: Callable[[str], str] | None = None, *,
               statistics: Statistics = "classic", mover: int = 1) -> list[dict[str, Any]]:
    """The ``children`` table of ``analyse --json`` from :data:`Kid` tuples (``mover``: the player making the moves).

    In the order of the move-choice rule (:func:`treelab.mcts.choice.preference`: proven wins first, proven losses
    last, then the most selected, then the most visited; ties keep the order of ``kids``), so the first row is the
    principal variation's move; every row has ``nb_select``; ``ucb1`` is the score the tree's searches select by
    (:func:`treelab.mcts.scores.score_terms` of ``statistics``), null for +inf (an unvisited move, or under the
    graph rule one never selected here); the graph rule adds analyse's ``value``, ``exploration``
    and ``position``. ``action`` (games that show action strings, OpenSpiel's) adds each move's ``"action"``;
    a child with a value sum or a prior has the optional keys ``value_sum`` and ``prior``.
    """
    rows, graph = [], statistics == "graph"
    selections = sum(k[7] for k in kids) if graph else 0
    ranked = sorted(kids, key=lambda k: preference(k[4], k[7] if len(k) > 7 else 0, k[1]), reverse=True)
    for move, n, w, d, proven, *more in ranked:
        value, prior, selected, position = (*more, *(0.0, None, 0, None)[len(more):])  # type: ignore[misc]
        edge = Edge(w, d, n, selected, parent_visits, selections, mover, value or 0.0, position)
        score = score_terms(statistics, edge, c)
        terms = GraphStats.of(edge, score).to_dict() if graph else {}
        extra = {"value_sum": value, "prior": prior} if value or prior is not None else {}
        rows.append({"move": move, "nb_visit": n, "nb_win": w, "nb_draw": d, "mean": mean_reward(w, d, n, value or 0.0),
                     "ucb1": score.total, "proven": proof_word(proven), "nb_select": selected,
                     **({} if action is None else {"action": action(move)}), **terms, **extra})
    return rows


def _action_text(game: Game, state: State, move: str) -> str:
    return game.action_text(state, game.parse_move(move))


def _round(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or math.isnan(x) else round(x, digits)


def stats(source: Tree | TreeNode, path: Moves = None, *, c: float | None = None) -> dict[str, Any]:
    """The ``stats --json`` object of the subtree at ``path`` of an in-memory tree.

    For a database use :func:`treelab.analysis.sqlstats.db_stats` (same keys, computed
    with SQL aggregates).
    """
    start = source.find(path) if isinstance(source, Tree) else source
    if c is None:
        c = source.c if isinstance(source, Tree) else SQRT2
    arrays = TreeArrays.from_tree(start)
    game = source.game.name if isinstance(source, Tree) else None
    priors = source.priors if isinstance(source, Tree) else {}
    rule: Statistics = source.statistics if isinstance(source, Tree) else "classic"  # type: ignore[assignment]
    table = PositionTable.of(source) if isinstance(source, Tree) and rule == "graph" else None
    kids = [(k.name, k.nb_visit, k.nb_win, k.nb_draw, k.proven, k.value_sum, priors.get(k), k.nb_select,
             None if table is None else table.row(k)) for k in start.children_view]
    return assemble(game, start.moves, start.proven, start.nb_visit, arrays=arrays, kids=kids, c=c, statistics=rule)


def assemble(
    game: str | None,
    moves: tuple[str, ...] | list[str],
    proven: int | None,
    visits: int,
    *,
    arrays: TreeArrays | None = None,
    counts: dict[str, Any] | None = None,
    kids: list[Kid],
    c: float,
    statistics: Statistics = "classic",
) -> dict[str, Any]:
    """Put together the stats object from arrays (in memory) or precomputed ``counts`` (SQL); the children's scores
    are those of ``statistics``, the rule the tree's searches select by (named in the object unless classic)."""
    if arrays is not None:
        pv = arrays.principal_variation()
        counts = {
            "nodes": len(arrays),
            "leaves": int(arrays.is_leaf.sum()),
            "depth_histogram": arrays.depth_histogram(),
            "leaf_depth_histogram": arrays.leaf_depth_histogram(),
            "principal_variation": [str(arrays.moves[i]) for i in pv],
            "pv_visits": [int(arrays.visits[i]) for i in pv],
            "asymmetry": arrays.asymmetry(),
        }
    assert counts is not None
    hist = counts["depth_histogram"]
    leaf_hist = counts["leaf_depth_histogram"]
    branching = [round(hist[d + 1] / (hist[d] - leaf_hist[d]), 4) for d in range(len(hist) - 1)]
    line_visits = [visits, *counts["pv_visits"]]
    child_visits = [k[1] for k in kids]
    kid_total = sum(child_visits)
    reward = sum(mean_reward(k[2], k[3], k[1], (k[5] if len(k) > 5 else 0.0) or 0.0) * k[1] for k in kids)
    rules = find_game(game) if game is not None else None
    to_move, path = 1 if len(moves) % 2 == 0 else 2, written(moves, rules)
    action = None
    if rules is not None and rules.shows_actions:  # OpenSpiel's action strings beside the ids
        action = partial(_action_text, rules, rules.replay(list(moves)))
    if rules is not None and not rules.alternating:  # the movers come from the game (treelab.tree.MoverTree)
        mover, to_move = rules.turn(moves)
        proven = proven if mover != to_move or proven is None else -proven  # a double move into this node
    return {
        "game": game,
        "path": path,
        "root_depth": len(moves),
        "to_move": to_move,
        "simulations": visits,
        "nodes": counts["nodes"],
        "leaves": counts["leaves"],
        "max_depth": len(hist) - 1,
        "depth_histogram": hist,
        "leaf_depth_histogram": leaf_hist,
        "branching_factor": branching,
        "principal_variation": counts["principal_variation"],
        "pv_visits": counts["pv_visits"],
        "pv_share": [round(b / a, 6) if a else 0.0 for a, b in pairwise(line_visits)],
        "value": reward / kid_total if kid_total else 0.5,
        "proven": proof_word(None if proven is None else -proven),
        "entropy": _round(normalised_entropy(child_visits)),
        "gini": _round(gini(child_visits)),
        "asymmetry": _round(counts["asymmetry"]),
        "c": c,
        "children": child_rows(visits, kids, c, action, statistics=statistics, mover=to_move),
        **({} if statistics == "classic" else {"statistics": statistics}),
    }
