"""Move choice and the principal variation: one rule, used by players, analyse, stats and diagrams.

A node's ``nb_visit`` counts every simulation whose stored path passed through
it, including those of searches rooted deeper in a game; choosing by it
replays whatever was played before (DESIGN.md, *Semantics*). Moves are chosen
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

import random
from collections.abc import Sequence
from typing import Literal

from ..errors import BudgetError
from ..tree import SQRT2, TreeNode

__all__ = ["MoveChoice", "best_child", "best_index", "choose_move", "preference", "principal_variation"]

MoveChoice = Literal["visits", "ucb1"]
"""How a UCT player picks its move: ``"visits"`` (the most selected child) or ``"ucb1"`` (best UCB1)."""


def preference(proven: int | None, selected: int, visits: int) -> tuple[int, int, int]:
    """The sort key of the move-choice rule: the child with the largest key is played.

    Args:
        proven: the child's proof for the player moving into it (1, 0, -1 or None).
        selected: its ``nb_select``.
        visits: its ``nb_visit`` (only breaks ties).
    """
    return (2 if proven == 1 else 0 if proven == -1 else 1, selected, visits)


def best_index(rows: Sequence[tuple[int | None, int, int]]) -> int | None:
    """The position in ``rows`` (``(proven, nb_select, nb_visit)`` in creation order) of the move to play.

    Ties go to the first row. None for no rows.
    """
    best, key = None, None
    for i, row in enumerate(rows):
        k = preference(*row)
        if key is None or k > key:
            best, key = i, k
    return best


def best_child(node: TreeNode) -> TreeNode | None:
    """The child to play from ``node`` by the rule above, or None for a leaf."""
    kids = node.kids
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
    how: str = "visits",
    c: float = SQRT2,
    temperature: float = 0.0,
    rng: random.Random | None = None,
) -> TreeNode | None:
    """The move to play from ``node``: :func:`best_child`, or a sample of it.

    A proven win is always played and proven losses are avoided while other
    moves remain. Otherwise ``how="visits"`` plays the most selected child
    (Browne et al.'s "robust child", counted over the simulations that chose
    here); with ``temperature > 0`` it samples proportionally to
    ``nb_select ** (1 / temperature)`` (AlphaZero). ``how="ucb1"`` takes the best
    UCB1 score, the original persistent-tree rule.

    Raises:
        BudgetError: an unknown ``how`` or a negative temperature.
    """
    if how not in ("visits", "ucb1"):
        raise BudgetError(f"unknown move choice {how!r}: use 'visits' or 'ucb1'")
    if not temperature >= 0:
        raise BudgetError(f"temperature {temperature!r} must be a number >= 0")
    best = best_child(node)
    if best is None or best.proven == 1 or (how == "visits" and temperature == 0):
        return best
    kids = [k for k in node.kids if k.nb_visit > 0] or list(node.kids)
    safe = [k for k in kids if k.proven != -1] or kids
    if how == "ucb1":
        return max(safe, key=lambda k: k.ucb1(c))
    chosen = [k for k in safe if k.nb_select > 0]
    if not chosen:
        return best
    rng = rng or random.Random()
    top = max(k.nb_select for k in chosen)
    weights = [(k.nb_select / top) ** (1.0 / temperature) for k in chosen]
    return rng.choices(chosen, weights=weights)[0]
