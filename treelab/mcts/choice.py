"""Move choice and the principal variation: one rule, used by players, analyse, stats and diagrams.

A node's ``nb_visit`` counts every simulation whose stored path passed through
it, including those of searches rooted deeper in a game; choosing by it
replays whatever was played before (docs/design.md, *Semantics*). Moves are chosen
from ``nb_select`` instead, the simulations that *selected* among the node's
children. The rule, in order:

1. a proven win for the mover is played (the most selected of them);
2. a proven loss is never played while a sibling is not proven lost;
3. the most selected child (ties: more visits, then the first created).

:func:`preference` writes the rule once as a sort key over ``(proven,
nb_select, nb_visit)``; :func:`best_child` applies it to nodes,
:func:`best_index` to rows (the SQL and array statistics), and
:func:`principal_variation` follows it down. :func:`choose_move` adds
AlphaZero's temperature sampling (Silver et al. 2017) over ``nb_select``.
"""

from __future__ import annotations

import math
import random

from ..errors import BudgetError
from ..nodes import best_index, preference
from ..positions import PositionTable
from ..tree import SQRT2, TreeNode
from .config import CHOICES, check_name, resolve_aliases
from .scores import node_score

__all__ = [
    "best_child",
    "best_index",
    "check_exploration",
    "choose_move",
    "preference",
    "principal_variation",
]


def best_child(node: TreeNode) -> TreeNode | None:
    """The child to play from ``node`` by the rule above, or None for a leaf."""
    kids = node.children_view
    i = best_index([(k.proven, k.nb_select, k.nb_visit) for k in kids])
    return None if i is None else kids[i]


def principal_variation(node: TreeNode, limit: int | None = None) -> list[TreeNode]:
    """The line of :func:`best_child` below ``node`` (not included), down to an unvisited node or a leaf.

    Args:
        node: where the line starts.
        limit: the most moves to follow (None: down to a leaf).
    """
    line: list[TreeNode] = []
    while limit is None or len(line) < limit:
        nxt = best_child(node)
        if nxt is None or nxt.nb_visit == 0:
            break
        line.append(nxt)
        node = nxt
    return line


def choose_move(
    node: TreeNode,
    *,
    choice: str = "visits",
    c: float = SQRT2,
    temperature: float = 0.0,
    noise: float = 0.0,
    alpha: float = 1.0,
    rng: random.Random | None = None,
    how: str | None = None,
    table: PositionTable | None = None,
) -> TreeNode | None:
    """The move to play from ``node``: :func:`best_child`, or a sample of it.

    A proven win is always played and proven losses are avoided while other
    moves remain. Otherwise ``choice="visits"`` plays the most selected child
    (Browne et al.'s "robust child", counted over the simulations that chose
    here); with ``temperature > 0`` it samples proportionally to
    ``nb_select ** (1 / temperature)`` (AlphaZero). ``choice="ucb1"`` takes the best
    score the search selects by, the original persistent-tree rule (:attr:`~treelab.mcts.config.SearchConfig.choice`;
    ``how`` is its old spelling, accepted with a :class:`DeprecationWarning`): UCB1, or with ``table`` (the position
    table of a graph-statistics search) the graph score (:func:`treelab.mcts.scores.node_score`).

    ``noise > 0`` mixes Dirichlet noise into that choice at the root of the move:
    the move is drawn from ``(1 - noise) * p + noise * Dir(alpha)`` over the
    moves not proven lost, ``p`` being the choice above (one-hot without a
    temperature). AlphaZero (Silver et al. 2017) mixes ``Dir(alpha)`` into the
    root's priors with ``noise = 0.25``; UCT has no priors, so treelab mixes it
    into what the search's counts make it play.

    Raises:
        UnknownOptionError: an unknown ``choice``.
        BudgetError: a negative temperature, or noise outside [0, 1].
    """
    if how is not None:
        choice = resolve_aliases({"how": how})["choice"]
    check_exploration(temperature, noise, alpha, choice)
    best = best_child(node)
    if best is None or best.proven == 1 or (noise == 0 and choice == "visits" and temperature == 0):
        return best
    kids = [k for k in node.children_view if k.nb_visit > 0] or list(node.children_view)
    safe = [k for k in kids if k.proven != -1] or kids
    rng = rng or random.Random()
    if choice == "ucb1":
        top_ucb = max(safe, key=lambda k: _or_inf(node_score(k, c, table).total))
        if noise == 0:
            return top_ucb
        weights = [1.0 if k is top_ucb else 0.0 for k in safe]
    elif temperature > 0 and any(k.nb_select for k in safe):
        top = max(k.nb_select for k in safe)
        weights = [(k.nb_select / top) ** (1.0 / temperature) for k in safe]
    else:
        weights = [1.0 if k is best else 0.0 for k in safe]
    if noise > 0:
        total = sum(weights)
        gammas = [rng.gammavariate(alpha, 1.0) for _ in safe]
        spread = sum(gammas) or 1.0
        weights = [(1 - noise) * w / total + noise * g / spread for w, g in zip(weights, gammas, strict=True)]
    return rng.choices(safe, weights=weights)[0]


def _or_inf(score: float | None) -> float:
    return math.inf if score is None else score


def check_exploration(temperature: float, noise: float = 0.0, alpha: float = 1.0, choice: str = "visits") -> None:
    """Refuse exploration settings that mean nothing, naming the bad value.

    Raises:
        UnknownOptionError: an unknown ``choice``.
        BudgetError: a negative temperature, noise outside [0, 1], alpha <= 0.
    """
    check_name("move choice", choice, CHOICES)
    if not temperature >= 0 or temperature == float("inf"):
        raise BudgetError(f"temperature {temperature!r} must be a finite number >= 0 (0: the most selected move)")
    if not 0.0 <= noise <= 1.0:
        raise BudgetError(f"noise fraction {noise!r} must be in [0, 1] (AlphaZero: 0.25)")
    if not alpha > 0 or alpha == float("inf"):
        raise BudgetError(f"dirichlet alpha {alpha!r} must be a finite number > 0 (AlphaZero: about 10 / moves)")
