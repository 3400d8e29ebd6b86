"""What a worker's tree gained, as arrays, written straight into the file by one writer.

Parallel training (:mod:`treelab.play.training.parallel`) has each worker grow its own
copy of the stored tree. Every node it loaded carries its row's id; the
nodes it creates are numbered from :data:`LOCAL` up, far above any row id, so
the two never mix. After each game :func:`take` hands on a :class:`Delta`:
the count increments of the stored nodes it changed (by row id) and its new
nodes (parent, move, depth, counts), as numpy arrays and flat lists, a few
pickles however many nodes. The writer adds deltas to the file with
:func:`apply`, in the caller's transaction, without a tree in memory:

- stored nodes: ``nb_* = nb_* + ?`` by id;
- new nodes: inserted with ids the writer assigns, unless another worker
  stored the same ``(parent, move)`` since this worker's snapshot: then the
  counts are added to that row (and so on down the new node's children);
- a proof that contradicts the file's is a :class:`~treelab.errors.ProofConflictError`;
- each node's counts go to its position's row of ``positions`` too, in a file that keeps that table
  (:mod:`.positiontable`: graph statistics).

:func:`apply` returns every new node's row id; the worker gives its nodes those ids
(:func:`renumber`), so its next delta names them as stored nodes. Additions commute.

The way back is :func:`share_top`: now and then a worker reads the file's counts and proofs of the top
levels into its copy, so that its search sees the other workers' games.
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain, compress, zip_longest
from operator import attrgetter
from typing import Any

import numpy as np

from ..errors import ProofConflictError, StoreError
from ..games import find_game
from ..nodes import Proof, proof_word
from ..speedups import compiled
from ..tree import Tree, TreeNode
from . import bulk, movers, positiontable
from .dbfile import reading
from .schema import DbPath
from .values import Values, add_values, adding, collect, columns

__all__ = [
    "COUNT_COLUMNS", "LOCAL", "AssignedIds", "Delta", "apply", "depth_counts", "renumber", "share_top", "stamp",
    "start", "take",
]

# -- a tree's changes, as arrays, written by one writer ----------------------------------------------------------------
LOCAL = 1 << 40
"""The first ``node_id`` of a worker's own nodes (row ids of the file stay far below it)."""

_UNPROVEN = -9
"""The ``proven`` column's value for a node without a proof (proofs are 1, 0, -1)."""

COUNT_COLUMNS = ("nb_visit", "nb_win", "nb_draw", "nb_select")
"""A node's counts as :attr:`Delta.known_counts` lists them (and :attr:`treelab.tree.Tree.baselines` holds them):
the one list of the ``nodes`` columns that add up (a new count column goes here, in ``_ADD`` and in the rows
:func:`apply` inserts; ``treelab merge`` reads the columns named here)."""

_NAME, _CREATED, _PROVEN, _MOVER = map(attrgetter, ("name", "created_game", "proven", "mover"))

_ADD = f"UPDATE nodes SET {adding(COUNT_COLUMNS)} WHERE id = ?"

_PROVE = "UPDATE nodes SET proven = coalesce(proven, ?) WHERE id = ?"

_FIND = ("SELECT a.key, n.id, n.proven FROM temp.asked AS a JOIN main.nodes AS n "
         "ON n.parent_id = a.parent_id AND n.move = a.move")


