"""treelab: grow, keep, draw and measure Monte Carlo Tree Search trees.

The front door: everything a notebook or script needs is importable from here.

Example:
    >>> import treelab
    >>> tree = treelab.Tree("connect4")
    >>> tree.record("4453", winner=1).nb_visit
    1
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from .errors import (
    BudgetError,
    ExecutableNotFoundError,
    GameMismatchError,
    GameOverError,
    IllegalMoveError,
    NotationError,
    NotATreelabDatabaseError,
    PathNotFoundError,
    RenderError,
    SchemaVersionError,
    StoreError,
    TooLargeError,
    TreelabError,
    UnknownGameError,
)

# Every name loads on first use, so `import treelab` reads only this file, the errors and
# `typing` (about 10 ms), and each CLI command imports only its own modules: numpy,
# sqlite-utils and Graphviz come in only with the parts that need them.
_LAZY = {
    "HeuristicPlayer": ("agents", "HeuristicPlayer"),
    "MCTSPlayer": ("agents", "MCTSPlayer"),
    "MonteCarloPlayer": ("agents", "MonteCarloPlayer"),
    "Player": ("agents", "Player"),
    "RandomPlayer": ("agents", "RandomPlayer"),
    "Game": ("games", "Game"),
    "State": ("games", "State"),
    "find_game": ("games", "find_game"),
    "decisive_playout": ("policies", "decisive_playout"),
    "random_playout": ("policies", "random_playout"),
    "ucb1": ("policies", "ucb1"),
    "analyse": ("positions", "analyse"),
    "Limit": ("search", "Limit"),
    "search": ("search", "search"),
    "ChildStats": ("summary", "ChildStats"),
    "SearchSummary": ("summary", "SearchSummary"),
    "choose_move": ("summary", "choose_move"),
    "SQRT2": ("tree", "SQRT2"),
    "Tree": ("tree", "Tree"),
    "TreeNode": ("tree", "TreeNode"),
    "TreeArrays": ("analysis", "TreeArrays"),
    "tree_stats": ("analysis", "stats"),
    "db_stats": ("dbstats", "db_stats"),
    "Diagram": ("display", "Diagram"),
    "draw": ("display", "draw"),
    "side_by_side": ("display", "side_by_side"),
    "GrowthData": ("growth", "GrowthData"),
    "growth_data": ("growth", "growth_data"),
    "plot_growth": ("growth", "plot_growth"),
    "tree_at": ("growth", "tree_at"),
    "render": ("render", "render"),
    "to_dot": ("render", "to_dot"),
    "to_svg": ("render", "to_svg"),
    "plot_shape": ("shape", "plot_shape"),
    "info": ("records", "info"),
    "load": ("store", "load"),
    "open_tree": ("store", "open_tree"),
    "save": ("store", "save"),
    "TrainSummary": ("training", "TrainSummary"),
    "puct_search": ("puct", "puct_search"),
    "PUCTPlayer": ("puct", "PUCTPlayer"),
    "C_PUCT": ("puct", "C_PUCT"),
    "dirichlet_alpha_for": ("puct", "dirichlet_alpha_for"),
    "Evaluation": ("evaluators", "Evaluation"),
    "Evaluator": ("evaluators", "Evaluator"),
    "RolloutEvaluator": ("evaluators", "RolloutEvaluator"),
    "HeuristicEvaluator": ("evaluators", "HeuristicEvaluator"),
    "find_evaluator": ("evaluators", "find_evaluator"),
    "play_match": ("arena", "play_match"),
    "make_player": ("arena", "make_player"),
    "MatchResult": ("arena", "MatchResult"),
    "OpenSpielPlayer": ("openspiel", "OpenSpielPlayer"),
    "compact": ("records", "compact"),
    "read_games": ("records", "read_games"),
    "read_history": ("records", "read_history"),
    "train": ("training", "train"),
}

if TYPE_CHECKING:
    from .agents import HeuristicPlayer, MCTSPlayer, MonteCarloPlayer, Player, RandomPlayer
    from .analysis import TreeArrays
    from .analysis import stats as tree_stats
    from .arena import MatchResult, make_player, play_match
    from .dbstats import db_stats
    from .display import Diagram, draw, side_by_side
    from .evaluators import Evaluation, Evaluator, HeuristicEvaluator, RolloutEvaluator, find_evaluator
    from .games import Game, State, find_game
    from .growth import GrowthData, growth_data, plot_growth, tree_at
    from .openspiel import OpenSpielPlayer
    from .policies import decisive_playout, random_playout, ucb1
    from .positions import analyse
    from .puct import C_PUCT, PUCTPlayer, dirichlet_alpha_for, puct_search
    from .records import compact, info, read_games, read_history
    from .render import render, to_dot, to_svg
    from .search import Limit, search
    from .shape import plot_shape
    from .store import load, open_tree, save
    from .summary import ChildStats, SearchSummary, choose_move
    from .training import TrainSummary, train
    from .tree import SQRT2, Tree, TreeNode


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'treelab' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _FrontDoor(types.ModuleType):
    """``treelab`` itself: ``treelab.search`` and ``treelab.render`` stay the functions.

    Importing a submodule binds it as an attribute of its package, so the first
    ``import treelab.search`` anywhere would hide the lazily loaded function of
    that name behind the module. The binding is dropped for those names; the
    modules stay in ``sys.modules`` (``from treelab.search import ...`` works).
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in _LAZY and value.__name__ == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _FrontDoor


__all__ = [
    "C_PUCT",
    "Evaluation",
    "Evaluator",
    "HeuristicEvaluator",
    "MatchResult",
    "OpenSpielPlayer",
    "PUCTPlayer",
    "RolloutEvaluator",
    "compact",
    "dirichlet_alpha_for",
    "find_evaluator",
    "make_player",
    "play_match",
    "puct_search",
    "read_games",
    "read_history",
    "Diagram",
    "ExecutableNotFoundError",
    "GrowthData",
    "RenderError",
    "TooLargeError",
    "TreeArrays",
    "db_stats",
    "draw",
    "growth_data",
    "plot_growth",
    "plot_shape",
    "render",
    "side_by_side",
    "to_dot",
    "to_svg",
    "tree_at",
    "tree_stats",
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
