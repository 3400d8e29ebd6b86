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

Both live in :mod:`treelab.tree` (``Tree(game)`` picks ``MoverTree`` by itself, so the tree module holds it);
this module names them for code that imports them from here.
"""

from __future__ import annotations

from .tree import MoverNode, MoverTree

__all__ = ["MoverNode", "MoverTree"]
