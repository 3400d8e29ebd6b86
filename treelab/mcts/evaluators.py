"""Position evaluators for PUCT: move priors and a value for the player to move.

An evaluator is a plain function (or callable object) behind the
:data:`Evaluator` alias, as AlphaZero's network is for its search (Silver et
al. 2017, 2018): given a position and the search's random generator it
returns an :class:`Evaluation` with a prior probability for every legal move
and the expected reward of the player to move, in [0, 1] (1 win, 0.5 draw,
0 loss). Rewards in [0, 1] match the tree's ``nb_win``/``nb_draw`` counts.

Built-ins:

- :class:`RolloutEvaluator` (``"rollout"``): uniform priors and the result of
  a random (or decisive) playout as the value, the classic MCTS evaluation
  used as a stand-in for a network (OpenSpiel's ``RandomRolloutEvaluator``).
- :class:`HeuristicEvaluator` (``"heuristic"``): priors from immediate wins,
  forced blocks, new threats, moves that hand the opponent a win, and the
  game's :meth:`~treelab.games.State.centrality` (the number of four-in-a-row
  lines through the cell a Connect Four disc lands on; lines through a cell in
  tic-tac-toe); the value is a playout result as above. Only the game
  interface is used: a game may supply a faster equal form of the weights
  (:meth:`~treelab.games.State.prior_weights`, Connect Four's bitboards).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from ..errors import BudgetError, UnknownOptionError
from ..games import Game, State, find_game
from .config import SearchConfig
from .policies import PlayoutFn, find_playout

if TYPE_CHECKING:
    from ..learn.model import Model

__all__ = [
    "EVALUATORS",
    "MODEL_BATCH",
    "BatchEvaluator",
    "Evaluation",
    "Evaluator",
    "HeuristicEvaluator",
    "ModelEvaluator",
    "RolloutEvaluator",
    "evaluator_of",
    "find_evaluator",
    "generic_weights",
    "uniform_priors",
]


class Evaluation(NamedTuple):
    """What an evaluator says about one position."""

    priors: Mapping[int, float]
    """Prior probability of every legal move (they sum to 1): PUCT's ``P``."""
    value: float
    """Expected reward of the player to move, in [0, 1] (1 win, 0.5 draw, 0 loss)."""


Evaluator = Callable[[State, random.Random], Evaluation]
"""``evaluate(state, rng) -> Evaluation`` for a non-terminal ``state``; ``rng`` is the search's generator."""


@runtime_checkable
class BatchEvaluator(Protocol):
    """An evaluator that also takes many positions at once: PUCT then evaluates its new leaves in batches
    (:meth:`treelab.mcts.puct.PUCTPhases.run_batch`, with virtual loss)."""

    batch_size: int
    """Leaves per call of :meth:`evaluate_many` (1: one at a time, no batches)."""

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        """One position."""

    def evaluate_many(self, states: Sequence[State], rng: random.Random) -> list[Evaluation]:
        """Many positions, in order."""


MODEL_BATCH = 1
"""Leaves a model-guided PUCT evaluates per batch unless told otherwise: one at a time. Batches of 8 ran 1.47x the
simulations a second (``benchmarks/model_search.py``), but the learning loop's final model scored 0.825
(0.766-0.871) against fresh UCT with them and 0.877 (0.825-0.916) without, 200 games each at 200 simulations
(``docs/notes/learning-loop.md``): the virtual losses bend a search of a few hundred simulations, so batching is
asked for (``ModelEvaluator(batch=8)``), not the default."""

def uniform_priors(state: State) -> dict[int, float]:
    """The same prior for every legal move."""
    legal = state.legal_moves()
    p = 1.0 / len(legal)
    return dict.fromkeys(legal, p)


def _rollout_value(state: State, playout: PlayoutFn, rollouts: int, rng: random.Random) -> float:
    """Mean reward of the player to move over ``rollouts`` playouts from ``state``."""
    me = state.to_move
    total = 0.0
    for _ in range(rollouts):
        winner = playout(state, rng)
        total += 0.5 if winner is None else (1.0 if winner == me else 0.0)
    return total / rollouts


