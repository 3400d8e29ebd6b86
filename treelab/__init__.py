"""treelab: grow, keep, draw and measure Monte Carlo Tree Search trees.

The front door: everything a notebook or script needs is importable from here.
"""

from __future__ import annotations

from .errors import (
    BudgetError,
    GameMismatchError,
    GameOverError,
    IllegalMoveError,
    NotationError,
    NotATreelabDatabaseError,
    PathNotFoundError,
    SchemaVersionError,
    StoreError,
    TreelabError,
    UnknownGameError,
)
from .games import Game, State, find_game
from .tree import SQRT2, Tree, TreeNode

__version__ = "0.1.0"

__all__ = [
    "SQRT2",
    "BudgetError",
    "Game",
    "GameMismatchError",
    "GameOverError",
    "IllegalMoveError",
    "NotATreelabDatabaseError",
    "NotationError",
    "PathNotFoundError",
    "SchemaVersionError",
    "State",
    "StoreError",
    "Tree",
    "TreeNode",
    "TreelabError",
    "UnknownGameError",
    "__version__",
    "find_game",
]
