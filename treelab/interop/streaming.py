"""``treelab import`` streamed: rows checked as :func:`treelab.interop.rows.from_rows` checks them, written into
the database a chunk at a time, without a tree in memory.

Each row is checked as it is read (every move played on the game, the numbers by
:func:`treelab.interop.build.checked_row`) and becomes a row of :data:`treelab.store.merging.ROW`;
:func:`treelab.store.merging.add_rows` adds them to the file as ``treelab merge`` adds a file's rows,
:data:`CHUNK` at a time, in one transaction: a bad row anywhere rolls everything back. Besides a chunk,
the import holds the current line of nodes (one per depth) and the row id each node got (16 bytes a
node). Rows out of depth-first order are read again and sorted in memory first (as
:func:`~treelab.interop.rows.from_rows` does): write them a node before its subtree to keep memory flat.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from ..games import Game, State, find_game
from ..nodes import walk
from ..tree import Tree
from .build import checked_row, given_twice, illegal
from .rows import OutOfOrder, checked_order, numbered_rows

__all__ = ["CHUNK", "ImportSummary", "import_rows", "import_tree"]

CHUNK = 50_000
"""Rows checked and written at a time."""


@dataclass(frozen=True)
class ImportSummary:
    """What an import did."""

    out: str
    """The database written."""
    game: str
    """The tree's game."""
    nodes: int
    """Nodes in the imported tree."""
    total: int
    """Nodes in the database after the import."""
    simulations: int
    """The database root's visits after the import."""

    def describe(self) -> str:
        """One readable line for the terminal."""
        return (f"imported {self.nodes:,} {self.game} nodes into {self.out}: {self.total:,} nodes, "
                f"{self.simulations:,} simulations")


class _Entry:
    """A node of the current line: its id in the import, move, parent, mover, depth and the moves of its
    children so far (a path given twice is refused)."""

    __slots__ = ("depth", "id", "label", "labels", "mover", "parent")

    def __init__(self, nid: int, label: str, parent: _Entry | None, mover: int, depth: int) -> None:
        self.id, self.label, self.parent, self.mover, self.depth = nid, label, parent, mover, depth
        self.labels: set[str] | None = None

    def moves(self) -> list[str]:
        """The move labels from the root."""
        out, at = [], self
        while at.parent is not None:
            out.append(at.label)
            at = at.parent
        return out[::-1]


class _Sink:
    """Numbers the nodes of rows as :func:`~treelab.interop.rows.checked_order` meets them, checking each move."""

    def __init__(self, game: Game, source: str) -> None:
        self.game, self.source = game, source
        self.root = _Entry(1, "root", None, 3 - game.initial().to_move, 0)
        self.next_id = 2

    def child(self, parent: _Entry, state: State, move: int, where: object, *, new: bool = True
              ) -> tuple[_Entry, State]:
        game = self.game
        if state.is_terminal or move not in state.legal_moves():
            raise illegal(game, self.source, where, parent.moves(), move)
        label = game.label(move)
        seen = parent.labels
        if seen is None:
            parent.labels = {label}
        elif label in seen:
            raise given_twice(self.source, where)
        else:
            seen.add(label)
        entry = _Entry(self.next_id, label, parent, state.to_move, parent.depth + 1)
        self.next_id += 1
        return entry, state.play(move)


