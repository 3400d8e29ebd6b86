"""A recorder for hand-written searches: one call per simulation, a treelab tree out (rows, a database)."""

from __future__ import annotations

import math
import os

from ..games import Game, find_game
from ..store.files import whole
from ..tree import Moves, Tree, backup
from .rows import tree_rows, write_rows

__all__ = ["Recorder"]


class Recorder:
    """Records a hand-written MCTS into a treelab tree: call :meth:`simulation` once per simulation.

    Args:
        game: the game searched (a name or a :class:`~treelab.games.Game`).
        root: the moves from the game's start to the searched position (the paths given to
            :meth:`simulation` start there).

    Example::

        rec = treelab.Recorder("tictactoe")
        for _ in range(100):
            path, value = my_mcts.simulate()      # the moves taken from the root, the result
            rec.simulation(path, value=value, player=1)
        rec.tree.save("mine.db")
    """

    def __init__(self, game: str | Game, root: Moves = None) -> None:
        self.tree = Tree(find_game(game))
        self.root = self.tree.game.parse(root)
        self.tree.path(self.root)  # checked now: a bad root fails before the first simulation
        self.simulations = 0
        """Simulations recorded."""

    def simulation(self, path: Moves, *, value: float | None = None, player: int = 1,
                   winner: int | None = None) -> None:
        """Record one simulation that went from the root down ``path`` (the stored part: moves of the
        playout beyond it are not stored) and ended in ``value`` (in [-1, 1], for ``player``) or, without
        a value, in ``winner`` (1, 2, None for a draw).

        Raises:
            IllegalMoveError: a move of ``path`` is illegal.
            ValueError: a value outside [-1, 1], a player not 1 or 2.
        """
        tree = self.tree
        nodes, _ = tree.path((*self.root, *tree.game.parse(path)))
        start = len(self.root)
        if value is None:
            tree.backup(nodes, winner, start=start)
        else:
            if player not in (1, 2) or isinstance(value, bool) or not -1.0 <= float(value) <= 1.0 or math.isnan(value):
                raise ValueError(f"value {value!r} for player {player!r}: give a return in [-1, 1] and player 1 or 2")
            backup(nodes, None, tree.baselines, selected_from=start + 1, movers=not tree.game.alternating)
            for node in nodes:
                tree.add_value(node, value if node.mover == player else -value)
        self.simulations += 1

    def write(self, file: str | os.PathLike[str], *, fmt: str = "jsonl") -> int:
        """Write the recorded tree as rows (JSON lines or CSV), whole or not at all by the rule of every output
        (:mod:`treelab.store.files`); returns the rows written."""
        with whole(file) as tmp, tmp.open("w", encoding="utf-8", newline="") as out:
            return write_rows(tree_rows(self.tree), out, self.tree.game.name, fmt=fmt)
