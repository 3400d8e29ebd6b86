"""UCT's phases on the persistent tree: select (and expand), simulate; the loop is :mod:`treelab.mcts.loop`'s.

Which phases a search runs is chosen by :func:`treelab.mcts.dispatch.phases_for` alone; the public UCT
search over them is :func:`treelab.mcts.uct.search` (``treelab.search``).

UCT as in Browne et al. (2012), "A Survey of Monte Carlo Tree Search Methods":
the tree policy descends by UCB1 and expands one untried move, the default
policy plays the game out (not stored), and the result is backed up along the
whole stored path from the root, so the root's ``nb_visit`` counts every
simulation. With ``solver=True`` terminal results are propagated as proofs
(MCTS-Solver, Winands, Bjornsson & Saito 2008): a position with a winning move
is won for the player to move, one whose moves all lose is lost.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import speedups
from ..games import Game, State
from ..nodes import children_of
from ..positions import PositionTable
from ..tree import Tree, TreeNode
from .loop import BatchFn, Leaf, SearchState, count_batch, prove_leaf
from .policies import PlayoutFn, decisive_playout, random_playout
from .selection import DescendFn, SelectFn, select_ucb1, walk

__all__ = ["GraphPhases", "UCTPhases"]


@dataclass(eq=False)
class UCTPhases:
    """UCT's select, expand and simulate phases for one search, and what they keep between simulations."""

    descend: DescendFn
    """Walks down through fully expanded nodes (in C for UCB1 when built)."""
    pick: SelectFn
    """The selection function (UCB1 by default)."""
    play_out: PlayoutFn
    """The default policy."""
    labels: tuple[str, ...]
    """Each move's label (the child's name), by move number."""
    max_moves: int
    """The game's number of distinct moves (a node with that many children is fully expanded)."""
    move_of: dict[str, int]
    """Each label's move number."""
    frontier: dict[TreeNode, list[Any]]
    """For each node met below the start that is not fully expanded: its position and its untried moves in
    legal order (None: not listed yet; a terminal position lists none). Fully expanded nodes are dropped, so
    the descent through them plays no move on a State; an entry dropped by the cap is rebuilt equal."""
    batch: BatchFn | None = None
    """The compiled batch of these phases (``_loop.c``), or None."""

    @classmethod
    def of(cls, state: SearchState, play_out: PlayoutFn, select: SelectFn | None) -> UCTPhases:
        """The phases of a search from ``state`` with the playout ``play_out`` and the selection hook ``select``.

        With the compiled batch when it applies (:func:`_compiled_batch`), but not for a subclass.
        """
        game = state.tree.game
        labels = tuple(game.label(m) for m in range(game.num_moves + 1))
        move_of = {label: m for m, label in enumerate(labels)}
        # None: the Python phases; a subclass, which may change a phase, runs them in Python
        batch = _compiled_batch(state.tree, state.position, select, play_out) if cls is UCTPhases else None
        if play_out is random_playout:
            play_out = _direct_playout(game, state.rng)
        elif play_out is decisive_playout and game.compiled_decisive is not None:
            play_out = _direct_playout(game, state.rng, game.compiled_decisive)
        # a tree with value sums walks in Python: the compiled walk reads wins and draws only
        descend, pick = walk(select_ucb1 if select is None and state.tree.valued else select, python=state.tree.valued)
        return cls(descend, pick, play_out, labels, game.num_moves, move_of, {state.start: [state.position, None]},
                   batch)

    def select(self, state: SearchState) -> Leaf:
        """Tree policy: descend by the selection function, then :meth:`expand` one untried move."""
        start, c, solver = state.start, state.c, state.solver
        max_moves, frontier, labels = self.max_moves, self.frontier, self.labels
        path = [start]
        node = self.descend(start, path, c, solver, max_moves)  # down through fully expanded nodes
        while True:  # ``node`` may not be fully expanded: look at its position
            entry = frontier.get(node)
            if entry is None:
                entry = frontier[node] = [_replay(state.position, path, self.move_of), None]
            position, untried = entry
            kids = children_of(node)
            if untried is None:
                if position.is_terminal:
                    return Leaf(path, position)
                untried = position.legal_moves()
                if kids:
                    tried = {kid.name for kid in kids}
                    untried = [m for m in untried if labels[m] not in tried]
                entry[1] = untried
            if untried:
                return self.expand(state, path, position, untried, len(kids))
            if not kids:  # only a terminal position has no moves at all
                return Leaf(path, position)
            node = self.pick(node, c, solver)  # every legal move tried, fewer than max_moves
            path.append(node)
            node = self.descend(node, path, c, solver, max_moves)

    def expand(self, state: SearchState, path: list[TreeNode], position: State, untried: list[int],
               tried: int) -> Leaf:
        """Add one of the ``untried`` moves of ``path[-1]`` (drawn at random; ``tried`` have children): the leaf."""
        node = path[-1]
        move = untried.pop(int(state.rng.random() * len(untried)))  # in legal order: a cleared entry comes back equal
        frontier = self.frontier
        if not untried and tried + 1 == self.max_moves:
            del frontier[node]  # fully expanded from now on
        node = state.tree.add_child(node, self.labels[move], position.to_move if state.movers else None)
        position = position.play(move)
        if len(frontier) >= _FRONTIER_CAP:
            frontier.clear()  # bounded memory: positions met again are replayed
        frontier[node] = [position, None]
        path.append(node)
        return Leaf(path, position)

    def simulate(self, state: SearchState, leaf: Leaf) -> int | None:
        """Default policy: the playout's winner; a finished game's result is a fact (and a proof)."""
        if not leaf.position.is_terminal:
            return self.play_out(leaf.position, state.rng)
        return prove_leaf(state, leaf)


