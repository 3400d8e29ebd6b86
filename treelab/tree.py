"""The persistent tree: anytree nodes named by move, carrying visit and win counts.

Every stored path starts at the root (the initial position), so a node's path
from the root *is* its move sequence (``/root/4/4/5``) and the root's
``nb_visit`` is the number of simulations ever recorded. A node's ``nb_win``
counts wins of the player who made the move into it (the root counts as moved
into by player 2); ``nb_draw`` counts draws.

The nodes are :class:`treelab.nodes.TreeNode` objects (``__slots__``, no
``__dict__``, the id, value sum and prior native numbers where the extension is built): a loaded
million-node tree costs about 165 bytes a node with its children lists, a PUCT tree with priors and
value sums about 170 (``benchmarks/tree_memory.py``). Child lookup scans only the
node's own few children; the tree is never searched.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from . import speedups
from .errors import IllegalMoveError, NotationError, PathNotFoundError, StoreError
from .games import Game, State, find_game
from .nodes import HOOKS, SQRT2, TreeNode, display, prior_of, set_prior, walk

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["SQRT2", "Counts", "MoverNode", "MoverTree", "Moves", "Priors", "Tree", "TreeNode", "backup"]

Counts = tuple[int, int, int, int]
"""A node's ``(nb_visit, nb_win, nb_draw, nb_select)``."""

Moves = str | Iterable[str | int] | None
"""A move sequence: ``"4453"``, ``"4,4,5,3"``, ``"/root/4/4/5/3"``, ``[4, 4, 5, 3]`` or None (root)."""

_CHILD = speedups.compiled.child if speedups.compiled is not None else None
"""The compiled :meth:`Tree.add_child` node maker, if built (a new node with its slots set, linked)."""


_ZERO: Counts = (0, 0, 0, 0)


def _by_id(item: tuple[TreeNode, Counts]) -> int:
    return item[0].node_id


def backup(path: Sequence[TreeNode], winner: int | None, baselines: dict[TreeNode, Counts] | None = None, *,
           selected_from: int = 1, movers: bool = False, times: int = 1) -> None:
    """Back up ``times`` simulations whose result was ``winner`` (1, 2, None = draw) on ``path``.

    The one backup rule of treelab (every search, :meth:`Tree.backup`, :meth:`Tree.record`): every
    node gets ``nb_visit``, a draw everywhere or a win where ``winner`` made the move into the node,
    and the nodes from ``path[selected_from]`` on (those the search selected: below where it
    started) ``nb_select``. ``path`` is a stored path, each node the parent of the next. With
    ``baselines`` (:attr:`Tree.baselines`), each node's counts before its first change since the
    last save are recorded there first. ``movers``: the nodes store their movers
    (:class:`MoverTree`); else the mover is the depth's parity and wins go to every other
    node. ``treelab._speedups.backup`` runs this rule in C for one simulation on parity nodes.
    """
    if baselines is not None:
        for node in path:
            if node not in baselines:
                baselines[node] = (node.nb_visit, node.nb_win, node.nb_draw, node.nb_select)
    for node in path:
        node.nb_visit += times
    for node in path[selected_from:]:
        node.nb_select += times
    if winner is None:
        for node in path:
            node.nb_draw += times
    elif movers:
        for node in path:
            if node.mover == winner:
                node.nb_win += times
    elif path:
        for node in path[(path[0].depth + (winner == 1)) & 1::2]:
            node.nb_win += times


