"""Typed search options: one frozen :class:`SearchConfig`, closed sets of names as ``Literal`` types.

The command line, :func:`treelab.analyse`, :func:`treelab.train` and the
players all describe a search with a :class:`SearchConfig`; an unknown name
raises :class:`~treelab.errors.UnknownOptionError` (a ``ValueError``) when the
config is made, before anything runs. The budget of one search (simulations,
seconds) is a :class:`~treelab.mcts.uct.Limit`; the config says how to search.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal, get_args

from ..errors import BudgetError, UnknownOptionError
from ..nodes import SQRT2

if TYPE_CHECKING:
    from ..tree import Tree
    from .policies import PlayoutFn

__all__ = [
    "ALGORITHMS",
    "ALIASES",
    "CHOICES",
    "C_PUCT",
    "C_PUCT_MODEL",
    "DIRICHLET_FRACTION",
    "EVALUATORS",
    "MAX_NEW_NODES",
    "PLAYOUT_NAMES",
    "STATISTICS",
    "Algorithm",
    "Choice",
    "EvaluatorName",
    "PlayoutName",
    "RootNoise",
    "SearchConfig",
    "Statistics",
    "check_name",
    "node_cap_for",
    "option_names",
    "resolve_aliases",
]

Algorithm = Literal["uct", "puct"]
"""``"uct"`` (UCB1, Browne et al. 2012) or ``"puct"`` (AlphaZero style, :mod:`treelab.mcts.puct`)."""
PlayoutName = Literal["random", "decisive"]
"""Playout policies of :mod:`treelab.mcts.policies`: uniformly random, or decisive moves first."""
Choice = Literal["visits", "ucb1"]
"""How the move to play is chosen: the most visited child, or the best UCB1 score."""
EvaluatorName = Literal["rollout", "heuristic"]
"""PUCT's leaf evaluators (:mod:`treelab.mcts.evaluators`)."""
Statistics = Literal["classic", "graph"]
"""Which counts UCT's selection reads: ``"classic"``, the seed's UCB1 on ``nb_visit``; ``"graph"``, the edge
counts (``nb_select``) and the position table's values (:mod:`treelab.mcts.graph`)."""

ALGORITHMS: tuple[Algorithm, ...] = get_args(Algorithm)
PLAYOUT_NAMES: tuple[PlayoutName, ...] = get_args(PlayoutName)
CHOICES: tuple[Choice, ...] = get_args(Choice)
EVALUATORS: tuple[EvaluatorName, ...] = get_args(EvaluatorName)
STATISTICS: tuple[Statistics, ...] = get_args(Statistics)

C_PUCT = 1.25
"""Default ``c`` of PUCT: AlphaZero's ``c_init = 1.25`` (Silver et al. 2018, pseudocode).

AlphaZero's values are in [-1, 1] and treelab's in [0, 1], so the same number
explores twice as much here (AlphaZero's exact exploration is ``0.625``). Rollout
values are noisier than a trained network's and want the extra exploration: with
the heuristic evaluator at 1,000 simulations against OpenSpiel's MCTSBot, 0.625
scored 0.69 and 1.25 scored 0.81 over 24 games (``benchmarks/vs_openspiel.py``)."""

C_PUCT_MODEL = 0.625
"""Default ``c`` of PUCT when a fitted model's values alone are backed up (``model`` given, ``mix`` 0):
AlphaZero's exact exploration, ``c_init = 1.25`` on values in [-1, 1] (Silver et al. 2018), halved for
treelab's values in [0, 1]. A trained network's values are not a rollout's noise: measured on the judged
Connect Four positions (dev half, ``docs/notes/learning-loop.md``, session 18), the learning loop's models
from 2,000 to 31,300 games made 23-31% fewer mistakes at 200 simulations with 0.625 than with 1.25, and
session 17's 60-minute model at 600 simulations 11.8% at beginning-hard with 0.65 against 15.1% with 1.25."""

MAX_NEW_NODES = 2_000_000
"""Nodes one search may add by default (about 0.4 GB at ~180 bytes a node): a budget of
``99999999999999999999999`` iterations stops there instead of growing memory without bound."""