def _chunks(walked: Iterable[tuple[Any, Any, State, Any]], game: Game, source: str) -> Iterator[list[tuple[Any, ...]]]:
    """The checked rows as chunks of :data:`treelab.store.merging.KEYED` rows (each position's key computed from
    the position at hand, so the file's ``positions`` table is added to, not rebuilt)."""
    chunk: list[tuple[Any, ...]] = []
    alternating, key = game.alternating, game.position_key
    for entry, row, state, where in walked:
        mover = entry.mover
        visits, wins, draws, selected, value, prior, proof = checked_row(row, entry.depth, mover, state,
                                                                         (source, where))
        parent = entry.parent
        chunk.append((entry.id, -1 if parent is None else parent.id, entry.label, entry.depth,
                      None if proof is None else int(proof), None if alternating else mover, value, prior,
                      visits, wins, draws, selected,
                      key(state), wins if mover == 1 else visits - wins - draws, value if mover == 1 else -value))
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def import_rows(rows_or_file: str | os.PathLike[str] | IO[str] | Iterable[Mapping[str, Any]], game: str | Game,
                db: str | os.PathLike[str], source: str | None = None) -> ImportSummary:
    """Add the tree of rows of the plain format (a file, JSON lines or CSV, or dicts) to ``db`` (created if
    missing), checked as :func:`~treelab.interop.rows.from_rows` checks them, streamed (the module doc);
    ``source`` names them in errors (default: the file's path, or ``"rows"``).

    Raises:
        ImportFormatError: a malformed row, an illegal path, a path given twice or without its parent's row, or
            rows of another game: the message names the row; nothing is written.
        GameMismatchError: ``db`` holds a tree of another game (nothing is written).
        ProofConflictError: a proof disagrees with ``db``'s (nothing is written).
    """
    the_game = find_game(game)
    source, numbered = numbered_rows(rows_or_file, the_game, source)
    collecting = gc.isenabled()
    gc.disable()  # the rows' many small objects would start collections that find nothing to free
    try:
        try:
            return _write(numbered, the_game, source, db, sort=False)
        except OutOfOrder:  # rolled back: again, sorted
            return _write(numbered, the_game, source, db, sort=True)
    finally:
        if collecting:
            gc.enable()


def _write(numbered: Callable[[], Iterable[tuple[int, Any]]], game: Game, source: str, db: str | os.PathLike[str],
           *, sort: bool) -> ImportSummary:
    from ..store.merging import add_rows

    sink = _Sink(game, source)
    walked = checked_order(numbered, game, source, sink, sort=sort)
    done = add_rows(db, game.name, _chunks(walked, game, source), source)
    return ImportSummary(os.fspath(db), game.name, sink.next_id - 1, done.nodes, done.simulations)


def import_tree(tree: Tree, db: str | os.PathLike[str]) -> ImportSummary:
    """Save ``tree`` into ``db``: a new file gets it, an existing one adds it (as ``treelab merge``), in one
    transaction.

    Raises:
        GameMismatchError: ``db`` holds a tree of another game (nothing is written).
        ProofConflictError: a proof disagrees with the database's (nothing is written).
    """
    from pathlib import Path

    from ..store.dbfile import is_empty
    from ..store.merging import add_rows
    from ..store.persistence import save

    nodes = len(tree)
    if not Path(db).exists() or is_empty(db):
        save(tree, db)
        return ImportSummary(os.fspath(db), tree.game.name, nodes, nodes, tree.root.nb_visit)
    done = add_rows(db, tree.game.name, _tree_chunks(tree), f"the {tree.game.name} tree")
    return ImportSummary(os.fspath(db), tree.game.name, nodes, done.nodes, done.simulations)


def _tree_chunks(tree: Tree) -> Iterator[list[tuple[Any, ...]]]:
    """The nodes of ``tree`` as chunks of :data:`treelab.store.merging.ROW` rows, depth first."""
    ids: dict[Any, int] = {}
    priors, alternating = tree.priors, tree.game.alternating
    chunk: list[tuple[Any, ...]] = []
    for node in walk(tree.root):
        nid = ids[node] = len(ids) + 1
        parent = node.parent
        chunk.append((nid, -1 if parent is None else ids[parent], node.name, node.depth,
                      None if node.proven is None else int(node.proven), None if alternating else node.mover,
                      node.value_sum, priors.get(node), node.nb_visit, node.nb_win, node.nb_draw, node.nb_select))
        if len(chunk) >= CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
