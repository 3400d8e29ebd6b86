"""Imported trees into databases, and stored trees out to files: ``treelab import`` and ``treelab export``.

Importing into a new file saves the tree (one transaction, the bulk first save); into an existing
file it *adds*, exactly as ``treelab merge`` does (:func:`treelab.store.increments.merge`): the
imported tree is written to a temporary file beside the database and merged in one transaction,
so counts and value sums are exact sums, proofs must agree and a tree of another game is refused,
leaving the database as it was. Importing the same rows twice doubles every count.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from ..errors import ImportFormatError, UnknownOptionError
from ..games import find_game
from ..tree import Tree
from .graphs import gml_text, node_link, read_graph
from .rows import from_rows, row_of, tree_nodes, tree_rows, write_rows
from .views import explorer_view, katago_view

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "ImportSummary", "export", "import_file", "import_tree", "read_tree"]

IMPORT_FORMATS = ("rows", "node-link", "gml")
"""The files ``treelab import`` reads (the exports that carry a whole tree's counts)."""
EXPORT_FORMATS = ("rows", "node-link", "gml", "explorer", "katago")
"""The files ``treelab export`` writes."""

ExportFormat = Literal["rows", "node-link", "gml", "explorer", "katago"]
"""One of :data:`EXPORT_FORMATS`."""


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


def read_tree(file: str | os.PathLike[str], fmt: str, game: str) -> Tree:
    """The tree in ``file`` (``fmt`` one of :data:`IMPORT_FORMATS`) as a tree of ``game``.

    Raises:
        ImportFormatError: a malformed row or node, an illegal path, a file of another game.
        UnknownOptionError: ``fmt`` is not an import format.
    """
    the_game = find_game(game)
    if fmt == "rows":
        return from_rows(file, the_game)
    if fmt not in IMPORT_FORMATS:
        raise UnknownOptionError(f"import format {fmt!r} is not one of {', '.join(IMPORT_FORMATS)}")
    named, rows = read_graph(os.fspath(file), fmt)
    if named is not None and named != the_game.name:
        raise ImportFormatError(f"{os.fspath(file)}: the graph is of {named}, not {the_game.name}: "
                                f"import it with game {named!r}")
    return from_rows(rows, the_game)


def import_tree(tree: Tree, db: str | os.PathLike[str]) -> ImportSummary:
    """Save ``tree`` into ``db``: a new file gets it, an existing one adds it (as ``treelab merge``).

    Raises:
        GameMismatchError: ``db`` holds a tree of another game (nothing is written).
        ProofConflictError: a proof disagrees with the database's (nothing is written).
    """
    from ..store.dbfile import is_empty
    from ..store.increments import merge
    from ..store.persistence import save

    nodes = len(tree)
    if not Path(db).exists() or is_empty(db):
        save(tree, db)
        return ImportSummary(os.fspath(db), tree.game.name, nodes, nodes, tree.root.nb_visit)
    path = Path(db)
    tmp = path.with_name(f".{path.name}.import-{os.getpid()}-{os.urandom(4).hex()}.db")
    try:
        save(tree, tmp)
        done = merge(db, tmp)
    finally:
        for extra in ("", "-wal", "-shm", "-journal"):
            Path(f"{tmp}{extra}").unlink(missing_ok=True)
    return ImportSummary(os.fspath(db), tree.game.name, nodes, done.nodes, done.simulations)


def import_file(file: str | os.PathLike[str], fmt: str, game: str, db: str | os.PathLike[str]) -> ImportSummary:
    """Read ``file`` (:func:`read_tree`) and add it to ``db`` (:func:`import_tree`): all checked before writing."""
    return import_tree(read_tree(file, fmt, game), db)


def _rows_with_movers(tree: Tree, top: Any, depth: int | None) -> Iterator[tuple[Mapping[str, Any], int]]:
    for node, labels in tree_nodes(tree, top, depth):
        yield row_of(tree, node, labels), node.mover


def _positions(tree: Tree, top: Any, depth: int | None) -> Iterator[Any]:
    """``top`` and the nodes below it down to ``depth`` levels (0 when None), parents first, visited only."""
    level, left = [top], 0 if depth is None else depth
    while level:
        yield from level
        if left == 0:
            return
        left -= 1
        level = [kid for node in level for kid in node.kids if kid.nb_visit]


def export(db: str | os.PathLike[str], fmt: str, out: IO[str], *, path: Any = None, depth: int | None = None,
           csv: bool = False) -> int:
    """Write the tree in ``db`` (the subtree at ``path``, ``depth`` levels) to ``out`` as ``fmt``; returns the
    nodes (rows, graph nodes) or positions (explorer, katago: JSON lines, one object a position) written.

    Raises:
        UnknownOptionError: ``fmt`` is not one of :data:`EXPORT_FORMATS`.
        PathNotFoundError: ``path`` is not stored.
    """
    from ..store.persistence import load

    if fmt not in EXPORT_FORMATS:
        raise UnknownOptionError(f"export format {fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
    tree = load(db, path, depth)
    top = tree.find(path)
    game = tree.game.name
    where = ",".join(top.moves)
    if fmt == "rows":
        return write_rows(tree_rows(tree, top, depth), out, game, fmt="csv" if csv else "jsonl")
    if fmt in ("node-link", "gml"):
        pairs = list(_rows_with_movers(tree, top, depth))
        if fmt == "gml":
            for line in gml_text(pairs, game, where):
                out.write(line + "\n")
        else:
            json.dump(node_link(pairs, game, where), out)
            out.write("\n")
        return len(pairs)
    view = explorer_view if fmt == "explorer" else katago_view
    count = 0
    for node in _positions(tree, top, depth):
        out.write(json.dumps(view(tree, node)) + "\n")
        count += 1
    return count
