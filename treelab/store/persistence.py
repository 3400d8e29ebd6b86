"""Keep trees in SQLite files: save (incremental, one transaction), load (whole or a subtree).

The format is in :mod:`treelab.store.schema`. A tree remembers the database state
it mirrors (a :class:`Binding`, :func:`~treelab.store.binding.binding_of`: the file's ``tree_id`` and save
counter ``generation``), so a later save writes only the nodes created (INSERT)
or changed (UPDATE by the increments since) and refuses another tree's
database; two writers of one file merge (see :func:`save`). Every save is one
transaction: a ``kill -9`` at any moment leaves the last committed state.
Use: ``tree = open_tree("c4.db", "connect4")``, grow it,
``save(tree, "c4.db", games=[{"moves": "4453", "winner": 1}])``.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NotATreelabDatabaseError, PathNotFoundError, TreelabError
from ..games import Game, find_game
from ..nodes import Proof, wire
from ..tree import SQRT2, Tree, TreeNode
from . import bulk, movers, positiontable, values
from .binding import Binding, bind, binding_of, check_update, cut_of, keep, kept_of, last_game, stored_counts
from .dbfile import KeptConnection, is_empty, reading, writing
from .deltas import apply, changes, depth_counts, renumber
from .schema import DbPath, create, display

__all__ = [
    "GAME_FIELDS", "Binding", "GameRow", "first_rows", "game_row", "kept_open", "load", "log_games", "meta_rows",
    "now", "open_tree", "put_meta", "reusing_trees", "run_meta", "save", "snapshot",
]

GAME_FIELDS = (
    "id", "moves", "winner", "opponent", "tree_player", "iterations", "started_at", "finished_at", "exploration",
    "root_values",
)
"""The keys a game row passed to :func:`save` may have (``moves`` is required)."""

_COLUMNS = "n.id, n.parent_id, n.move, n.nb_visit, n.nb_win, n.nb_draw, n.proven, n.created_game, n.nb_select"
_SUBTREE = f"""
WITH RECURSIVE sub(id, lvl) AS (
    SELECT ?, 0
    UNION ALL
    SELECT c.id, sub.lvl + 1 FROM nodes AS c JOIN sub ON c.parent_id = sub.id WHERE sub.lvl < ?
)
SELECT {_COLUMNS}, sub.lvl = ? AND EXISTS (SELECT 1 FROM nodes AS k WHERE k.parent_id = n.id)
FROM sub JOIN nodes AS n ON n.id = sub.id ORDER BY n.id
"""


def now() -> str:
    """The time a game started or finished, or a save was made, as stored: UTC, ISO 8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _version() -> str:
    return str(sys.modules["treelab"].__version__)  # the package is loaded before any of its modules


