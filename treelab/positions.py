"""The position table: a tree's statistics merged by position, across move orders and mirror images.

A stored node is a *path* (a move sequence); many paths can reach one position (transpositions:
``"4453"`` and ``"5344"`` in Connect Four), and where the game declares symmetries, images of it
(the mirror ``"4435"``'s twin ``"4453"`` reflected). The position table adds up the counts of every
node whose position has one key (:meth:`treelab.games.Game.position_key`): what the search knows of
the *position*, however it got there. Graph-search statistics (:mod:`treelab.mcts.graph`) take a
child's value from it.

**Point of view.** A position's row counts ``nb_visit``, ``nb_win`` (wins of **player 1**, the
first player, whoever moved into the position), ``nb_draw``, ``nb_path`` (stored nodes that
reach it) and ``value_sum`` (the nodes' value sums, :attr:`treelab.nodes.TreeNode.value_sum`, seen
by **player 1**: a node whose mover is player 2 adds minus its own). Player 1's view is fixed for
every game, also those whose players need not alternate; the mover's mean is
:meth:`PositionTable.mean` (:func:`mover_mean`, :func:`treelab.nodes.mean_reward` of the row).

The table is a function of the nodes: ``row(key) = sum over nodes with that key`` (player 1's wins
from each node's ``nb_win`` and its mover). So it can always be rebuilt from the nodes
(:func:`counts_of_nodes`), every writer adds a save's increments to it (the store's
``positions`` table, :mod:`treelab.store.positiontable`), and in memory the graph search keeps it
in step with every backup (:class:`PositionTable`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from .games import Game, State
from .nodes import HOOKS, TreeNode, children_of, mean_reward

if TYPE_CHECKING:
    from .tree import Tree

__all__ = ["PositionTable", "Row", "counts_of_nodes", "key_of", "mover_mean", "node_keys", "player_one",
           "player_one_value", "unsaved_counts", "value_changes"]

Row = list[Any]
"""A position's counts in memory: ``[nb_visit, nb_win of player 1, nb_draw, value_sum of player 1]``."""

_STATE_CAP = 1 << 17
"""Positions :class:`PositionTable` caches at most to compute keys of nodes met later (about 20 MB)."""


def player_one(mover: int, visits: int, wins: int, draws: int) -> int:
    """Player 1's wins among ``visits`` whose mover (``mover``) won ``wins`` and drew ``draws``."""
    return wins if mover == 1 else visits - wins - draws


def player_one_value(mover: int, value: float) -> float:
    """Player 1's view of a value sum seen by ``mover``."""
    return value if mover == 1 else -value


def mover_mean(visits: int, ones: int, draws: int, mover: int, value: float = 0.0) -> float:
    """The mean reward of ``mover`` over a position row (``ones``: player 1's wins, ``value``: player 1's value
    sum): :func:`treelab.nodes.mean_reward` for the mover; 0.5 with no visits."""
    return mean_reward(player_one(mover, visits, ones, draws), draws, visits, player_one_value(mover, value))


def node_keys(tree: Tree, nodes: Iterable[TreeNode]) -> dict[TreeNode, str]:
    """The position key of each of ``nodes`` (of ``tree``), replaying each position once from its parent's.

    Every save asks for the nodes it writes, and the top of a tree changes in every game: the positions
    and keys of the last nodes asked for are kept (at most :data:`_STATE_CAP`, per tree) for the next call.
    A game with a ``key_walk()`` (:meth:`treelab.games.connect4.ConnectFour.key_walk`) steps its light
    tokens instead of playing states; one with ``compiled_keys``
    (:attr:`treelab.games.connect4.ConnectFour.compiled_keys`) computes them all in one call (Connect Four's
    in C: about half the walk's time).
    """
    game = tree.game
    fast = getattr(game, "compiled_keys", None)
    if fast is not None:  # Connect Four: every position replayed on bitboards in C
        asked = list(nodes)
        return dict(zip(asked, fast(asked, tree.root, {game.label(m): m for m in range(1, game.num_moves + 1)}),
                        strict=True))
    start, step, key = _walk(game)
    kept = _KEPT.get(tree)
    if kept is None or len(kept[0]) > _STATE_CAP:
        kept = _KEPT[tree] = ({tree.root: start}, {})
    states, keys = kept
    parse = _parser(game)

    def state_of(node: TreeNode) -> object:
        chain = []
        at: TreeNode | None = node
        while at not in states:  # the root is: every node's chain ends there
            assert at is not None
            chain.append(at)
            at = at.parent
        state = states[at]
        for below in reversed(chain):
            state = states[below] = step(state, parse(below.name))
        return state

    found = {}
    get_state = states.get
    for node in nodes:
        k = keys.get(node)
        if k is None:
            above = get_state(node.parent)  # type: ignore[arg-type]  # None: the root's (known); usually known: a save's new nodes come parents first
            state = state_of(node) if above is None else step(above, parse(node.name))
            states[node] = state
            k = keys[node] = key(state)
        found[node] = k
    return found


