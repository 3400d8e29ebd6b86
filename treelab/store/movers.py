"""The ``movers`` table: who made the move into each node, for games whose players need not alternate.

In Connect Four or tic-tac-toe the mover of a node is the parity of its depth,
so nothing is stored. In dots and boxes (a player who closes a box moves
again) and every game with ``Game.alternating`` false (OpenSpiel games seen to move twice) the tree's
nodes are :class:`~treelab.tree.MoverNode` s, and their movers are saved here,
in the same transaction as the nodes, so a loaded tree knows them without
replaying a single game::

    movers(node_id INTEGER PRIMARY KEY REFERENCES nodes(id), mover INTEGER NOT NULL)

A node's mover never changes, so only new nodes are written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import NotATreelabDatabaseError
from ..tree import Tree, TreeNode

__all__ = ["TABLE", "column", "read", "write"]

_CHUNK = 500
"""Ids a partial load asks for in one statement (SQLite allows 999 parameters in old builds)."""

TABLE = "CREATE TABLE IF NOT EXISTS movers (node_id INTEGER PRIMARY KEY REFERENCES nodes(id), mover INTEGER NOT NULL)"
"""The table's definition (created by the first save of a tree that needs it)."""


def write(conn: sqlite3.Connection, tree: Tree, new: Sequence[TreeNode], first_id: int | None) -> None:
    """Insert the movers of the ``new`` nodes (inside the caller's transaction).

    ``first_id``: the nodes were written numbered ``first_id, first_id + 1, ...``
    (a first save renumbers); None: each with its own ``node_id``.
    """
    if tree.game.alternating or not new:
        return
    conn.execute(TABLE)
    if first_id is None:
        rows: Iterable[tuple[int, int]] = ((n.node_id, n.mover) for n in new)
    else:
        rows = ((first_id + i, n.mover) for i, n in enumerate(new))
    conn.executemany("INSERT INTO movers (node_id, mover) VALUES (?, ?)", rows)


def read(conn: sqlite3.Connection, tree: Tree, nodes: Mapping[int, TreeNode] | list[Any], name: str) -> None:
    """Set the mover of every loaded node in ``nodes`` (by id) from the table.

    Raises:
        NotATreelabDatabaseError: a loaded node has no stored mover (a damaged file).
    """
    if tree.game.alternating:
        return
    have = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'movers'").fetchone()
    rows: Iterable[tuple[int, int]] = ()
    if have and isinstance(nodes, dict):  # a partial load: only its own rows, by the primary key
        ids = list(nodes)
        rows = [row for at in range(0, len(ids), _CHUNK) for row in conn.execute(
            f"SELECT node_id, mover FROM movers WHERE node_id IN ({','.join('?' * len(ids[at:at + _CHUNK]))})",
            ids[at:at + _CHUNK])]
    elif have:
        rows = conn.execute("SELECT node_id, mover FROM movers")
    get = nodes.get if isinstance(nodes, dict) else (lambda i: nodes[i] if i < len(nodes) else None)
    for node_id, mover in rows:
        node = get(node_id)
        if node is not None:
            node.mover = mover  # type: ignore[misc]  # a MoverNode slot
    loaded: Iterable[Any] = nodes.values() if isinstance(nodes, dict) else nodes
    for node in loaded:
        if node is not None and not hasattr(node, "mover"):
            raise NotATreelabDatabaseError(
                f"{name!r} has no mover for node {node.sequence!r} of this {tree.game.name} tree: "
                "the file is damaged; train again into a new file"
            )


def column(conn: sqlite3.Connection, rows: tuple[str, str, str, Sequence[Any]], name: str, game: str) -> list[int]:
    """The movers of the nodes a query selects, in node id order (for arrays built straight from the rows).

    ``rows``: ``(prefix, source, where, args)`` of ``{prefix}SELECT ... FROM {source} {where}``, the
    nodes table named ``n``; only those nodes' movers are read (an indexed lookup each).

    Raises:
        NotATreelabDatabaseError: a node has no stored mover (a damaged file).
    """
    prefix, source, where, args = rows
    have = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'movers'").fetchone()
    join = "LEFT JOIN movers m ON m.node_id = n.id" if have else "LEFT JOIN (SELECT NULL AS mover) m ON 0"
    found = conn.execute(f"{prefix}SELECT n.id, m.mover FROM {source} {join} {where} ORDER BY n.id", args).fetchall()
    missing = next((node_id for node_id, mover in found if mover is None), None)
    if missing is not None:
        raise NotATreelabDatabaseError(
            f"{name!r} has no mover for node id {missing!r} of this {game} tree: "
            "the file is damaged; train again into a new file"
        )
    return [mover for _, mover in found]
