"""A search's trace: every simulation, phase by phase, as one JSON-ready record (``analyse --trace``).

A :class:`Tracer` rides along one search (``tracer=`` of :func:`treelab.mcts.dispatch.run_search`, which
hooks it into the phases it chooses); it sees the selection at each level (every candidate's
counts and score terms *at that moment*, the child picked and why), the node expanded, the playout's
moves (never stored in the tree), the result, the nodes created, the proofs found and the counts each
node gained. The search loop (:func:`treelab.mcts.loop.run`) hands it its select and back-up phases;
without a tracer nothing of this module runs, so an untraced search costs exactly what it did.

A traced UCT search runs the Python phases (the compiled batch of ``_loop.c`` cannot report its
levels), with the very random draws of the compiled batch: from the same seed it grows the very tree
an untraced search grows (the random playouts of Connect Four and tic-tac-toe are the compiled ones,
``connect4_trace``/``tictactoe_trace``, which also name the moves they play). Connect Four's compiled
decisive playout has no such twin: traced, the Python decisive playout runs, with other draws.

The record of a simulation (the file format is a contract: ``docs/guide/tracing.md``):

``simulation`` (from 1), ``game``, ``position`` (the search's root, in the game's notation),
``algorithm`` (``"uct"``/``"puct"``), ``solver``, ``path`` (moves from the search's root to where the
playout or evaluation started), ``expanded``, ``playout`` (its moves; null for a playout function of
one's own or an evaluator without playout), ``winner`` (1, 2, null), ``levels`` (per step of the path),
``created`` (each new node's moves from the tree's root, in notation), ``proofs`` (nodes proven by this
simulation: moves from the tree's root -> ``"win"``/``"draw"``/``"loss"`` for the node's mover) and
``backup`` (``[visit, win, draw, select]`` gained by each node from the tree's root down to the leaf);
``values``, only when the simulation ended in a real value (PUCT with an evaluator), what each of those
nodes added to its ``value_sum``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import speedups
from ..games import Game, State
from ..nodes import Proof, TreeNode, children_of, proof_word, walk
from ..tree import Moves, Tree
from .config import SearchConfig
from .loop import Limit
from .policies import PlayoutFn, decisive_playout, random_playout
from .selection import SelectFn
from .trace_terms import Terms, Unmade, ucb1_terms

if TYPE_CHECKING:
    from .loop import Leaf, SearchState

__all__ = ["Tracer", "traced_search"]

_DIGITS = 6


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, _DIGITS)


@dataclass(eq=False)
class Tracer:
    """Records one search's simulations (pass it as ``trace=``); :attr:`records` holds them, in order.

    Args:
        sink: called with each record as it is made (a file writer); None: only :attr:`records`.
        keep: keep the records in :attr:`records` (False with a sink: a long trace goes to its file only).
    """

    sink: Callable[[dict[str, Any]], None] | None = None
    """Called with each record as it is made."""
    keep: bool = True
    """Keep the records in :attr:`records`."""
    records: list[dict[str, Any]] = field(default_factory=list)
    """The records made, when :attr:`keep`."""
    count: int = 0
    """Simulations recorded."""
    # set by begin():
    _algorithm: str = "uct"
    _header: dict[str, Any] = field(default_factory=dict)
    _known: dict[TreeNode, Proof] = field(default_factory=dict)
    _levels: list[dict[str, Any]] = field(default_factory=list)
    _made: int = 0
    _playout: list[str] | None = None
    _named: bool = False
    _moves: tuple[str, ...] = ()
    _pending: Mapping[TreeNode, Mapping[str, float]] = field(default_factory=dict)
    _values: dict[TreeNode, float] = field(default_factory=dict)  # each node's value sum as last recorded
    _terms: Terms = ucb1_terms  # UCT's score terms: UCB1's, or the graph score's

    # -- set-up, by the search ------------------------------------------------------------------
    def begin(self, state: SearchState, algorithm: str) -> None:
        """Start recording the search of ``state`` (called by the search before its loop)."""
        self._algorithm, self._terms = algorithm, ucb1_terms
        tree, start = state.tree, state.start
        self._moves = start.moves
        game = tree.game
        self._pending = tree.pending
        self._header = {"game": game.name, "position": _notation(game, self._moves), "algorithm": algorithm,
                        "solver": state.solver, "c": state.c}
        known = {node: node.proven for node in walk(start) if node.proven is not None}
        known.update({node: node.proven for node in state.above if node.proven is not None})
        self._known = known

    def selecting(self, terms: Terms, select: SelectFn) -> SelectFn:
        """``select`` recording each choice with ``terms`` (a :data:`~treelab.mcts.selection.SelectFn` hook)."""
        levels = self._levels

        def recorded(node: TreeNode, c: float, solver: bool) -> TreeNode:
            child = select(node, c, solver)
            levels.append(self._level(node, child, c, solver, terms))
            return child

        return recorded

    def playing(self, playout: PlayoutFn, game: Game) -> PlayoutFn:
        """``playout`` naming the moves it plays (the same random draws as the search's own)."""
        traced = _traced_playout(playout, game)
        if traced is None:
            return playout
        self._named = True
        moves: list[int] = []

        def recorded(state: State, rng: random.Random) -> int | None:
            moves.clear()
            winner = traced(state, rng, moves)
            self._playout = [game.label(m) for m in moves]
            return winner

        return recorded

    # -- the loop's phases ------------------------------------------------------------------------
    def select_phase(self, select: Callable[[SearchState], Leaf]) -> Callable[[SearchState], Leaf]:
        """The loop's select phase, noting where the simulation starts."""

        def traced(state: SearchState) -> Leaf:
            self._levels.clear()
            self._made = len(state.tree.new_nodes)
            self._playout = [] if self._named else None  # no playout: a finished game (or moves unseen)
            leaf = select(state)
            seen = self._values
            for node in (*state.above, *leaf.path):  # before the leaf's value is added (PUCT's simulate)
                if node not in seen:
                    seen[node] = node.value_sum
            return leaf

        return traced

    def back_up_phase(self, back_up: Callable[[SearchState, list[TreeNode], int | None], None]
                      ) -> Callable[[SearchState, list[TreeNode], int | None], None]:
        """The loop's back-up phase, measuring what each node gains and writing the record."""

        def traced(state: SearchState, path: list[TreeNode], winner: int | None) -> None:
            expanded = self._expanded(state, path)  # before the backup: the counts the expansion saw
            before = [(n.nb_visit, n.nb_win, n.nb_draw, n.nb_select) for n in path]
            back_up(state, path, winner)
            gained = [[n.nb_visit - b[0], n.nb_win - b[1], n.nb_draw - b[2], n.nb_select - b[3]]
                      for n, b in zip(path, before, strict=True)]
            self._record(state, path, winner, gained, expanded, self._value_gains([*state.above, *path]))

        return traced

    # -- records ----------------------------------------------------------------------------------
    def _level(self, node: TreeNode, child: TreeNode, c: float, solver: bool, terms: Terms) -> dict[str, Any]:
        rows = []
        best: float | None = -math.inf
        open_rows = 0
        waiting = getattr(terms, "waiting", None)
        later = self._pending.get(node, {}) if waiting is not None else {}
        candidates: list[Any] = [*children_of(node), *map(Unmade, later)]
        for kid in candidates:
            if isinstance(kid, Unmade) and waiting is not None:  # a move whose node is made when first selected
                mean, explore, prior = waiting(node, kid.name, later[kid.name], c)
            else:
                mean, explore, prior = terms(node, kid, c)
            score = None if mean is None or explore is None else mean + explore
            row: dict[str, Any] = {"move": kid.name, "nb_visit": kid.nb_visit, "nb_win": kid.nb_win,
                                   "nb_draw": kid.nb_draw, "nb_select": kid.nb_select, "mean": _round(mean),
                                   "explore": _round(explore), "score": _round(score)}
            if prior is not None:
                row["prior"] = _round(prior)
            if kid.proven is not None:
                row["proven"] = proof_word(kid.proven)
                if solver:
                    row["skipped"] = True
                    rows.append(row)
                    continue
            open_rows += 1
            shown = row["score"]
            if best is not None and (shown is None or shown > best):
                best = shown
            rows.append(row)
        picked = next(r for r in rows if r["move"] == child.name)
        if open_rows == 0:
            why = "proven"  # every move proven (the node not): the most visited
        elif picked["score"] is None:
            why = "unvisited"
        elif best is not None and picked["score"] == best:
            why = "best"
        else:
            why = "chosen"  # a selection hook of one's own
        return {"nb_visit": node.nb_visit, "candidates": rows, "picked": child.name, "why": why}

    def _expanded(self, state: SearchState, path: list[TreeNode]) -> str | None:
        """The move of the node this simulation expanded (UCT: made; PUCT: gave children), adding UCT's level."""
        new = state.tree.new_nodes[self._made:]
        leaf = path[-1]
        if self._algorithm == "uct":
            if new and new[-1] is leaf and len(path) > 1:
                self._levels.append(self._untried(state, path))
                return str(leaf.name)
            return None
        made = set(new)  # PUCT makes the node a simulation first selects, and the moves there that end the game
        if leaf in made or any(kid in made for kid in children_of(leaf)):
            return str(leaf.name) if len(path) > 1 else ""
        return None

    def _value_gains(self, nodes: list[TreeNode]) -> list[float] | None:
        """What each of ``nodes`` added to its value sum since the last record (None: nothing, a whole result)."""
        seen = self._values
        gains = [node.value_sum - seen.get(node, node.value_sum) for node in nodes]
        for node in nodes:
            seen[node] = node.value_sum
        return gains if any(gains) else None

    def _record(self, state: SearchState, path: list[TreeNode], winner: int | None, gained: list[list[int]],
                expanded: str | None, values: list[float] | None = None) -> None:
        tree, game = state.tree, state.tree.game
        new = tree.new_nodes[self._made:]
        levels = self._levels
        above = state.above
        up = [[1, int(winner is not None and n.mover == winner), int(winner is None), 0] for n in above]
        created = [_notation(game, n.moves) for n in new]
        self.count += 1
        record: dict[str, Any] = {
            "simulation": self.count, **self._header,
            "path": [n.name for n in path[1:]], "expanded": expanded, "playout": self._playout,
            "winner": winner, "levels": list(levels), "created": created,
            "proofs": self._proofs(game, above, path, new), "backup": up + gained,
        }
        if values is not None:
            record["values"] = values
        levels.clear()
        if self.keep:
            self.records.append(record)
        if self.sink is not None:
            self.sink(record)

    def _untried(self, state: SearchState, path: list[TreeNode]) -> dict[str, Any]:
        """UCT's expansion step: the move added, drawn at random among the untried ones."""
        parent, new = path[-2], path[-1]
        game = state.tree.game
        position = state.position.play_all([game.parse_move(n.name) for n in path[1:-1]])
        tried = {kid.name for kid in children_of(parent) if kid is not new}
        untried = [game.label(m) for m in position.legal_moves() if game.label(m) not in tried]
        level = self._level(parent, new, state.c, state.solver, self._terms)
        level["candidates"] = [r for r in level["candidates"] if r["move"] != new.name]
        level["why"], level["untried"] = "untried", untried
        return level

    def _proofs(self, game: Game, above: Sequence[TreeNode], path: Sequence[TreeNode],
                new: Sequence[TreeNode]) -> dict[str, str]:
        """Nodes proven by this simulation (their proofs can only be on the path, its children or new nodes)."""
        known = self._known
        found: dict[str, str] = {}
        for node in _touched(above, path, new):
            proof = node.proven
            if proof is not None and known.get(node) != proof:
                known[node] = proof
                found[_notation(game, node.moves)] = proof.word
        return found


def _touched(above: Sequence[TreeNode], path: Sequence[TreeNode], new: Sequence[TreeNode]) -> Iterator[TreeNode]:
    yield from above
    for node in path:
        yield node
        yield from children_of(node)
    yield from new


def _notation(game: Game, labels: Iterable[str]) -> str:
    return game.notation([game.parse_move(label) for label in labels])


TracedPlayout = Callable[[State, random.Random, list[int]], "int | None"]
"""``playout(state, rng, moves) -> winner``, appending the moves it plays to ``moves``."""


def _traced_playout(playout: PlayoutFn, game: Game) -> TracedPlayout | None:
    """The twin of ``playout`` that names its moves, with the search's very draws where it can; None: none."""
    if playout is random_playout:
        named = _compiled_trace(game)
        if named is not None:
            board = game.playout_board

            def compiled(state: State, rng: random.Random, moves: list[int]) -> int | None:
                winner, played = named(*board(state), rng.getrandbits(64))
                moves.extend(played)  # the moves' numbers, 1-7 or 1-9
                return winner

            return compiled
        return _random_moves
    if playout is decisive_playout:
        return _decisive_moves
    return None


def _compiled_trace(game: Game) -> Callable[..., tuple[int | None, bytes]] | None:
    """``connect4_trace``/``tictactoe_trace`` when this game's playout is the compiled one."""
    compiled = speedups.compiled
    if compiled is None or game.compiled_playout is None or vars(type(game)).get("compiled_loop") is None:
        return None
    return getattr(compiled, f"{game.name}_trace", None)


def _random_moves(state: State, rng: random.Random, moves: list[int]) -> int | None:
    """Uniformly random moves to the end (as the generic Python playouts draw them)."""
    rand = rng.random
    while not state.is_terminal:
        legal = state.legal_moves()
        move = legal[int(rand() * len(legal))]
        moves.append(move)
        state = state.play(move)
    return state.winner


def _decisive_moves(state: State, rng: random.Random, moves: list[int]) -> int | None:
    """:func:`~treelab.mcts.policies.decisive_playout`, naming its moves (the winning move too)."""
    rand = rng.random
    while not state.is_terminal:
        wins = state.winning_moves()
        if wins:
            moves.append(wins[0])
            return state.to_move
        threats = state.threats()
        pool = threats if threats else state.legal_moves()
        move = pool[int(rand() * len(pool))]
        moves.append(move)
        state = state.play(move)
    return state.winner


def traced_search(tree: Tree, moves: Moves, *, limit: Limit, search: SearchConfig, rng: random.Random,
                  tracer: Tracer) -> int:
    """Search ``moves`` of ``tree`` as ``search`` says (UCT, its solver, or PUCT), recording into ``tracer``.

    :func:`treelab.mcts.dispatch.run_search` with a tracer: the same phases and loop as an untraced
    search, the compiled batch left out. Returns the simulations run.
    """
    from .dispatch import run_search

    return run_search(tree, moves, search, limit, rng=rng, tracer=tracer)
