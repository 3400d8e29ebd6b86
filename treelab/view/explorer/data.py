"""What the explorer's JSON API answers, read from one database per request.

A :class:`TreeFile` is one database named on the command line. Each answer
opens a read-only connection inside one read transaction
(:func:`treelab.store.dbfile.reading`), so it sees one consistent state while
``treelab train`` goes on writing the same file (WAL mode: readers never block
the writer, nor the writer them), and closes it again. Only indexed lookups are
made: the path one ``(parent_id, move)`` lookup per move, the children one
``parent_id`` lookup, the principal variation one per level, so an answer costs
the same on a million-node tree as on a small one.

*Growth replay*: with ``game=g`` the answer shows the tree as it was after
training game ``g``: the nodes created by then (``created_game <= g``, or made
outside training). Every number in it is as of game ``g`` or absent (null): the
root and its children carry their visits, wins and draws logged in ``history``
after game ``g``; deeper counts, selections and the principal variation (which
follows selections) were not logged per game, so they are null, ``[]``, and
``replay.note`` says so (today's counts beside a past total would read as shares
over 100%). With ``since=s`` the children created after game ``s`` are marked ``new``.

The children come in the order of the move-choice rule
(:func:`treelab.mcts.choice.preference`: proofs first, then the most selected), the
principal variation's; in replay, where selections are unknown, by visits.

Visits include pass-through visits: every stored path starts at the root, so a
node on the line of a game also counts the simulations of searches that
started deeper (docs/design.md, *Semantics*); the page says so beside the numbers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import BudgetError, GameMismatchError, NotationError, PathNotFoundError
from ...games import Game, State, find_game
from ...learn.model import Model
from ...mcts.scores import Edge, score_terms
from ...nodes import Proof, preference, proof_word
from ...positions import mover_mean, player_one, player_one_value
from ...store.dbfile import reading
from ...store.positiontable import after_moves
from ...store.positiontable import row as position_row
from ...store.rows import created_by, kid_rows, logged_root, path_rows, principal_variation, totals
from ...store.schema import display
from ...tree import SQRT2, TreeNode
from ..style import mean_colour

__all__ = ["ORACLE_BUDGET", "Extras", "Replay", "TreeFile", "board_grid"]

_PV_LIMIT = 200
"""The most moves of a principal variation shown (no game here is longer)."""


ORACLE_BUDGET = 2_000_000
"""Positions the Connect Four oracle may search per move for one answer (a few seconds); an earlier position
answers ``"oracle": null`` for its moves rather than keep the page waiting for minutes."""


@dataclass(frozen=True)
class Extras:
    """What the explorer shows beside the tree's statistics: a model's prior and value, perfect play.

    ``treelab serve DB --model M`` adds ``"model_value"`` (the position's value for the player to move, in
    [0, 1]) to ``/api/node`` and ``"model_prior"`` to each child; ``--oracle`` adds each child's ``"oracle"``
    (the move's game-theoretic value for its player: 1, 0, -1; null when beyond :data:`ORACLE_BUDGET`).
    The same keys as ``treelab analyse --json``.
    """

    model: Model | None = None
    """The model (checked to be of the served tree's game)."""
    oracle: Callable[[State], dict[int, int]] | None = None
    """The game's oracle (:func:`treelab.oracle.oracle_for`), or None."""
    solved: dict[object, dict[int, int] | None] = field(default_factory=dict)
    """The oracle's answers so far, by position key (None: beyond its budget)."""

    def add(self, answer: dict[str, Any], game: Game) -> dict[str, Any]:
        """``answer`` (an ``/api/node`` object) with the model's and the oracle's keys; changed in place."""
        state = game.replay(game.parse(answer["path"]))
        if state.is_terminal:
            return answer
        if self.model is not None:
            priors, value = self.model.predict(state)
            answer["model_value"] = round(value, 6)
            for row in answer["children"]:
                row["model_prior"] = round(priors.get(_move(game, row["move"]), 0.0), 6)
        if self.oracle is not None:
            key = state.key()
            if key not in self.solved:
                try:
                    self.solved[key] = self.oracle(state)
                except BudgetError:
                    self.solved[key] = None
            values = self.solved[key] or {}
            for row in answer["children"]:
                row["oracle"] = values.get(_move(game, row["move"]))
        return answer


def _move(game: Game, label: str) -> int:
    """The move of a child's label; -1 (no game's move) for a row no treelab wrote."""
    try:
        return game.parse_move(label)
    except NotationError:
        return -1


@dataclass(frozen=True)
class Replay:
    """A moment of the tree's growth: the tree as after training game :attr:`game`."""

    game: int
    """Show the nodes created up to this training game (``games.id``)."""
    since: int | None = None
    """Mark the nodes created after this game (and up to :attr:`game`) as new."""

    def clause(self, alias: str = "") -> str:
        """The condition the store's readers take to keep a node created by then."""
        return created_by(self.game, alias)


@dataclass(frozen=True)
class TreeFile:
    """One database the explorer serves, checked when the server starts."""

    path: Path
    """The database file."""
    name: str
    """How the file is named in messages and on the page."""
    game: Game
    """The game of its tree."""
    c: float
    """Its stored exploration constant: UCB1 in the children table uses it."""
    identity: tuple[int, int] = (0, 0)
    """The file's ``(device, inode)`` when it was opened: another file moved over the path differs."""

    @classmethod
    def open(cls, db: str | os.PathLike[str]) -> TreeFile:
        """Check that ``db`` is a readable treelab database (never changing it).

        Raises:
            StoreError, NotATreelabDatabaseError, SchemaVersionError: see :func:`treelab.store.dbfile.reading`.
        """
        with reading(db) as (_, meta):
            st = os.stat(db)
            return cls(Path(db), display(db), find_game(meta["game"]), float(meta.get("c", SQRT2)),
                       (st.st_dev, st.st_ino))

    def current(self) -> TreeFile:
        """This file as it is now: itself while the path holds the file opened, else the path opened again
        (a tree of the same game moved over it is served from then on).

        Raises:
            GameMismatchError: the path now holds a tree of another game (restart the explorer for it).
        """
        try:
            st = os.stat(self.path)
        except OSError:
            return self  # the read itself says what is wrong
        if (st.st_dev, st.st_ino) == self.identity:
            return self
        again = TreeFile.open(self.path)
        if again.game.name != self.game.name:
            raise GameMismatchError(
                f"{self.name!r} was replaced by a {again.game.name!r} tree while served as {self.game.name!r}: "
                "start treelab serve again to explore it"
            )
        return again

    def child_path(self, path: str, label: str) -> str | None:
        """The page address (path) of the move ``label`` played at ``path`` (None: not a move of the game)."""
        try:
            return self.game.notation([*self.game.parse(path), self.game.parse_move(label)])
        except NotationError:
            return None

    # -- answers --------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The tree's size and last training game; ``version`` changes whenever a save commits."""
        with reading(self.path, self.game.name) as (conn, meta):
            visits, games, last_game, nodes = totals(conn, meta)
        stamp = f"{meta.get('generation', '')}:{meta.get('saved_at', '')}"
        return {
            "db": self.name, "game": self.game.name, "c": self.c, "nodes": nodes, "games": games,
            "last_game": last_game, "root_visits": visits, "version": f"{stamp}:{visits}:{last_game}:{nodes}",
        }

    def node(self, path: str, replay: Replay | None = None) -> dict[str, Any]:
        """The ``/api/node`` object of the position ``path`` (docs/design.md, *Explorer*).

        Raises:
            NotationError, IllegalMoveError: ``path`` is not a position of the game.
            PathNotFoundError: the position is not stored (or not yet, at ``replay.game``).
        """
        game = self.game
        moves = game.parse(path)
        state = game.replay(moves)
        with reading(self.path, self.game.name) as (conn, meta):
            rows = path_rows(conn, game, moves, self.name)
            if replay is not None:
                _check_existed(rows, replay, game, moves, self.name)
            kids_found = kid_rows(conn, rows[-1][0], replay.clause() if replay is not None else "")
            merged = _positions(conn, game, state, [row[2] for row in kids_found]) if replay is None else {}
            graph = meta.get("statistics") == "graph" and replay is None
            logged = logged_root(conn, replay.game) if replay is not None else None
            kept = replay.clause() if replay is not None else ""
            pv = [m for m, _ in principal_variation(conn, rows[-1][0], where=kept, limit=_PV_LIMIT)]
        chain = _chain(rows, kids_found, logged)
        node = chain[-1]
        if replay is None:
            node_known = kids_known = True
            kids = sorted(node.children_view, key=lambda k: preference(k.proven, k.nb_select, k.nb_visit), reverse=True)
        else:  # only the root's and its children's counts were logged after each game
            node_known, kids_known = logged is not None and len(moves) <= 1, logged is not None and not moves
            kids = sorted(node.children_view, key=lambda k: (-k.nb_visit, k.node_id))
            pv = []  # it follows selections, which no game logged
        to_move = state.to_move
        reward = sum(k.mean * k.nb_visit for k in kids)
        priors = {r[0]: r[10] for r in kids_found if r[10] is not None}
        kid_visits = sum(k.nb_visit for k in kids)
        proof = None if node.proven is None else -node.proven
        if proof is not None and not game.alternating and game.turn(moves)[0] == to_move:
            proof = -proof  # a double move: the player to move also moved into this node
        if state.is_terminal:
            proof = Proof.of_winner(state.winner, to_move)
        notation = game.notation(moves)
        mover = game.replay(moves[:-1]).to_move if moves else 3 - game.initial().to_move
        here = merged.get(None)
        counts = node_known or None  # None: the numbers as of that game are not known
        return {
            "game": game.name, "db": self.name, "path": notation, "moves": [game.label(m) for m in moves],
            "to_move": to_move, "nb_visit": counts and node.nb_visit, "nb_win": counts and node.nb_win,
            "nb_draw": counts and node.nb_draw, "mean": counts and node.mean,
            "value": (reward / kid_visits if kid_visits else 0.5) if kids_known else None,
            "proven": proof_word(proof), "terminal": state.is_terminal, "winner": state.winner, "c": self.c,
            "principal_variation": pv, "pv_paths": _line_paths(game, moves, pv),
            "crumbs": [{"move": game.label(m), "path": game.notation(moves[:i + 1])} for i, m in enumerate(moves)],
            "children": [self._child(k, node, moves, replay, state, (merged.get(k.name), graph), priors, kids_known)
                         for k in kids],
            **({} if here is None else {"position": _position_json(here, mover)}),
            **({"statistics": "graph"} if graph else {}),
            "board": board_grid(game, state),
            "replay": None if replay is None else {"game": replay.game, "since": replay.since,
                                                   "note": _replay_note(node_known, kids_known)},
        }

    def _child(self, kid: TreeNode, parent: TreeNode, moves: Sequence[int], replay: Replay | None,
               state: State, merged: tuple[Sequence[Any] | None, bool],
               priors: dict[int, float], known: bool = True) -> dict[str, Any]:
        game, c = self.game, self.c
        visited = kid.nb_visit > 0
        row, graph = merged
        # the score the search uses (treelab.mcts.scores): graph (the position's value, the edge's counts) or UCB1
        score = score_terms("graph" if graph else "classic", Edge.of(kid, row, mover=state.to_move), c)
        scores: dict[str, Any] = {"ucb1": score.total, "exploitation": score.value if graph or visited else None,
                                  "exploration": score.exploration}
        try:
            href: str | None = game.notation([*moves, game.parse_move(kid.name)])
        except NotationError:  # a row no treelab wrote: shown (as text), never linked
            href = None
        new = (
            replay is not None and replay.since is not None and kid.created_game is not None
            and kid.created_game > replay.since
        )
        if not known:  # a past game's counts below the root's children: not logged, so not shown
            scores = dict.fromkeys(scores)
        counts = known or None
        return {
            "move": kid.name, "nb_visit": counts and kid.nb_visit, "nb_win": counts and kid.nb_win,
            "nb_draw": counts and kid.nb_draw, "nb_loss": counts and kid.nb_loss,
            "nb_select": kid.nb_select if replay is None else None, "mean": counts and kid.mean,
            **scores,
            **({} if row is None else {"position": _position_json(row, state.to_move)}),
            "share": (kid.nb_visit / parent.nb_visit if parent.nb_visit else 0.0) if known else None,
            "proven": proof_word(kid.proven), "colour": mean_colour(kid.mean if visited and known else None),
            "path": href, "created_game": kid.created_game, "new": new,
            **({"value_sum": kid.value_sum} if kid.value_sum else {}),
            **({"prior": priors[kid.node_id]} if kid.node_id in priors else {}),
            **({"action": game.action_text(state, game.parse_move(kid.name))} if game.shows_actions and href else {}),
        }


def _replay_note(node_known: bool, kids_known: bool) -> str:
    """What a growth replay answer leaves out, and why."""
    if kids_known:
        return ("counts of the start's moves as logged after that game; selections and the principal variation "
                "were not logged per game")
    return (("this position's counts as logged after that game; " if node_known else "")
            + "its moves' counts, selections and the principal variation were not logged per game (only the "
              "start's moves are): shown as unknown")


def _positions(conn: Any, game: Game, state: State, labels: Sequence[str]) -> dict[str | None, Any]:
    """The merged counts (``positions`` rows) of ``state`` (key None) and of the position after each move label."""
    found: dict[str | None, Any] = {None: position_row(conn, game.position_key(state))}
    found.update(after_moves(conn, game, state, labels))
    return found


def _position_json(row: Sequence[Any], mover: int) -> dict[str, Any]:
    """A position's merged counts for the player who moves into it (its value sum, if any), and how many stored
    paths reach it."""
    visits, ones, draws, paths, value = row
    return {"nb_visit": visits, "nb_win": player_one(mover, visits, ones, draws), "nb_draw": draws,
            "mean": mover_mean(visits, ones, draws, mover, value), "paths": paths,
            **({"value_sum": player_one_value(mover, value)} if value else {})}


def _line_paths(game: Game, moves: Sequence[int], line: list[str]) -> list[str | None]:
    """The page address (path) of each node along ``line`` from ``moves`` (None past a label no game move)."""
    out: list[str | None] = []
    here = list(moves)
    for label in line:
        try:
            here.append(game.parse_move(label))
        except NotationError:
            out.extend([None] * (len(line) - len(out)))
            break
        out.append(game.notation(here))
    return out


def _check_existed(rows: list[tuple[Any, ...]], replay: Replay, game: Game, moves: Sequence[int], db: str) -> None:
    for i, row in enumerate(rows):
        created = row[7]
        if created is not None and created > replay.game:
            raise PathNotFoundError(
                f"path {game.notation(moves[:i])!r} was not in {db!r} yet after game {replay.game!r}: "
                f"it was created in game {created!r}; move the replay slider further"
            )


def _chain(
    rows: list[tuple[Any, ...]], kid_rows: list[tuple[Any, ...]], logged: tuple[int, dict[str, list[Any]]] | None
) -> list[TreeNode]:
    """TreeNodes for the path and the last node's children, so UCB1 and means use the tree's own rules."""
    chain: list[TreeNode] = []
    parent: TreeNode | None = None
    for row in rows:
        parent = _make(row, parent)
        chain.append(parent)
    assert parent is not None
    for row in kid_rows:
        _make(row, parent)
    if logged is not None:  # the root and its children as logged after that game
        visits, kids = logged
        root = chain[0]
        counts: dict[str, list[Any]] = {move: ([*v, 0, 0, 0, 0.0])[:4] for move, v in kids.items()}  # a value sum
        for kid in root.children_view:  # all of them (at the root), or the one on the path
            kid.nb_visit, kid.nb_win, kid.nb_draw, kid.value_sum = counts.get(kid.name, [0, 0, 0, 0.0])
        # the root's own wins (player 2's), draws and value sum follow from its children's
        root.nb_visit = visits
        root.nb_draw = sum(c[2] for c in counts.values())
        root.nb_win = sum(c[0] - c[1] - c[2] for c in counts.values())
        root.value_sum = -sum(c[3] for c in counts.values())
    return chain


def _make(row: tuple[Any, ...], parent: TreeNode | None) -> TreeNode:
    node = TreeNode(
        row[2], parent, node_id=row[0], nb_visit=row[3], nb_win=row[4], nb_draw=row[5], proven=row[6],
        created_game=row[7], nb_select=row[8],
    )
    if row[9]:
        node.value_sum = row[9]
    return node


def board_grid(game: Game, state: State) -> dict[str, Any]:
    """The position as the page draws it: the game's grid, its look, and the cell each move plays into.

    Returns ``{"kind": "grid", "cells": [[0|1|2]] (top row first), "targets": {move: [row, col]},
    "look": {...}}`` for games with a :meth:`State.grid` (a move's cell is the one its play
    fills), else ``{"kind": "text", "text": board}``.
    """
    grid = state.grid()
    if grid is None:
        return {"kind": "text", "text": state.board()}
    targets: dict[str, list[int]] = {}
    for move in state.legal_moves():
        after = state.play(move).grid() or ()
        changed = [[r, c] for r, row in enumerate(after) for c, cell in enumerate(row) if cell != grid[r][c]]
        if len(changed) == 1:
            targets[game.label(move)] = changed[0]
    look = game.look
    return {
        "kind": "grid", "cells": [list(row) for row in grid], "targets": targets,
        "look": {"background": look.background, "fills": list(look.fills),
                 "marks": None if look.marks is None else list(look.marks), "mark_colours": list(look.mark_colours),
                 "footer": list(look.footer)},
    }