def _walk(game: Game) -> tuple[object, Callable[[Any, int], object], Callable[[Any], str]]:
    """How to reach positions' keys in ``game``: its ``key_walk()`` where it has one, else its states."""
    walk = getattr(game, "key_walk", None)
    if walk is not None:
        return walk()  # type: ignore[no-any-return]
    return game.initial(), _play, game.position_key


def _parser(game: Game) -> Callable[[str], int]:
    """``game.parse_move`` parsing each label once."""
    moves: dict[str, int] = {}

    def parse(label: str) -> int:
        move = moves.get(label)
        if move is None:
            move = moves[label] = game.parse_move(label)
        return move

    return parse


def _play(state: State, move: int) -> State:
    return state.play(move)


_KEPT: WeakKeyDictionary[Tree, tuple[dict[TreeNode, Any], dict[TreeNode, str]]] = WeakKeyDictionary()
"""Per tree, the positions and keys :func:`node_keys` computed last (a node's position never changes)."""


def key_of(tree: Tree, node: TreeNode) -> str:
    """The position key of one node of ``tree`` (its moves replayed)."""
    return tree.game.position_key(tree.game.replay(node.moves))


def unsaved_counts(tree: Tree) -> tuple[list[TreeNode], list[str], list[tuple[int, int, int, float]]]:
    """What ``tree`` changed since its last save or load, by node: the nodes (changed ones, then new ones),
    their position keys, and what each adds to its position's row ``(nb_visit, player 1's wins, nb_draw,
    player 1's value sum)``."""
    base = tree.baselines
    new = tree.new_nodes
    fresh = set(new)
    nodes = [node for node in base if node not in fresh]
    nodes.extend(new)
    keys = node_keys(tree, nodes)
    zero = (0, 0, 0, 0)
    amounts = []
    values = value_changes(tree, nodes)
    for node, value in zip(nodes, values, strict=True):
        was = base.get(node, zero)
        visits, wins, draws = node.nb_visit - was[0], node.nb_win - was[1], node.nb_draw - was[2]
        amounts.append((visits, player_one(node.mover, visits, wins, draws), draws, value))
    return nodes, [keys[node] for node in nodes], amounts


def value_changes(tree: Tree, nodes: Sequence[TreeNode]) -> list[float]:
    """What each of ``nodes`` (changed or new since the last save) adds to its position's value sum, player 1's."""
    if not tree.valued and not tree.value_baselines:
        return [0.0] * len(nodes)
    base, new = tree.value_baselines, set(tree.new_nodes)
    return [player_one_value(node.mover, node.value_sum - base.get(node, 0.0 if node in new else node.value_sum))
            for node in nodes]


def counts_of_nodes(tree: Tree, top: TreeNode | None = None) -> dict[str, list[Any]]:
    """The position table of the nodes of ``tree`` (at and below ``top``, default the root), rebuilt from
    their counts: ``key -> [nb_visit, player 1's wins, nb_draw, nb_path, player 1's value sum]``."""
    game = tree.game
    token, step, key = _walk(game)
    parse = _parser(game)
    start = tree.root if top is None else top
    for label in start.moves:
        token = step(token, parse(label))
    table: dict[str, list[Any]] = {}
    stack: list[tuple[TreeNode, Any]] = [(start, token)]
    while stack:
        node, state = stack.pop()
        row = table.get(k := key(state))
        if row is None:
            row = table[k] = [0, 0, 0, 0, 0.0]
        visits, draws = node.nb_visit, node.nb_draw
        row[0] += visits
        row[1] += player_one(node.mover, visits, node.nb_win, draws)
        row[2] += draws
        row[3] += 1
        if node.value_sum:
            row[4] += player_one_value(node.mover, node.value_sum)
        for kid in children_of(node):
            stack.append((kid, step(state, parse(kid.name))))
    return table