@dataclass(frozen=True)
class Delta:
    """What a worker's tree gained since its last :func:`take`: stored nodes' increments and new nodes."""

    known: np.ndarray
    """Row ids of the stored nodes that changed (int64)."""
    known_counts: np.ndarray
    """What to add to each of them: ``(nb_visit, nb_win, nb_draw, nb_select)`` rows (int64, ``len(known) x 4``)."""
    parents: np.ndarray
    """Each new node's parent: a row id, or (``>= first``) the local id of a new node before it (int64)."""
    first: int
    """The local id of new node 0 (new node ``i`` has local id ``first + i``)."""
    moves: Sequence[str]
    """Each new node's move label."""
    depths: np.ndarray
    """Each new node's depth (int64)."""
    counts: np.ndarray
    """Each new node's counts, as in :attr:`known_counts`."""
    created: Sequence[int | None]
    """Each new node's ``created_game``."""
    proofs: Sequence[tuple[int, int]]
    """``(position, proof)`` of the proven nodes: positions in ``known``, then new node ``i`` at ``len(known) + i``."""
    movers: Sequence[int] | None
    """Each new node's mover (games whose players need not alternate), else None."""
    seen: int = -1
    """The file's save count (``meta.generation``) the worker's copy was loaded at (-1: unknown)."""
    keys: Sequence[str] | None = None
    """The distinct position keys of the nodes, ``known``'s and the new ones' (None: a tree whose files do not keep
    ``positions``, :func:`~treelab.store.positiontable.keeps`; or a merge, which rebuilds it)."""
    position_counts: np.ndarray | None = None
    """What the nodes add to each key's row, ``(nb_visit, player 1's wins, nb_draw)`` summed (:mod:`.positiontable`)."""
    key_of_new: np.ndarray | None = None
    """Each new node's position in :attr:`keys` (int64): one more path to that position where it is inserted."""
    values: Values | None = None
    """Value sums to add and priors, positioned as :attr:`proofs` (None: none; :mod:`treelab.store.values`)."""
    position_values: np.ndarray | None = None
    """What the nodes add to each key's ``value_sum``, player 1's, summed as :attr:`position_counts` (None:
    nothing)."""

    def __len__(self) -> int:
        return len(self.known) + len(self.moves)


def start(tree: Tree) -> Tree:
    """Make a freshly loaded ``tree`` a worker's copy: nothing to hand on yet, new nodes numbered from :data:`LOCAL`."""
    if tree.next_id > LOCAL:
        raise StoreError(f"the tree holds node ids up to {tree.next_id - 1}, past {LOCAL}: not a worker's copy")
    tree.mark_saved(next_id=LOCAL)
    return tree


def stamp(tree: Tree, game_id: int | None) -> None:
    """Name the game that made ``tree``'s new nodes: each node made since the last save, load or take (the root
    excepted: it comes before every game) gets ``created_game = game_id`` (None: a game that is not logged).

    A save or take logs at most one game (training, its workers, Ray, terminal play), so whoever hands a game's
    changes to a writer stamps them with its id first; the ``nodes.created_game`` column is then that game's id.
    """
    root = tree.root
    for node in tree.new_nodes:
        if node is not root:
            node.created_game = game_id


def take(tree: Tree, seen: int = -1) -> tuple[Delta, list[TreeNode]]:
    """What ``tree`` gained since the last take (or :func:`start`), and its new nodes (to :func:`renumber` later).

    ``seen``: the file's save count when the tree was loaded (-1: unknown).

    Nodes of an earlier take whose row ids are not known yet (:func:`renumber`
    has not run) are named by their local ids: the writer maps them with the
    :class:`AssignedIds` of that take. The tree then counts as handed on: its change
    tracking starts again empty.
    """
    delta, new = changes(tree, seen)
    tree.mark_saved()
    return delta, new


