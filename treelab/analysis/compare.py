"""Two trees of one game compared along identical move paths (``treelab diff``).

Two databases grown separately (two seeds, two exploration constants, before
and after more training) hold trees of the same game whose nodes are named by
the same moves, so a node of one and a node of the other *are the same
position* exactly when their move paths are equal. :func:`diff` aligns them
that way, without loading either tree: B's file is attached read-only to A's
read-only connection and one recursive query walks the pairs of nodes with the
same path (each step one lookup on the ``(parent_id, move)`` index), so only the
aligned part is read and a million-node pair takes seconds, not the minutes of
two full loads.

It reports, for the subtree at ``path`` (the whole trees by default): the
nodes only in A and only in B, the difference of the visits at the root of the
subtree, both principal variations and the ply where they part, and per move
at ``path`` both counts and means (the table the explorer's compare view
shows). The JSON is the ``treelab diff --json`` contract of docs/design.md.
"""

from __future__ import annotations

import math
import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from ..errors import GameMismatchError, PathNotFoundError
from ..games import find_game
from ..nodes import mean_reward, proof_word
from ..store.dbfile import reading
from ..store.rows import aligned, attached, kid_moves, node_at, principal_variation, subtree_size
from ..store.schema import display
from ..tree import Moves

__all__ = ["DiffResult", "MoveDiff", "diff"]

@dataclass(frozen=True)
class MoveDiff:
    """One move at the compared position, in both trees (from the view of the player making it)."""

    move: str
    """The move label."""
    nb_visit_a: int
    """Simulations through the move in A (0 if A lacks it)."""
    nb_visit_b: int
    """Simulations through the move in B (0 if B lacks it)."""
    mean_a: float | None
    """Mean reward of the mover in A (None if A lacks the move or never visited it)."""
    mean_b: float | None
    """Mean reward of the mover in B (None if B lacks the move or never visited it)."""
    proven_a: str | None
    """A's proof of the move (``"win"``, ``"draw"``, ``"loss"``) or None."""
    proven_b: str | None
    """B's proof of the move or None."""
    in_a: bool
    """Whether A holds the move at all."""
    in_b: bool
    """Whether B holds the move at all."""

    @property
    def visit_delta(self) -> int:
        """B's visits minus A's."""
        return self.nb_visit_b - self.nb_visit_a

    @property
    def mean_delta(self) -> float | None:
        """B's mean minus A's (None unless both visited the move)."""
        if self.mean_a is None or self.mean_b is None:
            return None
        return self.mean_b - self.mean_a


@dataclass(frozen=True)
class DiffResult:
    """Two trees of one game compared at one position: the ``treelab diff --json`` object."""

    game: str
    """The game both trees are of."""
    path: str
    """The compared position (the subtree root), in the game's notation; ``""`` for the start."""
    a: str
    """Tree A's database."""
    b: str
    """Tree B's database."""
    nodes_a: int | None
    """Nodes in A's subtree at ``path`` (0 if A lacks the position; None: not counted)."""
    nodes_b: int | None
    """Nodes in B's subtree at ``path``."""
    common: int | None
    """Nodes whose move path is in both subtrees (None: not counted)."""
    nb_visit_a: int
    """A's visits at ``path``."""
    nb_visit_b: int
    """B's visits at ``path``."""
    principal_variation_a: tuple[str, ...]
    """A's most visited line from ``path`` (ties: the first created child)."""
    principal_variation_b: tuple[str, ...]
    """B's most visited line from ``path``."""
    children: tuple[MoveDiff, ...]
    """Every move at ``path`` held by either tree, most visited (A + B) first."""

    @property
    def only_in_a(self) -> int | None:
        """Nodes of A's subtree whose move path B lacks (None: not counted)."""
        return None if self.nodes_a is None or self.common is None else self.nodes_a - self.common

    @property
    def only_in_b(self) -> int | None:
        """Nodes of B's subtree whose move path A lacks (None: not counted)."""
        return None if self.nodes_b is None or self.common is None else self.nodes_b - self.common

    @property
    def root_visit_delta(self) -> int:
        """B's visits at ``path`` minus A's."""
        return self.nb_visit_b - self.nb_visit_a

    @property
    def pv_common(self) -> int:
        """How many first moves the two principal variations share (they part after that many)."""
        same = 0
        for x, y in zip(self.principal_variation_a, self.principal_variation_b, strict=False):
            if x != y:
                break
            same += 1
        return same

    def to_dict(self) -> dict[str, Any]:
        """The ``treelab diff --json`` object (docs/design.md's keys, and a few more)."""
        return {
            "game": self.game, "path": self.path, "a": self.a, "b": self.b,
            "nodes_a": self.nodes_a, "nodes_b": self.nodes_b, "common": self.common,
            "only_in_a": self.only_in_a, "only_in_b": self.only_in_b,
            "nb_visit_a": self.nb_visit_a, "nb_visit_b": self.nb_visit_b,
            "root_visit_delta": self.root_visit_delta,
            "principal_variation_a": list(self.principal_variation_a),
            "principal_variation_b": list(self.principal_variation_b),
            "pv_common": self.pv_common,
            "children": [
                {"move": m.move, "nb_visit_a": m.nb_visit_a, "nb_visit_b": m.nb_visit_b,
                 "mean_a": m.mean_a, "mean_b": m.mean_b, "visit_delta": m.visit_delta,
                 "mean_delta": m.mean_delta, "proven_a": m.proven_a, "proven_b": m.proven_b,
                 "in_a": m.in_a, "in_b": m.in_b}
                for m in self.children
            ],
        }


