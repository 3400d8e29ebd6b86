"""What a sound treelab database holds, checked before anything is built from it.

Databases are shared files: a crafted or damaged one must meet a one-line
refusal (:class:`~treelab.errors.DamagedDatabaseError`), never a traceback deep
in a search, a division by zero in a statistic, or a wrong answer. The rules,
written once here:

- ``meta``: ``c`` a finite number >= 0; ``generation`` a whole number >= 0;
  ``depth_counts`` a JSON list of counts (:func:`check_meta_values`).
- each ``nodes`` row: ``id`` and ``parent_id`` whole numbers with the parent
  written first (``parent_id < id``, so no node is its own ancestor); counts
  whole numbers >= 0; ``proven`` NULL, -1, 0 or 1; ``move`` a label of the
  game; one root (:data:`BAD_ROW` in SQL, :func:`check_row` in Python and the
  compiled loader's ``check``).
- structure: every parent exists and its child is one level deeper
  (:func:`check_nodes`, for readers that aggregate in SQL).

Loads check the rows they build (about free: the compiled loader checks
values in C); SQL statistics that read the whole table call
:func:`check_nodes` once.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import DamagedDatabaseError, NotationError
from ..games import Game

__all__ = [
    "BAD_ROW",
    "check_meta_values",
    "check_nodes",
    "check_row",
    "check_table",
    "damaged",
    "label_check",
    "named",
]

BAD_ROW = """NOT (
    typeof(id) = 'integer'
    AND (parent_id IS NULL OR (typeof(parent_id) = 'integer' AND parent_id < id))
    AND typeof(move) = 'text'
    AND typeof(depth) = 'integer' AND depth >= 0
    AND typeof(nb_visit) = 'integer' AND nb_visit >= 0
    AND typeof(nb_win) = 'integer' AND nb_win >= 0
    AND typeof(nb_draw) = 'integer' AND nb_draw >= 0
    AND (proven IS NULL OR (typeof(proven) = 'integer' AND proven BETWEEN -1 AND 1))
    AND (created_game IS NULL OR typeof(created_game) = 'integer')
)"""
"""An SQL condition true for a ``nodes`` row whose values no treelab wrote."""

_COUNTS = ("nb_visit", "nb_win", "nb_draw")


def damaged(detail: str) -> DamagedDatabaseError:
    """The error for a damaged database; :func:`treelab.store.dbfile.reading` adds the file's name."""
    return DamagedDatabaseError(detail)


def named(exc: DamagedDatabaseError, name: str) -> DamagedDatabaseError:
    """``exc`` with the database's name and what to do, for the one-line message."""
    if exc.db is not None:
        return exc
    err = DamagedDatabaseError(f"{name!r} is damaged or crafted ({exc}): restore a copy, or train a new tree")
    err.db = name
    return err


def check_meta_values(meta: Mapping[str, str]) -> None:
    """Refuse ``meta`` values treelab never writes (``c='abc'``, ``generation='x'``).

    Raises:
        DamagedDatabaseError: naming the key and its value.
    """
    if "c" in meta:
        try:
            c = float(meta["c"])
        except (TypeError, ValueError):
            c = math.nan
        if not math.isfinite(c) or c < 0:
            raise damaged(f"meta c {meta['c']!r} is not a finite exploration constant >= 0")
    if "generation" in meta:
        value = meta["generation"]
        if not isinstance(value, str) or not value.isascii() or not value.isdigit():
            raise damaged(f"meta generation {value!r} is not a save count")
    if "depth_counts" in meta:
        try:
            counts = json.loads(meta["depth_counts"])
        except (TypeError, ValueError):
            counts = None
        if not isinstance(counts, list) or not all(type(n) is int and n >= 0 for n in counts):
            raise damaged(f"meta depth_counts {str(meta['depth_counts'])[:40]!r} is not a list of counts")


def label_check(game: Game) -> Callable[[object], None]:
    """A function that raises :class:`ValueError` for a ``move`` that is not one of ``game``'s labels."""

    def check(move: object) -> None:
        try:
            ok = isinstance(move, str) and game.label(game.parse_move(move)) == move
        except (NotationError, ValueError, TypeError, KeyError):
            ok = False
        if not ok:
            raise ValueError(f"move {move!r} is not a {game.name} {getattr(game, 'move_word', 'move')}")

    return check


def _int(value: object) -> bool:
    return type(value) is int


def check_row(row: tuple[Any, ...], check: Callable[[object], None] | None = None) -> None:
    """Check one row ``(id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game[, nb_select, ...])``.

    The Python twin of the compiled loader's check (``_rows.c``).

    Raises:
        ValueError: naming the column, its value and the node.
    """
    nid, pid, move = row[0], row[1], row[2]
    if not _int(nid):
        raise ValueError(f"id {nid!r} of node {nid!r} is not a whole number")
    if pid is not None and not _int(pid):
        raise ValueError(f"parent_id {pid!r} of node {nid!r} is not a node id")
    for name, value in zip(_COUNTS, row[3:6], strict=True):
        if not _int(value) or value < 0:
            raise ValueError(f"{name} {value!r} of node {nid!r} is not a count >= 0")
    if row[6] is not None and (not _int(row[6]) or not -1 <= row[6] <= 1):
        raise ValueError(f"proven {row[6]!r} of node {nid!r} is not -1, 0, 1 or NULL")
    if row[7] is not None and not _int(row[7]):
        raise ValueError(f"created_game {row[7]!r} of node {nid!r} is not a game id")
    if len(row) > 8 and row[8] is not None and (not _int(row[8]) or row[8] < 0):
        raise ValueError(f"nb_select {row[8]!r} of node {nid!r} is not a count >= 0")
    if not isinstance(move, str):
        raise ValueError(f"move {move!r} of node {nid!r} is not a text")
    if check is not None and pid is not None:
        check(move)


