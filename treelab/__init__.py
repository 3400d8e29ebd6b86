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
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

from .errors import (
    BudgetError,
    DamagedDatabaseError,
    ExecutableNotFoundError,
    GameMismatchError,
    GameOverError,
    IllegalMoveError,
    ImportFormatError,
    NotationError,
    NotATreelabDatabaseError,
    PathNotFoundError,
    ProofConflictError,
    RenderError,
    SchemaVersionError,
    StoreError,
    TooLargeError,
    TraceError,
    TreelabError,
    UnknownGameError,
    UnknownOptionError,
)

# Every name loads on first use, so `import treelab` reads only this file, the errors and
# `typing` (about 10 ms), and each CLI command imports only its own modules: numpy,
# sqlite-utils and Graphviz come in only with the parts that need them. One table says where
# each public name lives (a pair renames); the TYPE_CHECKING imports say the same for type
# checkers, and tests/test_layers.py checks that the table, those imports and __all__ agree.
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
    "play.training_config": ("TrainingConfig",),
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
    from .analysis.compare import DiffResult, diff
    from .analysis.convergence import Convergence, converge, plot_convergence
    from .analysis.growth import GrowthData, growth_data, plot_growth, tree_at
    from .analysis.shape import plot_shape, plot_shape_db
    from .analysis.sqlstats import db_stats
    from .games import Game, State, find_game, register_game
    from .interop.alphazero import AlphaZeroStats, from_alphazero
    from .interop.mctx import MctxOptions, from_mctx
    from .interop.openspiel import from_openspiel
    from .interop.recorder import Recorder
    from .interop.rows import from_rows
    from .learn.fitting import FitConfig, fit
    from .learn.model import Model, load_model
    from .mcts.config import RootNoise, SearchConfig
    from .mcts.dispatch import puct_search
    from .mcts.evaluators import (
        Evaluation,
        Evaluator,
        HeuristicEvaluator,
        ModelEvaluator,
        RolloutEvaluator,
        find_evaluator,
    )
    from .mcts.loop import Limit
    from .mcts.policies import decisive_playout, random_playout, ucb1
    from .mcts.puct import C_PUCT, dirichlet_alpha_for
    from .mcts.summary import ChildStats, SearchSummary, choose_move
    from .mcts.tracer import Tracer
    from .mcts.uct import search
    from .nodes import Proof
    from .play.arena import MatchResult, make_player, play_match
    from .play.explorer import Explorer, explore
    from .play.learning import LoopSummary, learning_loop
    from .play.openspiel_bot import OpenSpielPlayer
    from .play.players import HeuristicPlayer, MCTSPlayer, MonteCarloPlayer, Player, PUCTPlayer, RandomPlayer
    from .play.positions import analyse
    from .play.tracing import SearchTrace, read_trace, trace
    from .play.training import TrainSummary, train
    from .play.training_config import TrainingConfig
    from .store.merging import MergeSummary, merge
    from .store.persistence import load, open_tree, save
    from .store.records import compact, info, read_games, read_history
    from .tree import SQRT2, Tree, TreeNode
    from .view.dot import render, to_dot, to_svg
    from .view.jupyter import Diagram, draw, side_by_side
    from .view.step_widget import Stepper, stepper


def _wire() -> None:
    """Load the layers that wire themselves into the core: the store (``Tree.save``), the view (Jupyter display)."""
    from .store import persistence  # noqa: F401
    from .view import jupyter  # noqa: F401


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
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
    "SQRT2",
    "AlphaZeroStats",
    "BudgetError",
    "ChildStats",
    "Convergence",
    "DamagedDatabaseError",
    "Diagram",
    "DiffResult",
    "Evaluation",
    "Evaluator",
    "ExecutableNotFoundError",
    "Explorer",
    "FitConfig",
    "Game",
    "GameMismatchError",
    "GameOverError",
    "GrowthData",
    "HeuristicEvaluator",
    "HeuristicPlayer",
    "IllegalMoveError",
    "ImportFormatError",
    "Limit",
    "LoopSummary",
    "MCTSPlayer",
    "MatchResult",
    "MctxOptions",
    "MergeSummary",
    "Model",
    "ModelEvaluator",
    "MonteCarloPlayer",
    "NotATreelabDatabaseError",
    "NotationError",
    "OpenSpielPlayer",
    "PUCTPlayer",
    "PathNotFoundError",
    "Player",
    "Proof",
    "ProofConflictError",
    "RandomPlayer",
    "Recorder",
    "RenderError",
    "RolloutEvaluator",
    "RootNoise",
    "SchemaVersionError",
    "SearchConfig",
    "SearchSummary",
    "SearchTrace",
    "State",
    "Stepper",
    "StoreError",
    "TooLargeError",
    "TraceError",
    "Tracer",
    "TrainSummary",
    "TrainingConfig",
    "Tree",
    "TreeArrays",
    "TreeNode",
    "TreelabError",
    "UnknownGameError",
    "UnknownOptionError",
    "__version__",
    "analyse",
    "choose_move",
    "compact",
    "converge",
    "db_stats",
    "decisive_playout",
    "diff",
    "dirichlet_alpha_for",
    "draw",
    "explore",
    "find_evaluator",
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
    "open_tree",
    "play_match",
    "plot_convergence",
    "plot_growth",
    "plot_shape",
    "plot_shape_db",
    "puct_search",
    "random_playout",
    "read_games",
    "read_history",
    "read_trace",
    "register_game",
    "render",
    "save",
    "search",
    "side_by_side",
    "stepper",
    "to_dot",
    "to_svg",
    "trace",
    "train",
    "tree_at",
    "tree_stats",
    "ucb1",
]