def changes(tree: Tree, seen: int = -1) -> tuple[Delta, list[TreeNode]]:
    """What ``tree`` gained since its last save, load or take, and its new nodes; the tree is left as it was.

    The new nodes are those numbered from ``tree``'s first unsaved id on (a worker's
    copy: from :data:`LOCAL`, see :func:`start`), in creation order (parents first).
    """
    collecting = gc.isenabled()
    gc.disable()  # the arrays' many small objects would start collections that walk the new nodes again
    try:
        new = list(tree.new_nodes)
        base = tree.baselines
        keys = list(base)
        ids = columns(keys, ("node_id",))[:, 0]
        mask = ids < (new[0].node_id if new else tree.next_id)  # the changed nodes made before (the rest are new)
        known = list(compress(keys, mask.tolist()))
        known_counts = columns(known, COUNT_COLUMNS) - _baselines(base, known)
        table = columns(new, ("parent.node_id", "depth", *COUNT_COLUMNS))
        proven = columns(known + new, ("proven",), none=_UNPROVEN)[:, 0]  # position len(known) + i: new node i
        proofs = [(int(i), int(proven[i])) for i in np.flatnonzero(proven != _UNPROVEN)]
        delta = Delta(
            known=ids[mask],
            known_counts=known_counts,
            parents=table[:, 0].copy(),
            first=new[0].node_id if new else max(tree.next_id, 1),
            moves=list(map(_NAME, new)),
            depths=table[:, 1].copy(),
            counts=table[:, 2:].copy(),
            created=list(map(_CREATED, new)),
            proofs=proofs,
            movers=None if tree.game.alternating else list(map(_MOVER, new)),
            seen=seen,
            values=collect(tree, known, new),
            **(positiontable.delta_fields(tree, known + new, known_counts, table[:, 2:5])
               if positiontable.keeps(tree) else {}),  # keys only for a file that keeps ``positions``
        )
        if new and new[-1].node_id - new[0].node_id != len(new) - 1:
            raise StoreError("the tree's new nodes are not numbered in order: save or start() the tree first")
    finally:
        if collecting:
            gc.enable()
    return delta, new


@dataclass(frozen=True)
class AssignedIds:
    """A stored delta's local ids and the row ids they got: a later delta of the same tree may name those nodes."""

    first: int
    """The local id of the delta's new node 0."""
    ids: np.ndarray
    """The row id of each of its new nodes (int64)."""

    def rows(self, values: np.ndarray) -> np.ndarray:
        """``values`` (node ids) with this delta's local ids replaced by their row ids."""
        hit = (values >= self.first) & (values < self.first + len(self.ids))
        if not hit.any():
            return values
        out = values.copy()
        out[hit] = self.ids[values[hit] - self.first]
        return out


def _baselines(base: Mapping[TreeNode, tuple[int, ...]], nodes: list[TreeNode]) -> np.ndarray:
    """The baseline counts of ``nodes`` as an int64 array, a row each (as :data:`COUNT_COLUMNS`)."""
    if compiled is not None:
        flat = np.frombuffer(compiled.baselines(base, nodes), dtype=np.int64)
    else:
        flat = np.fromiter(chain.from_iterable(map(base.__getitem__, nodes)), dtype=np.int64,
                           count=len(nodes) * len(COUNT_COLUMNS))
    return flat.reshape(len(nodes), len(COUNT_COLUMNS))


def renumber(nodes: Sequence[TreeNode], ids: Sequence[int]) -> None:
    """Give the nodes a :func:`take` returned the row ids :func:`apply` stored them under."""
    for node, nid in zip(nodes, ids, strict=True):
        node.node_id = nid


