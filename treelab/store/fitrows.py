"""The stored nodes a policy/value model is fitted from (``treelab fit``), read without loading the tree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .dbfile import diagnosed, reading
from .schema import DbPath

__all__ = ["FitRow", "FitRows", "read_fit_rows"]

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


@diagnosed
def read_fit_rows(db: DbPath, *, min_visits: int, max_depth: int | None, game: str | None = None) -> FitRows:
    """The nodes of ``db`` that a model can learn from, in one read transaction.

    A node is read when it is at most ``max_depth`` deep (None: any depth) and
    has at least ``min_visits`` visits, and also when its parent has (a training
    example's policy needs all the children it has). Every ancestor of a node
    read is read (an ancestor has at least its descendants' visits), so each
    node's move path can be rebuilt from ``parent_id``.

    Raises:
        StoreError: and its subclasses, as :func:`~treelab.store.dbfile.reading`;
        GameMismatchError: ``game`` is given and the database holds another game.
    """
    deepest = (1 << 62) if max_depth is None else max_depth
    with reading(db, game) as (conn, meta):
        nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
        root = conn.execute("SELECT nb_visit FROM nodes WHERE parent_id IS NULL").fetchone()
        rows = conn.execute(
            "SELECT n.id, n.parent_id, n.move, n.depth, n.nb_visit, n.nb_win, n.nb_draw, n.proven, n.nb_select, "
            "n.created_game, n.value_sum "
            "FROM nodes AS n LEFT JOIN nodes AS p ON n.parent_id = p.id "
            "WHERE n.depth <= ? + 1 AND (n.nb_visit >= ? AND n.depth <= ? OR p.nb_visit >= ? AND p.depth <= ?) "
            "ORDER BY n.depth, n.id",
            (deepest, min_visits, deepest, min_visits, deepest),
        ).fetchall()
        games = conn.execute("SELECT moves, winner, root_values FROM games ORDER BY id").fetchall()
    return FitRows(meta["game"], rows, nodes, root[0] if root else 0, games)
