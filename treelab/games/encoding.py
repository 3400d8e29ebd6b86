"""A game's input encoding for policy/value models, and its board symmetries.

This is the optional part of the :class:`~treelab.games.Game`/:class:`~treelab.games.State`
protocol that ``treelab fit`` and the ``model:PATH`` evaluator read:

- :attr:`Game.encoding <treelab.games.Game.encoding>`: the encoding's name (recorded in a model
  file; a model is only used with the encoding it was fitted on), None when the game has none;
- :attr:`Game.feature_shape <treelab.games.Game.feature_shape>`: the shape of the array
  :meth:`State.features <treelab.games.State.features>` returns, from the view of the player to move;
- :attr:`Game.first_move <treelab.games.Game.first_move>`: the smallest move id, so a move's place
  in a model's policy vector is ``move - first_move`` (``num_moves`` places);
- :attr:`Game.symmetries <treelab.games.Game.symmetries>`: the board's symmetries other than the
  identity (Connect Four's left-right mirror, tic-tac-toe's seven), as :class:`Symmetry`
  permutations of the flat features and of the policy, used to multiply the training examples.

The helpers here build those permutations from how a symmetry moves the cells of a grid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Symmetry", "grid_symmetry"]


@dataclass(frozen=True)
class Symmetry:
    """One symmetry ``g`` of a game, as two permutations (apply them with numpy fancy indexing).

    For a position ``s`` and its image ``g(s)``:
    ``features(g(s)).ravel() == features(s).ravel()[features]`` and, for move places,
    ``policy(g(s)) == policy(s)[moves]``.
    """

    name: str
    """What the symmetry does (``"mirror"``, ``"rotate90"``)."""
    features: tuple[int, ...]
    """For each place of the image's flat features, the place of the original it is read from."""
    moves: tuple[int, ...]
    """For each place of the image's policy vector, the place of the original's policy it is read from."""


def grid_symmetry(
    name: str,
    planes: int,
    rows: int,
    columns: int,
    cell_map: Callable[[int, int], tuple[int, int]],
    moves: Sequence[int],
) -> Symmetry:
    """The :class:`Symmetry` of features shaped ``(planes, rows, columns)`` under a map of cells.

    Args:
        name: the symmetry's name.
        planes, rows, columns: the feature shape.
        cell_map: ``(row, column) -> (row, column)`` of the cell the symmetry moves that cell to.
        moves: for each move place of the image, the move place of the original (a permutation).
    """
    perm = [0] * (planes * rows * columns)
    for p in range(planes):
        for r in range(rows):
            for c in range(columns):
                r2, c2 = cell_map(r, c)
                perm[(p * rows + r2) * columns + c2] = (p * rows + r) * columns + c
    if sorted(perm) != list(range(len(perm))) or sorted(moves) != list(range(len(moves))):
        raise ValueError(f"symmetry {name!r} is not a permutation of the cells and moves")
    return Symmetry(name, tuple(perm), tuple(moves))