@dataclass(frozen=True)
class GameRow:
    """One row of the ``games`` table, built once (:meth:`of`) and checked on every save path (:func:`log_games`).

    Training in one process, its writer process, parallel workers and their writer, terminal play, merges
    and imports all log their games as this value's :meth:`as_dict`.
    """

    moves: str
    """The moves, in the game's notation (``"4453"``)."""
    id: int | None = None
    """The game's id (None: the next free one, given at commit)."""
    winner: int | None = None
    """1, 2, or None for a draw."""
    opponent: str | None = None
    """Who the tree played (``"self"``, ``"random"``, ``"heuristic"``, a pool member, ``"human"``)."""
    tree_player: int | None = None
    """The side the tree played (None in self-play: both)."""
    iterations: int | None = None
    """Simulations a move."""
    started_at: str | None = None
    """When the game started (:func:`now`)."""
    finished_at: str | None = None
    """When it finished."""
    exploration: str | None = None
    """The exploration settings it was played with (JSON)."""
    root_values: str | None = None
    """Before each move, the tree's search's value for the player to move (JSON list), or None."""

    def __post_init__(self) -> None:
        if not isinstance(self.moves, str):
            raise ValueError(f"game moves {self.moves!r} are not a string in the game's notation")
        if self.id is not None and (isinstance(self.id, bool) or not isinstance(self.id, int)):
            raise ValueError(f"game id {self.id!r} is not a whole number: give an int, or leave it out")
        if self.winner not in (1, 2, None) or isinstance(self.winner, bool):
            raise ValueError(f"game winner {self.winner!r} is not 1, 2 or None (a draw)")
        if self.tree_player not in (1, 2, None) or isinstance(self.tree_player, bool):
            raise ValueError(f"game tree_player {self.tree_player!r} is not 1, 2 or None (self-play)")

    @classmethod
    def of(cls, game: Game, row: Mapping[str, Any]) -> GameRow:
        """``row`` (keys of :data:`GAME_FIELDS`, ``moves`` required) checked, its moves in ``game``'s notation."""
        unknown = sorted(set(row) - set(GAME_FIELDS))
        if unknown or "moves" not in row:
            raise ValueError(
                f"bad game row {dict(row)!r}: give 'moves' and only the keys {', '.join(GAME_FIELDS)}"
            )
        fields = dict(row)
        fields["moves"] = game.notation(game.parse(row["moves"]))
        return cls(**fields)

    def as_dict(self) -> dict[str, Any]:
        """The row as :func:`log_games` takes it (every column of :data:`GAME_FIELDS`)."""
        return {key: getattr(self, key) for key in GAME_FIELDS}