class RolloutEvaluator:
    """Uniform priors; the value is the mean result of ``rollouts`` playouts.

    With one rollout the value is exactly 1, 0.5 or 0, so PUCT backs up the
    playout's real result, as UCT does.

    Args:
        playout: ``"random"`` (uniform moves), ``"decisive"`` or a playout function.
        rollouts: playouts per evaluation.
    """

    def __init__(self, *, playout: str | PlayoutFn = "random", rollouts: int = 1) -> None:
        if rollouts < 1:
            raise BudgetError(f"rollouts {rollouts!r} must be at least 1")
        self.playout = find_playout(playout)
        self.rollouts = rollouts
        self.name = "rollout"

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        return Evaluation(uniform_priors(state), _rollout_value(state, self.playout, self.rollouts, rng))


class HeuristicEvaluator:
    """Priors from threats and centrality; the value from playouts.

    The priors are the weights of :func:`generic_weights` (immediate wins, else
    blocks, else centrality scaled up per threat the move creates and down when
    it hands the opponent a win), normalised; a game may compute the same
    weights faster in :meth:`~treelab.games.State.prior_weights`. A game
    without a centrality gets 1.0 for every move.

    Args:
        playout: the value's playout policy, ``"random"`` or ``"decisive"``.
        rollouts: playouts per evaluation.
        threat_bonus: factor per new immediate win the move creates.
        blunder_weight: factor for a move that hands the opponent an immediate win.
    """

    def __init__(
        self,
        *,
        playout: str | PlayoutFn = "random",
        rollouts: int = 1,
        threat_bonus: float = 2.0,
        blunder_weight: float = 0.02,
    ) -> None:
        if rollouts < 1:
            raise BudgetError(f"rollouts {rollouts!r} must be at least 1")
        if threat_bonus <= 0 or blunder_weight <= 0:
            raise BudgetError("threat_bonus and blunder_weight must be positive")
        self.playout = find_playout(playout)
        self.rollouts = rollouts
        self.threat_bonus = threat_bonus
        self.blunder_weight = blunder_weight
        self.name = "heuristic"

    def priors(self, state: State) -> dict[int, float]:
        """The prior of every legal move (see the class docstring)."""
        weights = state.prior_weights(self.threat_bonus, self.blunder_weight)
        if weights is None:
            weights = generic_weights(state, self.threat_bonus, self.blunder_weight)
        return _normalised(weights)

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        return Evaluation(self.priors(state), _rollout_value(state, self.playout, self.rollouts, rng))


def generic_weights(state: State, threat_bonus: float, blunder_weight: float) -> dict[int, float]:
    """:class:`HeuristicEvaluator`'s weights before normalising, from the game interface alone.

    The player to move can win at once: the winning moves, weight 1 each; else
    the opponent threatens to: the blocking moves; else every legal move gets
    its :meth:`~treelab.games.State.centrality`, times ``threat_bonus`` per
    immediate win it creates, times ``blunder_weight`` if the opponent can then
    win at once.
    """
    wins = state.winning_moves() or state.threats()
    if wins:
        return dict.fromkeys(wins, 1.0)
    weights = {}
    for move in state.legal_moves():
        after = state.play(move)
        weight = state.centrality(move)
        if not after.is_terminal:
            weight *= threat_bonus ** len(after.threats())  # my immediate wins, were it my turn
            if after.winning_moves():  # the opponent wins at once
                weight *= blunder_weight
        weights[move] = weight
    return weights


def _normalised(weights: dict[int, float]) -> dict[int, float]:
    total = sum(weights.values())
    return {m: w / total for m, w in weights.items()}


