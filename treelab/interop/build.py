"""Building a treelab tree from another search's tree, node by node, checked against the game's rules.

Every importer (:mod:`treelab.interop.rows`, :mod:`~treelab.interop.openspiel`,
:mod:`~treelab.interop.mctx`, :mod:`~treelab.interop.alphazero`) walks its source from the
position searched and hands each node's numbers to a :class:`Builder` as :class:`Stats`. The
builder plays each move on the game (an illegal move is an :class:`~treelab.errors.ImportFormatError`
naming where it came from), creates the node and checks the numbers. Nothing is written: the
result is a plain :class:`~treelab.tree.Tree`, saved or merged like any other
(:mod:`treelab.interop.transfer`).

How foreign numbers become treelab's (:func:`treelab.nodes.mean_reward`): a search that backs up
returns in [-1, 1] gives each node its visit count and the sum of its mover's returns; every such
simulation is one of the node's ``nb_draw`` and the returns are its ``value_sum``, so the mean in
[0, 1] is ``(1 + value_sum / visits) / 2``, the source's own mean ``value_sum / visits`` mapped
from [-1, 1].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ImportFormatError
from ..games import Game, State, find_game
from ..nodes import Proof, TreeNode
from ..tree import Tree

__all__ = ["Builder", "Stats"]

_SLACK = 1e-9
"""Relative slack allowed when a value sum is checked against its simulations (float rounding)."""


@dataclass(frozen=True)
class Stats:
    """One node's numbers in a foreign tree, as treelab stores them."""

    visits: int
    """Simulations through the node."""
    value_sum: float = 0.0
    """Sum of the mover's returns in [-1, 1] of the simulations counted in :attr:`draws`."""
    wins: int = 0
    """Simulations that ended in a whole win for the mover (treelab's own trees; 0 for value searches)."""
    draws: int | None = None
    """Simulations counted as draws, the valued ones included (None: every simulation but the wins)."""
    prior: float | None = None
    """The policy's probability of the move into the node (None: none)."""
    proven: int | None = None
    """A game-theoretic result for the mover (1, 0, -1), None unknown."""
    selected: int | None = None
    """Simulations that selected the node at its parent (None: all of its visits; the root: 0)."""


