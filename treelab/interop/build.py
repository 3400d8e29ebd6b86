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

__all__ = ["MAX_COUNT", "Builder", "Numbers", "Stats", "checked", "checked_row", "given_twice", "illegal"]

MAX_COUNT = 2**63 - 1
"""The largest count a node can hold (SQLite's and numpy's 64-bit integers); sums past it are refused."""

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

    def restart(self) -> None:
        """Start again with a new tree (rows out of order, sorted: :func:`treelab.interop.rows.checked_order`)."""
        self.tree = Tree(self.game)

    @property
    def root(self) -> TreeNode:
        """The new tree's root."""
        return self.tree.root

    def child(self, node: TreeNode, state: State, move: int, where: object, *,
              new: bool = False) -> tuple[TreeNode, State]:
        """The child of ``node`` (at ``state``) by ``move``, created if new (``new``: it must be), and its position.

        Raises:
            ImportFormatError: the move is not legal there (``where`` says which node of the source),
                or the child exists already and ``new`` is true.
        """
        game = self.game
        if state.is_terminal or move not in state.legal_moves():
            raise illegal(game, self.source, where, node.moves, move)
        label = game.label(move)
        kid = node.child(label)
        if kid is None:
            kid = self.tree.add_child(node, label, state.to_move)
        elif new:
            raise given_twice(self.source, where)
        return kid, state.play(move)

    def set(self, node: TreeNode, stats: Stats, state: State, where: object) -> None:
        """Add ``stats`` to ``node`` (at ``state``), checked (:func:`checked`)."""
        self._add(node, state, where, checked(stats, node.depth, node.mover, state, (self.source, where)))

    def set_row(self, node: TreeNode, row: Mapping[str, Any], state: State, where: object) -> None:
        """:meth:`set` from a row of the plain format (:mod:`treelab.interop.rows`)."""
        self._add(node, state, where, checked_row(row, node.depth, node.mover, state, (self.source, where)))

    def _add(self, node: TreeNode, state: State, where: object, numbers: Numbers) -> None:
        visits, wins, draws, selected, value, prior, proof = numbers
        if proof is not None and node.proven is not None and node.proven != proof:
            raise ImportFormatError(f"{self.source}: {where}: proven {int(proof)!r} contradicts an earlier "
                                    f"{node.proven.word} for the same node")
        node.nb_visit += visits
        node.nb_win += wins
        node.nb_draw += draws
        node.nb_select += selected
        if value:
            node.value_sum = node.value_sum + value
            self.tree.valued = True
        if prior is not None and node not in self.tree.priors:
            self.tree.priors[node] = prior
        if proof is not None:
            node.proven = proof


Numbers = tuple[int, int, int, int, float, "float | None", "Proof | None"]
"""A node's checked numbers: ``(visits, wins, draws, selected, value_sum, prior, proof)``."""


def illegal(game: Game, source: str, where: object, before: Sequence[str], move: int) -> ImportFormatError:
    """The error for ``move``, not legal after the labels ``before`` (the root's: none)."""
    path = game.notation(game.parse(before)) or "the start"
    return ImportFormatError(
        f"{source}: {where}: move {_label(game, move)!r} is not legal after {path!r} in "
        f"{game.name}: is this a tree of {game.name}? give the game it was searched in")


def given_twice(source: str, where: object) -> ImportFormatError:
    """The error for a node given twice."""
    return ImportFormatError(f"{source}: {where}: the path is given twice: give each node one row")


def checked(stats: Stats, depth: int, mover: int, state: State, where: tuple[str, object]) -> Numbers:
    """The numbers of ``stats`` of a node at ``depth`` whose mover is ``mover`` (at ``state``), checked: every
    importer's one rule (``where``: the source and the node, as errors name them).

    Raises:
        ImportFormatError: counts that are not whole numbers >= 0 or do not add up, a value sum
            out of [-1, 1] per simulation, a prior outside [0, 1], a proof that contradicts the game.
    """
    return _checked(where, depth, mover, state, stats.visits, stats.value_sum, stats.wins, stats.draws, stats.prior,
                    stats.proven, stats.selected)


