"""A search's trace: every simulation, phase by phase, as one JSON-ready record (``analyse --trace``), the
score terms it records, and its records read back and replayed.

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

The terms (:func:`ucb1_terms`, :func:`graph_terms`, :func:`puct_terms`): for every candidate at a level, the
two terms of its score as the search computed them at that moment, and its prior under PUCT.

Read back (:func:`check_records`: one search's, in order; :func:`apply_record`: replay): replaying every
record of a trace onto the tree its search started from gives the tree the search ended with, node for
node: the trace is exact. A traced search is :func:`treelab.mcts.dispatch.traced_search`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import speedups
from ..errors import TraceError
from ..games import Game, State
from ..nodes import Proof, TreeNode, children_of, proof_word, walk
from ..positions import PositionTable
from ..tree import Tree
from .policies import PlayoutFn, decisive_playout, random_playout
from .puct import chosen_here
from .scores import node_score
from .selection import SelectFn

if TYPE_CHECKING:
    from .loop import Leaf, SearchState

__all__ = [
    "TRACE_KEYS", "PUCTTerms", "Terms", "Tracer", "Unmade", "apply_record", "check_records", "graph_terms",
    "puct_terms", "ucb1_terms",
]

# -- the score terms a trace records -----------------------------------------------------------------------------------
Terms = Callable[[TreeNode, TreeNode, float], "tuple[float | None, float | None, float | None]"]
"""``terms(parent, child, c) -> (mean, explore, prior)``: the two terms of a child's score at that moment
(None, None: +inf, an unvisited child under UCB1) and its prior (None: no prior, UCB1)."""


def ucb1_terms(parent: TreeNode, child: TreeNode, c: float) -> tuple[float | None, float | None, None]:
    """UCB1's terms, as :func:`treelab.nodes.ucb1_score` computes them (Auer et al. 2002)."""
    n = child.nb_visit
    if n == 0:
        return None, None, None
    big_n = parent.nb_visit
    explore = c * math.sqrt(math.log(big_n)) if big_n > 1 else 0.0
    return child.mean, explore / math.sqrt(n), None


def graph_terms(table: PositionTable) -> Terms:
    """The graph score's terms on ``table`` (:func:`treelab.mcts.scores.node_score`): the position's value and the
    edge's exploration (None, None: +inf, an edge never selected here)."""

    def terms(parent: TreeNode, child: TreeNode, c: float) -> tuple[float | None, float | None, None]:
        score = node_score(child, c, table)
        return (None, None, None) if score.exploration is None else (score.value, score.exploration, None)

    return terms


def puct_terms(priors: Mapping[TreeNode, float], start: TreeNode, noisy: Mapping[str, float]) -> Terms:
    """PUCT's terms ``Q`` and ``c * P * sqrt(N) / (1 + n)``, as :func:`treelab.mcts.puct._pick` has them
    (also for the moves waiting in ``tree.pending``: :meth:`PUCTTerms.waiting`)."""
    return PUCTTerms(priors, start, noisy)


@dataclass(frozen=True)
class PUCTTerms:
    """PUCT's score terms of a child, or of a move not made yet (its node is made when first selected)."""

    priors: Mapping[TreeNode, float]
    """The tree's priors, by node."""
    start: TreeNode
    """The search's start (where root noise applies)."""
    noisy: Mapping[str, float]
    """The start's priors with root noise, by label (empty: none)."""

    def __call__(self, parent: TreeNode, child: TreeNode, c: float) -> tuple[float, float, float]:
        q = child.mean if child.nb_visit else (1.0 - parent.mean if parent.nb_visit else 0.5)
        noisy = self.noisy if self.noisy and parent is self.start else None
        prior = noisy.get(child.name, 0.0) if noisy is not None else self.priors.get(child, 0.0)
        return q, c * math.sqrt(chosen_here(parent)) * prior / (1 + child.nb_select), prior

    def waiting(self, parent: TreeNode, label: str, prior: float, c: float) -> tuple[float, float, float]:
        """The terms of the move ``label``, not made yet, with its prior ``prior``: an unvisited child's."""
        if self.noisy and parent is self.start:
            prior = self.noisy.get(label, 0.0)
        return (1.0 - parent.mean if parent.nb_visit else 0.5), c * math.sqrt(chosen_here(parent)) * prior, prior


@dataclass(frozen=True)
class Unmade:
    """A candidate move with no node yet, as a row of a level shows it."""

    name: str
    nb_visit: int = 0
    nb_win: int = 0
    nb_draw: int = 0
    nb_select: int = 0
    proven: Proof | None = None

# -- the tracer --------------------------------------------------------------------------------------------------------


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

# -- a trace's records read back ---------------------------------------------------------------------------------------


TRACE_KEYS = ("simulation", "path", "expanded", "playout", "winner", "levels")
"""The keys every record has at least (docs/design.md, ``analyse --trace``)."""