class ModelEvaluator:
    """An :data:`~treelab.mcts.evaluators.Evaluator` that asks a fitted model.

    Args:
        model: a :class:`~treelab.learn.model.Model` or the path of its file.
        game: if given, the model is checked against it now (else at the first position).
        mix: the playout's share of the value: ``(1 - mix) * model + mix * playout result``
            (0: the model's value alone, no playout).
        playout: the playout policy when ``mix > 0``.
        batch: new leaves PUCT evaluates together (:class:`BatchEvaluator`; 1: one at a time).

    Raises:
        ModelFileError: no such model file, or a damaged one.
        ModelMismatchError: a model of another game or encoding.
    """

    def __init__(self, model: Model | str | os.PathLike[str], *, game: Game | str | None = None, mix: float = 0.0,
                 playout: str | PlayoutFn = "random", batch: int = MODEL_BATCH) -> None:
        if not 0.0 <= mix <= 1.0:
            raise BudgetError(f"mix {mix!r} must be in [0, 1]: the playout's share of the value")
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise BudgetError(f"batch {batch!r} must be a whole number >= 1 (1: one position at a time)")
        self.batch_size = batch
        self.mix = mix
        self.playout = find_playout(playout)
        from ..learn.model import Model, load_model  # numpy: loaded with the first model, not with every search

        self.model = model if isinstance(model, Model) else load_model(model, game)
        if isinstance(model, Model) and game is not None:
            model.check_game(find_game(game) if isinstance(game, str) else game)
        self._checked: Game | None = None if game is None else (game if isinstance(game, Game) else None)
        self.name = f"model:{self.model.path}" if self.model.path else "model"

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        if state.game is not self._checked:
            self.model.check_game(state.game)
            self._checked = state.game
        priors, value = self.model.predict(state)
        return Evaluation(priors, self._mixed(state, value, rng))

    def evaluate_many(self, states: Sequence[State], rng: random.Random) -> list[Evaluation]:
        """:meth:`__call__` for many positions, the network run once over all of them."""
        if states and states[0].game is not self._checked:
            self.model.check_game(states[0].game)
            self._checked = states[0].game
        return [Evaluation(priors, self._mixed(state, value, rng))
                for state, (priors, value) in zip(states, self.model.predict_many(states), strict=True)]

    def _mixed(self, state: State, value: float, rng: random.Random) -> float:
        """The model's ``value`` blended with a playout's result (``mix``)."""
        if self.mix <= 0.0:
            return value
        winner = self.playout(state, rng)
        result = 0.5 if winner is None else float(winner == state.to_move)
        return (1.0 - self.mix) * value + self.mix * result

    def refresh(self) -> bool:
        """Read the model file again if it changed since (a refit); whether the model changed."""
        if self.model.path is None:
            return False
        from ..learn.model import load_model

        fresh = load_model(self.model.path)
        changed = fresh is not self.model
        if changed:
            if self._checked is not None:
                fresh.check_game(self._checked)
            self.model = fresh
        return changed


EVALUATORS: dict[str, Callable[..., Evaluator]] = {
    "rollout": RolloutEvaluator,
    "heuristic": HeuristicEvaluator,
}
"""Evaluator factories by name (``puct:...,evaluator=heuristic``); keywords: ``playout``, ``rollouts``."""


def find_evaluator(name: str | Evaluator, **options: object) -> Evaluator:
    """The evaluator called ``name``, built with ``options`` (a callable is returned as it is).

    ``model:PATH`` is a fitted model's :class:`ModelEvaluator`
    (options: ``game``, checked against the model at once; ``mix`` and ``playout``).

    Raises:
        UnknownOptionError: ``name`` is not a known evaluator.
        ModelFileError, ModelMismatchError: ``model:PATH`` names no model file, or one of another game.
    """
    if callable(name):
        return name
    if name.startswith("model:"):
        return ModelEvaluator(name[len("model:"):], **options)  # type: ignore[arg-type]
    try:
        factory = EVALUATORS[name]
    except KeyError:
        raise UnknownOptionError(
            f"unknown evaluator {name!r}: use one of {', '.join(EVALUATORS)}, or model:PATH"
        ) from None
    return factory(**options)


def evaluator_of(search: SearchConfig, game: Game | None = None) -> Evaluator:
    """PUCT's leaf evaluator that ``search`` names: its :attr:`~SearchConfig.model` (checked against
    ``game`` now when given), else its :attr:`~SearchConfig.evaluator` with its playout policy."""
    if search.model is not None:
        return find_evaluator(f"model:{search.model}", game=game, mix=search.mix, playout=search.playout)
    return find_evaluator(search.evaluator, playout=search.playout)