def checked_row(row: Mapping[str, Any], depth: int, mover: int, state: State, where: tuple[str, object]) -> Numbers:
    """:func:`checked` of a row of the plain format (:mod:`treelab.interop.rows`), without a :class:`Stats`."""
    get = row.get
    return _checked(where, depth, mover, state, row["visits"], get("value_sum", 0.0), get("wins", 0), get("draws"),
                    get("prior"), get("proven"), get("selected"))


def _checked(at: tuple[str, object], depth: int, mover: int, state: State, visits: Any, value: Any, wins: Any,
             draws: Any, prior: Any, proven: Any, selected: Any) -> Numbers:
    if draws is None:
        draws = visits - wins if type(visits) is int and type(wins) is int else None
    if selected is None:
        selected = visits if depth else 0
    if not (type(visits) is int and type(wins) is int and type(draws) is int and type(selected) is int
            and wins >= 0 and draws >= 0 and selected >= 0 and wins + draws <= visits and selected <= visits
            and visits <= MAX_COUNT):
        visits, wins, draws, selected = _counts(Stats(visits, value, wins, draws, prior, proven, selected), depth, at)
    if type(value) is not float or not -draws - _SLACK * draws - _SLACK <= value <= draws * (1 + _SLACK) + _SLACK:
        value = _value(value, draws, at)
    if prior is not None and (type(prior) is not float or not 0.0 <= prior <= 1.0):
        prior = _prior(prior, at)
    proof = None if proven is None else _proof(proven, at[1], at[0])
    if proof is not None and state.is_terminal and proof != Proof.of_winner(state.winner, mover):
        raise ImportFormatError(
            f"{at[0]}: {at[1]}: proven {proven!r} contradicts the game, whose result there is "
            f"{Proof.of_winner(state.winner, mover).word} for the mover: a wrong proof is never imported")
    return visits, wins, draws, selected, float(value), None if prior is None else float(prior), proof


def _counts(stats: Stats, depth: int, at: tuple[str, object]) -> tuple[int, int, int, int]:
    """The counts of ``stats`` checked the slow way (whole numbers from floats allowed), or the error."""
    source, where = at
    visits, wins = _whole(stats.visits, "visits", where, source), _whole(stats.wins, "wins", where, source)
    draws = visits - wins if stats.draws is None else _whole(stats.draws, "draws", where, source)
    selected = (visits if depth else 0) if stats.selected is None else _whole(stats.selected, "selected", where,
                                                                             source)
    if wins + draws > visits or selected > visits or draws < 0:
        raise ImportFormatError(f"{source}: {where}: wins {wins} + draws {draws} or selected {selected} "
                                f"exceed visits {visits}: give counts that add up")
    return visits, wins, draws, selected


def _value(value: object, draws: int, at: tuple[str, object]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or (
            abs(value) > draws * (1 + _SLACK) + _SLACK):
        raise ImportFormatError(
            f"{at[0]}: {at[1]}: value_sum {value!r} is not a finite sum of {draws} returns in [-1, 1]: "
            "give the sum of the mover's returns in [-1, 1] (rescale other values first)")
    return float(value)


def _prior(prior: object, at: tuple[str, object]) -> float:
    if isinstance(prior, bool) or not isinstance(prior, int | float) or not 0.0 <= prior <= 1.0:
        raise ImportFormatError(f"{at[0]}: {at[1]}: prior {prior!r} is not a probability in [0, 1]")
    return float(prior)


def _label(game: Game, move: int) -> str:
    try:
        return game.label(move)
    except (ValueError, IndexError, KeyError, TypeError):
        return str(move)


def _whole(value: object, name: str, where: object, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        if not (isinstance(value, float) and value.is_integer() and value >= 0):
            raise ImportFormatError(f"{source}: {where}: {name} {value!r} is not a whole number >= 0")
        value = int(value)
    if value > MAX_COUNT:
        raise ImportFormatError(f"{source}: {where}: {name} {value!r} is more than a count can hold "
                                f"({MAX_COUNT:,}, SQLite's largest integer): give the real count")
    return value


_WORDS = {proof.word: int(proof) for proof in Proof}


def _proof(value: object, where: object, source: str) -> Proof | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = _WORDS.get(value, int(value) if value in ("1", "0", "-1") else value)  # not int("--1"), int("²")
    if isinstance(value, bool) or value not in (1, 0, -1):
        raise ImportFormatError(f"{source}: {where}: proven {value!r} is not 1 (win), 0 (draw), -1 (loss) or empty")
    return Proof(value)
