"""PUCT's rules at one node: the score, the priors kept for moves not yet tried, root noise, a value as a result.

The root noise value itself (:class:`~treelab.mcts.config.RootNoise`) is a search option: it lives in
:mod:`treelab.mcts.config` and is re-exported here.

The search loop that uses them is :mod:`treelab.mcts.puct` (see its docstring for the method).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

from ..errors import BudgetError
from ..games import State
from ..nodes import Proof
from ..tree import Tree, TreeNode
from .config import DIRICHLET_FRACTION, RootNoise
from .selection import SelectFn
from .solver import prove_terminal

__all__ = ["DIRICHLET_FRACTION", "RootNoise", "chosen_here", "dirichlet_alpha_for", "select_puct"]


def dirichlet_alpha_for(num_moves: int) -> float:
    """AlphaZero's Dirichlet ``alpha`` "in inverse proportion to the approximate number of legal moves".

    Silver et al. (2018) used 0.3 for chess, 0.15 for shogi and 0.03 for Go,
    about ``10 / moves``; this gives 1.43 for Connect Four and 1.11 for tic-tac-toe.
    """
    if num_moves < 1:
        raise BudgetError(f"num_moves {num_moves!r} must be at least 1")
    return 10.0 / num_moves


def _outcome(value: float, to_move: int, rng: random.Random) -> int | None:
    """One result (the winner, None for a draw) with mean ``value`` for ``to_move`` (see the module doc)."""
    if value >= 1.0:
        return to_move
    if value <= 0.0:
        return 3 - to_move
    if value == 0.5:
        return None
    if value > 0.5:
        return to_move if rng.random() < 2.0 * value - 1.0 else None
    return 3 - to_move if rng.random() < 1.0 - 2.0 * value else None


def select_puct(
    priors: Mapping[TreeNode, float], start: TreeNode | None = None, noisy: Mapping[TreeNode, float] | None = None
) -> SelectFn:
    """PUCT's selection function (a :data:`~treelab.mcts.selection.SelectFn`) over the priors ``priors``.

    The child maximising ``Q + c * P * sqrt(N) / (1 + n)``, unproven children only
    with the solver; an unvisited child's ``Q`` is the parent's value for the
    player to move. At ``start``, the priors in ``noisy`` (root noise) are used
    when it is not empty. Only the node's children are chosen from (the search itself
    also weighs the moves it has not made a node for yet, ``tree.pending``).
    """

    def select(node: TreeNode, c: float, solver: bool) -> TreeNode:
        table = {k.name: p for k, p in noisy.items()} if noisy and node is start else None
        chosen = _pick(node, {}, priors, table, c, solver)
        assert not isinstance(chosen, str)
        return chosen

    return select


def chosen_here(node: TreeNode) -> int:
    """PUCT's ``N`` at ``node``: 1 + the simulations that chose among its children (their ``nb_select`` summed).

    AlphaZero's ``N(s) = sum_b N(s, b)`` counts the edges taken from ``s``; mctx adds the node's own first
    visit, so in a fresh search ``N`` is the node's visit count. In the persistent tree a node on a game's
    line also holds the visits of searches started deeper, which never chose there; counting them made the
    move a game played look explored already and spread a search's choices over its siblings (issue 20,
    point 0). So ``N`` and each child's ``n`` are edge counts (``nb_select``); ``Q`` stays the child's mean
    over all its visits, deeper searches' included (KataGo's graph search does the same:
    ``docs/GraphSearch.md``).
    """
    return 1 + sum(kid.nb_select for kid in node.children_view)


def _pick(node: TreeNode, waiting: Mapping[str, float], priors: Mapping[TreeNode, float],
          noisy: Mapping[str, float] | None, c: float, solver: bool) -> TreeNode | str:
    """The child, or the label of a waiting move (``tree.pending``), maximising PUCT's score.

    ``noisy``: the priors by label with root noise (None: ``priors`` and ``waiting`` as they are).
    """
    scale = c * math.sqrt(chosen_here(node))
    fpu = 1.0 - node.mean if node.nb_visit else 0.5  # the parent's value for the player to move
    best: TreeNode | str | None = None
    best_score = -math.inf
    for kid in node.children_view:
        if solver and kid.proven is not None:
            continue
        q = kid.mean if kid.nb_visit else fpu  # value sums included (treelab.nodes.mean_reward)
        prior = priors.get(kid, 0.0) if noisy is None else noisy.get(kid.name, 0.0)
        score = q + scale * prior / (1 + kid.nb_select)
        if score > best_score:
            best_score = score
            best = kid
    for label, prior in waiting.items():  # no visits yet: Q is the first-play urgency, n = 0
        score = fpu + scale * (prior if noisy is None else noisy.get(label, 0.0))
        if score > best_score:
            best_score = score
            best = label
    if best is None:  # every move proven but the node not (a tree grown without proofs)
        best = max(node.children_view, key=lambda k: k.nb_visit)
    return best


def _leaf_result(node: TreeNode, state: State, value: float, rng: random.Random) -> int | None:
    """The result backed up for a freshly evaluated leaf (exact once the leaf is proven)."""
    if node.proven is not None:  # e.g. a winning move for the player to move: a fact, not a guess
        if node.proven == Proof.DRAW:
            return None
        return node.mover if node.proven == Proof.WIN else 3 - node.mover
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise BudgetError(f"evaluator value {value!r} is not in [0, 1] (the reward of the player to move)")
    return _outcome(value, state.to_move, rng)


def _expand(tree: Tree, node: TreeNode, state: State, priors: Mapping[int, float], solver: bool) -> None:
    """Keep the prior of every legal move of ``node`` (``tree.priors`` for its children, ``tree.pending``
    for the moves not made yet); with the solver, make and prove at once the children that end the game.

    Priors are renormalised over the legal moves (missing moves get 0; all
    zero becomes uniform), so an evaluator may return raw weights.
    """
    game = tree.game
    have = {kid.name: kid for kid in node.children_view}
    legal = state.legal_moves()
    weights = [float(priors.get(move, 0.0)) for move in legal]
    for move, weight in zip(legal, weights, strict=True):
        if not weight >= 0.0:
            raise BudgetError(f"evaluator prior {weight!r} for move {game.label(move)} is negative or not a number")
    total = 0.0
    for weight in weights:  # added in order, as _puct.c does (sum() compensates since Python 3.12)
        total += weight
    waiting: dict[str, float] = {}
    for move, weight in zip(legal, weights, strict=True):
        label = game.label(move)
        prior = weight / total if total > 0 else 1.0 / len(legal)
        kid = have.get(label)
        if kid is None and solver and state.play(move).is_terminal:
            kid = tree.add_child(node, label, state.to_move)
        if kid is None:
            waiting[label] = prior
            continue
        tree.priors[kid] = prior
        if solver and kid.proven is None:
            after = state.play(move)
            if after.is_terminal:
                tree.mark_dirty(kid)
                kid.proven = prove_terminal(kid, after.winner)
    tree.pending[node] = waiting


def _noisy_priors(kids: Sequence[TreeNode], waiting: Mapping[str, float], priors: Mapping[TreeNode, float],
                  noise: RootNoise, rng: random.Random) -> dict[str, float]:
    """``(1 - fraction) * P + fraction * Dir(alpha)`` over the children and waiting moves, by label
    (Silver et al. 2017)."""
    table = {kid.name: priors.get(kid, 0.0) for kid in kids}
    table.update(waiting)
    draws = [rng.gammavariate(noise.alpha, 1.0) for _ in table]
    total = sum(draws) or 1.0
    return {label: (1.0 - noise.fraction) * p + noise.fraction * d / total
            for (label, p), d in zip(table.items(), draws, strict=True)}