def check_records(records: Sequence[Mapping[str, Any]], *, game: str | None = None,
                  position: str | None = None) -> None:
    """Raise :class:`~treelab.errors.TraceError` unless ``records`` is one search's trace (of ``game`` at ``position``).

    Checks the keys every record has, that simulations count 1, 2, 3, ... and name one game and position.
    """
    if not records:
        raise TraceError("the trace holds no simulation: record one with treelab analyse ... --trace FILE")
    first = records[0]
    for i, record in enumerate(records, 1):
        if not isinstance(record, Mapping):
            raise TraceError(f"record {i} is {type(record).__name__}, not a JSON object: is this a treelab trace?")
        missing = [k for k in (*TRACE_KEYS, "game", "position", "backup") if k not in record]
        if missing:
            raise TraceError(f"record {i} lacks {missing[0]!r}: is this a treelab trace (analyse --trace)?")
        if record["simulation"] != i:
            raise TraceError(f"record {i} is simulation {record['simulation']!r}: the trace is out of order or cut")
        if record["game"] != first["game"] or record["position"] != first["position"]:
            raise TraceError(f"record {i} is of {record['game']!r} at {record['position']!r}, not of "
                             f"{first['game']!r} at {first['position']!r}: one trace is one search")
    _check_shapes(records)
    if game is not None and first["game"] != game:
        raise TraceError(f"the trace is of the game {first['game']!r}, not {game!r}: trace this game's search")
    if position is not None and first["position"] != position:
        raise TraceError(f"the trace searched the position {first['position']!r}, not {position!r}: "
                         "open the trace at its own position")


def _check_shapes(records: Sequence[Mapping[str, Any]]) -> None:
    """Each record's path, backup steps and values fit together: one step per node from the root (the position's
    moves, then the path), four whole counts a step (a damaged file fails here, never mid-replay)."""
    from ..games import find_game

    first = records[0]
    try:
        depth = len(find_game(first["game"]).parse(first["position"]))
    except (TypeError, ValueError, KeyError) as exc:  # NotationError, UnknownGameError: the message says which
        raise TraceError(f"record 1 names game {first['game']!r} at {first['position']!r}: {exc}") from None
    for i, record in enumerate(records, 1):
        path, gains, values = record["path"], record["backup"], record.get("values")
        if not isinstance(path, list) or not all(isinstance(label, str) for label in path):
            raise TraceError(f"record {i}: path {path!r} is not a list of moves: the record is damaged")
        steps = depth + len(path) + 1
        if not isinstance(gains, list) or len(gains) != steps or not all(
                isinstance(g, list) and len(g) == 4 and all(type(n) is int for n in g) for g in gains):
            raise TraceError(f"record {i}: backup {str(gains)[:60]!r} is not {steps} steps of four counts (one per "
                             f"node from the root along a path of {len(path)} moves): the record is damaged")
        if values is not None and (not isinstance(values, list) or len(values) != steps or not all(
                type(v) in (int, float) for v in values)):
            raise TraceError(f"record {i}: values {str(values)[:60]!r} are not {steps} numbers: the record is damaged")
        if not isinstance(record.get("proofs", {}), Mapping):
            raise TraceError(f"record {i}: proofs {record['proofs']!r} are not an object: the record is damaged")


def apply_record(tree: Tree, record: Mapping[str, Any]) -> None:
    """Replay one simulation's record onto ``tree``: its new nodes, the counts gained, its proofs.

    Replaying every record of a trace onto the tree the search started from gives the tree the search
    ended with, node for node (the nodes above the search's root gain their counts per simulation here,
    where the search adds them once as it ends: the sums agree).
    """
    game = tree.game
    for moves in record["created"]:
        labels = [game.label(m) for m in game.parse(moves)]
        parent = tree.find(labels[:-1])
        if parent.child(labels[-1]) is None:
            tree.add_child(parent, labels[-1], _mover_of(tree, labels))
    nodes = [tree.root]
    position = [game.label(m) for m in game.parse(record["position"])]
    for label in [*position, *record["path"]]:
        child = nodes[-1].child(label)
        if child is None:
            raise TraceError(f"simulation {record['simulation']}: no node {label!r} below "
                             f"{'/'.join(n.name for n in nodes)!r}: this trace was recorded on another tree")
        nodes.append(child)
    gains = record["backup"]
    if len(gains) != len(nodes):
        raise TraceError(f"simulation {record['simulation']}: {len(gains)} backup steps for a path of "
                         f"{len(nodes)} nodes: the record is damaged")
    for node, (visit, win, draw, select) in zip(nodes, gains, strict=True):
        tree.mark_dirty(node)
        node.nb_visit += visit
        node.nb_win += win
        node.nb_draw += draw
        node.nb_select += select
    values = record.get("values")
    if values is not None and len(values) != len(nodes):
        raise TraceError(f"simulation {record['simulation']}: {len(values)} value steps for a path of "
                         f"{len(nodes)} nodes: the record is damaged")
    for node, value in zip(nodes, values or (), strict=False):
        if value:
            tree.add_value(node, value)
    for moves, word in record["proofs"].items():
        node = tree.find(moves)
        tree.mark_dirty(node)
        node.proven = _proof(word, record["simulation"])


def _mover_of(tree: Tree, labels: Sequence[str]) -> int | None:
    if tree.game.alternating:
        return None
    state = tree.game.replay(labels[:-1])
    return state.to_move


def _proof(word: str, simulation: int) -> Proof:
    for proof in Proof:
        if proof.word == word:
            return proof
    raise TraceError(f"simulation {simulation}: proof {word!r} is not win, draw or loss: the record is damaged")
