"""How a save writes what changed: increments, and merging with another writer's saves.

A tree keeps, for each node changed since its last save or load, the counts
it had then (:attr:`treelab.tree.Tree.baselines`), so a save adds
``count - baseline`` to the node's row rather than overwriting it. While no one
else writes the file, new nodes are inserted with the ids the tree gave them.
Once someone else saved (``treelab analyse --db`` during ``treelab train``), the
file may hold nodes this tree does not know, so new nodes are merged by
``(parent, move)``: inserted, or added to the row the other writer made. Every
count is then the exact sum of both writers' simulations; a proof that
contradicts the file's is refused. Used by :func:`treelab.store.persistence.save`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ProofConflictError, StoreError
from ..nodes import PARENT_SLOT, proof_word
from ..tree import Counts, Tree, TreeNode
from .schema import check_meta, migrate

__all__ = ["Binding", "check_proofs", "check_update", "increments", "merge_new", "stored_counts"]

INCREMENT_SQL = ("UPDATE nodes SET nb_visit = nb_visit + ?, nb_win = nb_win + ?, nb_draw = nb_draw + ?, "
              "nb_select = nb_select + ?, proven = coalesce(proven, ?) WHERE id = ?")
UPSERT_SQL = """
INSERT INTO nodes (parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game, nb_select)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (parent_id, move) DO UPDATE SET nb_visit = nb_visit + excluded.nb_visit,
    nb_win = nb_win + excluded.nb_win, nb_draw = nb_draw + excluded.nb_draw,
    nb_select = nb_select + excluded.nb_select, proven = coalesce(nodes.proven, excluded.proven)
RETURNING id, proven
"""
@dataclass
class Binding:
    """The database state a tree mirrors (``tree.binding``)."""

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
    if tree.truncated:
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


def merge_new(
    conn: sqlite3.Connection, new: list[TreeNode], name: str
) -> tuple[list[TreeNode], list[int], int]:
    """Insert ``new`` (parents first) or add it to the row the file holds at its ``(parent, move)``.

    Returns the nodes that were inserted (numbered on from the id returned
    last), and every node's id in the file (the nodes take them after the
    commit). A proof that contradicts the file's is a :class:`~treelab.errors.ProofConflictError`.
    """
    top = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
    ids: dict[TreeNode, int] = {}
    inserted = []
    for node in new:
        parent = getattr(node, PARENT_SLOT, None)
        if parent is None:
            raise StoreError(f"{name!r} holds a root already: this tree's new root cannot be merged into it")
        pid = ids.get(parent, parent.node_id)
        nid, proven = conn.execute(UPSERT_SQL, (pid, node.name, node.depth, node.nb_visit, node.nb_win, node.nb_draw,
                                             node.proven, node.created_game, node.nb_select)).fetchone()
        if node.proven is not None and proven != node.proven:
            _contradiction(name, node, proven)
        ids[node] = nid
        if nid > top:
            inserted.append(node)
    return inserted, [ids[node] for node in new], top + 1


def check_proofs(conn: sqlite3.Connection, changed: list[tuple[TreeNode, Counts]], name: str) -> None:
    """Refuse to save a proof that contradicts the file's proof of the same node."""
    for node, _ in changed:
        if node.proven is not None:
            row = conn.execute("SELECT proven FROM nodes WHERE id = ?", (node.node_id,)).fetchone()
            if row is not None and row[0] is not None and row[0] != node.proven:
                _contradiction(name, node, row[0])


def _contradiction(name: str, node: TreeNode, stored: Any) -> None:
    raise ProofConflictError(
        f"{name!r} holds proof {proof_word(stored)!r} for {node.sequence!r} but this tree proved "
        f"{proof_word(node.proven)!r}: one of them is wrong, so nothing was saved; check both runs' games"
    )


def _check_cuts(tree: Tree, new: list[TreeNode], binding: Binding, name: str) -> None:
    cut, top = tree.truncated, len(tree.labels(binding.subtree))
    for node in new:
        parent = getattr(node, PARENT_SLOT, None)
        if parent in cut:
            how = f"path={binding.subtree!r}" + ("" if binding.depth is None else f", depth={binding.depth}")
            raise StoreError(
                f"cannot save new node {node.sequence!r} to {name!r}: the tree was loaded with {how}, "
                f"so not all children of {parent.sequence!r} were loaded: load without "
                f"{'depth' if parent.depth >= top else 'path'} to grow it"
            )


def increments(conn: sqlite3.Connection, changed: list[tuple[TreeNode, Counts]]) -> None:
    """Add each changed node's counts since its baseline to its row; set its proof where the row has none."""
    conn.executemany(INCREMENT_SQL, [(n.nb_visit - b[0], n.nb_win - b[1], n.nb_draw - b[2], n.nb_select - b[3],
                                      n.proven, n.node_id) for n, b in changed])