def check_nodes(conn: sqlite3.Connection, game: Game) -> None:
    """Check the whole ``nodes`` table (see :func:`_check_nodes`); text that is not UTF-8 is damage too."""
    try:
        _check_nodes(conn, game)
    except UnicodeDecodeError:
        raise damaged("the nodes table holds text that is not UTF-8") from None


def _check_nodes(conn: sqlite3.Connection, game: Game) -> None:
    """Check the whole ``nodes`` table: values (:data:`BAD_ROW`), labels, one root, parents and depths.

    One scan for the values and one indexed join for the structure; about a
    third of a second per million nodes.

    Raises:
        DamagedDatabaseError: naming the first bad node and value.
    """
    bad = conn.execute(
        "SELECT id, parent_id, move, nb_visit, nb_win, nb_draw, proven, created_game, depth "
        f"FROM nodes WHERE {BAD_ROW} LIMIT 1"
    ).fetchone()
    if bad is not None:
        try:
            check_row(bad[:8])
        except ValueError as exc:
            raise damaged(str(exc)) from None
        if not _int(bad[8]) or bad[8] < 0:
            raise damaged(f"depth {bad[8]!r} of node {bad[0]!r} is not a depth >= 0")
        raise damaged(f"move {bad[2]!r} of node {bad[0]!r} is not a text")
    roots = conn.execute("SELECT id, depth FROM nodes WHERE parent_id IS NULL LIMIT 2").fetchall()
    if len(roots) > 1:
        raise damaged(f"node {roots[1][0]!r} has no parent but is not the root")
    if roots and roots[0][1] != 0:
        raise damaged(f"depth {roots[0][1]!r} of the root is not 0")
    orphan = conn.execute(
        "SELECT c.id, c.parent_id, c.depth, p.depth FROM nodes AS c LEFT JOIN nodes AS p ON p.id = c.parent_id "
        "WHERE c.parent_id IS NOT NULL AND (p.id IS NULL OR c.depth != p.depth + 1) LIMIT 1"
    ).fetchone()
    if orphan is not None:
        if orphan[3] is None:
            raise damaged(f"parent_id {orphan[1]!r} of node {orphan[0]!r} is not a node")
        raise damaged(f"depth {orphan[2]!r} of node {orphan[0]!r} is not one more than its parent's {orphan[3]!r}")
    check = label_check(game)
    for (move,) in conn.execute("SELECT DISTINCT move FROM nodes WHERE parent_id IS NOT NULL"):
        try:
            check(move)
        except ValueError as exc:
            raise damaged(str(exc)) from None


def check_table(table: Any, no_proof: int, moves: list[Any] | None = None, game: Game | None = None) -> None:
    """Check an ``(N, 8)`` numpy table of rows (id, parent id or -1, depth, visits, wins, draws, proven or
    ``no_proof``, created game) read for the array statistics: one vectorised pass, milliseconds a million.

    With ``moves`` (one per row) and ``game``, every move below the root must be one of the game's labels.

    Raises:
        DamagedDatabaseError: a negative count, a proof outside -1/0/1, a depth that is not its
            parent's plus one, or a move that is not a label.
    """
    import numpy as np  # late: the store's other checks run without numpy

    if not len(table):
        return
    for col, name in ((3, "nb_visit"), (4, "nb_win"), (5, "nb_draw")):
        bad = np.flatnonzero(table[:, col] < 0)
        if len(bad):
            raise damaged(f"{name} {int(table[bad[0], col])} of node {int(table[bad[0], 0])} is not a count >= 0")
    proven = table[:, 6]
    bad = np.flatnonzero(((proven < -1) | (proven > 1)) & (proven != no_proof))
    if len(bad):
        raise damaged(f"proven {int(proven[bad[0]])} of node {int(table[bad[0], 0])} is not -1, 0, 1 or NULL")
    ids = table[:, 0]
    order = np.argsort(ids)
    at = np.clip(np.searchsorted(ids, table[:, 1], sorter=order), 0, len(ids) - 1)
    parent = order[at]
    has = ids[parent] == table[:, 1]
    bad = np.flatnonzero(has & (table[:, 2] != table[parent, 2] + 1))
    if len(bad):
        i = bad[0]
        raise damaged(f"depth {int(table[i, 2])} of node {int(ids[i])} is not one more than its parent's")
    if moves is not None and game is not None:
        check = label_check(game)
        for move in {m for m, p in zip(moves, table[:, 1].tolist(), strict=True) if p != -1}:
            try:
                check(move)
            except ValueError as exc:
                raise damaged(str(exc)) from None
