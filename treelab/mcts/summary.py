"""What a search found and what to play: :func:`choose_move`, :func:`summarize`, the JSON values."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..nodes import Proof, mean_reward, preference, proof_word
from ..positions import PositionTable, player_one
from ..tree import SQRT2, Moves, Tree, TreeNode
from .choice import choose_move
from .config import Statistics
from .scores import Edge, Score, node_score

if TYPE_CHECKING:
    from ..games import State
    from ..learn.model import Model

__all__ = ["ChildStats", "GraphStats", "SearchSummary", "Tally", "choose_move", "search_value", "summarize", "tally",
           "with_model"]


Tally = tuple[int, int, int, float]
"""A node's ``(nb_visit, nb_win, nb_draw, value_sum)`` at one moment: what :func:`search_value` counts from."""


def tally(node: TreeNode | None) -> Tally:
    """``node``'s counts now (a node not made yet: zeros)."""
    return (0, 0, 0, 0.0) if node is None else (node.nb_visit, node.nb_win, node.nb_draw, node.value_sum)


def search_value(node: TreeNode | None, before: Tally) -> float | None:
    """The value for the player to move at ``node`` of the simulations run there since ``before`` (a
    :func:`tally`): this search's own estimate in [0, 1], AlphaZero's root value; the proof once the position
    is proven; None when no simulation ran and nothing is proven.

    The node's stored mean is not that estimate on a persistent tree: it also counts the visits of searches
    made deeper in the same games, which pass through it without choosing there (the visits of the line
    the games went on to play). Self-play logs this value for every move (``games.root_values``: what each
    search thought of its position) and a fit may learn the value from it
    (:attr:`treelab.learn.fitting.FitConfig.root_value`).

    >>> from treelab.tree import Tree
    >>> tree = Tree("tictactoe")
    >>> before = tally(tree.root)
    >>> tree.root.nb_visit, tree.root.nb_win = 4, 1  # four simulations, one won by player two
    >>> search_value(tree.root, before)  # player one, to move, won the other three
    0.75
    """
    if node is None:
        return None
    if node.proven is not None:
        return (1.0 - int(node.proven)) / 2.0
    visits = node.nb_visit - before[0]
    if visits <= 0:
        return None
    return 1.0 - mean_reward(node.nb_win - before[1], node.nb_draw - before[2], visits, node.value_sum - before[3])


@dataclass(frozen=True)
class ChildStats:
    """One move's statistics, from the view of the player who makes it."""

    move: str
    """The move label."""
    nb_visit: int
    """Simulations through the move."""
    nb_win: int
    """Of those, wins for the mover."""
    nb_draw: int
    """Of those, draws."""
    mean: float
    """The mover's mean, :func:`treelab.nodes.mean_reward` (``(nb_win + nb_draw / 2) / nb_visit`` without values)."""
    ucb1: float | None
    """UCB1 score with the search's ``c`` (None when unvisited: +inf)."""
    proven: str | None
    """``"win"``, ``"draw"``, ``"loss"`` for the mover, or None if unknown."""
    action: str | None = None
    """What people read for the move (OpenSpiel's action string, ``"a7a6"``); None for games whose label says it all."""
    model_prior: float | None = None
    """The prior a fitted model gives the move (``analyse --model``); None without a model."""
    graph: GraphStats | None = None
    """With graph statistics: the terms of :attr:`ucb1` (then the graph score) and the position's merged
    counts; None with the classic rule."""
    value_sum: float = 0.0
    """The move's value sum (values in [-1, 1] counted as draws, schema 4); the JSON has it when not 0."""
    prior: float | None = None
    """The stored prior of the move (PUCT's, an imported search's), None: none."""
    nb_select: int = 0
    """Simulations that selected the move here (searches rooted at or above the position): the count the best
    move and the principal variation are chosen by (:mod:`treelab.mcts.choice`); :attr:`nb_visit` also counts
    searches rooted deeper in a game, which pass through without choosing here."""