class PositionTable:
    """A tree's position table in memory, kept in step with a graph search's backups.

    Made by :meth:`of`: the stored table of the file the tree mirrors plus the tree's unsaved
    changes (or, without a stored table, rebuilt from the nodes held). It notes the tree's
    root visits when it is in step; a change made without it (a classic search, a record)
    shows as a mismatch, and :meth:`of` makes it anew. Nodes added with no counts (a path
    walked to a position) change nothing.
    """

    def __init__(self, tree: Tree, rows: dict[str, Row]) -> None:
        self.tree = tree
        self.rows = rows
        """``key -> [nb_visit, player 1's wins, nb_draw, player 1's value sum]`` (:data:`Row`)."""
        self.keys: dict[TreeNode, str] = {}
        """Each node's key once computed (nodes met by the search)."""
        self._states: dict[TreeNode, State] = {}
        self.stamp = self._now()

    def _now(self) -> int:
        return self.tree.root.nb_visit  # every count change reaches the root; new nodes with no count do not matter

    @property
    def current(self) -> bool:
        """Whether nothing changed the tree's counts since the table was last in step."""
        return self.stamp == self._now()

    def settle(self) -> None:
        """Note that the table is in step with the tree now (after the search's backups)."""
        self.stamp = self._now()

    @classmethod
    def of(cls, tree: Tree) -> PositionTable:
        """The table of ``tree``: the one kept from its last graph search if still in step, else made anew."""
        kept = tree.position_table
        if isinstance(kept, PositionTable) and kept.current:
            return kept
        stored = HOOKS["positions"](tree) if "positions" in HOOKS else None
        if stored is None:  # no stored table to start from: the nodes held are all there is
            rows = {k: [*v[:3], v[4]] for k, v in counts_of_nodes(tree).items()}
        else:
            rows = stored
            _, keys, amounts = unsaved_counts(tree)
            for k, (visits, wins, draws, value) in zip(keys, amounts, strict=True):
                row = rows.get(k)
                if row is None:
                    rows[k] = [visits, wins, draws, value]
                else:
                    row[0] += visits
                    row[1] += wins
                    row[2] += draws
                    row[3] += value
        table = tree.position_table = cls(tree, rows)
        return table

    def key(self, node: TreeNode, state: State | None = None) -> str:
        """The position key of ``node`` (``state``: its position, if known)."""
        k = self.keys.get(node)
        if k is None:
            if state is None:
                state = self.state(node)
            k = self.keys[node] = self.tree.game.position_key(state)
        return k

    def state(self, node: TreeNode) -> State:
        """The position of ``node``, from the nearest cached ancestor's."""
        states = self._states
        if len(states) > _STATE_CAP:
            states.clear()
        chain = []
        at: TreeNode | None = node
        while at is not None and at not in states:
            chain.append(at)
            at = at.parent
        game = self.tree.game
        state = game.initial() if at is None else states[at]
        parse = game.parse_move
        for below in reversed(chain):
            if below.depth:
                state = state.play(parse(below.name))
            states[below] = state
        return state

    def row(self, node: TreeNode) -> Row | None:
        """The counts of ``node``'s position, or None if it has none yet."""
        return self.rows.get(self.key(node))

    def mean(self, node: TreeNode) -> tuple[float, int]:
        """The mean reward of the player who moved into ``node``, over its position's simulations, and their number
        (the node's own mean and visits while its position has none)."""
        row = self.rows.get(self.key(node))
        if row is None or not row[0]:
            return node.mean, node.nb_visit
        return mover_mean(row[0], row[1], row[2], node.mover, row[3]), row[0]

    def add(self, path: Sequence[TreeNode], winner: int | None, times: int = 1) -> None:
        """Add ``times`` simulations won by ``winner`` (None: drawn) to the positions of ``path``'s nodes."""
        rows, key = self.rows, self.key
        for node in path:
            k = key(node)
            row = rows.get(k)
            if row is None:
                row = rows[k] = [0, 0, 0, 0.0]
            row[0] += times
            if winner is None:
                row[2] += times
            elif winner == 1:
                row[1] += times

    def undo_unsaved(self) -> bool:
        """Take the tree's unsaved changes back out of the table (before they are undone in the tree: a stored
        tree's player starting its next game from the file, :func:`treelab.play.stored.revert`); True."""
        rows, base, zero = self.rows, self.tree.baselines, (0, 0, 0, 0)
        nodes = [*base, *(n for n in self.tree.new_nodes if n not in base)]
        for node, value in zip(nodes, value_changes(self.tree, nodes), strict=True):
            was = base.get(node, zero)
            visits, wins, draws = node.nb_visit - was[0], node.nb_win - was[1], node.nb_draw - was[2]
            if visits or value:
                row = rows[self.key(node)]
                row[0] -= visits
                row[1] -= player_one(node.mover, visits, wins, draws)
                row[2] -= draws
                row[3] -= value
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

