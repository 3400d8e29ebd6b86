"""Trees of games whose players need not alternate: every node stores its mover.

In Connect Four and tic-tac-toe the player who moved into a node is the parity
of its depth, so :class:`~treelab.tree.TreeNode` computes it and the tree walk
backs up wins on every other node. Dots and boxes gives a player who closes a
box the next move too, and othello has passes; every game whose
``Game.alternating`` is false (every OpenSpiel game) gets a :class:`MoverTree`
instead (``Tree(game)`` returns one), whose nodes are :class:`MoverNode` s that
keep the mover in one more slot. The movers are saved in the database's
``movers`` table (:mod:`treelab.store.movers`), so a loaded tree knows them
without replaying a game; the built-in games keep the parity path and its speed.
"""

from __future__ import annotations

from typing import Any

from .games import Game
from .tree import Tree, TreeNode

__all__ = ["MoverNode", "MoverTree"]


class MoverNode(TreeNode):
    """A :class:`~treelab.tree.TreeNode` that stores the player who moved into it."""

    __slots__ = ("mover",)

    mover: int  # a slot here, the depth parity's property in TreeNode
    """The player (1 or 2) who made the move into this node (the root: the player not to move first)."""


class MoverTree(Tree):
    """A :class:`~treelab.tree.Tree` whose nodes store their movers (``Tree(game)`` picks it by itself)."""

    node_class = MoverNode

    def __init__(self, game: str | Game, **kwargs: Any) -> None:
        super().__init__(game, **kwargs)
        self.root.mover = 3 - self.game.initial().to_move  # type: ignore[misc]

    def add_child(self, parent: TreeNode, label: str, mover: int | None = None) -> TreeNode:
        """Create the child of ``parent`` reached by ``label``; ``mover`` is the player to move at ``parent``.

        Without ``mover`` (:meth:`Tree.path`, :meth:`Tree.record`) it is read from the game,
        replaying the moves to ``parent``; the search passes it.
        """
        node = super().add_child(parent, label)
        if mover is None:
            mover = self.game.replay(parent.moves).to_move
        elif mover not in (1, 2):
            raise ValueError(f"mover {mover!r} is not 1 or 2 (the player to move at {parent.sequence!r})")
        node.mover = mover  # type: ignore[misc]
        return node
