"""Imported trees into databases, and stored trees out to files: ``treelab import`` and ``treelab export``.

A file is imported streamed (:mod:`treelab.interop.streaming`): each row checked and written, a chunk
at a time, into a new file or *added* to an existing one exactly as ``treelab merge`` adds a file
(:func:`treelab.store.merging.merge`), in one transaction, so counts and value sums are exact sums,
proofs must agree and a tree of another game or a bad row is refused, leaving the database as it
was. Importing the same rows twice doubles every count.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import IO, Any, Literal

from ..errors import ImportFormatError, UnknownOptionError
from ..games import find_game
from ..tree import Tree
from .graphs import gml_text, node_link, read_graph
from .rows import from_rows, row_of, tree_nodes, tree_rows, write_rows
from .streaming import ImportSummary, import_rows, import_tree
from .views import explorer_view, katago_view

__all__ = ["EXPORT_FORMATS", "IMPORT_FORMATS", "ImportSummary", "export", "import_file", "import_tree", "read_tree"]

IMPORT_FORMATS = ("rows", "node-link", "gml")
"""The files ``treelab import`` reads (the exports that carry a whole tree's counts)."""
EXPORT_FORMATS = ("rows", "node-link", "gml", "explorer", "katago")
"""The files ``treelab export`` writes."""

ExportFormat = Literal["rows", "node-link", "gml", "explorer", "katago"]
"""One of :data:`EXPORT_FORMATS`."""


def read_tree(file: str | os.PathLike[str], fmt: str, game: str) -> Tree:
    """The tree in ``file`` (``fmt`` one of :data:`IMPORT_FORMATS`) as a tree of ``game``.

    Raises:
        ImportFormatError: a malformed row or node, an illegal path, a file of another game.
        UnknownOptionError: ``fmt`` is not an import format.
    """
    the_game = find_game(game)
    if fmt == "rows":
        return from_rows(file, the_game)
    return from_rows(_graph_rows(file, fmt, the_game), the_game, source=os.fspath(file))


def import_file(file: str | os.PathLike[str], fmt: str, game: str, db: str | os.PathLike[str]) -> ImportSummary:
    """Add the tree in ``file`` (``fmt`` one of :data:`IMPORT_FORMATS`) to ``db`` (created if missing), as
    ``treelab merge`` adds a file: every row checked, streamed into ``db`` in one transaction
    (:func:`treelab.interop.streaming.import_rows`; a graph file is parsed whole first).

    Raises:
        ImportFormatError: a malformed row or node, an illegal path, a file of another game (nothing is written).
        UnknownOptionError: ``fmt`` is not an import format.
        GameMismatchError: ``db`` holds a tree of another game (nothing is written).
    """
    the_game = find_game(game)
    if fmt == "rows":
        return import_rows(file, the_game, db)
    return import_rows(_graph_rows(file, fmt, the_game), the_game, db, source=os.fspath(file))


def _graph_rows(file: str | os.PathLike[str], fmt: str, game: Any) -> list[dict[str, Any]]:
    if fmt not in IMPORT_FORMATS:
        raise UnknownOptionError(f"import format {fmt!r} is not one of {', '.join(IMPORT_FORMATS)}")
    named, rows = read_graph(os.fspath(file), fmt)
    if named is not None and named != game.name:
        raise ImportFormatError(f"{os.fspath(file)}: the graph is of {named}, not {game.name}: "
                                f"import it with game {named!r}")
    return rows


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
        level = [kid for node in level for kid in node.children_view if kid.nb_visit]


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