DIRICHLET_FRACTION = 0.25
"""Share of root Dirichlet noise, ``epsilon = 0.25`` (Silver et al. 2017, 2018): :class:`RootNoise`'s default,
written here only."""


@dataclass(frozen=True)
class RootNoise:
    """Dirichlet noise at the root of one search (Silver et al. 2017): the one root-noise value.

    PUCT mixes it into the start position's priors; UCT, which has no priors, into the move choice at the
    root (:func:`treelab.mcts.choice.choose_move`). ``RootNoise(alpha)`` takes AlphaZero's share.
    """

    alpha: float
    """The Dirichlet ``alpha`` (:func:`~treelab.mcts.puct.dirichlet_alpha_for`: about ``10 / moves``)."""
    fraction: float = DIRICHLET_FRACTION
    """The noise's share, ``epsilon``."""

    def __post_init__(self) -> None:
        if isinstance(self.alpha, bool) or not (isinstance(self.alpha, (int, float)) and self.alpha > 0
                                                 and math.isfinite(self.alpha)):
            raise BudgetError(f"noise alpha {self.alpha!r} must be a finite number > 0 (AlphaZero: about 10 / moves)")
        if isinstance(self.fraction, bool) or not (isinstance(self.fraction, (int, float))
                                                    and 0.0 <= self.fraction <= 1.0):
            raise BudgetError(f"noise fraction {self.fraction!r} must be in [0, 1] (AlphaZero: 0.25)")

    @classmethod
    def of(cls, alpha: float | None = None, fraction: float | None = None, **old: float | None) -> RootNoise | None:
        """The noise of ``alpha`` (None: no noise) and ``fraction`` (None: the default share).

        The old keywords ``dirichlet_alpha`` and ``dirichlet_fraction`` are accepted with a
        :class:`DeprecationWarning`.
        """
        named = resolve_aliases({"alpha": alpha, "fraction": fraction, **old}, NOISE_ALIASES)
        unknown = sorted(set(named) - {"alpha", "fraction"})
        if unknown:
            raise UnknownOptionError(f"unknown noise option {unknown[0]!r}: use alpha or fraction")
        alpha, fraction = named.get("alpha"), named.get("fraction")
        if alpha is None:
            if fraction is not None and not 0.0 <= fraction <= 1.0:
                raise BudgetError(f"noise fraction {fraction!r} must be in [0, 1] (AlphaZero: 0.25)")
            return None
        return cls(alpha, DIRICHLET_FRACTION if fraction is None else fraction)


