"""Trees of one game added up along identical move paths: in memory (increments), and into a database file,
streamed, in one transaction (``treelab merge``, ``treelab import``).

Counts add up: a node's ``nb_visit``, ``nb_win``, ``nb_draw`` (every ``nb_*`` count a node has,
:data:`COUNTS`) and its value sum in a sum of trees are the sums of the nodes at the same move path in
each summand. Proofs are facts about the game, so two proofs of one node agree: a contradiction means one
tree is wrong, and is an error (:class:`~treelab.errors.ProofConflictError`), never silently kept.

- In memory: an :class:`Increment` is what one tree adds to another: a rooted subtree in move-path form
  (each row names its parent's row and its move), counts and value sums to add, proofs to merge and
  priors to keep (a node's first prior stays); :func:`add` adds an increment to a tree in memory (creating
  the nodes it lacks, marking what changed so the next incremental save writes it).
- Into a file: :func:`merge` adds whole database files into one, logging every game with where it came
  from; :func:`add_rows` adds a tree given as rows (an import's, :mod:`treelab.interop.streaming`). Both
  read their trees a chunk of rows at a time and write them through :func:`treelab.store.deltas.apply`,
  the one write path of every save, without a tree in memory; the row id each node got in the file, by
  its id in its source, is kept in an :class:`IdMap`.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
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
from .values import of_rows

__all__ = [
    "COUNTS", "KEYED", "ROW", "SOURCES", "IdMap", "Increment", "MergeSummary", "add", "add_rows", "log_sources",
    "merge", "read",
]

# -- trees added up in memory ------------------------------------------------------------------------------------------
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

# -- the row-id map of a merge or an import ----------------------------------------------------------------------------


class IdMap:
    """Row ids in the file written, by the source's ids (added in increasing order): 16 bytes a node.

    Args:
        size: the nodes to come (0: unknown, the arrays grow as needed; else more is an error).
        source: the source, as errors name it.
    """

    def __init__(self, size: int, source: str) -> None:
        self.fixed = size > 0
        self.keys = np.zeros(size, dtype=np.int64)
        self.values = np.zeros(size, dtype=np.int64)
        self.size = 0
        self.source = source

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Map ``keys`` (larger than every key so far, increasing) to ``values``."""
        end = self.size + len(keys)
        if end > len(self.keys) and not self.fixed:
            grown = max(end, 2 * len(self.keys), 1024)
            self.keys, self.values = np.resize(self.keys, grown), np.resize(self.values, grown)
        if end > len(self.keys) or (self.size and len(keys) and keys[0] <= self.keys[self.size - 1]):
            raise StoreError(f"{self.source!r} changed while it was read: merge again")
        self.keys[self.size:end], self.values[self.size:end] = keys, values
        self.size = end

    def get(self, keys: np.ndarray) -> np.ndarray:
        """The values of ``keys``, each added before.

        Raises:
            StoreError: a key was not added (a parent named before it was stored: a damaged source).
        """
        known = self.keys[:self.size]
        at = np.minimum(np.searchsorted(known, keys), max(self.size - 1, 0))
        bad = np.flatnonzero(known[at] != keys) if self.size else np.arange(len(keys))
        if len(bad):
            raise StoreError(f"{self.source!r}: a node names parent id {int(keys[bad[0]])}, not stored before it: "
                             "the file is damaged")
        return self.values[at]

# -- trees added into a file -------------------------------------------------------------------------------------------


_CHUNK = 50_000
"""Rows :func:`merge` reads and adds at a time (their arrays: a few MB)."""


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
    :data:`~treelab.store.merging.SOURCES` naming the file and the game's id there); proofs are merged.

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
    with _adding(out, game) as into:
        for db in inputs:
            with reading(db, game) as (src, _):
                try:
                    into.add(_stored_rows(src, into.game), display(db), src.execute("SELECT count(*) FROM nodes"
                                                                                    ).fetchone()[0])
                except ProofConflictError as exc:
                    raise ProofConflictError(f"proofs disagree merging {display(db)!r}: {exc}") from None
                into.next_game = _add_games(conn=into.conn, src=src, game=into.game, root=into.root,
                                            counts=into.counts, next_game=into.next_game, source=os.fspath(db))
    return into.summary(out, len(inputs))


def add_rows(out: DbPath, game: str, rows: Iterable[Sequence[tuple[Any, ...]]], source: str) -> MergeSummary:
    """Add a tree given as chunks of :data:`ROW` rows to ``out`` (created if missing), as :func:`merge` adds a
    file's: every count and value sum the exact sum, proofs merged, in one transaction (``treelab import``).

    Rows are numbered by their ``id`` (a parent's before its children's), the first row is the root, and
    ``rows`` is read one chunk at a time: an exception it raises rolls everything back.

    Raises:
        GameMismatchError: ``out`` holds a tree of another game (nothing is written).
        ProofConflictError: a proof disagrees with ``out``'s (nothing is written).
    """
    with _adding(out, game) as into:
        into.add(rows, source)
    return into.summary(out, 1)


