"""treelab: grow, keep, draw and measure Monte Carlo Tree Search trees.

The front door. ``__all__`` holds the names a user calls (those the README, the guides and the
notebooks call: ``treelab.search``, ``treelab.draw``); every other name of the export table below still
resolves (``treelab.TreeNode``), quietly, for code written against the earlier, longer list. The errors live in
``treelab.errors`` (``treelab.errors.IllegalMoveError``); their base ``TreelabError`` is here too.

Example:
    >>> import treelab
    >>> tree = treelab.Tree("connect4")
    >>> tree.record("4453", winner=1).nb_visit
    1
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from . import errors
from .errors import TreelabError

# Every name loads on first use, so `import treelab` reads only this file, the errors and
# `typing` (about 10 ms), and each CLI command imports only its own modules: numpy,
# sqlite-utils and Graphviz come in only with the parts that need them. One table says where
# each public name lives (a pair renames); the TYPE_CHECKING imports say the same for type
# checkers, and tests/design/test_layers.py checks that the table and those imports agree and that
# __all__ (the advertised part, at most about 60 names: tests/design/test_front_door.py) is drawn from them.
# Below, `import X as X` marks a name that resolves but is not advertised (PEP 484's re-export).
_EXPORTS: dict[str, tuple[str | tuple[str, str], ...]] = {
    "analysis.arrays": ("TreeArrays", ("tree_stats", "stats")),
    "analysis.compare": ("DiffResult", "diff"),
    "analysis.convergence": ("Convergence", "converge", "plot_convergence"),
    "analysis.growth": ("GrowthData", "growth_data", "plot_growth", "tree_at"),
    "analysis.shape": ("plot_shape", "plot_shape_db"),
    "analysis.sqlstats": ("db_stats",),
    "games": ("Game", "State", "find_game", "register_game"),
    "interop.alphazero": ("AlphaZeroStats", "from_alphazero"),
    "interop.mctx": ("MctxOptions", "from_mctx"),
    "interop.openspiel": ("from_openspiel",),
    "interop.recorder": ("Recorder",),
    "interop.rows": ("from_rows",),
    "learn.fitting": ("FitConfig", "fit"),
    "learn.model": ("Model", "load_model"),
    "mcts.config": ("RootNoise", "SearchConfig"),
    "mcts.dispatch": ("puct_search",),
    "mcts.evaluators": (
        "Evaluation", "Evaluator", "HeuristicEvaluator", "ModelEvaluator", "RolloutEvaluator", "find_evaluator",
    ),
    "mcts.loop": ("Limit",),
    "mcts.policies": ("decisive_playout", "random_playout", "ucb1"),
    "mcts.puct": ("C_PUCT", "dirichlet_alpha_for"),
    "mcts.summary": ("ChildStats", "SearchSummary", "choose_move"),
    "mcts.tracer": ("Tracer",),
    "mcts.uct": ("search",),
    "nodes": ("Proof",),
    "play.arena": ("MatchResult", "make_player", "play_match"),
    "play.explorer": ("Explorer", "explore"),
    "play.openspiel_bot": ("OpenSpielPlayer",),
    "play.players": ("HeuristicPlayer", "MCTSPlayer", "MonteCarloPlayer", "Player", "PUCTPlayer", "RandomPlayer"),
    "play.positions": ("analyse",),
    "play.tracing": ("SearchTrace", "read_trace", "trace"),
    "play.training": ("TrainSummary", "train"),
    "play.learning": ("LoopSummary", "learning_loop"),
    "play.training.config": ("TrainingConfig",),
    "store.merging": ("MergeSummary", "merge"),
    "store.persistence": ("load", "open_tree", "save"),
    "store.records": ("compact", "info", "read_games", "read_history"),
    "tree": ("SQRT2", "Tree", "TreeNode"),
    "view.dot": ("render", "to_dot", "to_svg"),
    "view.jupyter": ("Diagram", "draw", "side_by_side"),
    "view.step_widget": ("Stepper", "stepper"),
}
_LAZY: dict[str, tuple[str, str]] = {
    (item if isinstance(item, str) else item[0]): (module, item if isinstance(item, str) else item[1])
    for module, items in _EXPORTS.items()
    for item in items
}

if TYPE_CHECKING:
    from .analysis.arrays import TreeArrays
    from .analysis.arrays import stats as tree_stats
    from .analysis.compare import DiffResult as DiffResult
    from .analysis.compare import diff
    from .analysis.convergence import Convergence as Convergence
    from .analysis.convergence import converge, plot_convergence
    from .analysis.growth import GrowthData as GrowthData
    from .analysis.growth import growth_data, plot_growth, tree_at
    from .analysis.shape import plot_shape, plot_shape_db
    from .analysis.sqlstats import db_stats
    from .games import Game, State, find_game, register_game
    from .interop.alphazero import AlphaZeroStats, from_alphazero
    from .interop.mctx import MctxOptions as MctxOptions
    from .interop.mctx import from_mctx
    from .interop.openspiel import from_openspiel
    from .interop.recorder import Recorder
    from .interop.rows import from_rows
    from .learn.fitting import FitConfig, fit
    from .learn.model import Model, load_model
    from .mcts.config import RootNoise as RootNoise
    from .mcts.config import SearchConfig
    from .mcts.dispatch import puct_search
    from .mcts.evaluators import Evaluation as Evaluation
    from .mcts.evaluators import Evaluator as Evaluator
    from .mcts.evaluators import HeuristicEvaluator as HeuristicEvaluator
    from .mcts.evaluators import ModelEvaluator as ModelEvaluator
    from .mcts.evaluators import RolloutEvaluator as RolloutEvaluator
    from .mcts.evaluators import find_evaluator as find_evaluator
    from .mcts.loop import Limit
    from .mcts.policies import decisive_playout as decisive_playout
    from .mcts.policies import random_playout as random_playout
    from .mcts.policies import ucb1 as ucb1
    from .mcts.puct import C_PUCT
    from .mcts.puct import dirichlet_alpha_for as dirichlet_alpha_for
    from .mcts.summary import ChildStats as ChildStats
    from .mcts.summary import SearchSummary as SearchSummary
    from .mcts.summary import choose_move as choose_move
    from .mcts.tracer import Tracer
    from .mcts.uct import search
    from .nodes import Proof as Proof
    from .play.arena import MatchResult as MatchResult
    from .play.arena import make_player, play_match
    from .play.explorer import Explorer as Explorer
    from .play.explorer import explore
    from .play.learning import LoopSummary as LoopSummary
    from .play.learning import learning_loop
    from .play.openspiel_bot import OpenSpielPlayer as OpenSpielPlayer
    from .play.players import HeuristicPlayer as HeuristicPlayer
    from .play.players import MCTSPlayer
    from .play.players import MonteCarloPlayer as MonteCarloPlayer
    from .play.players import Player as Player
    from .play.players import PUCTPlayer as PUCTPlayer
    from .play.players import RandomPlayer as RandomPlayer
    from .play.positions import analyse
    from .play.tracing import SearchTrace, read_trace, trace
    from .play.training import TrainSummary as TrainSummary
    from .play.training import train
    from .play.training.config import TrainingConfig
    from .store.merging import MergeSummary as MergeSummary
    from .store.merging import merge
    from .store.persistence import load
    from .store.persistence import open_tree as open_tree
    from .store.persistence import save as save
    from .store.records import compact as compact
    from .store.records import info
    from .store.records import read_games as read_games
    from .store.records import read_history as read_history
    from .tree import SQRT2 as SQRT2
    from .tree import Tree
    from .tree import TreeNode as TreeNode
    from .view.dot import render, to_dot
    from .view.dot import to_svg as to_svg
    from .view.jupyter import Diagram as Diagram
    from .view.jupyter import draw, side_by_side
    from .view.step_widget import Stepper as Stepper
    from .view.step_widget import stepper as stepper


def _wire() -> None:
    """Load the layers that wire themselves into the core: the store (``Tree.save``), the view (Jupyter display)."""
    from .store import persistence  # noqa: F401
    from .view import jupyter  # noqa: F401


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        if name in errors.__all__ and isinstance(getattr(errors, name), type):
            return getattr(errors, name)  # treelab.IllegalMoveError, as before errors.X was the place
        raise AttributeError(f"module 'treelab' has no attribute {name!r}") from None
    if "_wired" not in globals():
        globals()["_wired"] = True
        _wire()
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "C_PUCT",
    "AlphaZeroStats",
    "FitConfig",
    "Game",
    "Limit",
    "MCTSPlayer",
    "Model",
    "Recorder",
    "SearchConfig",
    "SearchTrace",
    "State",
    "Tracer",
    "TrainingConfig",
    "Tree",
    "TreeArrays",
    "TreelabError",
    "__version__",
    "analyse",
    "converge",
    "db_stats",
    "diff",
    "draw",
    "explore",
    "find_game",
    "fit",
    "from_alphazero",
    "from_mctx",
    "from_openspiel",
    "from_rows",
    "growth_data",
    "info",
    "learning_loop",
    "load",
    "load_model",
    "make_player",
    "merge",
    "play_match",
    "plot_convergence",
    "plot_growth",
    "plot_shape",
    "plot_shape_db",
    "puct_search",
    "read_trace",
    "register_game",
    "render",
    "search",
    "side_by_side",
    "to_dot",
    "trace",
    "train",
    "tree_at",
    "tree_stats",
]
