"""The ``model:PATH`` evaluator: PUCT's priors and leaf values from a model fitted by ``treelab fit``.

The model (:class:`treelab.learn.model.Model`) runs in plain numpy on its
exported weights, one position per call (the search evaluates one leaf per
simulation). Its value replaces the playout: the search backs up a result
drawn with that mean (see :mod:`treelab.mcts.puct`).
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

from ..errors import BudgetError
from ..games import Game, State
from ..learn.model import Model, load_model
from .evaluators import Evaluation
from .policies import PlayoutFn, find_playout
from .summary import SearchSummary

__all__ = ["ModelEvaluator", "with_model"]


class ModelEvaluator:
    """An :data:`~treelab.mcts.evaluators.Evaluator` that asks a fitted model.

    Args:
        model: a :class:`~treelab.learn.model.Model` or the path of its file.
        game: if given, the model is checked against it now (else at the first position).
        mix: the playout's share of the value: ``(1 - mix) * model + mix * playout result``
            (0: the model's value alone, no playout).
        playout: the playout policy when ``mix > 0``.

    Raises:
        ModelFileError: no such model file, or a damaged one.
        ModelMismatchError: a model of another game or encoding.
    """

    def __init__(self, model: Model | str | os.PathLike[str], *, game: Game | str | None = None, mix: float = 0.0,
                 playout: str | PlayoutFn = "random") -> None:
        if not 0.0 <= mix <= 1.0:
            raise BudgetError(f"mix {mix!r} must be in [0, 1]: the playout's share of the value")
        self.mix = mix
        self.playout = find_playout(playout)
        self.model = model if isinstance(model, Model) else load_model(model, game)
        if isinstance(model, Model) and game is not None:
            from ..games import find_game

            model.check_game(find_game(game) if isinstance(game, str) else game)
        self._checked: Game | None = None if game is None else (game if isinstance(game, Game) else None)
        self.name = f"model:{self.model.path}" if self.model.path else "model"

    def __call__(self, state: State, rng: random.Random) -> Evaluation:
        if state.game is not self._checked:
            self.model.check_game(state.game)
            self._checked = state.game
        priors, value = self.model.predict(state)
        if self.mix > 0.0:
            winner = self.playout(state, rng)
            result = 0.5 if winner is None else float(winner == state.to_move)
            value = (1.0 - self.mix) * value + self.mix * result
        return Evaluation(priors, value)

    def refresh(self) -> bool:
        """Read the model file again if it changed since (a refit); whether the model changed."""
        if self.model.path is None:
            return False
        fresh = load_model(self.model.path)
        changed = fresh is not self.model
        if changed:
            if self._checked is not None:
                fresh.check_game(self._checked)
            self.model = fresh
        return changed


def with_model(summary: SearchSummary, model: Model, state: State) -> SearchSummary:
    """``summary`` with the model's value of ``state`` and its prior of each move (the optional JSON keys)."""
    if state.is_terminal:
        return summary
    model.check_game(state.game)
    priors, value = model.predict(state)
    by_label = {state.game.label(move): p for move, p in priors.items()}
    children = tuple(replace(ch, model_prior=round(by_label.get(ch.move, 0.0), 6)) for ch in summary.children)
    return replace(summary, children=children, model_value=round(value, 6))