def game_row(game: Game, row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` checked and completed to the columns of :data:`GAME_FIELDS`, its moves in ``game``'s notation."""
    return GameRow.of(game, row).as_dict()


_NONE = np.zeros(0, dtype=np.int64)
"""No stored row gained children from anyone else: no new node needs a lookup by ``(parent, move)``."""
_DEPTH = attrgetter("depth")
def _add_counts(counts: list[int], nodes: Iterable[TreeNode]) -> list[int]:
    """``counts`` (nodes per depth) with ``nodes`` added, grown as needed."""
    for depth, n in Counter(map(_DEPTH, nodes)).items():
        counts.extend([0] * (depth + 1 - len(counts)))
        counts[depth] += n
    return counts


def _log_games(conn: sqlite3.Connection, tree: Tree, games: list[dict[str, Any]], counts: list[int],
               since: int | None) -> int:
    """Log a save's games (see :func:`log_games`)."""
    return log_games(conn, tree.root.node_id, games, counts, since=since)


def log_games(conn: sqlite3.Connection, root: int, games: list[dict[str, Any]], counts: list[int], *,
              since: int | None = None) -> int:
    """Insert the game rows and one ``history`` row each (``root``: the root's row id); return the last game id.

    Game ids are allocated here, at commit: a row without an id takes the next free one, and so does a
    row whose id another writer of the file logged meanwhile (two training runs of one file each numbered
    their next game from the same last id); the nodes this transaction added for it (row ids above
    ``since``) are stamped with the id it got. So two writers queue and add, games included.
    """
    if not games:
        return 0
    for row in games:  # every save path: in process, the writer process, the parallel writer, merges
        if not set(row) <= set(GAME_FIELDS) or "moves" not in row:
            raise ValueError(f"bad game row {dict(row)!r}: give 'moves' and only the keys {', '.join(GAME_FIELDS)}")
        GameRow(**row)
    asked = [int(row["id"]) for row in games if row["id"] is not None]
    marks = ",".join("?" * len(asked))
    taken = {i for (i,) in conn.execute(f"SELECT id FROM games WHERE id IN ({marks})", asked)} if asked else set()
    last = conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0
    next_id, fresh = last + 1, max([last, *asked]) + 1
    for row in games:
        if row["id"] is not None and int(row["id"]) in taken:  # above every id asked: never another row's nodes
            old, row["id"] = int(row["id"]), fresh
            if since is not None:
                conn.execute("UPDATE nodes SET created_game = ? WHERE created_game = ? AND id > ?",
                             (row["id"], old, since))
        elif row["id"] is None:
            row["id"] = next_id
        next_id = max(next_id, int(row["id"]) + 1)
        fresh = max(fresh, next_id)
    now = snapshot(conn, root, counts)
    bulk.insert_records(conn, "games", games)
    bulk.insert_records(conn, "history", [{"game_id": row["id"], **now} for row in games])
    return max(int(row["id"]) for row in games)


def snapshot(conn: sqlite3.Connection, root: int, counts: list[int]) -> dict[str, Any]:
    """A ``history`` row but its game id: the tree's size now (``counts``: nodes per depth) and its root's children
    (``move: [nb_visit, nb_win, nb_draw]``, and the value sum fourth where it is not 0)."""
    visits = conn.execute("SELECT nb_visit FROM nodes WHERE id = ?", (root,)).fetchone()[0]
    children = {
        move: [v, w, d, s] if s else [v, w, d] for move, v, w, d, s in conn.execute(
            "SELECT move, nb_visit, nb_win, nb_draw, value_sum FROM nodes WHERE parent_id = ? ORDER BY id", (root,)
        )
    }
    return {"nodes": sum(counts), "max_depth": len(counts) - 1, "root_visits": visits,
            "depth_counts": json.dumps(counts), "root_children": json.dumps(children), "saved_at": now()}


def first_rows(conn: sqlite3.Connection, tree: Tree) -> list[TreeNode]:
    """Fill a new file (in :func:`~treelab.store.dbfile.writing`'s transaction for one) with the schema and
    ``tree``'s nodes, numbered breadth first from 1; return the nodes in that order."""
    new, parents = bulk.breadth_first(tree.root)  # numbered anew: see treelab.store.bulk
    create(conn, lambda: bulk.write(conn, new, parents, 1))
    movers.write(conn, tree, new, 1)
    values.write_new(conn, tree, new, 1)
    if positiontable.keeps(tree):  # only a tree whose searches read it pays for the table
        positiontable.write_tree(conn, tree, new)
    return new


def meta_rows(conn: sqlite3.Connection, run: Mapping[str, str], *, tree_id: str | None, generation: int, game: str,
              counts: list[int], created: bool) -> None:
    """Write the ``meta`` rows of a save: ``run`` (:func:`run_meta`), the tree's id, save count, game and nodes
    per depth, when (and, for a new file, ``created``, when it was created)."""
    info = {**run, "tree_id": tree_id, "generation": str(generation), "game": game,
            "depth_counts": json.dumps(counts), "saved_at": now()}
    if created:
        info["created_at"] = info["saved_at"]
    put_meta(conn, info)


def put_meta(conn: sqlite3.Connection, info: Mapping[str, str | None]) -> None:
    """Write ``info`` into ``meta`` (a key given replaces its row): every save path's one statement for it."""
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", info.items())


def run_meta(tree: Tree) -> dict[str, str]:
    """The ``meta`` rows every save of ``tree`` writes about how it grows: its ``c``, its search's
    ``statistics`` and treelab's version."""
    return {"c": repr(float(tree.c)), "treelab_version": _version(), "statistics": tree.statistics}


def save(
    tree: Tree,
    db: DbPath,
    *,
    games: Iterable[Mapping[str, Any]] = (),
    extra: Callable[[sqlite3.Connection], object] | None = None,
) -> int:
    """Save ``tree`` to the SQLite file ``db`` in one transaction.

    A new (or empty) file gets the schema and every node. The database the
    tree was loaded from or last saved to gets what changed since the tree's
    last save or load, as *increments*: each changed node adds
    ``count - baseline`` to its row (:attr:`Tree.baselines`), and each new node
    is inserted. So two writers of one file (``treelab analyse --db`` while
    ``treelab train`` writes it) queue (SQLite's busy timeout) and merge: when
    someone else saved since, new nodes whose ``(parent, move)`` the file holds
    already are added to that row, and every count is the exact sum. A proof
    that contradicts the file's proof of the same node is refused (a wrong
    proof is the worst bug there is), leaving the file as it was. Any other
    treelab database is refused. On any error the file and the tree's record
    of unsaved changes stay as they were.

    Args:
        tree: the tree to save.
        db: the database file.
        games: training games to log, dicts with the keys of :data:`GAME_FIELDS`
            (``moves`` required; ``id`` defaults to the next free one). Each also
            gets a ``history`` row with the tree's size after this save.
        extra: called with the connection inside the same transaction, after the
            games are logged (merges and parallel training record where games came from).

    Returns:
        The number of node rows written.

    Raises:
        StoreError: another tree's database, or growth under a node whose
            children were not loaded.
        ProofConflictError: a proof that contradicts the file's.
        NotATreelabDatabaseError, GameMismatchError, SchemaVersionError: see :mod:`treelab.store.schema`.
    """
    rows = [game_row(tree.game, row) for row in games]
    name = display(db)
    merged = False
    with writing(db, kept_of(tree)) as (conn, meta):
        binding = binding_of(tree)
        if meta is None:  # a new file: everything
            tree_id: str | None = secrets.token_hex(8)
            generation = 0
            new = first_rows(conn, tree)
            counts = list(tree.depth_counts) if sum(tree.depth_counts) == len(new) else _add_counts([], new)
            written = len(new)
        else:  # what changed, as one Delta, through the one write path (deltas.apply)
            tree_id, generation, merged = check_update(conn, tree, meta, binding, name)
            delta, new = changes(tree)
            top = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
            ids, fresh, _ = apply(conn, delta, top=top, name=name, grown=None if merged else _NONE)
            counts = depth_counts(stored_counts(conn, meta), delta.depths[fresh])
            written = len(delta)
        logged = _log_games(conn, tree, rows, counts, None if meta is None else top)
        if extra is not None:
            extra(conn)
        meta_rows(conn, run_meta(tree), tree_id=tree_id, generation=generation + 1, game=tree.game.name,
                  counts=counts, created=meta is None)
        top = conn.execute("SELECT max(id) FROM nodes").fetchone()[0] or 0
        conn.execute("COMMIT")
    if meta is None:  # committed: the nodes take the ids they were written with
        bulk.renumber(new, 1)
    else:
        renumber(new, ids.tolist())
    if meta is None or binding is None:
        cut_of(tree).clear()  # the new file holds exactly this tree
        binding = Binding(Path(db).resolve(), tree_id, last_game=last_game(tree))
        bind(tree, binding)
    binding.generation, binding.path = generation + 1, Path(db).resolve()
    binding.foreign = binding.foreign or merged
    binding.last_game = max(binding.last_game, logged)
    tree.mark_saved(next_id=top + 1)
    return written


@contextmanager
def kept_open(tree: Tree) -> Iterator[Tree]:
    """Keep the connection of ``tree``'s saves open until the block ends (a training loop).

    Every :func:`save` is still its own transaction, and a crash loses nothing
    committed. Between saves SQLite keeps its page cache, and the log is not
    folded into the file after every save (it is at the block's end, and
    whenever it grows past SQLite's checkpoint size): a save per game on a
    million-node file costs about a quarter less (``benchmarks/growth.py``).
    """
    kept = KeptConnection()
    keep(tree, kept)
    try:
        yield tree
    finally:
        keep(tree, None)
        kept.close()


def _load(db: DbPath, path: Any, depth: int | None, game: str | Game | None) -> Tree:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise ValueError(f"depth {depth!r} is not a whole number >= 0: give levels below the path, or None")
    name = display(db)
    wanted = None if game is None else find_game(game).name
    searchable = wanted is not None  # a tree to search in (open_tree): every move must be a label of the game
    with reading(db, wanted) as (conn, meta):
        tree = Tree(meta["game"], c=float(meta.get("c", SQRT2)))
        tree.statistics = meta.get("statistics", "classic")
        tree.depth_counts = []
        labels = tree.labels(path)
        if not labels and depth is None:  # every page read once: a 2 MB page cache would only stay in memory
            conn.execute("PRAGMA cache_size = -128")
        root = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()
        if root is None:
            raise NotATreelabDatabaseError(f"{name!r} has no root node: it is damaged, or not a treelab tree")
        chain = [root[0]]
        for i, label in enumerate(labels):
            row = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (chain[-1], label))
            found = row.fetchone()
            if found is None:
                raise PathNotFoundError(
                    f"path {''.join(labels)!r} is not in {name!r} (no node {''.join(labels[: i + 1])!r}): "
                    "check the moves, or train deeper"
                )
            chain.append(found[0])
        top = conn.execute("SELECT max(id) FROM nodes").fetchone()[0]
        nodes: dict[int, TreeNode] | list[Any]
        if not labels and depth is None:  # a list indexed by id, unless ids are sparse: memory follows rows
            count = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]  # a scan: whole loads only
            nodes = [None] * (top + 1) if 0 <= top < 2 * count + 1024 else {}
            rows = conn.execute(f"SELECT {_COLUMNS}, 0 FROM nodes AS n ORDER BY n.id")
            bulk.build(tree, rows, nodes, labels=searchable)
        else:
            nodes = {}
            marks = ",".join("?" * (len(chain) - 1))
            above = conn.execute(
                f"SELECT {_COLUMNS}, 0 FROM nodes AS n WHERE n.id IN ({marks}) ORDER BY n.id", chain[:-1]
            )
            bulk.build(tree, above, nodes, labels=searchable)
            limit = depth if depth is not None else 1 << 62
            bulk.build(tree, conn.execute(_SUBTREE, (chain[-1], limit, limit)), nodes, labels=searchable)
            wide = conn.execute(f"SELECT parent_id FROM nodes WHERE parent_id IN ({marks}) "
                                "GROUP BY parent_id HAVING count(*) > 1", chain[:-1])
            cut_of(tree).update(nodes[pid] for (pid,) in wide)
        _proofs(conn, nodes, name)
        movers.read(conn, tree, nodes, name)
        values.read(conn, tree, nodes, name)
        tree.root, tree.size = nodes[chain[0]], sum(tree.depth_counts)
        bind(tree, Binding(Path(db).resolve(), meta.get("tree_id"), int(meta.get("generation", 0)), depth,
                           tree.game.notation(tree.game.parse(labels)),
                           last_game=conn.execute("SELECT max(id) FROM games").fetchone()[0] or 0))
    tree.mark_saved(next_id=top + 1)
    return tree


def _proofs(conn: sqlite3.Connection, nodes: dict[int, TreeNode] | list[Any], name: str) -> None:
    """Give the loaded nodes their proofs as :class:`~treelab.nodes.Proof` values (the rows hold 1, 0, -1)."""
    if isinstance(nodes, dict):  # a partial load: few nodes
        found = [(node.node_id, node.proven) for node in nodes.values() if node.proven is not None]
    else:  # a whole load: the few proven rows, one scan
        found = conn.execute("SELECT id, proven FROM nodes WHERE proven IS NOT NULL").fetchall()
    for nid, value in found:
        try:
            nodes[nid].proven = Proof.of(value)
        except ValueError as exc:
            raise NotATreelabDatabaseError(f"{name!r} is damaged: node id {nid}: {exc}") from None


def load(db: DbPath, path: Any = None, depth: int | None = None) -> Tree:
    """Load the tree in ``db``: all of it, or the subtree at ``path`` down to ``depth`` levels.

    A partial load also holds the nodes from the root down to ``path`` (so
    ``tree.find(path)`` works and the root is the real root). Nodes whose
    children were not loaded are in :func:`~treelab.store.binding.cut_of`; a later save refuses
    new nodes under them.

    Args:
        db: the database file (never changed by loading).
        path: a move sequence (``"44"``, ``"4,4"``, ``"/root/4/4"``); None for the root.
        depth: levels below ``path`` to load; None for all.

    Raises:
        StoreError: no such file (and its subclasses, see :mod:`treelab.store.schema`).
        PathNotFoundError: ``path`` is not stored.
    """
    return _load(db, path, depth, None)


_KEEPING: list[dict[Path, Tree]] = []
"""The open :func:`reusing_trees` blocks' trees, by resolved file path (innermost last)."""


@contextmanager
def reusing_trees() -> Iterator[None]:
    """Within the block, :func:`open_tree` hands back the whole tree it opened for a file before, instead of
    loading it again, while the file is as that tree last saved it (its ``tree_id`` and save counter, no one
    else's save since, nothing unsaved in the tree); PUCT's waiting moves (``tree.pending``) are dropped, as a
    load has none, so every node is evaluated again (by the newer model) before its children's priors are read.

    The learning loop plays in steps between refits, each a :func:`treelab.train` that opens the database:
    a tree of millions of nodes is then loaded once, not at every step. The trees go with the block.
    """
    scope: dict[Path, Tree] = {}
    _KEEPING.append(scope)
    try:
        yield
    finally:
        _KEEPING.remove(scope)


def _kept_tree(db: DbPath, game: Game) -> Tree | None:
    """The tree a :func:`reusing_trees` block keeps for ``db``, if the file is as it last saved it."""
    tree = _KEEPING[-1].get(Path(db).resolve()) if _KEEPING else None
    binding = binding_of(tree) if tree is not None else None
    if (tree is None or binding is None or binding.foreign or binding.depth is not None or binding.subtree
            or tree.game.name != game.name or tree.new_nodes or tree.baselines or tree.value_baselines):
        return None
    try:
        with reading(db, game.name) as (conn, meta):
            (top,) = conn.execute("SELECT max(id) FROM nodes").fetchone()
    except (sqlite3.Error, OSError, TreelabError):
        return None
    if meta.get("tree_id") != binding.tree_id or meta.get("generation") != str(binding.generation):
        return None
    tree.mark_saved(next_id=int(top) + 1)  # a writer process's run left local ids counting: the file's next
    tree.pending.clear()  # every node is evaluated afresh (by a newer model, maybe), as after a load
    return tree


def open_tree(db: DbPath, game: str | Game, *, c: float | None = None, path: Any = None) -> Tree:
    """The tree of ``game`` in ``db`` if the file exists, else a new tree that will create it.

    Args:
        db: the database file.
        game: the game the tree must be of.
        c: the exploration constant to use (None: the stored one, or sqrt(2) for a new tree).
        path: load only what a search at this position needs: the whole subtree at
            the longest stored prefix of ``path``, and the nodes from the root down
            to it (a search from a mid-game position then reads a small part of a
            huge file). None loads the whole tree.

    Raises:
        GameMismatchError: ``db`` holds a tree of another game.
    """
    tree = _open_tree(db, game, c=c, path=path)
    if _KEEPING and path is None:
        _KEEPING[-1][Path(db).resolve()] = tree
    return tree


def _open_tree(db: DbPath, game: str | Game, *, c: float | None, path: Any) -> Tree:
    """:func:`open_tree` without the keeping."""
    if _KEEPING and path is None and Path(db).exists():
        kept = _kept_tree(db, find_game(game))
        if kept is not None:
            if c is not None:
                kept.c = c
            return kept
    if Path(db).exists() and not is_empty(db):
        the_game = find_game(game)
        labels = [the_game.label(m) for m in the_game.parse(path)]
        tree = None
        for k in range(len(labels), 0, -1):  # the deepest stored prefix of the path
            try:
                tree = _load(db, labels[:k], None, the_game)
                break
            except PathNotFoundError:
                continue
        if tree is None:
            tree = _load(db, None, None, the_game)
        if c is not None:
            tree.c = c
        return tree
    tree = Tree(game, c=SQRT2 if c is None else c)
    bind(tree, Binding(Path(db).resolve(), None))
    return tree


wire("save", save)  # Tree.save (the core does not import the store)