def _pv(conn: sqlite3.Connection, schema: str, row: tuple[Any, ...] | None) -> tuple[str, ...]:
    return () if row is None else tuple(m for m, _ in principal_variation(conn, row[0], schema=schema))


def _mean(n: int, w: int, d: int, v: float) -> float | None:
    return mean_reward(w, d, n, v) if n else None


def diff(
    a: str | os.PathLike[str], b: str | os.PathLike[str], path: Moves = None, *, count_nodes: bool = True
) -> DiffResult:
    """Compare the trees in the databases ``a`` and ``b`` at ``path``, aligned by move path.

    Both files are opened read-only and never changed.

    Args:
        a: tree A's database.
        b: tree B's database (of the same game).
        path: the position to compare (None: the start); the node counts cover its subtree.
        count_nodes: align the whole subtrees to count the nodes only in A and only in B
            (seconds on a million nodes); False leaves the counts None (the explorer's
            compare view, which must answer in milliseconds).

    Raises:
        GameMismatchError: the two trees are of different games.
        PathNotFoundError: neither tree holds ``path``.
        NotationError, StoreError: a malformed path, or not a readable treelab database.
    """
    name_a, name_b = os.fspath(a), os.fspath(b)
    with reading(name_b) as (_, meta_b), reading(name_a) as (conn, meta_a):
        if meta_a["game"] != meta_b["game"]:
            raise GameMismatchError(
                f"{display(name_a)!r} holds a {meta_a['game']!r} tree and {display(name_b)!r} a "
                f"{meta_b['game']!r} tree: compare two trees of one game"
            )
        game = find_game(meta_a["game"])
        moves = game.parse(path)
        with attached(conn, name_b):  # one read transaction over both files, B as schema "other"
            row_a, row_b = node_at(conn, "main", game, moves), node_at(conn, "other", game, moves)
            where = game.notation(moves)
            if row_a is None and row_b is None:
                raise PathNotFoundError(
                    f"path {where!r} is in neither {display(name_a)!r} nor {display(name_b)!r}: check the moves"
                )
            whole = not moves
            common: int | None = 0
            if not count_nodes:
                common = None
            elif row_a is not None and row_b is not None:
                common = aligned(conn, row_a[0], row_b[0])
            kids_a = kid_moves(conn, "main", row_a[0]) if row_a is not None else {}
            kids_b = kid_moves(conn, "other", row_b[0]) if row_b is not None else {}
            result = DiffResult(
                game=game.name, path=where, a=name_a, b=name_b,
                nodes_a=subtree_size(conn, "main", row_a, whole) if count_nodes else None,
                nodes_b=subtree_size(conn, "other", row_b, whole) if count_nodes else None,
                common=common,
                nb_visit_a=row_a[3] if row_a is not None else 0, nb_visit_b=row_b[3] if row_b is not None else 0,
                principal_variation_a=_pv(conn, "main", row_a),
                principal_variation_b=_pv(conn, "other", row_b),
                children=_children(kids_a, kids_b),
            )
    return result


def _children(
    kids_a: dict[str, tuple[Any, ...]], kids_b: dict[str, tuple[Any, ...]]
) -> tuple[MoveDiff, ...]:
    none = (0, 0, 0, None, 0.0)
    out = []
    for move in {*kids_a, *kids_b}:
        na, wa, da, pa, va = kids_a.get(move, none)
        nb, wb, db_, pb, vb = kids_b.get(move, none)
        out.append(MoveDiff(
            move=move, nb_visit_a=na, nb_visit_b=nb, mean_a=_mean(na, wa, da, va), mean_b=_mean(nb, wb, db_, vb),
            proven_a=proof_word(pa), proven_b=proof_word(pb), in_a=move in kids_a, in_b=move in kids_b,
        ))
    out.sort(key=lambda m: (-(m.nb_visit_a + m.nb_visit_b), int(m.move) if m.move.isdigit() else math.inf, m.move))
    return tuple(out)