ROW = ("id", "parent_id", "move", "depth", "proven", "mover", "value_sum", "prior", *COUNT_COLUMNS)
"""A row of a tree added by :func:`_add_nodes`: its id in its source (-1: no parent), move, depth, proof or None,
mover (None: a game whose players alternate), value sum, prior or None, then the counts of
:data:`~treelab.store.deltas.COUNT_COLUMNS`."""

KEYED = (*ROW, "key", "ones", "value_one")
"""A :data:`ROW` with its position's key and what it adds to that position's row besides its visits and draws
(player 1's wins and value sum, :mod:`treelab.store.positiontable`): when every row of every tree added has them,
the ``positions`` table is added to as the rows are written (as a save adds to it), not rebuilt at the end."""


def _same_game(out: DbPath, game: str) -> None:
    if Path(out).exists() and not is_empty(out):
        other = _game_of(out)
        if other != game:
            raise GameMismatchError(
                f"{display(out)!r} holds a {other} tree, not {game}: add it to a new file or one of {game}"
            )


@dataclass
class _Into:
    """A file trees are being added to, in :func:`_adding`'s transaction."""

    conn: sqlite3.Connection
    game: Game
    root: int
    counts: list[int]
    """Nodes per depth so far."""
    name: str
    next_game: int
    """The id the next game logged gets."""
    start_nodes: int
    visits: int = 0
    games: int = 0
    rebuild: bool = False
    """A tree added without position keys: the ``positions`` table is rebuilt at the end."""
    keeps: bool = False
    """The file keeps the ``positions`` table (its statistics are graph: :func:`~.positiontable.keeps`); else
    the trees are added without position keys and a table left from before is dropped."""
    added: float = 0.0
    """The largest sum of one count column over every row added (approximate): what any node or position gained
    at most."""

    def add(self, rows: Iterable[Sequence[tuple[Any, ...]]], source: str, size: int = 0) -> None:
        """Add the tree of ``rows`` (chunks of :data:`ROW` or :data:`KEYED` rows; ``size``: how many, if known)."""
        self.counts, keyed, added = _add_nodes(self.conn, rows, self.game, self.root, self.counts,
                                               (self.name, source), size, self.keeps)
        self.rebuild = self.rebuild or (self.keeps and not keyed)
        self.added += added

    def summary(self, out: DbPath, inputs: int) -> MergeSummary:
        return MergeSummary(out=os.fspath(out), game=self.game.name, inputs=inputs, nodes=sum(self.counts),
                            new_nodes=sum(self.counts) - self.start_nodes, simulations=self.visits, games=self.games)


@contextmanager
def _adding(out: DbPath, game: str) -> Iterator[_Into]:
    """``out`` (created if missing; its tree, if any, a summand) open in one write transaction to add trees of
    ``game`` to; after them its positions table, history and meta are brought up to date."""
    from .binding import stored_counts
    from .persistence import meta_rows, open_tree, run_meta, snapshot
    from .schema import check_meta, migrate

    _same_game(out, game)
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
        root = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()[0]
        first_game = (conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0) + 1
        keeps = run.get("statistics") == "graph"  # only a file whose searches read it keeps ``positions``
        into = _Into(conn, the_game, root, counts, name, first_game, sum(counts), keeps=keeps)
        yield into
        counts = into.counts
        if into.rebuild:
            positiontable.rebuild(conn, the_game)  # the sum of the inputs' tables, paths counted once
        _check_no_overflow(conn, root, into.added, name)
        now = snapshot(conn, root, counts)  # every merged game's history row: the merged tree
        conn.execute(f"UPDATE history SET {', '.join(f'{key} = ?' for key in now)} WHERE game_id >= ?",
                     [*now.values(), first_game])
        meta_rows(conn, run, tree_id=tree_id, generation=generation + 1, game=game, counts=counts,
                  created=meta is None)
        into.visits = conn.execute("SELECT nb_visit FROM nodes WHERE id = ?", (root,)).fetchone()[0]
        into.games = conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0


_NEAR_OVERFLOW = 2.0**53
"""Counts past this (no real search comes near) have every row checked for 64-bit overflow before the commit."""

_COUNTS = ("nb_visit", "nb_win", "nb_draw", "nb_select")


