"""Players on a stored tree: they read the database, and write it only when asked to learn.

An arena player ``uct:...,db=PATH`` searches on the tree stored in ``PATH``.
By default it *reads* it: its searches grow the tree in memory during a game,
and before the next game :func:`revert` puts the tree back exactly as the
database holds it (new nodes dropped, changed counts read back), so every game
of a match starts from the same stored knowledge and the file is never
written. With ``learn=1`` it keeps what it learns: the tree is saved after
every move (one transaction each), as training does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import SpecError, StoreError
from ..games import Game, State
from ..nodes import PARENT_SLOT, children_of, unlink
from ..positions import PositionTable
from ..store.binding import binding_of, cut_of
from ..tree import Tree, TreeNode
from .players import SearchPlayer, Wrapper

__all__ = ["SearchPlayer", "StoredTreePlayer", "revert", "stored_tree"]



def stored_tree(db: str | None, spec: str, game: Game) -> Tree | None:
    """The tree a player spec's ``db=PATH`` names (None without one).

    Raises:
        SpecError: the database holds a tree of another game.
        StoreError: no such database, or not a treelab database.
    """
    if db is None:
        return None
    from ..store.persistence import load

    tree = load(db)
    if tree.game.name != game.name:
        raise SpecError(f"db={db!r} in spec {spec!r} holds a {tree.game.name} tree, not {game.name}")
    return tree


def revert(tree: Tree) -> int:
    """Undo every change since ``tree`` was loaded or last saved; returns the nodes dropped.

    New nodes are unlinked (they are always the last children of their
    parents), changed nodes get back their counts as of the last save (their
    baselines, :meth:`Tree.changed_nodes`), and their proofs are read back from
    the database the tree is bound to.

    Raises:
        StoreError: the tree has no database to go back to.
    """
    from ..store.dbfile import reading
    from ..store.rows import proofs

    binding = binding_of(tree)
    new, changed = list(tree.new_nodes), tree.changed_nodes()
    if not new and not changed:
        return 0
    if binding is None or binding.tree_id is None:
        raise StoreError("this tree has no saved database to go back to: save it first, or start a new tree")
    table = tree.position_table  # a graph search's table goes back too, without reading the file again
    kept = isinstance(table, PositionTable) and table.current and table.undo_unsaved()
    counts, cut = tree.depth_counts, cut_of(tree)
    for node in reversed(new):  # the newest first: each is then the last child of its parent
        parent = getattr(node, PARENT_SLOT)
        assert children_of(parent)[-1] is node, "new nodes come after their parents' stored children"
        unlink(node)
        counts[node.depth] -= 1
        tree.priors.pop(node, None)
        tree.pending.pop(node, None)
        tree.pending.pop(parent, None)  # its moves are evaluated again when next reached
        cut.discard(node)
    while len(counts) > 1 and counts[-1] == 0:
        counts.pop()
    tree.size -= len(new)
    old = {}
    for node, (visits, wins, draws, selected) in changed:
        node.nb_visit, node.nb_win, node.nb_draw, node.nb_select = visits, wins, draws, selected
        old[node.node_id] = node
    for node, value in tree.value_baselines.items():  # value sums as stored (PUCT with an evaluator added some)
        node.value_sum = value
    ids = sorted(old)
    with reading(os.fspath(binding.path)) as (conn, _):
        for nid, proven in proofs(conn, ids):
            old[nid].proven = proven
    tree.mark_saved(next_id=tree.next_id - len(new))
    if kept:
        table.settle()
    return len(new)


class StoredTreePlayer(Wrapper[SearchPlayer]):
    """Wraps a searching player whose tree was loaded from ``db``: reads it, writes it only if ``learn``.

    Args:
        player: the player; its ``tree`` is the stored tree.
        db: the database the tree was loaded from.
        learn: save what the searches learn after every move (False: every game
            starts from the stored tree again, and the file is never written).
    """

    def __init__(self, player: SearchPlayer, db: str | os.PathLike[str], *, learn: bool = False) -> None:
        super().__init__(player)
        self.db = db
        self.learn = learn

    def __getattr__(self, name: str) -> Any:
        """Everything else (``c``, ``limit``, ...) is the wrapped player's."""
        return getattr(self.player, name)

    def new_game(self, game: Game) -> None:
        """Start the next game from the stored tree (unless learning: then it was saved)."""
        tree = self.player.tree
        if tree is not None and not self.learn:
            revert(tree)
        self.player.new_game(game)

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The wrapped player's move; with ``learn`` the tree is saved right after."""
        move = self.player.choose(state, moves)
        tree = self.player.tree
        if self.learn and tree is not None:
            from ..store.persistence import save

            save(tree, self.db)
        return move

    def node(self, moves: Sequence[int]) -> TreeNode | None:
        """The stored node at ``moves``, if held (for reports)."""
        tree = self.player.tree
        return None if tree is None else tree.get(moves)
