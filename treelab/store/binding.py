"""Which database state a tree mirrors (its :class:`Binding`), and whether a save may add to that file.

A tree loaded from or saved to a file remembers the file's ``tree_id`` and save
counter ``generation``. :func:`check_update` refuses another tree's file and says
whether the save must merge by ``(parent, move)``: someone else saved since
(``treelab analyse --db`` during ``treelab train``), so the file may hold nodes
this tree does not know. The writing itself is :func:`treelab.store.deltas.apply`,
the one write path. Used by :func:`treelab.store.persistence.save`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from weakref import WeakKeyDictionary

from ..errors import StoreError
from ..nodes import PARENT_SLOT, wire
from ..tree import Tree, TreeNode
from . import positiontable
from .dbfile import KeptConnection, is_empty, reading
from .schema import check_meta, migrate

__all__ = [
    "Binding", "bind", "binding_of", "check_update", "cut_of", "keep", "kept_of", "last_game", "stored_counts",
    "stored_positions",
]

@dataclass
class Binding:
    """The database state a tree mirrors (:func:`binding_of`; the tree itself knows nothing of files)."""

    path: Path
    """The resolved file path (where it was loaded from or last saved to)."""
    tree_id: str | None
    """The file's ``meta.tree_id`` (None: the file is yet to be created)."""
    generation: int = 0
    """The file's ``meta.generation`` (its save counter) when the tree last matched it."""
    depth: int | None = None
    """The ``depth`` of a partial load (None: no depth cut)."""
    subtree: str = ""
    """The ``path`` of a partial load (``""``: from the root)."""
    foreign: bool = False
    """True once someone else wrote the file since this tree was loaded: later saves merge by ``(parent, move)``."""
    last_game: int = 0
    """The id of the last game logged in the file as this tree knows it (0: none): the games table's counter,
    from which training numbers its next game (:func:`last_game`)."""


_BINDINGS: WeakKeyDictionary[Tree, Binding] = WeakKeyDictionary()
"""Each tree's binding, beside the tree (which holds only the tree): gone with the tree."""
_KEPT: WeakKeyDictionary[Tree, KeptConnection] = WeakKeyDictionary()
"""The connection :func:`treelab.store.persistence.kept_open` keeps open for a tree's saves."""
_CUTS: WeakKeyDictionary[Tree, set[TreeNode]] = WeakKeyDictionary()
"""Each partly loaded tree's nodes whose children were not loaded (:func:`cut_of`)."""


def binding_of(tree: Tree) -> Binding | None:
    """The file ``tree`` mirrors (loaded from, saved to, or opened for), or None."""
    return _BINDINGS.get(tree)


def bind(tree: Tree, binding: Binding | None) -> None:
    """Record the file ``tree`` mirrors (None: none, so its next save is a first save to a new file)."""
    if binding is None:
        _BINDINGS.pop(tree, None)
    else:
        _BINDINGS[tree] = binding


def last_game(tree: Tree) -> int:
    """The id of the last game logged in the file ``tree`` mirrors, as the tree knows it (0: none, or no file)."""
    binding = _BINDINGS.get(tree)
    return 0 if binding is None else binding.last_game


def cut_of(tree: Tree) -> set[TreeNode]:
    """The nodes of ``tree`` whose children were not loaded (a ``load(..., path=, depth=)`` cut, or a view that read
    only what it draws): a record of the load, never grown (a save refuses new nodes under them; PUCT evaluates
    them without expanding). The set itself, created empty: loaders add to it. Empty for a whole tree."""
    cut = _CUTS.get(tree)
    if cut is None:
        cut = _CUTS[tree] = set()
    return cut


def kept_of(tree: Tree) -> KeptConnection | None:
    """The connection kept open for ``tree``'s saves (:func:`treelab.store.persistence.kept_open`), or None."""
    return _KEPT.get(tree)


def keep(tree: Tree, kept: KeptConnection | None) -> None:
    """Keep ``kept`` open for ``tree``'s saves (None: stop)."""
    if kept is None:
        _KEPT.pop(tree, None)
    else:
        _KEPT[tree] = kept


def check_update(
    conn: sqlite3.Connection, tree: Tree, meta: dict[str, str], binding: Binding | None, name: str
) -> tuple[str | None, int, bool]:
    """Check that ``tree`` belongs to this database; return its id, save count and whether to merge.

    The tree merges (rather than inserting its new nodes with their ids) when
    the file may hold nodes it does not know: someone else saved since this
    tree last matched the file, or did at some earlier save.
    """
    version = check_meta(meta, name, tree.game.name)
    tree_id, generation = meta.get("tree_id"), int(meta.get("generation", 0))
    if binding is None or binding.tree_id is None or binding.tree_id != tree_id:
        raise StoreError(
            f"{name!r} already holds another {meta['game']} tree: save to a new path, "
            f"or load {name!r} first and grow that tree"
        )
    migrate(conn, version)
    new = tree.new_nodes
    if _CUTS.get(tree):
        _check_cuts(tree, new, binding, name)
    merged = binding.foreign or binding.generation != generation
    if not merged:
        first = new[0].node_id if new else tree.next_id
        top = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
        merged = top >= first  # rows this tree does not know (written without a save count)
    return tree_id, generation, merged


def stored_counts(conn: sqlite3.Connection, meta: dict[str, str]) -> list[int]:
    """The file's nodes per depth (``meta.depth_counts``, else counted)."""
    if "depth_counts" in meta:
        return list(json.loads(meta["depth_counts"]))
    return [n for _, n in conn.execute("SELECT depth, count(*) FROM nodes GROUP BY depth ORDER BY 1")]


def _check_cuts(tree: Tree, new: list[TreeNode], binding: Binding, name: str) -> None:
    cut, top = cut_of(tree), len(tree.labels(binding.subtree))
    for node in new:
        parent = getattr(node, PARENT_SLOT, None)
        if parent in cut:
            how = f"path={binding.subtree!r}" + ("" if binding.depth is None else f", depth={binding.depth}")
            raise StoreError(
                f"cannot save new node {node.sequence!r} to {name!r}: the tree was loaded with {how}, "
                f"so not all children of {parent.sequence!r} were loaded: load without "
                f"{'depth' if parent.depth >= top else 'path'} to grow it"
            )


def stored_positions(tree: Tree) -> dict[str, list[int]] | None:
    """The stored position table of the file ``tree`` mirrors (``{}``: no file yet; a file that does not keep it:
    built from its nodes, the file unchanged), or None when there is none to start from (no file bound): the hook
    behind :meth:`treelab.positions.PositionTable.of`."""
    binding = binding_of(tree)
    if binding is None or binding.path is None:
        return None
    if not binding.path.exists() or is_empty(binding.path):
        return {}
    with reading(binding.path) as (conn, _):
        return positiontable.read_or_build(conn, tree.game)  # a file without it: built from its nodes, once a load


def _cut_now(tree: Tree) -> set[TreeNode] | frozenset[TreeNode]:
    return _CUTS.get(tree) or frozenset()


wire("positions", stored_positions)  # PositionTable.of: the stored table to start from
wire("cut", _cut_now)  # SearchState.cut: a search reads the record of the load (the core imports no store)