def _check_no_overflow(conn: sqlite3.Connection, root: int, added: float, name: str) -> None:
    """Refuse the sums of the transaction if a count went past 2**63 - 1 (SQLite then stores a REAL, and every
    reader calls the file damaged): the transaction rolls back, the file stays as it was. Rows are only checked
    when the added counts or the root's reach :data:`_NEAR_OVERFLOW`."""
    top = conn.execute(f"SELECT max({', '.join(_COUNTS)}) FROM nodes WHERE id = ?", (root,)).fetchone()[0] or 0
    if added < _NEAR_OVERFLOW and top < _NEAR_OVERFLOW:
        return
    checks = [("nodes", "id", _COUNTS), ("positions", "key", ("nb_visit", "nb_win", "nb_draw", "nb_path"))]
    for table, ident, columns in checks:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is None:
            continue
        real = " OR ".join(f"typeof({c}) != 'integer'" for c in columns)
        found = conn.execute(f"SELECT {ident} FROM {table} WHERE {real} LIMIT 1").fetchone()
        if found is not None:
            raise StoreError(f"adding to {name!r} would take a count past {2**63 - 1:,} (the most a 64-bit count "
                             f"holds; {table} {ident} {found[0]!r}): nothing was written; add fewer or smaller "
                             "trees")


def _stored_rows(src: sqlite3.Connection, game: Game) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of the tree in ``src`` as :data:`ROW` rows, in id order, :data:`_CHUNK` at a time."""
    have = {row[1] for row in src.execute("PRAGMA table_info(nodes)")}
    picked = ", ".join(f"n.{col}" if col in have else "0" for col in COUNT_COLUMNS)
    movers = not game.alternating and src.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'movers'").fetchone() is not None
    join = "LEFT JOIN movers AS m ON m.node_id = n.id" if movers else ""
    valued = "n.value_sum, n.prior" if "value_sum" in have else "0.0, NULL"
    rows = src.execute(f"SELECT n.id, coalesce(n.parent_id, -1), n.move, n.depth, n.proven, "
                       f"{'m.mover' if movers else 'NULL'}, {valued}, {picked} FROM nodes AS n {join} ORDER BY n.id")
    while chunk := rows.fetchmany(_CHUNK):
        yield chunk


def _add_nodes(conn: sqlite3.Connection, rows: Iterable[Sequence[tuple[Any, ...]]], game: Game, root: int,
               counts: list[int], names: tuple[str, str], size: int, keeps: bool = True
               ) -> tuple[list[int], bool, float]:
    """Add the tree of ``rows`` (chunks of :data:`ROW` or :data:`KEYED` rows in id order) to the file of ``conn``
    (root row ``root``), a chunk at a time; return the nodes per depth after it (``counts``: before) and whether
    every row had its position key (the ``positions`` table added to). ``names``: the file and the tree's source,
    as errors name them; ``size``: the rows to come, if known (0: unknown); also the largest sum of one count
    column over the rows (:attr:`_Into.added`)."""
    name, source = names
    added = np.zeros(width := len(COUNT_COLUMNS))
    where = IdMap(size, source)
    top = before = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
    keyed = True
    for chunk in rows:
        if not chunk:
            continue
        nid, pid, moves, depths, proofs, mover, sums, priors, *amounts = zip(*chunk, strict=True)
        positions: dict[str, Any] = {}
        if len(amounts) > width and keeps:  # KEYED rows: the positions table is added to as a save adds to it
            keys, ones, value_one = amounts[width:]
            amounts = amounts[:width]
            per_node = np.array([amounts[0], ones, amounts[2]], dtype=np.int64).T.copy()
            positions = positiontable.by_key(keys, per_node, value_one, int(not where.size))
        elif len(amounts) > width:  # keyed, into a file that does not keep the table
            amounts = amounts[:width]
        else:
            keyed = False
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
        if not game.alternating and None in mover[k:]:
            raise StoreError(f"{source!r} has no mover for a node of its {game.name} tree: the file is damaged")
        table = np.array(amounts, dtype=np.int64).T.copy()  # a row per node, as COUNT_COLUMNS
        added += table.sum(axis=0, dtype=np.float64)
        delta = Delta(
            known=np.array([root] * k, dtype=np.int64), known_counts=table[:k], parents=out_parents, first=LOCAL,
            moves=list(moves[k:]), depths=np.array(depths[k:], dtype=np.int64), counts=table[k:],
            created=[None] * (len(ids) - k), proofs=[(i, p) for i, p in enumerate(proofs) if p is not None],
            movers=None if game.alternating else [int(m) for m in mover[k:]], values=of_rows(sums, priors),
            **positions,
        )
        stored, fresh, _ = apply(conn, delta, top=top, name=name, created=False, own_above=before)
        where.add(ids[k:], stored)
        top = max(top, int(stored.max(initial=0)))
        counts = depth_counts(counts, delta.depths[fresh])
    return counts, keyed, float(added.max(initial=0.0))


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
