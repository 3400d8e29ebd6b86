"""Policy/value models fitted from stored trees: the dataset, the fit, the model file and its inference.

``treelab.fit(db, out)`` fits (:mod:`treelab.learn.fitting`), ``treelab.load_model(path)`` loads
(:mod:`treelab.learn.model`); the search uses a model through the ``model:PATH`` evaluator
(:class:`treelab.mcts.evaluators.ModelEvaluator`).
"""

from __future__ import annotations

from .model import Model, load_model

__all__ = ["Model", "load_model"]
