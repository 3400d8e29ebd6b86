"""Adding trees of one game along identical move paths: increments, and ``treelab merge``.

Counts add up: a node's ``nb_visit``, ``nb_win``, ``nb_draw`` (every ``nb_*``
count a node has, :data:`COUNTS`) in a sum of trees is the sum of the nodes at
the same move path in each summand. This module holds that one rule:

- an :class:`Increment` is what one tree adds to another: a rooted subtree in
  move-path form (each row names its parent's row and its move), counts to add
  and proofs to merge;
- :func:`add` adds an increment to a tree in memory (creating the nodes it
  lacks, marking what changed so the next incremental save writes it);
- :func:`merge` adds whole database files into one (``treelab merge``), in one
  transaction, logging every game with where it came from.

Proofs are facts about the game, so two proofs of one node agree: a
contradiction means one tree is wrong, and is an error (:class:`ProofConflictError`),
never silently kept.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import GameMismatchError, ProofConflictError, StoreError
from ..nodes import Proof, TreeNode
from ..tree import Tree
from .dbfile import is_empty, reading
from .schema import DbPath, display, file_key

__all__ = ["COUNTS", "SOURCES", "Increment", "MergeSummary", "add", "log_sources", "merge", "read"]

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
    """Add ``inc`` to ``tree`` in memory: counts summed, missing nodes created, proofs merged.

    New nodes are stamped with ``tree.current_game``; every node touched is
    marked for the next incremental save. Proofs are checked before anything
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
    return created


def read(conn: sqlite3.Connection) -> Increment:
    """A whole stored tree as an increment (its rows in id order: a parent's id is smaller)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(nodes)")}
    picked = ", ".join(slot if slot in have else "0" for slot in COUNTS)
    rows = conn.execute(f"SELECT id, parent_id, move, proven, {picked} FROM nodes ORDER BY id")
    where: dict[int, int] = {}
    parents, labels, counts, proven = [], [], [], []
    for i, (nid, pid, move, proof, *amounts) in enumerate(rows):
        where[nid] = i
        parents.append(-1 if pid is None else where[pid])
        labels.append(move)
        counts.append(tuple(amounts))
        proven.append(proof)
    if parents and (parents[0] != -1 or -1 in parents[1:]):
        raise StoreError("the nodes table has more than one root, or none first: the file is damaged")
    return Increment(parents, labels, counts, proven)


def log_sources(conn: sqlite3.Connection, sources: Iterable[tuple[int, str]]) -> None:
    """Record ``(game id, source)`` pairs in :data:`SOURCES` (created if missing), in the caller's transaction."""
    conn.execute(f"CREATE TABLE IF NOT EXISTS {SOURCES} (game_id INTEGER PRIMARY KEY REFERENCES games(id), "
                 "source TEXT NOT NULL)")
    conn.executemany(f"INSERT OR REPLACE INTO {SOURCES} (game_id, source) VALUES (?, ?)", list(sources))


@dataclass(frozen=True)
class MergeSummary:
    """What :func:`merge` did."""

    out: str
    """The database written."""
    game: str
    """The game of every tree."""
    inputs: int
    """Trees added to it (not counting OUT's own tree, if it existed)."""
    nodes: int
    """Nodes in the merged tree."""
    new_nodes: int
    """Nodes the merge created in OUT."""
    simulations: int
    """The merged root's visits (the sum of the summands')."""
    games: int
    """Games logged in OUT after the merge."""

    def describe(self) -> str:
        """One readable line for the terminal."""
        return (f"merged {self.inputs} {self.game} tree{'s' * (self.inputs != 1)} into {self.out}: "
                f"{self.nodes:,} nodes (+{self.new_nodes:,}), {self.simulations:,} simulations, {self.games} games")


def _game_of(db: DbPath) -> str:
    with reading(db) as (_, meta):
        return meta["game"]


def merge(out: DbPath, *inputs: DbPath) -> MergeSummary:
    """Add the trees in ``inputs`` into ``out`` along identical move paths, in one transaction.

    ``out`` is created if missing; if it holds a tree, that tree is one of the
    summands. Every count of every node is the exact sum; the games are the
    union (each input's games get new ids after ``out``'s, and a row in
    :data:`SOURCES` naming the file and the game's id there); proofs are merged.

    Raises:
        StoreError: no inputs, or a file named twice (``out`` among the inputs too).
        GameMismatchError: the trees are of different games (nothing is written, no ``out`` created).
        ProofConflictError: two proofs of one node disagree (nothing is written).
        StoreError: a file is missing, not a treelab database, or locked.
    """
    from .persistence import GAME_FIELDS, open_tree, save

    if not inputs:
        raise StoreError("nothing to merge: give at least one input database")
    seen: dict[Hashable, str] = {}
    for db in (out, *inputs):
        key = file_key(db)
        if key in seen:
            also = "" if display(db) == seen[key] else f" (as {seen[key]!r}: a link or another spelling)"
            raise StoreError(
                f"{display(db)!r} is named twice{also}: name each file once (an existing OUT is already a summand)"
            )
        seen[key] = display(db)
    game = _game_of(inputs[0])
    for db in inputs[1:]:
        other = _game_of(db)
        if other != game:
            raise GameMismatchError(
                f"{display(db)!r} holds a {other} tree, not {game} like {display(inputs[0])!r}: "
                "merge only trees of one game"
            )
    exists = Path(out).exists() and not is_empty(out)
    if exists:
        other = _game_of(out)
        if other != game:
            raise GameMismatchError(
                f"{display(out)!r} holds a {other} tree, not {game}: merge into a new file or one of {game}"
            )
    tree = open_tree(out, game)
    start_nodes = tree.size
    next_id = tree.last_game_id + 1
    rows: list[dict[str, Any]] = []
    sources: list[tuple[int, str]] = []
    for db in inputs:
        with reading(db, game) as (conn, _):
            inc = read(conn)
            cols = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
            picked = [f for f in GAME_FIELDS if f in cols]
            games = [dict(zip(picked, row, strict=True))
                     for row in conn.execute(f"SELECT {', '.join(picked)} FROM games ORDER BY id")]
        add(tree, inc)
        name = os.fspath(db)
        for row in games:
            sources.append((next_id, f"{name}#{row['id']}"))
            row["id"] = next_id
            rows.append(row)
            next_id += 1
    save(tree, out, games=rows, extra=lambda conn: log_sources(conn, sources))
    return MergeSummary(out=os.fspath(out), game=game, inputs=len(inputs), nodes=tree.size,
                        new_nodes=tree.size - start_nodes, simulations=tree.root.nb_visit,
                        games=max(tree.last_game_id, next_id - 1))
