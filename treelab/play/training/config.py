"""How a training run plays: one frozen :class:`TrainingConfig`, beside the search's :class:`SearchConfig`.

:func:`treelab.train` takes the two values (``search=``, ``training=``); any of their
fields may also be given as a keyword (``treelab.train("connect4", "c4.db", 10,
iterations=200, solver=True)``), and :func:`split_options` sorts the keywords into
the two values. Each option has one name, the same in Python, on the command line
(``--temperature-moves``) and in the JSON logged per game (``games.exploration``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from ...errors import BudgetError, UnknownOptionError
from ...mcts.choice import check_exploration
from ...mcts.config import DIRICHLET_FRACTION, RootNoise, SearchConfig, check_name, option_names, resolve_aliases

__all__ = [
    "NOISE",
    "OPPONENTS",
    "SEARCH_TREES",
    "TEMPERATURE",
    "TEMPERATURE_MOVES",
    "TrainingConfig",
    "split_options",
]

OPPONENTS = ("self", "random", "heuristic")
RefitPlace = Literal["beside", "between"]
"""Where the learning loop's refits run once it has a model (:mod:`treelab.play.refits`)."""
REFIT_PLACES: tuple[RefitPlace, ...] = ("beside", "between")
"""The values of :data:`RefitPlace`, the default first."""
SearchTrees = Literal["tree", "fresh"]
"""What each move of the tree's player searches on (:attr:`TrainingConfig.searches`)."""
SEARCH_TREES: tuple[SearchTrees, ...] = ("tree", "fresh")
"""The values of :data:`SearchTrees`: :func:`~treelab.play.training.train`'s default first."""
"""Who the tree plays against in :func:`treelab.train`."""

TEMPERATURE = 1.0
"""Self-play's move temperature over the opening (AlphaZero's tau = 1, Silver et al. 2017)."""

TEMPERATURE_MOVES = 8
"""Moves of each game sampled with :data:`TEMPERATURE`; later ones are the most selected.

AlphaZero samples Go's first 30 moves (about a tenth of a game); Connect Four
games last 7 to 42 moves. Compared with 16 and with every move by ``benchmarks/learning.py``."""

NOISE = DIRICHLET_FRACTION
"""The share of root Dirichlet noise in self-play's move choice: AlphaZero's 0.25 (Silver et al. 2017).

Measured by ``benchmarks/learning.py`` (README, *Does the tree learn?*): after 1,000 self-play games
at 200 simulations a move the tree scored 0.643 (0.574-0.706, 200 games) against a fresh tree with
it, 0.535 (0.466-0.603) with the temperature alone."""


@dataclass(frozen=True)
class TrainingConfig:
    """How a training run plays its games: everything but the search (a :class:`SearchConfig`).

    Example:
        >>> TrainingConfig(opponent="heuristic").noise is None  # resolved per run: 0 against an opponent
        True
        >>> TrainingConfig(opponent="gnugo")
        Traceback (most recent call last):
        ...
        treelab.errors.UnknownOptionError: unknown opponent 'gnugo': use one of self, random, heuristic
    """

    iterations: int = 400
    """Simulations per move of the tree."""
    opponent: str = "self"
    """``"self"`` (the tree plays both sides), ``"random"`` or ``"heuristic"``."""
    pool: str | tuple[str, ...] | None = None
    """Instead of :attr:`opponent`, draw each game's from these members (``"self,heuristic,db=old.db"``,
    :mod:`treelab.play.training.pool`) with the run's rng; exploration defaults are self-play's."""
    temperature_moves: int | None = TEMPERATURE_MOVES
    """Moves of each game sampled with the search's ``temperature`` (None: every move)."""
    noise: float | None = None
    """The share of root Dirichlet noise mixed into every move choice of the tree, in [0, 1] (UCT: into
    the choice; PUCT: into the root's priors). None: :data:`NOISE` in self-play, 0 against an opponent."""
    alpha: float | None = None
    """The noise's Dirichlet ``alpha`` (None: AlphaZero's ``10 / moves``)."""
    seed: int | random.Random | None = None
    """Replays the run exactly."""
    progress: bool = True
    """Show a progress bar (games, win/draw/loss, nodes, rate)."""
    workers: int | None = None
    """Play in this many processes at once, one writer merging what they learn
    (:mod:`treelab.play.training.parallel`); None: this process alone."""
    ray: str | bool | None = None
    """Play on Ray instead: True for a local Ray, or a cluster address."""
    refits: RefitPlace = "beside"
    """In the learning loop (:func:`treelab.learning_loop`, ``train --refit-every``), where each refit after the
    first runs: ``"beside"`` the next games, in a process of its own, while they play on with the model before
    it (the games wait only for what it has not finished by the end of their step), or ``"between"`` them (the
    games wait for every refit). :func:`~treelab.play.training.train` alone has no refits."""

    searches: SearchTrees | None = None
    """What each move's search runs on: ``"tree"``, the persistent tree itself (every simulation grows it, the
    search reads everything earlier games gathered), or ``"fresh"``, a fresh tree of its own, as AlphaZero's
    self-play searches, whose top (the position's visits and value along its path, each move's selections,
    visits, value and proof) is then added to the persistent tree
    (:class:`~treelab.play.players.MCTSPlayer`'s ``record``). None: ``"tree"`` for
    :func:`~treelab.play.training.train`, ``"fresh"`` in the learning loop, whose games on the one tree lock onto
    the openings that the first, weakest models chose (``docs/notes/learning-loop.md``)."""

    def __post_init__(self) -> None:
        if isinstance(self.iterations, bool) or not isinstance(self.iterations, int) or self.iterations < 1:
            raise BudgetError(f"iterations {self.iterations!r} must be a whole number of at least 1")
        check_name("opponent", self.opponent, OPPONENTS)
        check_name("refits", self.refits, REFIT_PLACES)
        if self.searches is not None:
            check_name("searches", self.searches, SEARCH_TREES)
        if self.temperature_moves is not None and (isinstance(self.temperature_moves, bool) or not isinstance(
                self.temperature_moves, int) or self.temperature_moves < 0):
            raise BudgetError(f"temperature moves {self.temperature_moves!r} must be a whole number >= 0, "
                              "or None (all)")
        check_exploration(0.0, 0.0 if self.noise is None else self.noise, 1.0 if self.alpha is None else self.alpha)

    @property
    def self_play(self) -> bool:
        """The tree plays itself (or draws from a pool): self-play's exploration defaults apply."""
        return self.opponent == "self"

    def resolved(self, num_moves: int) -> TrainingConfig:
        """This config with :attr:`noise` and :attr:`alpha` decided (for a game of ``num_moves`` moves)."""
        noise = self.noise if self.noise is not None else NOISE if self.self_play else 0.0
        alpha = self.alpha if self.alpha is not None else 10.0 / num_moves  # mcts.puct.dirichlet_alpha_for
        return self if (noise, alpha) == (self.noise, self.alpha) else replace(self, noise=noise, alpha=alpha)


