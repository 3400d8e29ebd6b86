"""DeepMind mctx's search trees: a ``mctx.Tree`` (or its arrays), one batch index.

mctx (``mctx.muzero_policy``, ``mctx.gumbel_muzero_policy``, ...) returns its tree in
``policy_output.search_tree``: arrays ``[B, N]`` per node (``node_visits``, ``node_values``,
``parents``, ``action_from_parent``) and ``[B, N, A]`` per node and action (``children_index``,
``children_prior_logits``, ``children_rewards``, ``children_discounts``). Node 0 is the root;
an unexpanded child's index is -1.

**Values and the discount sign.** mctx's ``node_values[n]`` is the mean value of node ``n`` for
the player *to move* there, and an edge's value for the player who takes it is
``q = children_rewards[p, a] + children_discounts[p, a] * node_values[c]`` (``tree.qvalues``).
Two-player zero-sum games use a discount of **-1** (the next player's value is the mover's
loss, as in mctx's and pgx's examples: the reward is the mover's, the discount -1 while the game
goes on and 0 once it ended). treelab stores the mover's view, so a child's value sum is
``q * visits``, whatever discounts the search used; values must be in [-1, 1] (give
``value_scale`` to map another range). The root has no edge: its mover is the other player of a
two-player game, so its value sum is ``-node_values[0] * visits`` (and the nodes on the way to the
searched position take the sign of their mover).

mctx's root visit count includes its first evaluation (``num_simulations + 1``), so the root has
one visit more than its children together. A node's prior is the softmax of its parent's
``children_prior_logits`` over the moves the game allows there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ImportFormatError
from ..games import Game, find_game
from ..tree import Tree
from .build import Builder, Stats

__all__ = ["MctxOptions", "from_mctx"]

_ARRAYS = ("node_visits", "node_values", "children_index", "children_prior_logits", "children_rewards",
           "children_discounts")


@dataclass(frozen=True)
class MctxOptions:
    """How to read an mctx tree beyond its arrays."""

    batch: int = 0
    """The batch index of the tree to import."""
    moves: Sequence[int | str] = ()
    """The moves from the game's start to the searched position (the root of mctx's tree)."""
    action_to_move: Callable[[int], int] | None = None
    """mctx's action index -> the game's move number (None: ``action + game.first_move``, a policy vector's
    place: OpenSpiel's action ids as they are, treelab's Connect Four columns and tic-tac-toe cells from 0)."""
    value_scale: float = 1.0
    """Values are divided by it to fall in [-1, 1]."""


def _array(tree: Any, name: str, batch: int) -> np.ndarray:
    try:
        value = tree[name] if isinstance(tree, Mapping) else getattr(tree, name)
        return np.asarray(value)[batch]
    except (KeyError, AttributeError, IndexError, TypeError) as exc:
        raise ImportFormatError(f"mctx tree (batch {batch}): no array {name!r} with that batch ({exc}): give "
                                "policy_output.search_tree, or a mapping of its arrays") from None


def from_mctx(tree: Any, game: str | Game, options: MctxOptions | None = None, **kwargs: Any) -> Tree:
    """A tree from an mctx search tree (``policy_output.search_tree``, or a mapping of its arrays as numpy).

    Args:
        tree: a ``mctx.Tree``, or an object or mapping with its arrays (see the module doc).
        game: the game searched.
        options: batch index, searched position, action mapping, value scale (:class:`MctxOptions`);
            or give them as keywords (``batch=0, moves="44"``).

    Raises:
        ImportFormatError: a move the game forbids, values outside [-1, 1] after ``value_scale``, a child index
            that is no node of the tree.
    """
    opts = options if options is not None else MctxOptions(**kwargs)
    the_game = find_game(game)
    visits, values, kids, logits, rewards, discounts = (_array(tree, name, opts.batch) for name in _ARRAYS)
    scale = float(opts.value_scale)
    builder = Builder(the_game, f"mctx tree (batch {opts.batch})")
    path, position = builder.start(the_game.parse(list(opts.moves)))
    to_move = position.to_move
    root_visits = int(visits[0])
    root_value = float(values[0]) / scale  # for the player to move at the root
    for node in path:
        sign = 1.0 if node.mover == to_move else -1.0
        builder.set(node, Stats(visits=root_visits, value_sum=sign * root_value * root_visits, selected=0),
                    position, "the root" if node is path[-1] else "a move before the root")
    first = the_game.first_move
    mapping = opts.action_to_move or (lambda a: a + first)
    stack = [(0, path[-1], position)]
    while stack:
        index, node, state = stack.pop()
        row = kids[index]
        expanded = np.flatnonzero(row >= 0)
        if not len(expanded):
            continue
        legal = state.legal_moves() if not state.is_terminal else []
        moves_of = {a: mapping(int(a)) for a in range(len(row))}
        allowed = [a for a in range(len(row)) if moves_of[a] in legal]
        prior = _softmax(logits[index], allowed)
        for action in expanded.tolist():
            child_index = int(row[action])
            where = f"node {child_index} (action {action} of node {index})"
            if not 0 < child_index < len(visits):
                raise ImportFormatError(f"{builder.source}: {where}: children_index {child_index} is not a node of "
                                        f"the tree's {len(visits)}: give the arrays mctx returned, unchanged")
            child, after = builder.child(node, state, moves_of[action], where)
            n = int(visits[child_index])
            q = (float(rewards[index, action]) + float(discounts[index, action]) * float(values[child_index])) / scale
            builder.set(child, Stats(visits=n, value_sum=q * n, prior=prior.get(action)), after, where)
            stack.append((child_index, child, after))
    return builder.tree


def _softmax(logits: np.ndarray, allowed: list[int]) -> dict[int, float]:
    """The softmax of ``logits`` over the ``allowed`` actions, by action."""
    if not allowed:
        return {}
    chosen = np.asarray(logits, dtype=np.float64)[allowed]
    weights = np.exp(chosen - chosen.max())
    probs = weights / weights.sum()
    return dict(zip(allowed, probs.tolist(), strict=True))
