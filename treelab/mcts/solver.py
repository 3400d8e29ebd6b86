"""MCTS-Solver's one proof rule: terminal positions are facts, and facts propagate up.

Winands, Bjornsson & Saito (2008), "Monte-Carlo Tree Search Solver": a
position with a move that is a proven win for the player to move is a proven
win for that player (so a proven loss for the player who moved into it); a
position whose legal moves are all expanded and all proven takes minus the
best of them (a loss if every move loses, a draw if the best draws). When the
player to move is also the one who moved into the position (a double move,
:class:`treelab.tree.MoverTree`), the position takes the best of them instead. Only
game facts are used, so a proof is never wrong. UCT (:mod:`treelab.mcts.uct`) and
PUCT (:mod:`treelab.mcts.puct`) both prove through this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..games import Game
from ..nodes import Proof, TreeNode
from ..tree import Tree

__all__ = ["LegalCount", "propagate", "prove_terminal", "replayed_legal_count"]

LegalCount = Callable[[int], int]
"""``legal_count(i) -> int``: the number of legal moves at ``path[i]`` (only asked when needed)."""


def replayed_legal_count(game: Game, path: Sequence[TreeNode]) -> LegalCount:
    """A :data:`LegalCount` that replays ``path[i]``'s moves from the start (when no states are kept)."""
    return lambda i: len(game.replay(path[i].moves).legal_moves())


def prove_terminal(node: TreeNode, winner: int | None) -> Proof:
    """The proof of a node whose position is over: ``winner`` (1, 2, None = draw) for its mover."""
    return Proof.of_winner(winner, node.mover)


def propagate(tree: Tree, path: Sequence[TreeNode], legal_count: LegalCount, *, first: int) -> None:
    """Prove ``path[first]``, then its ancestors on ``path``, for as long as each becomes proven.

    Stops at the first node that is already proven or cannot be proven yet.
    Every node proven here is marked changed in ``tree`` (saved by the next save).

    Args:
        tree: the tree the path belongs to.
        path: nodes from some ancestor down, each the parent of the next.
        legal_count: the number of legal moves at ``path[i]``.
        first: the index of the first node to try (usually the parent of a newly proven node).
    """
    for i in range(first, -1, -1):
        node = path[i]
        if node.proven is not None:
            return
        kids = node.children_view
        same = bool(kids) and kids[0].mover == node.mover  # the same player moves again (dots and boxes)
        if any(k.proven == Proof.WIN for k in kids):
            proof = Proof.WIN if same else Proof.LOSS  # the player to move here has a winning move
        else:
            values = [k.proven for k in kids if k.proven is not None]
            if len(values) < len(kids) or len(kids) < legal_count(i):
                return
            proof = Proof(max(values)) if same else -max(values)
        tree.mark_dirty(node)
        node.proven = proof
