"""The stored nodes a policy/value model is fitted from (``treelab fit``), read without loading the tree."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .dbfile import diagnosed, reading
from .schema import DbPath

__all__ = ["FitRow", "FitRows", "Picker", "read_fit_rows"]

FitRow = tuple[int, Any, str, int, int, int, int, Any, int, Any, float]
"""``(id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, nb_select, created_game, value_sum)`` of one
node (``value_sum``: 0 in a file before schema 4)."""


@dataclass(frozen=True)
class FitRows:
    """What :func:`read_fit_rows` read from one database."""

    game: str
    """The database's game (its ``meta``)."""
    rows: list[FitRow]
    """The nodes, parents before children (by depth, then id)."""
    nodes: int
    """Every node the database holds (for the record)."""
    simulations: int
    """The root's visits: the simulations ever recorded."""
    games: list[tuple[str, int | None, str | None]]
    """Every logged game's ``(moves, winner, root_values)`` (winner None: a draw; root_values: the JSON list of
    ``games.root_values``, None when not logged), in the order they were played."""


Picker = Callable[[list[tuple[int, Any]]], Sequence[int]]
"""Chooses the positions a sampled fit learns from: given every candidate ``(node id, created_game)`` (a node
with at least ``min_visits`` visits, at most ``max_depth`` deep, with children; by depth, then id), the ids to
read."""

_COLUMNS = ("n.id, n.parent_id, n.move, n.depth, n.nb_visit, n.nb_win, n.nb_draw, n.proven, n.nb_select, "
            "n.created_game, n.value_sum")


@diagnosed
def read_fit_rows(db: DbPath, *, min_visits: int, max_depth: int | None, game: str | None = None,
                  pick: Picker | None = None) -> FitRows:
    """The nodes of ``db`` that a model can learn from, in one read transaction.

    A node is read when it is at most ``max_depth`` deep (None: any depth) and
    has at least ``min_visits`` visits, and also when its parent has (a training
    example's policy needs all the children it has). Every ancestor of a node
    read is read (an ancestor has at least its descendants' visits), so each
    node's move path can be rebuilt from ``parent_id``.

    With ``pick``, only the positions it picks from the candidates are read, with their children and
    ancestors: a sampled fit of a large tree reads a few hundred thousand rows instead of every
    well-visited node (the examples built from them are the same as from a whole read).

    Raises:
        StoreError: and its subclasses, as :func:`~treelab.store.dbfile.reading`;
        GameMismatchError: ``game`` is given and the database holds another game.
    """
    deepest = (1 << 62) if max_depth is None else max_depth
    with reading(db, game) as (conn, meta):
        nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        root = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()
        if pick is None:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM nodes AS n LEFT JOIN nodes AS p ON n.parent_id = p.id "
                "WHERE n.depth <= ? + 1 AND (n.nb_visit >= ? AND n.depth <= ? OR p.nb_visit >= ? AND p.depth <= ?) "
                "ORDER BY n.depth, n.id",
                (deepest, min_visits, deepest, min_visits, deepest),
            ).fetchall()
        else:
            pool = conn.execute(
                "SELECT n.id, n.created_game FROM nodes AS n WHERE n.nb_visit >= ? AND n.depth <= ? "
                "AND EXISTS (SELECT 1 FROM nodes AS c WHERE c.parent_id = n.id) ORDER BY n.depth, n.id",
                (min_visits, deepest),
            ).fetchall()
            ids = json.dumps([int(i) for i in pick(pool)])
            rows = conn.execute(  # the picked nodes, their children and every ancestor, parents first
                "WITH RECURSIVE picked(id) AS (SELECT value FROM json_each(?)), "
                "up(id) AS (SELECT id FROM picked UNION SELECT n.parent_id FROM nodes AS n JOIN up ON n.id = up.id "
                "WHERE n.parent_id IS NOT NULL), "
                "wanted(id) AS (SELECT id FROM up "
                "UNION SELECT c.id FROM nodes AS c JOIN picked ON c.parent_id = picked.id) "
                f"SELECT {_COLUMNS} FROM nodes AS n JOIN wanted ON n.id = wanted.id ORDER BY n.depth, n.id",
                (ids,),
            ).fetchall()
        games = conn.execute("SELECT moves, winner, root_values FROM games ORDER BY id").fetchall()
    return FitRows(meta["game"], rows, nodes, root[0] if root else 0, games)
