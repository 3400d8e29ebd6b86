"""A node's stored numbers as every writer writes them: counts that only add up, value sums and priors, and
the slots of many nodes as one array.

- **Counts only add up** (:func:`adding`, the one rule of stored counts as SQL): every writer adds a change
  to the stored counts, never sets them, so two writers (or two workers' batches, or a merge) add up
  exactly in any order: the ``nodes`` counts (:mod:`treelab.store.deltas`) and the ``positions`` rows
  (:mod:`treelab.store.positiontable`) are both written with its terms.
- **Slots as columns** (:func:`columns`): the int slots of many nodes as one int64 array (a row per node),
  read in C when the extension is built, for a delta and for the ``positions`` table.
- **Value sums and priors**: the ``nodes.value_sum`` and ``nodes.prior`` columns (schema 4), read and
  written. Searches with value networks or returns in [-1, 1] (OpenSpiel's ``MCTSBot``, DeepMind's mctx,
  alpha-zero-general, treelab's PUCT with an evaluator) do not end every simulation in a whole win or
  draw. A node's ``value_sum`` adds up the value estimates ``v`` in [-1, 1] (the mover's) of those
  simulations, each of which also counts as a draw: the mover's mean is :func:`treelab.nodes.mean_reward`,
  defined once. ``prior`` is the policy's probability of the move into the node, where the search had one
  (NULL: none). Value sums add up like the counts; priors do not: the first stored prior of a node stays
  (as proofs do).

In memory a node's value sum is :attr:`treelab.nodes.TreeNode.value_sum` and its prior
``tree.priors[node]``. Most trees have neither, so they travel beside the counts, as the few
nodes that have them (:class:`Values`): :func:`collect` for a save or a delta,
:func:`write_new` for a new file, :func:`add_values` inside :func:`treelab.store.deltas.apply`,
:func:`read` for a load.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from ..errors import NotATreelabDatabaseError
from ..speedups import compiled
from ..tree import Tree, TreeNode

__all__ = ["ADD", "Values", "add_values", "adding", "collect", "columns", "of_rows", "read", "write_new"]

# -- counts only add up ------------------------------------------------------------------------------------------------
def adding(columns: Iterable[str], source: str = "?") -> str:
    """The one rule of stored counts as SQL: they only ever add up. The ``SET`` terms adding ``source`` (a
    parameter; ``"excluded."``: an upsert's new row's column) to each of ``columns``:
    ``nb_visit = nb_visit + ?, ...`` (the ``nodes`` of :mod:`.deltas`, the ``positions`` of :mod:`.positiontable`).

    >>> adding(["nb_visit", "nb_win"], "excluded.")
    'nb_visit = nb_visit + excluded.nb_visit, nb_win = nb_win + excluded.nb_win'
    """
    return ", ".join(f"{c} = {c} + {source}{c if source.endswith('.') else ''}" for c in columns)

# -- slots of many nodes as one array ----------------------------------------------------------------------------------


def columns(nodes: list[TreeNode], fields: tuple[str, ...], *, none: int | None = None) -> np.ndarray:
    """The int slots ``fields`` of ``nodes`` (``"parent.node_id"``: the parent's id) as an int64 array, a row each.

    ``none``: what a None value becomes (without it, None is a ``TypeError``).
    """
    if compiled is not None:
        raw = compiled.columns(nodes, fields) if none is None else compiled.columns(nodes, fields, none)
        flat = np.frombuffer(raw, dtype=np.int64)
    else:
        values: Iterable[Any]
        if "parent.node_id" in fields:
            gets = [_parent_id if name == "parent.node_id" else attrgetter(name) for name in fields]
            values = (get(node) for node in nodes for get in gets)
        else:
            get = attrgetter(*fields)
            values = chain.from_iterable(map(get, nodes)) if len(fields) > 1 else map(get, nodes)
        if none is not None:
            values = (none if v is None else v for v in values)
        flat = np.fromiter(values, dtype=np.int64, count=len(nodes) * len(fields))
    return flat.reshape(len(nodes), len(fields))


def _parent_id(node: TreeNode) -> int:
    parent = node.parent
    return -1 if parent is None else int(parent.node_id)

# -- value sums and priors ---------------------------------------------------------------------------------------------


ADD = "UPDATE nodes SET value_sum = value_sum + ?, prior = coalesce(prior, ?) WHERE id = ?"
"""The one statement that adds a node's value sum and keeps its first prior."""


@dataclass(frozen=True)
class Values:
    """The value sums to add and priors to keep of some nodes of a :class:`~treelab.store.deltas.Delta`."""

    positions: np.ndarray
    """Where each node is in the delta: positions in ``known``, then new node ``i`` at ``len(known) + i`` (int64)."""
    sums: np.ndarray
    """What to add to each node's ``value_sum`` (float64)."""
    priors: np.ndarray
    """Each node's prior (float64; NaN: none)."""

    def __len__(self) -> int:
        return len(self.positions)

    def rows(self, where: Sequence[int]) -> list[tuple[float, float | None, int]]:
        """``(value_sum to add, prior or None, row id)`` of each node, ``where[position]`` its row id."""
        priors = [None if math.isnan(p) else p for p in self.priors.tolist()]
        return [(s, p, where[i]) for s, p, i in zip(self.sums.tolist(), priors, self.positions.tolist(), strict=True)]


def collect(tree: Tree, known: Sequence[TreeNode], new: Sequence[TreeNode]) -> Values | None:
    """The value sums changed and the priors of ``known`` (stored nodes that changed) and ``new`` (new nodes),
    positioned as a delta lists them; None when there are none (a tree of whole results)."""
    base, priors = tree.value_baselines, tree.priors
    if not base and not priors and not tree.valued:
        return None
    pos: list[int] = []
    sums: list[float] = []
    prior: list[float] = []
    nan = math.nan
    for i, node in enumerate(known):
        p = priors.get(node)
        if node in base or p is not None:
            pos.append(i)
            sums.append(node.value_sum - base.get(node, node.value_sum))
            prior.append(nan if p is None else p)
    k = len(known)
    for i, node in enumerate(new):
        v, p = node.value_sum, priors.get(node)
        if v or p is not None:
            pos.append(k + i)
            sums.append(v)
            prior.append(nan if p is None else p)
    if not pos:
        return None
    return Values(np.array(pos, dtype=np.int64), np.array(sums, dtype=np.float64), np.array(prior, dtype=np.float64))


def of_rows(sums: Sequence[float], priors: Sequence[float | None]) -> Values | None:
    """The value sums and priors of a chunk of rows (``treelab merge``'s, ``treelab import``'s), a position each
    as the rows are; None if it has none."""
    table = np.array([math.nan if p is None else p for p in priors], dtype=np.float64)
    sum_array = np.array(sums, dtype=np.float64)
    pos = np.flatnonzero((sum_array != 0) | ~np.isnan(table))
    return Values(pos, sum_array[pos], table[pos]) if len(pos) else None


def add_values(conn: sqlite3.Connection, values: Values | None, where: Sequence[int]) -> None:
    """Add ``values`` to the rows ``where`` names (a delta's known ids, then its new nodes' ids)."""
    if values is not None and len(values):
        conn.executemany(ADD, values.rows(where))


_BY_ID = 20_000
"""A partial load of at most this many nodes looks their values up by id instead of scanning the table."""

_BATCH = 50_000
"""Rows :func:`write_new` sends per ``executemany``: the memory of a batch, not of the tree."""


def write_new(conn: sqlite3.Connection, tree: Tree, nodes: Sequence[TreeNode], first_id: int) -> None:
    """Write the value sums and priors of a new file's ``nodes`` (``nodes[i]`` is row ``first_id + i``), a batch
    at a time."""
    priors = tree.priors
    if not priors and not tree.valued:
        return
    batch: list[tuple[float, float | None, int]] = []
    for i, node in enumerate(nodes, first_id):
        value, prior = node.value_sum, priors.get(node)
        if value or prior is not None:
            batch.append((value, prior, i))
            if len(batch) == _BATCH:
                conn.executemany(ADD, batch)
                batch = []
    if batch:
        conn.executemany(ADD, batch)


def read(conn: sqlite3.Connection, tree: Tree, nodes: Mapping[int, TreeNode] | list[Any], name: str) -> None:
    """Give the loaded ``nodes`` (by row id) their stored value sums and priors (one scan of the table)."""
    if "value_sum" not in {row[1] for row in conn.execute("PRAGMA table_info(nodes)")}:
        return  # an older file read as it is
    partial = isinstance(nodes, dict)
    priors = tree.priors
    rows: Iterable[tuple[Any, ...]]
    if partial and len(nodes) <= _BY_ID:  # a few nodes of a big file: looked up, not a scan of the table
        ids = list(nodes)
        rows = [row for start in range(0, len(ids), 500) for row in conn.execute(
            f"SELECT id, value_sum, prior FROM nodes WHERE id IN ({','.join('?' * len(ids[start:start + 500]))}) "
            "AND (value_sum != 0 OR prior IS NOT NULL)", ids[start:start + 500])]
    else:
        rows = conn.execute("SELECT id, value_sum, prior FROM nodes WHERE value_sum != 0 OR prior IS NOT NULL")
    for nid, value, prior in rows:
        node = nodes.get(nid) if partial else (nodes[nid] if 0 <= nid < len(nodes) else None)  # type: ignore[union-attr]
        if node is None:
            continue
        if not isinstance(value, int | float) or not math.isfinite(value) or (
                prior is not None and (not isinstance(prior, int | float) or not 0.0 <= prior <= 1.0)):
            raise NotATreelabDatabaseError(
                f"{name!r} is damaged: node id {nid} has value_sum {value!r} and prior {prior!r} "
                "(a finite number, and a probability or NULL): restore a copy")
        if value:
            node.value_sum = float(value)
            tree.valued = True
        if prior is not None:
            priors[node] = float(prior)