class Priors(MutableMapping[TreeNode, float]):
    """A tree's priors by node (:attr:`Tree.priors`): a mapping over the nodes' own prior slots.

    Each node keeps the prior of the move into it in its ``_prior`` slot (:func:`~treelab.nodes.prior_of`),
    8 bytes in the node where the extension is built, where a dict of floats cost about 80 bytes a node of a
    PUCT tree. Reads and writes are a dict's (``priors[node]``, ``get``, ``in``, ``pop``, ``setdefault``);
    iterating, ``len`` and ``clear`` walk the tree, so they cost a walk: searches and saves only look nodes up.
    """

    __slots__ = ("_any", "_tree")

    def __init__(self, tree: Tree) -> None:
        self._tree = tree
        self._any = False  # no prior was ever set: a UCT tree's saves skip every lookup

    def __getitem__(self, node: TreeNode) -> float:
        prior = prior_of(node)
        if prior is None:
            raise KeyError(node)
        return prior

    def get(self, node: TreeNode, default: Any = None) -> Any:
        """The prior of ``node``, ``default`` if it has none."""
        if not self._any:
            return default
        prior = prior_of(node)
        return default if prior is None else prior

    def __contains__(self, node: object) -> bool:
        return self._any and isinstance(node, TreeNode) and prior_of(node) is not None

    def __setitem__(self, node: TreeNode, prior: float) -> None:
        set_prior(node, prior)
        self._any = True

    def __delitem__(self, node: TreeNode) -> None:
        if prior_of(node) is None:
            raise KeyError(node)
        set_prior(node, None)

    if speedups.compiled is not None:  # the same, read in C: PUCT's selection asks it of every child it weighs
        get = staticmethod(speedups.compiled.prior_get)

    def touch(self) -> None:
        """Note that compiled code (``_puct.c``) may set priors in the nodes' slots from now on."""
        self._any = True

    def __iter__(self) -> Iterator[TreeNode]:
        if self._any:
            yield from (node for node in walk(self._tree.root) if prior_of(node) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        if self._any and next(iter(self), None) is None:
            self._any = False
        return self._any

    def clear(self) -> None:
        """Drop every node's prior (a walk of the tree)."""
        if self._any:
            for node in walk(self._tree.root):
                set_prior(node, None)
            self._any = False

    def __repr__(self) -> str:
        return f"Priors({len(self)} nodes)"


class Tree:
    """A persistent MCTS tree for one game, grown across games and searches.

    Args:
        game: a game name (``"connect4"``) or a :class:`Game`.
        c: the exploration constant stored with the tree (UCB1's ``c``).
    """

    node_class: type[TreeNode] = TreeNode  # MoverNode in a MoverTree, for games whose players need not alternate
    def __new__(cls, game: str | Game | None = None, **_: Any) -> Tree:
        return super().__new__(MoverTree if cls is Tree and game and not find_game(game).alternating else cls)

    def __init__(self, game: str | Game, *, c: float = SQRT2) -> None:
        self.game: Game = find_game(game)
        self.c = c
        self.root = self.node_class("root", node_id=1)
        self.size = 1
        """Number of nodes held in memory."""
        self.depth_counts: list[int] = [1]
        """Nodes held per depth (``depth_counts[d]``), kept up to date as nodes are added."""
        self._next_id = 2
        self._baselines: dict[TreeNode, Counts] = {self.root: _ZERO}
        self._new: list[TreeNode] = [self.root]
        self.statistics = "classic"
        """The statistics the tree's searches select by (``"classic"`` or ``"graph"``, stored in ``meta``):
        diagrams and the explorer show the score of that rule."""
        self.position_table: Any = None
        """The :class:`treelab.positions.PositionTable` a graph search keeps in step (None: none yet)."""
        self.priors = Priors(self)
        """The prior ``P`` of the move into each node that has one (PUCT's expansions, an imported search's
        policy; stored in ``nodes.prior``; empty for UCT), by node: a mapping over the nodes' prior slots
        (:class:`Priors`)."""
        self.valued = False
        """Some node holds a :attr:`~treelab.nodes.TreeNode.value_sum` (an imported search, PUCT with an
        evaluator): searches then walk in Python, as the compiled walk reads wins and draws only."""
        self._value_base: dict[TreeNode, float] = {}
        self.pending: dict[TreeNode, dict[str, float]] = {}
        """PUCT's priors of the moves it evaluated at a node but has not made a node for yet, by move label
        (a child is made when a simulation first selects it; not stored). A node in this table is expanded.
        The tree's unexpanded edges, as mctx keeps ``children_prior_logits`` in its ``Tree`` (docs/design.md).
        What concerns a file lives in :mod:`treelab.store.binding` (where it was saved, its games counter, a
        partial load's cut); the game a node was made in is stamped by :func:`treelab.store.deltas.stamp`."""

    # -- lookup ----------------------------------------------------------
    def labels(self, moves: Moves) -> tuple[str, ...]:
        """The move labels of ``moves`` (notation checked, rules not)."""
        game = self.game
        return tuple(game.label(m) for m in game.parse(moves))

    def get(self, moves: Moves) -> TreeNode | None:
        """The node at ``moves``, or None if it is not stored."""
        node: TreeNode | None = self.root
        for label in self.labels(moves):
            assert node is not None
            node = node.child(label)
            if node is None:
                return None
        return node

    def find(self, moves: Moves) -> TreeNode:
        """The node at ``moves``.

        Raises:
            PathNotFoundError: the path is not stored (search or record it first).
            NotationError: ``moves`` is not a move sequence of this game.
        """
        parsed = self.game.parse(moves)
        node = self.get(parsed)
        if node is None:
            raise PathNotFoundError(
                f"path {self.game.notation(parsed)!r} is not in the tree: "
                "record or search it first, or check the moves"
            )
        return node

    def __contains__(self, moves: object) -> bool:
        try:
            return self.get(moves) is not None  # type: ignore[arg-type]
        except NotationError:
            return False

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[TreeNode]:
        """Every node, depth first from the root (iterative: deep trees are fine)."""
        return walk(self.root)

    # -- growth ----------------------------------------------------------
    def add_child(self, parent: TreeNode, label: str, mover: int | None = None) -> TreeNode:
        """Create the child of ``parent`` reached by ``label`` (the caller checks legality; ``mover``: MoverTree)."""
        node: TreeNode
        if _CHILD is not None:  # the same node, its slots filled in C (treelab.speedups)
            node = _CHILD(self.node_class, parent, label, self._next_id, None)
        else:
            node = self.node_class(label, parent, node_id=self._next_id)
        self._next_id += 1
        self.size += 1
        self._new.append(node)
        depth = node.depth
        counts = self.depth_counts
        if depth == len(counts):
            counts.append(1)
        else:
            counts[depth] += 1
        return node

    @property
    def max_depth(self) -> int:
        """The depth of the deepest node held."""
        return len(self.depth_counts) - 1

    def path(self, moves: Moves, *, create: bool = True) -> tuple[list[TreeNode], State]:
        """The nodes from the root along ``moves`` and the position they reach.

        Every move is checked against the rules; missing nodes are created
        (with zero counts) when ``create`` is true.

        Raises:
            IllegalMoveError: a move is illegal or comes after the end of the game.
        """
        game = self.game
        parsed = game.parse(moves)
        state = game.replay(parsed)  # validates everything before anything changes
        node = self.root
        nodes = [node]
        for move in parsed:
            label = game.label(move)
            kid = node.child(label)
            if kid is None:
                if not create:
                    raise PathNotFoundError(f"path {game.notation(parsed)!r} is not in the tree")
                kid = self.add_child(node, label)
            node = kid
            nodes.append(node)
        return nodes, state

    def backup(self, nodes: Iterable[TreeNode], winner: int | None, *, start: int = 0) -> None:
        """Add one simulation with result ``winner`` (1, 2, None = draw) to every node in ``nodes``.

        ``nodes`` is a stored path from the root; the search started at ``nodes[start]``, so only
        the nodes after it were selected by this simulation (``nb_select += 1``). See :func:`backup`.
        """
        backup(list(nodes), winner, self._baselines, selected_from=start + 1, movers=not self.game.alternating)

    def record(self, moves: Moves, winner: int | None) -> TreeNode:
        """Store the path ``moves`` (creating nodes) and back up one result.

        Args:
            moves: the move sequence from the initial position.
            winner: 1 or 2, or None for a draw. The path may stop before the
                game's end (the result then comes from a playout); if it reaches
                the end, ``winner`` must be the game's real result.

        Returns:
            The node at the end of the path.
        """
        if isinstance(winner, bool) or winner not in (1, 2, None):
            raise ValueError(f"winner {winner!r} is not 1, 2 or None (a draw)")
        parsed = self.game.parse(moves)
        state = self.game.replay(parsed)
        if state.is_terminal and state.winner != winner:
            raise IllegalMoveError(
                f"winner {winner!r} contradicts {self.game.notation(parsed)!r}, "
                f"which ends in {'a draw' if state.winner is None else f'a win for player {state.winner}'}"
            )
        nodes, _ = self.path(parsed)
        self.backup(nodes, winner)
        return nodes[-1]

    def add_value(self, node: TreeNode, amount: float) -> None:
        """Add ``amount`` (value estimates in [-1, 1], the mover's) to ``node``'s
        :attr:`~treelab.nodes.TreeNode.value_sum`, so the next save adds it to the stored row.

        The caller counts the simulations themselves (``nb_visit``, and ``nb_draw``: see
        :func:`~treelab.nodes.mean_reward`).
        """
        if node not in self._value_base:
            self._value_base[node] = node.value_sum
        self.mark_dirty(node)
        node.value_sum = node.value_sum + amount
        self.valued = True

    @property
    def value_baselines(self) -> dict[TreeNode, float]:
        """Each node whose value sum changed since the last save or load, with its value sum then."""
        return self._value_base

    # -- change tracking: what the next save writes ---------------------------
    def mark_dirty(self, node: TreeNode) -> None:
        """Note that ``node`` changes now, so the next save writes it: call *before* changing its counts.

        Its counts as they are now become its baseline (unless it changed already
        since the last save), so a save can write the increments since.
        """
        if node not in self._baselines:
            self._baselines[node] = (node.nb_visit, node.nb_win, node.nb_draw, node.nb_select)

    @property
    def baselines(self) -> dict[TreeNode, Counts]:
        """Each node changed since the last save or load, with its ``(nb_visit, nb_win, nb_draw)`` then.

        Code that changes counts records a node here first (``setdefault``), as
        :meth:`backup` and :meth:`mark_dirty` do; the compiled backup takes this
        dict (:mod:`treelab.mcts.selection`). The store writes ``count - baseline``.
        """
        return self._baselines

    @property
    def new_nodes(self) -> list[TreeNode]:
        """Nodes created since the last save or load, in creation order (parents first). Read only."""
        return self._new

    @property
    def next_id(self) -> int:
        """The ``node_id`` the next new node gets."""
        return self._next_id

    def count_made(self, made: int) -> None:
        """Count ``made`` nodes that compiled code (``treelab._speedups.batch``) created and appended to
        :attr:`new_nodes` and :attr:`depth_counts`, numbered from :attr:`next_id` on."""
        self._next_id += made
        self.size += made

    def changed_nodes(self) -> list[tuple[TreeNode, Counts]]:
        """Saved nodes changed since the last save or load, by ``node_id``, each with its baseline counts.

        New nodes are not listed (they are in :attr:`new_nodes`; their baseline is zero).
        """
        first = self._new[0].node_id if self._new else self._next_id
        return sorted(((n, b) for n, b in self._baselines.items() if n.node_id < first), key=_by_id)

    def mark_saved(self, *, next_id: int | None = None) -> None:
        """Everything is saved (or just loaded): nothing is new or changed from now on.

        Args:
            next_id: the ``node_id`` the next new node gets (the file's largest id + 1).
        """
        self._new = []
        self._baselines = {}
        self._value_base = {}
        if next_id is not None:
            self._next_id = next_id

    def forget_changes(self) -> None:
        """Drop the record of changes without saving (a view built for display, never to be saved)."""
        self.mark_saved()

    # -- persistence -----------------------------------------------------
    def save(self, db: str | PathLike[str], *, games: Iterable[dict[str, Any]] = ()) -> int:
        """Save to the SQLite file ``db`` in one transaction; returns the node rows written.

        The first save writes every node; later saves to the same file write
        only new and changed nodes. ``games`` are logged in the same transaction
        (see :func:`treelab.store.persistence.save`, which :mod:`treelab.store` wires in here when it loads;
        the front door ``treelab`` loads it).
        """
        hook = HOOKS.get("save")
        if hook is None:
            raise StoreError("Tree.save needs treelab.store, which is not loaded: use treelab.Tree (the front door "
                             "wires it), or import treelab.store.persistence first")
        return hook(self, db, games=games)  # type: ignore[no-any-return]

    @property
    def unsaved(self) -> int:
        """Nodes changed or created since the last save."""
        baselines = self._baselines
        return len(baselines) + sum(1 for n in self._new if n not in baselines)

    # -- display ---------------------------------------------------------
    def __repr__(self) -> str:
        return f"Tree({self.game.name!r}, nodes={self.size}, simulations={self.root.nb_visit})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """Jupyter shows the tree's top as an SVG diagram (a text reason if ``dot`` is missing)."""
        return display(self, include, exclude)


class MoverNode(TreeNode):
    """A :class:`~treelab.tree.TreeNode` that stores the player who moved into it."""

    __slots__ = ("mover",)

    mover: int  # a slot here, the depth parity's property in TreeNode
    """The player (1 or 2) who made the move into this node (the root: the player not to move first)."""


class MoverTree(Tree):
    """A :class:`~treelab.tree.Tree` whose nodes store their movers (``Tree(game)`` picks it by itself)."""

    node_class = MoverNode

    def __init__(self, game: str | Game, **kwargs: Any) -> None:
        super().__init__(game, **kwargs)
        self.root.mover = 3 - self.game.initial().to_move  # type: ignore[misc]

    def add_child(self, parent: TreeNode, label: str, mover: int | None = None) -> TreeNode:
        """Create the child of ``parent`` reached by ``label``; ``mover`` is the player to move at ``parent``.

        Without ``mover`` (:meth:`Tree.path`, :meth:`Tree.record`) it is read from the game,
        replaying the moves to ``parent``; the search passes it.
        """
        node = super().add_child(parent, label)
        if mover is None:
            mover = self.game.replay(parent.moves).to_move
        elif mover not in (1, 2):
            raise ValueError(f"mover {mover!r} is not 1 or 2 (the player to move at {parent.sequence!r})")
        node.mover = mover  # type: ignore[misc]
        return node