def split_options(search: SearchConfig | None, training: TrainingConfig | None, options: dict[str, Any],
                  num_moves: int) -> tuple[SearchConfig, TrainingConfig]:
    """The search and training values of a run on a game of ``num_moves`` moves: ``search`` and ``training``
    with the keywords ``options`` (fields of either; None values are left out) replaced, each made and
    validated once, the defaults that depend on the opponent decided.

    Unless a temperature is given (a keyword, or a non-zero one in ``search``), self-play samples
    its opening with :data:`TEMPERATURE` and other opponents play the most selected move; see
    :meth:`TrainingConfig.resolved` for the noise, which the returned search carries as its
    :class:`~treelab.mcts.config.RootNoise` (a ``noise=RootNoise(...)`` keyword or a search's own noise
    sets the training's share and alpha). The old keywords ``config`` (``search``) and
    ``how`` (``choice``) are accepted with a :class:`DeprecationWarning`.

    Raises:
        UnknownOptionError: a keyword that names no option.
    """
    options = resolve_aliases(options, {"how": "choice", "config": "search"})
    if "search" in options:
        search = options.pop("search") or search
    noise = options.get("noise")
    if isinstance(noise, RootNoise):  # the one root-noise value, given as a keyword
        options = {**options, "noise": noise.fraction, "alpha": noise.alpha}
    elif noise is None and search is not None and search.noise is not None and (training is None
                                                                                 or training.noise is None):
        options = {**options, "noise": search.noise.fraction, "alpha": search.noise.alpha}
    searching = option_names()
    training_names = {f.name for f in fields(TrainingConfig)}
    unknown = sorted(set(options) - searching - training_names)
    if unknown:
        raise UnknownOptionError(f"unknown option {unknown[0]!r}: use one of "
                                 f"{', '.join(sorted(searching | training_names))}")
    given = {k: v for k, v in options.items() if k in training_names and v is not None}
    if "temperature_moves" in options:  # None is a value here: every move
        given["temperature_moves"] = options["temperature_moves"]
    if training is None:
        training = TrainingConfig(**given)
    elif given:
        training = replace(training, **given)
    training = training.resolved(num_moves)
    wanted = {k: v for k, v in options.items() if k in searching and k != "noise"}  # the noise: training's
    if wanted.get("temperature") is None and not (search is not None and search.temperature):
        default = TEMPERATURE if training.self_play else 0.0
        if default or search is None:
            wanted["temperature"] = default
    root = RootNoise(training.alpha, training.noise) if training.noise and training.alpha else None
    if search is not None and search.noise is not None and root is None:
        search = replace(search, noise=None)  # no noise in this run (SearchConfig.of leaves None out)
    elif root != (search.noise if search is not None else None):
        wanted["noise"] = root
    return SearchConfig.of(search, **wanted), training
