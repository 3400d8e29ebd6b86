"""Adding trees of one game along identical move paths, in memory: increments.

Counts add up: a node's ``nb_visit``, ``nb_win``, ``nb_draw`` (every ``nb_*``
count a node has, :data:`COUNTS`) and its value sum in a sum of trees are the
sums of the nodes at the same move path in each summand. This module holds that
rule for trees in memory:

- an :class:`Increment` is what one tree adds to another: a rooted subtree in
  move-path form (each row names its parent's row and its move), counts and
  value sums to add, proofs to merge and priors to keep (a node's first prior stays);
- :func:`add` adds an increment to a tree in memory (creating the nodes it
  lacks, marking what changed so the next incremental save writes it).

Database files are added up by :mod:`treelab.store.merging` (``treelab merge``, ``treelab import``),
streamed. Proofs are facts about the game, so two proofs of one node agree: a
contradiction means one tree is wrong, and is an error (:class:`ProofConflictError`),
never silently kept.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ProofConflictError, StoreError
from ..nodes import Proof, TreeNode
from ..tree import Tree

__all__ = ["COUNTS", "SOURCES", "Increment", "add", "log_sources", "read"]

COUNTS: tuple[str, ...] = tuple(sorted(slot for slot in TreeNode.__slots__ if slot.startswith("nb_")))
"""The count slots of a node that add up (every ``nb_*`` slot: ``nb_draw``, ``nb_visit``, ``nb_win``, ...)."""

SOURCES = "game_sources"
"""The table saying where each game of a merged or parallel-trained tree came from."""

_VISIT, _WIN, _DRAW = (COUNTS.index(slot) for slot in ("nb_visit", "nb_win", "nb_draw"))
_OTHERS = [(k, slot) for k, slot in enumerate(COUNTS) if slot not in ("nb_visit", "nb_win", "nb_draw")]
"""Count slots beyond the three every node has (added generically)."""


@dataclass(frozen=True)
class Increment:
    """What to add to a tree: counts along move paths and proofs, as a rooted subtree.

    Row 0 is the root (parent ``-1``); every other row's parent comes before it.
    """

    parents: Sequence[int]
    """The row of each row's parent (``-1`` for the root row)."""
    labels: Sequence[str]
    """The move into each row's node (``"root"`` for row 0)."""
    counts: Sequence[tuple[int, ...]]
    """The amounts to add to each row's node, one per :data:`COUNTS` slot, in that order."""
    proven: Sequence[int | None]
    """Each row's proof (``1``/``0``/``-1``) to merge in, or None (nothing known)."""
    values: Sequence[float] | None = None
    """Each row's value sum to add (:attr:`~treelab.nodes.TreeNode.value_sum`; None: none in any row)."""
    priors: Sequence[float | None] | None = None
    """Each row's prior, kept if its node has none yet (None: none in any row)."""

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def simulations(self) -> int:
        """The simulations it adds (its root's ``nb_visit``; 0 if empty)."""
        return self.counts[0][COUNTS.index("nb_visit")] if self.labels else 0


def _check_proof(node: TreeNode, proof: int | None) -> None:
    """Refuse ``proof`` if it contradicts ``node.proven`` (both known and different)."""
    if proof is not None and node.proven is not None and node.proven != proof:
        raise ProofConflictError(
            f"proofs disagree at {node.sequence!r}: stored {node.proven!r}, incoming {proof!r}; "
            "one of the trees is wrong: do not merge it"
        )


def add(tree: Tree, inc: Increment) -> int:
    """Add ``inc`` to ``tree`` in memory: counts and value sums summed, missing nodes created, proofs merged,
    a node's first prior kept.

    New nodes name no game (``created_game`` None: :func:`~treelab.store.deltas.stamp` names one); every node
    touched is marked for the next incremental save. Proofs are checked before anything
    changes, so a contradiction leaves the tree as it was.

    Returns:
        The number of nodes created.

    Raises:
        ProofConflictError: a proof in ``inc`` contradicts one in ``tree``.
    """
    if not len(inc):
        return 0
    parents, labels, proven = inc.parents, inc.labels, inc.proven
    nodes: list[Any] = [tree.root]
    _check_proof(tree.root, proven[0])
    for i in range(1, len(inc)):  # look up only (no change) and check the proofs first
        parent = nodes[parents[i]]
        node = parent.child(labels[i]) if parent is not None else None  # below a new node: new
        nodes.append(node)
        if node is not None and proven[i] is not None:
            _check_proof(node, proven[i])
    created = 0
    mark = tree.mark_dirty
    add_child = tree.add_child
    visit, win, draw = _VISIT, _WIN, _DRAW
    values, priors = inc.values, inc.priors
    for i, amounts in enumerate(inc.counts):
        node = nodes[i]
        if node is None:
            node = nodes[i] = add_child(nodes[parents[i]], labels[i])
            created += 1
        mark(node)  # before its counts change: the next save writes the increments since
        node.nb_visit += amounts[visit]
        node.nb_win += amounts[win]
        node.nb_draw += amounts[draw]
        for k, slot in _OTHERS:
            if amounts[k]:
                setattr(node, slot, getattr(node, slot) + amounts[k])
        if proven[i] is not None:
            node.proven = Proof.of(proven[i])
        if values is not None and values[i]:
            tree.add_value(node, values[i])
        prior = None if priors is None else priors[i]
        if prior is not None and node not in tree.priors:
            tree.priors[node] = prior
    return created


def read(conn: sqlite3.Connection) -> Increment:
    """A whole stored tree as an increment (its rows in id order: a parent's id is smaller)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(nodes)")}
    picked = ", ".join(slot if slot in have else "0" for slot in COUNTS)
    valued = "value_sum, prior" if "value_sum" in have else "0.0, NULL"
    rows = conn.execute(f"SELECT id, parent_id, move, proven, {valued}, {picked} FROM nodes ORDER BY id")
    where: dict[int, int] = {}
    parents, labels, counts, proven, values, priors = [], [], [], [], [], []
    for i, (nid, pid, move, proof, value, prior, *amounts) in enumerate(rows):
        where[nid] = i
        parents.append(-1 if pid is None else where[pid])
        labels.append(move)
        counts.append(tuple(amounts))
        proven.append(proof)
        values.append(value)
        priors.append(prior)
    if parents and (parents[0] != -1 or -1 in parents[1:]):
        raise StoreError("the nodes table has more than one root, or none first: the file is damaged")
    return Increment(parents, labels, counts, proven, values if any(values) else None,
                     priors if any(p is not None for p in priors) else None)


def log_sources(conn: sqlite3.Connection, sources: Iterable[tuple[int, str]]) -> None:
    """Record ``(game id, source)`` pairs in :data:`SOURCES` (created if missing), in the caller's transaction."""
    conn.execute(f"CREATE TABLE IF NOT EXISTS {SOURCES} (game_id INTEGER PRIMARY KEY REFERENCES games(id), "
                 "source TEXT NOT NULL)")
    conn.executemany(f"INSERT OR REPLACE INTO {SOURCES} (game_id, source) VALUES (?, ?)", list(sources))
