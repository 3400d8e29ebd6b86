"""The rows a fit learns from, built from the tree held in memory instead of read from its file.

The learning loop keeps its tree loaded between its steps (:func:`~treelab.store.persistence.reusing_trees`,
:func:`~treelab.store.persistence.kept_tree`) and forks the refit that runs beside the games
(:func:`~treelab.store.writer.spawn`): the child holds a copy-on-write snapshot of that tree, which is the file
once the step's saver is done. :func:`tree_fit_rows` builds from it the :class:`~treelab.store.rows.FitRows` that
:func:`~treelab.store.rows.read_fit_rows` reads from the file (the same rule, rows, order and Python types), one
breadth-first walk of the tree in C and numpy masks instead of two queries over the ``nodes`` table.

It does so only when the tree's ``node_id`` s are the file's row ids: the file is as the tree last saved it (its
``tree_id`` and save counter, no one else's save since, nothing unsaved in the tree, a whole tree) and holds as
many nodes as the tree with the same largest id (a writer process numbers a run's new nodes from
:data:`~treelab.store.deltas.LOCAL` until it has stored them). Otherwise it reads the file as
:func:`~treelab.store.rows.read_fit_rows` does, in the same read transaction. The logged games are read from the
file either way.

``value_sum``: the tree's (a Python float). The file's is summed as old + (new - base) by its writer, so the two
may differ in the last bits.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import attrgetter
from typing import Any

import numpy as np

from ..tree import Tree
from .binding import binding_of
from .bulk import breadth_first
from .dbfile import diagnosed, reading
from .rows import FitRow, FitRows, Picker, fit_games, query_fit_rows
from .schema import DbPath
from .values import columns

__all__ = ["tree_fit_rows"]

_NONE = -(1 << 62)
"""What a None slot (``proven``, ``created_game``) reads as in the columns."""


@diagnosed
def tree_fit_rows(tree: Tree, db: DbPath, *, min_visits: int, max_depth: int | None, game: str | None = None,
                  pick: Picker | None = None, on_snapshot: Callable[[], None] | None = None) -> FitRows:
    """:func:`~treelab.store.rows.read_fit_rows` of ``db``, its nodes' rows built from ``tree`` (the file's tree
    in memory) when its ids are the file's, else read from the file (see the module's docstring).

    ``on_snapshot`` is called once the read transaction on ``db`` holds its snapshot, before either.

    Raises:
        StoreError, GameMismatchError: as :func:`~treelab.store.rows.read_fit_rows`.
    """
    with reading(db, game) as (conn, meta):
        if on_snapshot is not None:
            on_snapshot()
        binding = binding_of(tree)
        if (binding is None or binding.foreign or binding.depth is not None or binding.subtree
                or meta.get("tree_id") != binding.tree_id or meta.get("generation") != str(binding.generation)
                or tree.game.name != meta["game"] or tree.new_nodes or tree.baselines or tree.value_baselines):
            return query_fit_rows(conn, meta, min_visits=min_visits, max_depth=max_depth, pick=pick)
        nodes, parents = breadth_first(tree.root)
        table = columns(nodes, ("node_id", "depth", "nb_visit"))
        top, count = conn.execute("SELECT max(id), count(*) FROM nodes").fetchone()
        if len(nodes) != count or int(table[:, 0].max()) != top:
            return query_fit_rows(conn, meta, min_visits=min_visits, max_depth=max_depth, pick=pick)
        rows = _rows(nodes, np.frombuffer(parents, dtype=np.int64), table, min_visits, max_depth, pick)
        return FitRows(meta["game"], rows, len(nodes), tree.root.nb_visit, fit_games(conn), "tree")


def _rows(nodes: list[Any], parents: np.ndarray, table: np.ndarray, min_visits: int, max_depth: int | None,
          pick: Picker | None) -> list[FitRow]:
    """The rows of :func:`tree_fit_rows` from ``nodes`` breadth first, their ``parents`` (positions, -1 for the
    root) and their ``(node_id, depth, nb_visit)``."""
    ids, depths, visits = table[:, 0], table[:, 1], table[:, 2]
    deepest = (1 << 62) if max_depth is None else max_depth
    up = np.maximum(parents, 0)  # the root's "parent" is itself, masked out below
    has_parent = parents >= 0
    if pick is None:  # read_fit_rows's whole read: well visited, or the child of a well-visited node
        wanted = (depths <= deepest) & (visits >= min_visits)
        wanted |= has_parent & (visits[up] >= min_visits) & (depths[up] <= deepest)
    else:
        parent_of_some = np.zeros(len(nodes), dtype=bool)
        parent_of_some[parents[has_parent]] = True
        pool = _by_depth_and_id(np.flatnonzero((visits >= min_visits) & (depths <= deepest) & parent_of_some), table)
        stamps = columns(list(map(nodes.__getitem__, pool.tolist())), ("created_game",), none=_NONE)[:, 0]
        chosen = pick(list(zip(ids[pool].tolist(), _or_none(stamps), strict=True)))
        picked = _positions(np.asarray(chosen, dtype=np.int64), pool, ids)
        chose = np.zeros(len(nodes), dtype=bool)
        chose[picked] = True
        wanted = chose | (has_parent & chose[up])  # the picked nodes and their children
        climb = picked
        while climb.size:  # and every ancestor (one already wanted has its own marked, or climbed from)
            climb = parents[climb]
            climb = np.unique(climb[climb >= 0])
            climb = climb[~wanted[climb]]
            wanted[climb] = True
    order = _by_depth_and_id(np.flatnonzero(wanted), table)
    kept = list(map(nodes.__getitem__, order.tolist()))
    ints = columns(kept, ("node_id", "depth", "nb_visit", "nb_win", "nb_draw", "nb_select"))
    maybe = columns(kept, ("proven", "created_game"), none=_NONE)
    parent_ids = np.where(has_parent[order], ids[up[order]], _NONE)
    node_ids, depth, visit, win, draw, select = (ints[:, k].tolist() for k in range(6))
    proven, created, parent = (_or_none(column) for column in (maybe[:, 0], maybe[:, 1], parent_ids))
    sums = np.fromiter(map(getattr, kept, repeat("_value_sum"), repeat(0.0)), dtype=np.float64, count=len(kept))
    moves = list(map(attrgetter("name"), kept))
    return list(zip(node_ids, parent, moves, depth, visit, win, draw, proven, select, created, sums.tolist(),
                    strict=True))


def _or_none(column: np.ndarray) -> list[Any]:
    """``column``'s ints as a list, None for :data:`_NONE`."""
    out = column.astype(object)
    out[column == _NONE] = None
    return out.tolist()  # type: ignore[no-any-return]


def _positions(chosen: np.ndarray, pool: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The positions of the nodes whose ids are ``chosen``: looked up among the candidates ``pool``, then among
    every node for an id that is no candidate; an id of no node is left out (the file's read finds no row)."""
    found = np.full(len(chosen), -1, dtype=np.int64)
    for among in (pool, np.arange(len(ids))):
        missing = np.flatnonzero(found < 0)
        if not missing.size or not among.size:
            continue
        order = np.argsort(ids[among], kind="stable")
        at = np.minimum(np.searchsorted(ids[among], chosen[missing], sorter=order), len(among) - 1)
        hit = ids[among[order[at]]] == chosen[missing]
        found[missing[hit]] = among[order[at[hit]]]
    return found[found >= 0]


def _by_depth_and_id(positions: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``positions`` ordered by (depth, id), as ``read_fit_rows`` orders its rows."""
    return positions[np.lexsort((table[positions, 0], table[positions, 1]))]