def apply(conn: sqlite3.Connection, delta: Delta, *, top: int, name: str, created: bool = True,
          grown: np.ndarray | None = None, earlier: AssignedIds | None = None,
          own_above: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add ``delta`` to the file in the caller's transaction; return the new nodes' row ids and more (below).

    Args:
        conn: a connection inside a write transaction.
        delta: what a worker's tree gained.
        top: the largest row id in the file (new rows are numbered on from it).
        name: the file, as errors name it.
        created: keep the new nodes' ``created_game`` (False: NULL, a game that was not logged).
        grown: the stored rows that may have gained children since the worker's copy was loaded
            (ids; None: any may). A new node under another stored row is surely new.
        earlier: the same tree's previous delta, stored already: its ``first`` local id and its
            nodes' row ids. ``delta`` may name those nodes by local id (its tree took it before
            it had the row ids); every other node it names must be stored.
        own_above: the rows above this id were all inserted by earlier deltas of the same tree in this
            transaction (a merge of one file): a new node under one of them is surely new.

    Returns:
        The row id of every new node of ``delta`` (in order), a mask of those inserted
        (the rest were added to rows another worker had stored), and the rows stored
        before that were given new children or merged into (ids, some more than once).

    Raises:
        ProofConflictError: a proof contradicts the file's (the caller rolls back).
        StoreError: a stored node of ``delta`` is not in the file.
    """
    if earlier is not None:
        delta = replace(delta, known=earlier.rows(delta.known), parents=earlier.rows(delta.parents))
    n = len(delta.moves)
    parents, first = delta.parents, delta.first
    local = parents >= first  # a new node before it (a delta names its own new nodes from ``first`` on)
    ppos = np.where(local, parents - first, -1)
    if (delta.known >= first).any() or (n and ((ppos[local] >= np.arange(n)[local]) | (ppos[local] < 0)).any()):
        raise StoreError("a delta names nodes of a game that is not stored, or a node before its parent: "
                         "the delta is damaged, or came out of order")
    ids = np.zeros(n, dtype=np.int64)
    found = np.zeros(n, dtype=bool)
    stored_proof: dict[int, Any] = {}
    ask = np.nonzero(~local)[0]  # new nodes under stored rows: another worker may have stored them since
    if grown is not None and len(ask):
        ask = ask[np.isin(parents[ask], grown, kind="table" if len(grown) else None)]  # row ids: a lookup table
    if own_above is not None and len(ask):
        ask = ask[parents[ask] <= own_above]
    moves = delta.moves
    while len(ask):
        where = np.where(local[ask], ids[np.maximum(ppos[ask], 0)], parents[ask])  # the parents' row ids
        hits = []
        for i, nid, proof in _find(conn, ask.tolist(), where.tolist(), [moves[i] for i in ask.tolist()]):
            ids[i], found[i], stored_proof[i] = nid, True, proof
            hits.append(i)
        ask = np.nonzero(local & np.isin(ppos, hits))[0] if hits else ask[:0]  # their new children, next
    fresh = ~found
    ids[fresh] = top + 1 + np.arange(int(fresh.sum()), dtype=np.int64)
    k = len(delta.known)
    if delta.proofs:
        _check_proofs(conn, delta, ids, found, stored_proof, name)
    grew = np.zeros(0, dtype=np.int64)
    values = delta.values
    if n:
        pids = np.where(local, ids[np.maximum(ppos, 0)], parents)
        # rows given children, and rows this worker learned of by merging (it knows none of their children)
        grew = np.concatenate([pids[fresh & (~local | found[np.maximum(ppos, 0)])], ids[found]])
        ids_l = ids.tolist()
        proven: list[Any] = [None] * n
        for pos, proof in delta.proofs:
            if pos >= k:
                proven[pos - k] = proof
        keep = fresh.tolist()
        inserted, values = _inserted_values(values, k, fresh)  # fresh rows take theirs in the INSERT
        bulk.insert_grouped(conn, _new_rows(ids, pids, delta, proven if delta.proofs else None, created,
                                            fresh if found.any() else None, inserted),
                            valued=inserted is not None)  # 50 rows a statement
        if delta.movers is not None and any(keep):
            conn.execute(movers.TABLE)  # the movers DDL, written once (:mod:`.movers`)
            conn.executemany("INSERT INTO movers (node_id, mover) VALUES (?, ?)",
                             compress(zip(ids_l, delta.movers, strict=True), keep))
    targets = np.concatenate([delta.known, ids[found]])
    amounts = np.concatenate([delta.known_counts, delta.counts[found]]) if n else delta.known_counts
    if len(targets):
        before = conn.total_changes
        conn.executemany(_ADD, np.column_stack((amounts, targets)).tolist())  # (visit, win, draw, select, id) rows
        if conn.total_changes - before != len(targets):
            raise StoreError(f"{name!r} lacks nodes a worker had loaded from it: was the file replaced mid-run?")
    if delta.proofs or values is not None:
        where = np.concatenate([delta.known, ids]).tolist()
        conn.executemany(_PROVE, [(p, where[i]) for i, p in delta.proofs])
        add_values(conn, values, where)
    if delta.keys is not None and delta.position_counts is not None and delta.key_of_new is not None:
        if positiontable.exists(conn):
            positiontable.add_delta(conn, delta.keys, delta.position_counts, delta.key_of_new, fresh,
                                    delta.position_values)
        else:  # the first save that keeps it: built from the nodes, these included, then kept in step
            (game,) = conn.execute("SELECT value FROM meta WHERE key = 'game'").fetchone()
            positiontable.rebuild(conn, find_game(game))
    elif positiontable.exists(conn):
        positiontable.drop(conn)  # a delta without keys would leave it behind: rebuilt when next needed
    return ids, fresh, grew


def _inserted_values(values: Values | None, known: int, fresh: np.ndarray
                     ) -> tuple[tuple[np.ndarray, np.ndarray] | None, Values | None]:
    """Split ``values`` into the value sums and priors of the new nodes inserted now (``fresh``), one each (0.0 and
    NaN for none) to go in their INSERT, and the rest (stored nodes, and new ones another worker had stored), added
    by :func:`~treelab.store.values.add_values`: a PUCT tree's new nodes nearly all have a prior, and an UPDATE a
    row after its INSERT cost the writer as much again."""
    if values is None or not fresh.any():
        return None, values
    at = values.positions - known
    mine = at >= 0
    mine[mine] = fresh[at[mine]]
    if not mine.any():
        return None, values
    sums = np.zeros(len(fresh), dtype=np.float64)
    priors = np.full(len(fresh), np.nan, dtype=np.float64)
    sums[at[mine]], priors[at[mine]] = values.sums[mine], values.priors[mine]
    rest = ~mine
    left = Values(values.positions[rest], values.sums[rest], values.priors[rest]) if rest.any() else None
    return (sums, priors), left


def _new_rows(ids: np.ndarray, pids: np.ndarray, delta: Delta, proven: list[Any] | None, created: bool,
              keep: np.ndarray | None, values: tuple[np.ndarray, np.ndarray] | None = None) -> list[tuple[Any, ...]]:
    """The ``nodes`` rows of ``delta``'s new nodes (those ``keep`` marks; None: all) given ``ids`` and parent ids,
    as flat tuples of :data:`~treelab.store.bulk.WIDTH` rows (the last maybe fewer), made in C when built; with
    ``values`` (each new node's value sum and prior, NaN: none) each row ends with them."""
    if compiled is not None:
        extra = () if values is None else values
        return compiled.delta_rows(ids, pids, delta.depths, delta.counts, list(delta.moves),  # type: ignore[no-any-return]
                                   proven, list(delta.created) if created else None, keep, bulk.WIDTH, *extra)
    n = len(delta.moves)
    columns = [ids.tolist(), pids.tolist(), delta.moves, delta.depths.tolist(), *delta.counts[:, :3].T.tolist(),
               proven or [None] * n, delta.created if created else [None] * n, delta.counts[:, 3].tolist()]
    if values is not None:
        columns += [values[0].tolist(), [None if p != p else p for p in values[1].tolist()]]  # NaN: no prior
    rows = zip(*columns, strict=True)
    flat = list(chain.from_iterable(compress(rows, keep.tolist()) if keep is not None else rows))
    step = (bulk.ROW if values is None else bulk.VALUED_ROW) * bulk.WIDTH
    return [tuple(flat[i:i + step]) for i in range(0, len(flat), step)]


def _find(conn: sqlite3.Connection, keys: list[int], parents: list[int], moves: list[str]) -> list[Any]:
    """``(key, id, proven)`` of the rows stored at ``(parents[i], moves[i])``: one join, not a query each."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS asked (key INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL, "
                 "move TEXT NOT NULL)")
    conn.execute("DELETE FROM temp.asked")
    conn.executemany("INSERT INTO temp.asked VALUES (?, ?, ?)", zip(keys, parents, moves, strict=True))
    return conn.execute(_FIND).fetchall()


def _check_proofs(conn: sqlite3.Connection, delta: Delta, ids: np.ndarray, found: np.ndarray,
                  stored_proof: dict[int, Any], name: str) -> None:
    """Refuse proofs of ``delta`` that contradict the file's (stored nodes, and new ones another worker stored)."""
    k = len(delta.known)
    for pos, proof in delta.proofs:
        if pos < k:
            row = conn.execute("SELECT proven FROM nodes WHERE id = ?", (int(delta.known[pos]),)).fetchone()
            stored = None if row is None else row[0]
        elif found[pos - k]:
            stored = stored_proof.get(pos - k)
        else:
            continue
        if stored is not None and stored != proof:
            nid = int(delta.known[pos]) if pos < k else int(ids[pos - k])
            raise ProofConflictError(
                f"{name!r} holds proof {proof_word(stored)!r} for {_sequence(conn, nid)!r} (node id {nid}) but "
                f"this tree proved {proof_word(proof)!r}: one of them is wrong, so nothing was saved; "
                "check both runs' games")


def _sequence(conn: sqlite3.Connection, nid: int) -> str:
    """The move path of row ``nid``, joined by ``/`` as :attr:`~treelab.nodes.TreeNode.sequence` is."""
    moves = [move for (move,) in conn.execute(
        "WITH RECURSIVE up(id, parent_id, move, d) AS (SELECT id, parent_id, move, 0 FROM nodes WHERE id = ? "
        "UNION ALL SELECT n.id, n.parent_id, n.move, up.d + 1 FROM nodes AS n JOIN up ON n.id = up.parent_id) "
        "SELECT move FROM up WHERE parent_id IS NOT NULL ORDER BY d DESC", (nid,))]
    return "/".join(moves) if moves else "root"


def depth_counts(counts: list[int], depths: np.ndarray) -> list[int]:
    """``counts`` (nodes per depth) with nodes of ``depths`` added, grown as needed."""
    more = np.bincount(depths).tolist() if len(depths) else []
    return [a + b for a, b in zip_longest(counts, more, fillvalue=0)]

# -- a worker's copy refreshed from the file ---------------------------------------------------------------------------


def share_top(db: DbPath, tree: Tree, depth: int) -> int:
    """Give ``tree``'s stored nodes down to ``depth`` the file's counts, value sums, proofs and priors: what the other
    workers added there.

    Only for a worker's copy with nothing to hand on (right after :func:`take` or
    :func:`start`): the counts set here are no change of its own, so no delta carries them.

    Returns:
        The nodes refreshed.
    """
    if tree.baselines or tree.new_nodes:
        raise StoreError("share_top needs a copy with nothing to hand on: take() first")
    level, nodes = [tree.root], dict[int, TreeNode]()
    for _ in range(depth + 1):
        nodes.update((n.node_id, n) for n in level if n.node_id < LOCAL)
        level = [kid for n in level for kid in n.children_view]
    with reading(db) as (conn, _):
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM temp.wanted")
        conn.executemany("INSERT INTO temp.wanted VALUES (?)", ((i,) for i in nodes))
        rows = conn.execute("SELECT n.id, n.nb_visit, n.nb_win, n.nb_draw, n.nb_select, n.proven, n.value_sum, "
                            "n.prior FROM temp.wanted AS w JOIN nodes AS n ON n.id = w.id").fetchall()
    priors = tree.priors
    for nid, visits, wins, draws, selects, proven, value, prior in rows:
        node = nodes[nid]
        node.nb_visit, node.nb_win, node.nb_draw, node.nb_select = visits, wins, draws, selects
        if proven is not None and node.proven is None:
            node.proven = Proof.of(proven)
        if value or node.value_sum:
            node.value_sum = float(value)
            tree.valued = tree.valued or bool(value)
        if prior is not None and node not in priors:
            priors[node] = float(prior)
    return len(rows)