def check_name(kind: str, value: object, allowed: tuple[str, ...]) -> None:
    """Raise :class:`UnknownOptionError` unless ``value`` is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise UnknownOptionError(f"unknown {kind} {value!r}: use one of {', '.join(allowed)}")


def node_cap_for(size: int, max_new_nodes: int) -> int:
    """The tree size at which a search that starts at ``size`` nodes stops (``max_new_nodes`` checked)."""
    if isinstance(max_new_nodes, bool) or not isinstance(max_new_nodes, int) or max_new_nodes < 1:
        raise BudgetError(f"max_new_nodes {max_new_nodes!r} must be a whole number of at least 1")
    return size + max_new_nodes


@dataclass(frozen=True)
class SearchConfig:
    """How to search and how to pick the move: everything but the budget.

    Example:
        >>> SearchConfig(algorithm="puct").exploration
        1.25
        >>> SearchConfig(playout="greedy")
        Traceback (most recent call last):
        ...
        treelab.errors.UnknownOptionError: unknown playout 'greedy': use one of random, decisive
    """

    algorithm: Algorithm = "uct"
    """``"uct"`` or ``"puct"``."""
    c: float | None = None
    """Exploration constant: UCB1's for UCT, PUCT's for PUCT (one name, ``c``, everywhere); None: the
    default for what the search backs up (:attr:`exploration`: ``sqrt(2)`` for UCT, Auer et al. 2002; for
    PUCT :data:`C_PUCT`, ``1.25``, or :data:`C_PUCT_MODEL`, ``0.625``, with a model's values alone)."""
    solver: bool | None = None
    """MCTS-Solver proofs (the search stops once its position is proven); None: the algorithm's default,
    off for UCT, on for PUCT (:attr:`proves`)."""
    playout: PlayoutName | PlayoutFn = "random"
    """UCT's playout policy (a name, or a :data:`~treelab.mcts.policies.PlayoutFn`), and the policy of PUCT's
    rollout evaluator."""
    evaluator: EvaluatorName | Callable[..., Any] = "rollout"
    """PUCT's leaf evaluator: a name, or an :data:`~treelab.mcts.evaluators.Evaluator` of one's own (typed as any
    callable here: the evaluators' module builds on this one)."""
    choice: Choice = "visits"
    """The move to play: the most visited child, or the best UCB1 score (the original persistent-tree rule)."""
    temperature: float = 0.0
    """``> 0`` samples the move in proportion to ``visits ** (1 / temperature)`` (AlphaZero); 0: the most visited."""
    max_new_nodes: int = MAX_NEW_NODES
    """Nodes one search may add; the search stops when it has added that many (a memory bound)."""
    model: str | None = None
    """A model file fitted by :func:`treelab.fit`: PUCT's evaluator (its priors, and its value in place of
    the playout), replacing :attr:`evaluator`. Needs ``algorithm="puct"``."""
    mix: float = 0.0
    """With :attr:`model`: the playout's share of a leaf's value, ``(1 - mix) * model + mix * playout``
    (0: the model's value alone; Silver et al. 2016 mixed half and half)."""
    statistics: Statistics | None = None
    """UCT's selection statistics: ``"classic"`` (UCB1 on ``nb_visit``, the seed's rule) or ``"graph"`` (edge
    counts and position values, KataGo's graph search; :mod:`treelab.mcts.graph`); None: the tree's own rule
    (a loaded file's ``meta.statistics``, classic for a new tree), so a graph file stays one (:meth:`rule`)."""
    noise: RootNoise | None = None
    """Dirichlet noise at the root of every search (:class:`RootNoise`: PUCT's priors, UCT's move choice);
    None: none."""

    def __post_init__(self) -> None:
        check_name("algorithm", self.algorithm, ALGORITHMS)
        if not callable(self.playout):
            check_name("playout", self.playout, PLAYOUT_NAMES)
        if not callable(self.evaluator):
            check_name("evaluator", self.evaluator, EVALUATORS)
        if self.solver is not None and not isinstance(self.solver, bool):
            raise UnknownOptionError(f"solver {self.solver!r} must be True, False or None (the algorithm's default)")
        if self.noise is not None and not isinstance(self.noise, RootNoise):
            raise UnknownOptionError(f"noise {self.noise!r} must be a RootNoise(alpha, fraction) or None")
        check_name("move choice", self.choice, CHOICES)
        if self.statistics is not None:
            check_name("statistics", self.statistics, STATISTICS)
        if self.statistics == "graph" and self.algorithm != "uct":
            raise UnknownOptionError(f"statistics {self.statistics!r} are UCT's: search with algorithm 'uct' "
                                     "or statistics 'classic'")
        if self.c is not None and not (isinstance(self.c, (int, float)) and self.c >= 0 and math.isfinite(self.c)):
            raise BudgetError(f"c {self.c!r} must be a finite number >= 0")
        if not (isinstance(self.temperature, (int, float)) and self.temperature >= 0
                and math.isfinite(self.temperature)):
            raise BudgetError(f"temperature {self.temperature!r} must be a finite number >= 0 "
                              "(0 plays the most visited move)")
        node_cap_for(0, self.max_new_nodes)
        if self.model is not None:
            if not isinstance(self.model, str) or not self.model:
                raise UnknownOptionError(f"model {self.model!r} must be the path of a model file (treelab fit)")
            if self.algorithm != "puct":
                raise UnknownOptionError(f"model {self.model!r} guides PUCT only: search with algorithm 'puct'")
        if not (isinstance(self.mix, (int, float)) and 0.0 <= self.mix <= 1.0):
            raise BudgetError(f"mix {self.mix!r} must be in [0, 1]: the playout's share of a model's value")
        if self.mix and self.model is None:
            raise UnknownOptionError(f"mix {self.mix!r} blends a playout into a model's value: give model= too")

    @property
    def exploration(self) -> float:
        """The exploration constant in use: :attr:`c`, else the default for the values the search backs up:
        UCB1's ``sqrt(2)`` for UCT; for PUCT :data:`C_PUCT_MODEL` when a fitted model's values alone are
        backed up (:attr:`model` given, :attr:`mix` 0), else :data:`C_PUCT` (rollouts' noisier values).

        >>> SearchConfig(algorithm="puct", model="c4.npz").exploration
        0.625
        """
        if self.c is not None:
            return float(self.c)
        if self.algorithm != "puct":
            return SQRT2
        return C_PUCT_MODEL if self.model is not None and not self.mix else C_PUCT

    @property
    def proves(self) -> bool:
        """Whether the search proves results: :attr:`solver`, else the algorithm's default (PUCT's on)."""
        return self.solver if self.solver is not None else self.algorithm == "puct"

    def rule(self, tree: Tree) -> Statistics:
        """The statistics a search of ``tree`` selects by: :attr:`statistics`, else the tree's own."""
        return self.statistics or tree.statistics  # type: ignore[return-value]

    @property
    def score_c(self) -> float:
        """The ``c`` of the UCB1 scores reported and stored with the tree: :attr:`exploration` for UCT,
        sqrt(2) for PUCT (whose own score is not UCB1)."""
        return self.exploration if self.algorithm == "uct" else SQRT2

    @property
    def stored_c(self) -> float | None:
        """The ``c`` a training run stores with its tree (``meta.c``): UCT's :attr:`exploration`; None for PUCT,
        whose ``c`` is not UCB1's (the file keeps its own, a new one sqrt(2)). Written here only."""
        return self.exploration if self.algorithm == "uct" else None

    @property
    def ucb_c(self) -> float:
        """Deprecated alias of :attr:`score_c`."""
        warnings.warn("SearchConfig.ucb_c is now called score_c", DeprecationWarning, stacklevel=2)
        return self.score_c

    @classmethod
    def of(cls, config: SearchConfig | None = None, **options: Any) -> SearchConfig:
        """``config`` with the given ``options`` replaced (None values are left out), or a new config.

        ``config`` itself when no option is given (it was validated when made). The old spellings
        (:data:`ALIASES`: ``how`` of :attr:`choice`, ``c_puct`` of :attr:`c`) are accepted with a
        :class:`DeprecationWarning`.
        """
        options = resolve_aliases(options)
        known = option_names()
        unknown = sorted(set(options) - known)
        if unknown:
            raise UnknownOptionError(f"unknown search option {unknown[0]!r}: use one of {', '.join(sorted(known))}")
        given = {k: v for k, v in options.items() if v is not None}
        if config is None:
            return cls(**given)
        return replace(config, **given) if given else config


ALIASES = {"how": "choice", "c_puct": "c", "ucb_c": "c", "uct_c": "c"}
"""Old spellings of :class:`SearchConfig` fields still accepted as keywords (with a :class:`DeprecationWarning`)."""

NOISE_ALIASES = {"dirichlet_alpha": "alpha", "dirichlet_fraction": "fraction"}
"""Old spellings of :class:`RootNoise` fields still accepted as keywords (with a :class:`DeprecationWarning`)."""


def option_names() -> set[str]:
    """The fields of :class:`SearchConfig`: the search options' one name each (Python, CLI, JSON)."""
    return {f.name for f in fields(SearchConfig)}


def resolve_aliases(options: dict[str, Any], aliases: dict[str, str] = ALIASES) -> dict[str, Any]:
    """``options`` with old spellings replaced by their names (warning once each); both given is an error."""
    if not any(old in options for old in aliases):
        return options
    options = dict(options)
    for old, new in aliases.items():
        if old not in options:
            continue
        value = options.pop(old)
        warnings.warn(f"the option {old!r} is now called {new!r}", DeprecationWarning, stacklevel=3)
        if options.get(new) is not None and value is not None and options[new] != value:
            raise UnknownOptionError(f"{old}={value!r} and {new}={options[new]!r} name one option: give {new} only")
        if value is not None:
            options[new] = value
    return options