class Builder:
    """A new tree of ``game`` grown from a foreign tree; ``source`` names it in errors."""

    def __init__(self, game: str | Game, source: str) -> None:
        self.tree = Tree(find_game(game))
        self.source = source
        self.game = self.tree.game

    def start(self, moves: Sequence[int] = ()) -> tuple[list[TreeNode], State]:
        """The nodes from the root along ``moves`` (the searched position) and its position."""
        node, state = self.tree.root, self.game.initial()
        nodes = [node]
        for i, move in enumerate(moves):
            node, state = self.child(node, state, move, f"move {i + 1} of the searched position")
            nodes.append(node)
        return nodes, state

    def child(self, node: TreeNode, state: State, move: int, where: object, *,
              new: bool = False) -> tuple[TreeNode, State]:
        """The child of ``node`` (at ``state``) by ``move``, created if new (``new``: it must be), and its position.

        Raises:
            ImportFormatError: the move is not legal there (``where`` says which node of the source),
                or the child exists already and ``new`` is true.
        """
        game = self.game
        if state.is_terminal or move not in state.legal_moves():
            path = game.notation(game.parse(node.moves)) or "the start"
            raise ImportFormatError(
                f"{self.source}: {where}: move {_label(game, move)!r} is not legal after {path!r} in "
                f"{game.name}: is this a tree of {game.name}? give the game it was searched in")
        label = game.label(move)
        kid = node.child(label)
        if kid is None:
            kid = self.tree.add_child(node, label, state.to_move)
        elif new:
            raise ImportFormatError(f"{self.source}: {where}: the path is given twice: give each node one row")
        return kid, state.play(move)

    def set(self, node: TreeNode, stats: Stats, state: State, where: object) -> None:
        """Add ``stats`` to ``node`` (at ``state``), checked.

        Raises:
            ImportFormatError: counts that are not whole numbers >= 0 or do not add up, a value sum
                out of [-1, 1] per simulation, a prior outside [0, 1], a proof that contradicts the game.
        """
        self._add(node, state, where, stats.visits, stats.value_sum, stats.wins, stats.draws, stats.prior,
                  stats.proven, stats.selected)

    def set_row(self, node: TreeNode, row: Mapping[str, Any], state: State, where: object) -> None:
        """:meth:`set` from a row of the plain format (:mod:`treelab.interop.rows`), without a :class:`Stats`."""
        get = row.get
        self._add(node, state, where, row["visits"], get("value_sum", 0.0), get("wins", 0), get("draws"),
                  get("prior"), get("proven"), get("selected"))

    def _add(self, node: TreeNode, state: State, where: object, visits: Any, value: Any, wins: Any, draws: Any,
             prior: Any, proven: Any, selected: Any) -> None:
        if draws is None:
            draws = visits - wins if type(visits) is int and type(wins) is int else None
        if selected is None:
            selected = visits if node.depth else 0
        if not (type(visits) is int and type(wins) is int and type(draws) is int and type(selected) is int
                and wins >= 0 and draws >= 0 and selected >= 0 and wins + draws <= visits and selected <= visits):
            visits, wins, draws, selected = self._counts(Stats(visits, value, wins, draws, prior, proven, selected),
                                                         node, where)
        if type(value) is not float or not -draws - _SLACK * draws - _SLACK <= value <= draws * (1 + _SLACK) + _SLACK:
            value = self._value(value, draws, where)
        if prior is not None and (type(prior) is not float or not 0.0 <= prior <= 1.0):
            prior = self._prior(prior, where)
        proof = None if proven is None else _proof(proven, where, self.source)
        if proof is not None:
            self._check_proof(node, proof, proven, state, where)
        node.nb_visit += visits
        node.nb_win += wins
        node.nb_draw += draws
        node.nb_select += selected
        if value:
            node.value_sum = node.value_sum + float(value)
            self.tree.valued = True
        if prior is not None and node not in self.tree.priors:
            self.tree.priors[node] = float(prior)
        if proof is not None:
            node.proven = proof

    def _counts(self, stats: Stats, node: TreeNode, where: object) -> tuple[int, int, int, int]:
        """The counts of ``stats`` checked the slow way (whole numbers from floats allowed), or the error."""
        source = self.source
        visits, wins = _whole(stats.visits, "visits", where, source), _whole(stats.wins, "wins", where, source)
        draws = visits - wins if stats.draws is None else _whole(stats.draws, "draws", where, source)
        selected = (visits if node.depth else 0) if stats.selected is None else _whole(
            stats.selected, "selected", where, source)
        if wins + draws > visits or selected > visits or draws < 0:
            raise ImportFormatError(f"{source}: {where}: wins {wins} + draws {draws} or selected {selected} "
                                    f"exceed visits {visits}: give counts that add up")
        return visits, wins, draws, selected

    def _value(self, value: object, draws: int, where: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or (
                abs(value) > draws * (1 + _SLACK) + _SLACK):
            raise ImportFormatError(
                f"{self.source}: {where}: value_sum {value!r} is not a finite sum of {draws} returns in [-1, 1]: "
                "give the sum of the mover's returns in [-1, 1] (rescale other values first)")
        return float(value)

    def _prior(self, prior: object, where: object) -> float:
        if isinstance(prior, bool) or not isinstance(prior, int | float) or not 0.0 <= prior <= 1.0:
            raise ImportFormatError(f"{self.source}: {where}: prior {prior!r} is not a probability in [0, 1]")
        return float(prior)

    def _check_proof(self, node: TreeNode, proof: Proof, given: object, state: State, where: object) -> None:
        if state.is_terminal and proof != Proof.of_winner(state.winner, node.mover):
            raise ImportFormatError(
                f"{self.source}: {where}: proven {given!r} contradicts the game, whose result there is "
                f"{Proof.of_winner(state.winner, node.mover).word} for the mover: a wrong proof is never imported")
        if node.proven is not None and node.proven != proof:
            raise ImportFormatError(f"{self.source}: {where}: proven {given!r} contradicts an earlier "
                                    f"{node.proven.word} for the same node")


def _label(game: Game, move: int) -> str:
    try:
        return game.label(move)
    except (ValueError, IndexError, KeyError, TypeError):
        return str(move)


def _whole(value: object, name: str, where: object, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        if isinstance(value, float) and value.is_integer() and value >= 0:
            return int(value)
        raise ImportFormatError(f"{source}: {where}: {name} {value!r} is not a whole number >= 0")
    return value


_WORDS = {proof.word: int(proof) for proof in Proof}


def _proof(value: object, where: object, source: str) -> Proof | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = _WORDS.get(value, int(value) if value.lstrip("-").isdigit() else value)
    if isinstance(value, bool) or value not in (1, 0, -1):
        raise ImportFormatError(f"{source}: {where}: proven {value!r} is not 1 (win), 0 (draw), -1 (loss) or empty")
    return Proof(value)
