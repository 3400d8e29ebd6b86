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

import math
import os
import secrets
import sqlite3
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import GameMismatchError, ProofConflictError, StoreError
from ..games import Game, find_game
from ..nodes import Proof, TreeNode
from ..tree import SQRT2, Tree
from . import positiontable
from .dbfile import is_empty, reading, writing
from .deltas import COUNT_COLUMNS, LOCAL, Delta, apply, depth_counts
from .persistence import first_rows
from .schema import DbPath, display, file_key
from .values import Values

__all__ = ["COUNTS", "SOURCES", "Increment", "MergeSummary", "add", "log_sources", "merge", "read"]

COUNTS: tuple[str, ...] = tuple(sorted(slot for slot in TreeNode.__slots__ if slot.startswith("nb_")))
"""The count slots of a node that add up (every ``nb_*`` slot: ``nb_draw``, ``nb_visit``, ``nb_win``, ...)."""

SOURCES = "game_sources"
"""The table saying where each game of a merged or parallel-trained tree came from."""

_VISIT, _WIN, _DRAW = (COUNTS.index(slot) for slot in ("nb_visit", "nb_win", "nb_draw"))
_CHUNK = 50_000
"""Rows :func:`merge` reads and adds at a time (their arrays: a few MB)."""
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

    It streams: each input's rows are read in id order, :data:`_CHUNK` at a time, and added
    to ``out`` through :func:`treelab.store.deltas.apply` (the one write path of every
    save) without a tree in memory; besides those rows it holds only the row id each
    input node got in ``out`` (16 bytes a node of the largest input).

    Raises:
        StoreError: no inputs, or a file named twice (``out`` among the inputs too).
        GameMismatchError: the trees are of different games (nothing is written, no ``out`` created).
        ProofConflictError: two proofs of one node disagree (nothing is written).
        StoreError: a file is missing, not a treelab database, or locked.
    """
    from .binding import stored_counts
    from .persistence import meta_rows, open_tree, run_meta, snapshot
    from .schema import check_meta, migrate

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
    if Path(out).exists() and not is_empty(out):
        other = _game_of(out)
        if other != game:
            raise GameMismatchError(
                f"{display(out)!r} holds a {other} tree, not {game}: merge into a new file or one of {game}"
            )
    name, the_game = display(out), find_game(game)
    tree_id: str | None
    with writing(out) as (conn, meta):
        if meta is None:  # a new file (built aside, moved into place at the commit): a root to add to
            tree = open_tree(out, game)
            first_rows(conn, tree)
            run, tree_id, generation, counts = run_meta(tree), secrets.token_hex(8), 0, [1]
        else:
            migrate(conn, check_meta(meta, name, game))
            kept = Tree(game, c=float(meta.get("c", repr(SQRT2))))
            kept.statistics = meta.get("statistics", "classic")
            run = run_meta(kept)
            tree_id, generation, counts = meta.get("tree_id"), int(meta.get("generation", 0)), stored_counts(conn, meta)
        start_nodes = sum(counts)
        root = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()[0]
        first_game = next_game = (conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0) + 1
        for db in inputs:
            with reading(db, game) as (src, _):
                try:
                    counts = _add_nodes(conn, src, the_game, root, counts, name, display(db))
                except ProofConflictError as exc:
                    raise ProofConflictError(f"proofs disagree merging {display(db)!r}: {exc}") from None
                next_game = _add_games(conn, src, the_game, root, counts, next_game, os.fspath(db))
        positiontable.rebuild(conn, the_game)  # the sum of the inputs' tables, paths counted once
        now = snapshot(conn, root, counts)  # every merged game's history row: the merged tree
        conn.execute(f"UPDATE history SET {', '.join(f'{key} = ?' for key in now)} WHERE game_id >= ?",
                     [*now.values(), first_game])
        meta_rows(conn, run, tree_id=tree_id, generation=generation + 1, game=game, counts=counts,
                  created=meta is None)
        visits = conn.execute("SELECT nb_visit FROM nodes WHERE id = ?", (root,)).fetchone()[0]
        games = conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0
    return MergeSummary(out=os.fspath(out), game=game, inputs=len(inputs), nodes=sum(counts),
                        new_nodes=sum(counts) - start_nodes, simulations=visits, games=games)


def _add_nodes(conn: sqlite3.Connection, src: sqlite3.Connection, game: Game, root: int, counts: list[int],
               name: str, source: str) -> list[int]:
    """Add the tree of ``src`` to the file of ``conn`` (root row ``root``), a chunk of rows at a time; return
    the nodes per depth after it (``counts``: before)."""
    have = {row[1] for row in src.execute("PRAGMA table_info(nodes)")}
    picked = ", ".join(f"n.{col}" if col in have else "0" for col in COUNT_COLUMNS)
    movers = not game.alternating and src.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'movers'").fetchone() is not None
    join = "LEFT JOIN movers AS m ON m.node_id = n.id" if movers else ""
    valued = "n.value_sum, n.prior" if "value_sum" in have else "0.0, NULL"
    rows = src.execute(f"SELECT n.id, coalesce(n.parent_id, -1), n.move, n.depth, n.proven, "
                       f"{'m.mover' if movers else 'NULL'}, {valued}, {picked} FROM nodes AS n {join} ORDER BY n.id")
    where = _IdMap(src.execute("SELECT count(*) FROM nodes").fetchone()[0], source)
    top = before = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
    while chunk := rows.fetchmany(_CHUNK):
        nid, pid, moves, depths, proofs, mover, sums, priors, *amounts = zip(*chunk, strict=True)
        ids, parents = np.array(nid, dtype=np.int64), np.array(pid, dtype=np.int64)
        k = int(not where.size)  # the first chunk starts with the root: a stored node of ``out``
        if (parents[k:] == -1).any() or (k and parents[0] != -1):
            raise StoreError(f"{source!r}: the nodes table has more than one root, or none first: the file is damaged")
        if k:
            where.add(ids[:1], np.array([root], dtype=np.int64))
        below = parents[k:]
        inner = below >= ids[k] if len(ids) > k else below > 0  # parents in this chunk: new nodes of the delta too
        out_parents = LOCAL + np.searchsorted(ids, below) - k
        out_parents[~inner] = where.get(below[~inner])
        if movers and None in mover[k:]:
            raise StoreError(f"{source!r} has no mover for a node of its {game.name} tree: the file is damaged")
        table = np.array(amounts, dtype=np.int64).T.copy()  # a row per node, as COUNT_COLUMNS
        delta = Delta(
            known=np.array([root] * k, dtype=np.int64), known_counts=table[:k], parents=out_parents, first=LOCAL,
            moves=list(moves[k:]), depths=np.array(depths[k:], dtype=np.int64), counts=table[k:],
            created=[None] * (len(ids) - k), proofs=[(i, p) for i, p in enumerate(proofs) if p is not None],
            movers=None if game.alternating else [int(m) for m in mover[k:]], values=_values(sums, priors),
        )
        stored, fresh, _ = apply(conn, delta, top=top, name=name, created=False, own_above=before)
        where.add(ids[k:], stored)
        top = max(top, int(stored.max(initial=0)))
        counts = depth_counts(counts, delta.depths[fresh])
    return counts


def _values(sums: Sequence[float], priors: Sequence[float | None]) -> Values | None:
    """The value sums and priors of a chunk of rows (a position each, as the rows), None if it has none."""
    table = np.array([math.nan if p is None else p for p in priors], dtype=np.float64)
    sum_array = np.array(sums, dtype=np.float64)
    pos = np.flatnonzero((sum_array != 0) | ~np.isnan(table))
    return Values(pos, sum_array[pos], table[pos]) if len(pos) else None


def _add_games(conn: sqlite3.Connection, src: sqlite3.Connection, game: Game, root: int, counts: list[int],
               next_game: int, source: str) -> int:
    """Log the games of ``src`` in the file of ``conn`` from id ``next_game`` on, each with where it came from;
    return the next free id."""
    from .persistence import GAME_FIELDS, game_row, log_games

    cols = {row[1] for row in src.execute("PRAGMA table_info(games)")}
    picked = [f for f in GAME_FIELDS if f in cols]
    rows = src.execute(f"SELECT {', '.join(picked)} FROM games ORDER BY id")
    while chunk := rows.fetchmany(_CHUNK):
        games, sources = [], []
        for values in chunk:
            row = game_row(game, dict(zip(picked, values, strict=True)))
            sources.append((next_game, f"{source}#{row['id']}"))
            row["id"], next_game = next_game, next_game + 1
            games.append(row)
        log_games(conn, root, games, counts)
        log_sources(conn, sources)
    return next_game


class _IdMap:
    """The row id each node of one input got in ``out``, by the input's row id (ids added in increasing order)."""

    def __init__(self, size: int, source: str) -> None:
        self.keys = np.zeros(size, dtype=np.int64)
        self.values = np.zeros(size, dtype=np.int64)
        self.size = 0
        self.source = source

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        end = self.size + len(keys)
        if end > len(self.keys) or (self.size and len(keys) and keys[0] <= self.keys[self.size - 1]):
            raise StoreError(f"{self.source!r} changed while it was read: merge again")
        self.keys[self.size:end], self.values[self.size:end] = keys, values
        self.size = end

    def get(self, keys: np.ndarray) -> np.ndarray:
        known = self.keys[:self.size]
        at = np.minimum(np.searchsorted(known, keys), max(self.size - 1, 0))
        bad = np.flatnonzero(known[at] != keys) if self.size else np.arange(len(keys))
        if len(bad):
            raise StoreError(f"{self.source!r}: a node names parent id {int(keys[bad[0]])}, not stored before it: "
                             "the file is damaged")
        return self.values[at]