@dataclass(frozen=True)
class GraphStats:
    """A move's graph-search score terms (:mod:`treelab.mcts.graph`) and its position's merged counts."""

    nb_select: int
    """Simulations that took this edge (its exploration count)."""
    value: float
    """The position's mean reward for the mover, over every path to it (the score's first term)."""
    exploration: float | None
    """``c * sqrt(ln S / s)`` (None: never selected, +inf)."""
    position_visits: int
    """Simulations through the position by any path (transpositions and mirror images merged)."""
    position_wins: int
    """Of those, the mover's wins."""
    position_draws: int
    """Of those, draws."""

    @classmethod
    def of(cls, edge: Edge, score: Score) -> GraphStats:
        """The terms of ``score``, the graph score of ``edge`` (:func:`treelab.mcts.scores.score_terms`)."""
        row = edge.position or (0, 0, 0)
        visits, draws = row[0], row[2]
        return cls(nb_select=edge.selected, value=score.value, exploration=score.exploration, position_visits=visits,
                   position_draws=draws, position_wins=player_one(edge.mover, visits, row[1], draws))  # 1 -> mover

    def to_dict(self) -> dict[str, Any]:
        """The optional keys a child of ``analyse --json`` gets: ``nb_select``, ``value``, ``exploration`` and
        ``position`` (``nb_visit``, ``nb_win`` for the mover, ``nb_draw``)."""
        return {"nb_select": self.nb_select, "value": self.value, "exploration": self.exploration,
                "position": {"nb_visit": self.position_visits, "nb_win": self.position_wins,
                             "nb_draw": self.position_draws}}


@dataclass(frozen=True)
class SearchSummary:
    """What a search found at one position: the ``analyse --json`` object."""

    game: str
    """Game name."""
    moves: str
    """The position, as moves from the start (compact notation)."""
    to_move: int
    """The player to move, 1 or 2."""
    iterations: int
    """Simulations actually run (a solver may stop early once the position is proven)."""
    best_move: str | None
    """The move chosen (None when the game is over)."""
    value: float
    """Mean reward for the player to move over all simulations below the position."""
    proven: str | None
    """``"win"``, ``"draw"`` or ``"loss"`` for the player to move, or None."""
    children: tuple[ChildStats, ...]
    """Per-move statistics in the order of the move-choice rule (:func:`treelab.mcts.choice.preference`):
    proven wins first, proven losses last, then the most selected (``nb_select``), then the most visited;
    the first is :attr:`best_move` unless the search chose by another rule (``choice="ucb1"``, a temperature)."""
    seconds: float = 0.0
    """Wall-clock time of the search."""
    best_action: str | None = None
    """:attr:`best_move` as people read it (OpenSpiel's action string); None as for :attr:`ChildStats.action`."""
    model_value: float | None = None
    """A fitted model's value of the position for the player to move (``analyse --model``); None without one."""
    statistics: str = "classic"
    """The selection statistics whose score :attr:`ChildStats.ucb1` shows (``"graph"`` adds its terms)."""

    def to_dict(self) -> dict[str, Any]:
        """Exactly the ``treelab analyse --json`` object of docs/design.md.

        Each child also has ``"nb_select"`` (the count the best move is chosen by); the children come in the
        order of that rule. Games that show action strings (OpenSpiel's) add ``"action"`` to each child and
        ``"best_action"`` at the top (when there is a best move); other games add nothing.
        """
        data: dict[str, Any] = {
            "game": self.game,
            "moves": self.moves,
            "to_move": self.to_move,
            "iterations": self.iterations,
            "best_move": self.best_move,
            "value": self.value,
            "proven": self.proven,
            "children": [
                {
                    "move": ch.move,
                    "nb_visit": ch.nb_visit,
                    "nb_win": ch.nb_win,
                    "nb_draw": ch.nb_draw,
                    "mean": ch.mean,
                    "ucb1": ch.ucb1,
                    "proven": ch.proven,
                    "nb_select": ch.nb_select,
                    **({} if ch.action is None else {"action": ch.action}),
                    **({} if ch.model_prior is None else {"model_prior": ch.model_prior}),
                    **({} if ch.graph is None else ch.graph.to_dict()),
                    **({"value_sum": ch.value_sum} if ch.value_sum else {}),
                    **({} if ch.prior is None else {"prior": ch.prior}),
                }
                for ch in self.children
            ],
        }
        if self.best_action is not None:
            data["best_action"] = self.best_action
        if self.model_value is not None:
            data["model_value"] = self.model_value
        if self.statistics != "classic":
            data["statistics"] = self.statistics
        return data