@dataclass(eq=False)
class GraphPhases(UCTPhases):
    """UCT's phases with graph statistics (:mod:`treelab.mcts.graph`): each new node's position key is noted
    as it is made (its position is at hand), so the selection never replays it. Python only (a subclass)."""

    table: PositionTable | None = None
    """The position table the selection reads and the backups keep in step."""

    def expand(self, state: SearchState, path: list[TreeNode], position: State, untried: list[int],
               tried: int) -> Leaf:
        """:meth:`UCTPhases.expand`, noting the new node's position key."""
        leaf = super().expand(state, path, position, untried, tried)
        if self.table is not None:
            self.table.key(leaf.path[-1], leaf.position)
        return leaf


def _compiled_batch(tree: Tree, start_state: State, select: SelectFn | None, play_out: PlayoutFn) -> BatchFn | None:
    """The compiled loop for this search's options (a :data:`~treelab.mcts.loop.BatchFn`), or None.

    Compiled: UCB1 selection (no ``select`` hook), random playouts (or decisive ones for Connect Four)
    on the built-in Connect Four and tic-tac-toe, when ``treelab._speedups`` is built. It grows the
    tree the phases grow from the same seed: same children, counts, proofs and random draws.
    """
    compiled = getattr(speedups.compiled, "batch", None)
    game = tree.game
    kind = vars(type(game)).get("compiled_loop")  # the class's own: a subclass may have changed the rules
    if (compiled is None or kind is None or (select is not None and select is not select_ucb1)
            or not game.alternating or tree.valued):
        return None
    decisive = play_out is decisive_playout
    if not (play_out is random_playout or (decisive and kind == 0)):
        return None
    a, b, ply = game.playout_board(start_state)
    parts = (kind, a, b, ply, decisive)
    labels = tuple(game.label(m) for m in range(game.num_moves + 1))
    move_of = {label: m for m, label in enumerate(labels)}

    def batch(state: SearchState, n: int) -> Leaf | None:
        start, rng = state.start, state.rng
        stats = [0, 0, 0, 0, 0]  # simulations, draws, wins of player 1, of player 2, nodes made
        try:
            pending: list[TreeNode] | None = compiled(
                start, n, state.c, state.solver, *parts, rng.random, rng.getrandbits, tree.baselines,
                tree.new_nodes, tree.depth_counts, tree.node_class, tree.next_id, None,
                state.max_size - tree.size, labels, move_of, start.depth, stats)
        finally:  # also on an exception (Ctrl-C): what the batch did is counted
            count_batch(state, stats)
        if pending is None:
            return None
        return Leaf(pending, _replay(state.position, pending, move_of))  # a finished game to prove

    return batch


def _direct_playout(
    game: Game, rng: random.Random, compiled: Callable[[int, int, int, int], int | None] | None = None
) -> PlayoutFn:
    """``game.playout`` (or ``compiled``) without its checks (the search only plays out live positions)."""
    fast, board = compiled or game.compiled_playout, game.playout_board
    if fast is None:
        return game.playout
    bits = rng.getrandbits

    def play_out(state: State, _rng: random.Random) -> int | None:
        return fast(*board(state), bits(64))

    return play_out


_FRONTIER_CAP = 1 << 19
"""Positions the frontier cache holds at most (about 100 MB); beyond, it starts again empty."""


def _replay(state: State, path: list[TreeNode], move_of: dict[str, int]) -> State:
    """The position at ``path[-1]``, playing the moves of ``path[1:]`` from ``state`` (at ``path[0]``)."""
    return state.play_all([move_of[node.name] for node in path[1:]])
