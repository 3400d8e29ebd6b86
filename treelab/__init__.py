"""treelab: grow, keep, draw and measure Monte Carlo Tree Search trees.

The front door: everything a notebook or script needs is importable from here.

Example:
    >>> import treelab
    >>> tree = treelab.Tree("connect4")
    >>> tree.record("4453", winner=1).nb_visit
    1
"""

from __future__ import annotations

__version__ = "0.1.0"

from .agents import HeuristicPlayer, MCTSPlayer, MonteCarloPlayer, Player, RandomPlayer
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
from .policies import decisive_playout, random_playout, ucb1
from .search import ChildStats, Limit, SearchSummary, analyse, choose_move, search
from .store import info, load, open_tree, save
from .training import TrainSummary, train
from .tree import SQRT2, Tree, TreeNode

__all__ = [
    "SQRT2",
    "BudgetError",
    "ChildStats",
    "Game",
    "GameMismatchError",
    "GameOverError",
    "HeuristicPlayer",
    "IllegalMoveError",
    "Limit",
    "MCTSPlayer",
    "MonteCarloPlayer",
    "NotATreelabDatabaseError",
    "NotationError",
    "PathNotFoundError",
    "Player",
    "RandomPlayer",
    "SchemaVersionError",
    "SearchSummary",
    "State",
    "StoreError",
    "TrainSummary",
    "Tree",
    "TreeNode",
    "TreelabError",
    "UnknownGameError",
    "__version__",
    "analyse",
    "choose_move",
    "decisive_playout",
    "find_game",
    "info",
    "load",
    "open_tree",
    "random_playout",
    "save",
    "search",
    "train",
    "ucb1",
]