def summarize(
    tree: Tree,
    moves: Moves,
    *,
    iterations: int,
    c: float = SQRT2,
    best: TreeNode | None = None,
    seconds: float = 0.0,
    statistics: Statistics = "classic",
) -> SearchSummary:
    """The :class:`SearchSummary` of the position ``moves`` in ``tree``; ``ucb1`` is the score of ``statistics``
    (with ``"graph"``, its terms and the positions' merged counts too)."""
    game = tree.game
    parsed = game.parse(moves)
    node = tree.find(parsed)
    state = game.replay(parsed)
    kids = sorted(node.children_view, key=lambda k: preference(k.proven, k.nb_select, k.nb_visit),
                  reverse=True)  # the move-choice rule's order (ties: creation order, as best_child)
    visits = sum(k.nb_visit for k in kids)
    reward = sum(k.mean * k.nb_visit for k in kids)
    if best is None and not state.is_terminal:
        best = choose_move(node, c=c)
    proof = None if node.proven is None else -node.proven  # for the player to move (not the mover into ``node``)
    if proof is not None and not game.alternating and node.mover == state.to_move:
        proof = -proof  # a double move: the player to move also moved into ``node``
    value = reward / visits if visits else 0.5
    if state.is_terminal:  # the game is over: its result is the value, and a fact
        proof = Proof.of_winner(state.winner, state.to_move)
        value = (proof + 1) / 2
    def action(name: str) -> str | None:  # OpenSpiel's action strings beside the ids
        return game.action_text(state, game.parse_move(name)) if game.shows_actions else None

    table = PositionTable.of(tree) if statistics == "graph" else None

    def graph(k: TreeNode, score: Score) -> GraphStats | None:  # the graph score's terms (the JSON's optional keys)
        return None if table is None else GraphStats.of(Edge.of(k, table.row(k)), score)

    children = tuple(
        ChildStats(
            move=k.name,
            nb_visit=k.nb_visit,
            nb_win=k.nb_win,
            nb_draw=k.nb_draw,
            mean=k.mean,
            ucb1=score.total,
            proven=proof_word(k.proven),
            action=action(k.name),
            graph=graph(k, score),
            value_sum=k.value_sum,
            prior=tree.priors.get(k),
            nb_select=k.nb_select,
        )
        for k in kids
        for score in (node_score(k, c, table),)
    )
    return SearchSummary(
        game=game.name,
        moves=game.notation(parsed),
        to_move=state.to_move,
        iterations=iterations,
        best_move=best.name if best is not None else None,
        value=value,
        proven=proof_word(proof),
        children=children,
        seconds=seconds,
        best_action=action(best.name) if best is not None else None,
        statistics=statistics,
    )


def with_model(summary: SearchSummary, model: Model, state: State) -> SearchSummary:
    """``summary`` with the model's value of ``state`` and its prior of each move (the optional JSON keys)."""
    if state.is_terminal:
        return summary
    model.check_game(state.game)
    priors, value = model.predict(state)
    by_label = {state.game.label(move): p for move, p in priors.items()}
    children = tuple(replace(ch, model_prior=round(by_label.get(ch.move, 0.0), 6)) for ch in summary.children)
    return replace(summary, children=children, model_value=round(value, 6))
