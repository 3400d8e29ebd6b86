"""OpenSpiel's MCTS trees: the ``SearchNode`` tree that ``MCTSBot.mcts_search(state)`` returns.

Both bots give the same tree: the Python ``open_spiel.python.algorithms.mcts.MCTSBot`` and the C++
``pyspiel.MCTSBot``, whose binding exposes ``pyspiel.SearchNode`` with the same fields (``action``,
``player``, ``prior``, ``explore_count``, ``total_reward``, ``outcome``, ``children``). OpenSpiel
backs up returns in [-1, 1]: a child's ``total_reward`` is the sum of the returns of ``player``,
the player who chose its ``action`` (its mover), so it becomes treelab's ``value_sum`` as it is,
each simulation counted as a draw (:mod:`treelab.interop.build`). The search's root is the
exception: its ``player`` is the one *to move* there, so its sum is negated for its mover.

The tree is stored from the game's start: the moves of ``state.history()`` lead to the searched
position, and those nodes (and the searched one) are passed through by every simulation (their
``nb_select`` is 0). A solved node's ``outcome`` (the returns of a proven result) becomes its proof.
"""

from __future__ import annotations

from typing import Any

from ..errors import ImportFormatError, UnsupportedGameError
from ..games import Game, find_game
from ..nodes import TreeNode
from ..tree import Tree
from .build import Builder, Stats

__all__ = ["from_openspiel", "openspiel_game"]


def openspiel_game(state: Any) -> str:
    """The treelab name of the OpenSpiel game of ``state`` (``"openspiel:tic_tac_toe"``)."""
    spiel_game = state.get_game()
    name = spiel_game.get_type().short_name
    params = spiel_game.get_parameters()
    inner = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"openspiel:{name}({inner})" if inner else f"openspiel:{name}"


def from_openspiel(root: Any, state: Any, game: str | Game | None = None) -> Tree:
    """A tree from OpenSpiel's ``SearchNode`` tree ``root``, searched at the ``pyspiel.State`` ``state``.

    Args:
        root: what ``MCTSBot.mcts_search(state)`` returned (the Python or the C++ bot).
        state: the searched position (its history is the path from the game's start).
        game: the treelab game (default: ``openspiel:NAME`` of ``state``'s game, with its parameters).

    Raises:
        ImportFormatError: a move the game forbids, a chance node, counts that do not add up.
        UnsupportedGameError: a game treelab cannot play (chance, simultaneous moves, more players).
    """
    the_game = find_game(game if game is not None else openspiel_game(state))
    builder = Builder(the_game, "OpenSpiel search")
    path, position = builder.start(state.history())
    visits, total = int(root.explore_count), float(root.total_reward)
    to_move = int(root.player) + 1  # the root's sum is for the player to move there
    if to_move not in (1, 2):
        raise UnsupportedGameError(f"the searched position's player {root.player!r} is not 0 or 1: treelab imports "
                                   "two-player games without chance")
    for node in path:
        sign = 1.0 if node.mover == to_move else -1.0
        builder.set(node, Stats(visits=visits, value_sum=sign * total, selected=0,
                                proven=_proof(root, node.mover) if node is path[-1] else None),
                    position, "the searched position" if node is path[-1] else "a move before it")
    stack: list[tuple[Any, TreeNode, Any]] = [(root, path[-1], position)]
    count = 0
    while stack:
        spiel, node, at = stack.pop()
        for kid in spiel.children:
            count += 1
            where = f"node {count} (action {kid.action} under {node.sequence!r})"
            if int(kid.player) < 0:
                raise ImportFormatError(f"OpenSpiel search: {where}: a chance node: treelab imports games "
                                        "without chance")
            child, after = builder.child(node, at, int(kid.action), where)
            mover = int(kid.player) + 1
            if child.mover != mover:
                raise ImportFormatError(f"OpenSpiel search: {where}: player {kid.player} moved, but the game says "
                                        f"player {child.mover - 1}: was it searched in another game?")
            builder.set(child, Stats(visits=int(kid.explore_count), value_sum=float(kid.total_reward),
                                     prior=float(kid.prior), proven=_proof(kid, mover)), after, where)
            if kid.children:
                stack.append((kid, child, after))
    return builder.tree


def _proof(spiel: Any, mover: int) -> int | None:
    """The proof in a node's ``outcome`` (the returns of its solved result) for ``mover``, None if unsolved."""
    outcome = list(spiel.outcome or ())
    if not outcome:
        return None
    mine = float(outcome[mover - 1])
    return 1 if mine > 0 else -1 if mine < 0 else 0
