"""Tree nodes and the rules every layer shares: UCB1's formula, the mean, proofs, anytree's slot names.

A :class:`TreeNode` is one stored position, named by the move that leads to it. Nodes extend
:class:`anytree.LightNodeMixin` with ``__slots__`` all the way down, so a node has no ``__dict__``
(anytree's ``Node`` costs 276 bytes); where the extension is built, ``node_id``, the value sum and the prior
are native numbers in the node (:data:`NATIVE_SLOTS`), no int or float object each. Child lookup scans only the
node's own few children.

This module is the one place for what other modules (and the C sources) rely on:
:func:`ucb1_score`, the only scalar UCB1 in treelab; :func:`mean_reward`, the only mean; the
:class:`Proof` values with their words; :data:`CHILDREN_SLOT` / :data:`PARENT_SLOT`, anytree's mangled
slot names, which ``_nodes.c`` spells too (``tests/design/test_rules_once.py`` checks that they agree);
and the children slot's shape: nothing for a leaf, the one child itself for a node with one child,
and a list (or a load's exact-size tuple) for more. :func:`children_of` reads it and :func:`link` /
:func:`unlink` / :func:`seal` write it (``child_items``, ``append_child`` and ``seal_children`` in
``_nodes.c``); :class:`TreeNode` overrides what ``LightNodeMixin`` does with the slot (``parent``,
``children``, ``is_leaf``, ``height``), so anytree's public API behaves as before.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from anytree import LightNodeMixin

from . import speedups
from .errors import TreelabError
from .games import mover_at_depth

__all__ = [
    "CHILDREN_SLOT", "HOOKS", "NATIVE_SLOTS", "PARENT_SLOT", "SQRT2", "Proof", "TreeNode", "best_index",
    "children_of", "display", "link", "mean_reward", "preference", "prior_of", "proof_word", "seal", "set_prior",
    "ucb1_score", "unlink", "walk", "wire",
]

SQRT2 = math.sqrt(2.0)
"""The UCB1 exploration constant of Auer et al. (2002) for rewards in [0, 1]."""

HOOKS: dict[str, Callable[..., Any]] = {}
"""What the layers above wire in (the core imports neither): ``"save"`` (behind :meth:`treelab.tree.Tree.save`),
``"positions"`` (:meth:`treelab.positions.PositionTable.of`'s stored table), ``"cut"`` (a partial load's record, for a
search) and ``"display"`` (Jupyter's diagram): :mod:`treelab.store` and :mod:`treelab.view` wire them when loaded."""


def wire(name: str, hook: Callable[..., Any]) -> None:
    """Register ``hook`` as :data:`HOOKS` ``[name]`` (called by :mod:`treelab.store` and :mod:`treelab.view`)."""
    HOOKS[name] = hook


def display(obj: Any, include: Any = None, exclude: Any = None) -> dict[str, str]:
    """Jupyter's view of a tree or node: the wired diagram, else its text."""
    hook = HOOKS.get("display")
    return {"text/plain": repr(obj)} if hook is None else hook(obj, include, exclude)


CHILDREN_SLOT = "_LightNodeMixin__children"
"""anytree's mangled slot holding a node's children: unset (or None), the one child, or a list/tuple of them
(``FIELD_NAMES`` in ``_nodes.c``; read it with :func:`children_of`, write it with :func:`link` and :func:`unlink`)."""
PARENT_SLOT = "_LightNodeMixin__parent"
"""anytree's mangled slot holding a node's parent (``FIELD_NAMES`` in ``_nodes.c``)."""

_NO_CHILDREN: tuple[TreeNode, ...] = ()


def mean_reward(wins: float, draws: float, visits: float, value_sum: float = 0.0) -> float:
    """The mover's mean reward in [0, 1], ``(wins + draws / 2 + value_sum / 2) / visits`` (0.5 if unvisited):
    the one definition of a node's mean, shown everywhere. A simulation that ended in a value ``v`` in
    [-1, 1] (a value network's, OpenSpiel's, mctx's) counts as a draw plus ``v / 2``: it is in ``draws``
    and ``v`` in ``value_sum`` (:attr:`TreeNode.value_sum`), so ``visits = wins + draws + losses`` still.
    ``mean_reward(0, 4, 4, value_sum=-2.0)`` is 0.25."""
    return (wins + 0.5 * draws + 0.5 * value_sum) / visits if visits else 0.5


def ucb1_score(wins: float, draws: float, visits: float, parent_visits: float, c: float = SQRT2,
               value_sum: float = 0.0) -> float:
    """UCB1 of a child: ``mean + c * sqrt(ln N) / sqrt(n)``, +inf when unvisited.

    Auer, Cesa-Bianchi & Fischer (2002), "Finite-time analysis of the
    multiarmed bandit problem"; used for trees as UCT by Kocsis & Szepesvari
    (2006). ``mean = (wins + draws / 2) / visits`` is the mover's mean reward
    in [0, 1], ``N`` the parent's visits (no exploration term while ``N <= 1``).
    ``c = sqrt(2)`` is the classic constant for rewards in [0, 1] (OpenSpiel's
    ``uct_c = sqrt(2)`` on [-1, 1] returns explores like ``c = 1/sqrt(2)`` here).
    The compiled walk (``_nodes.c``, ``best_child``) does the very same
    operations in the same order, so both pick the same child.

    >>> ucb1_score(3, 0, 4, 1)
    0.75
    >>> round(ucb1_score(3, 2, 10, 100, c=1.0), 4)
    1.0786
    """
    if visits == 0:
        return math.inf
    explore = c * math.sqrt(math.log(parent_visits)) if parent_visits > 1 else 0.0
    mean = mean_reward(wins, draws, visits, value_sum) if value_sum else (wins + 0.5 * draws) / visits  # as in C
    return mean + explore / math.sqrt(visits)


class Proof(enum.IntEnum):
    """A game-theoretic result for one player; the database stores its value (``proven``: 1, 0, -1)."""

    LOSS = -1
    """The player loses with best play on both sides."""
    DRAW = 0
    """Best play draws."""
    WIN = 1
    """The player wins with best play."""

    @property
    def word(self) -> str:
        """``"win"``, ``"draw"`` or ``"loss"``: how the proof reads in JSON and tables."""
        return _WORDS[self]

    def __neg__(self) -> Proof:
        """The same result seen by the opponent (a win is the other player's loss)."""
        return _NEGATED[self]

    @classmethod
    def of(cls, value: int | None) -> Proof | None:
        """The proof stored as ``value`` (1, 0, -1), or None for None.

        Raises:
            ValueError: ``value`` is none of 1, 0, -1, None.
        """
        if value is None:
            return None
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"proven {value!r} is not 1 (win), 0 (draw), -1 (loss) or None (unknown)") from None

    @classmethod
    def of_winner(cls, winner: int | None, player: int) -> Proof:
        """The result of a finished game (``winner`` 1, 2 or None for a draw) for ``player``."""
        if winner is None:
            return cls.DRAW
        return cls.WIN if winner == player else cls.LOSS


_WORDS = {Proof.WIN: "win", Proof.DRAW: "draw", Proof.LOSS: "loss"}
_NEGATED = {Proof.WIN: Proof.LOSS, Proof.DRAW: Proof.DRAW, Proof.LOSS: Proof.WIN}


def proof_word(value: int | None) -> str | None:
    """The word of a stored proof value (``1 -> "win"``), None for None."""
    proof = Proof.of(value)
    return None if proof is None else proof.word


def children_of(node: TreeNode) -> Sequence[TreeNode]:
    """The children of ``node`` in order, as the slot holds them (a list or tuple), ``(kid,)`` for one, ``()``.

    Read only: change the children through :func:`link` and :func:`unlink`.
    """
    kids = getattr(node, CHILDREN_SLOT, None)
    if kids is None:
        return _NO_CHILDREN
    if isinstance(kids, LightNodeMixin):
        return (kids,)
    return kids  # type: ignore[no-any-return]


class TreeNode(LightNodeMixin):  # type: ignore[misc]  # anytree ships no types: its base is Any
    """One stored position, named by the move that leads to it (``'root'`` for the root)."""

    __slots__ = ("_prior", "_value_sum", "created_game", "depth", "name", "nb_draw", "nb_select", "nb_visit",
                 "nb_win", "node_id", "proven")
    separator = "/"

    name: str
    """The move label that leads here (``"4"``), or ``"root"``."""
    depth: int  # a stored slot instead of anytree's walk to the root
    """Number of moves from the initial position."""
    nb_visit: int
    """Simulations whose stored path passed through this node."""
    nb_win: int
    """Of those, wins of the player who made the move into this node."""
    nb_draw: int
    """Of those, draws."""
    nb_select: int
    """Simulations that *selected* this node at its parent (searches rooted at or above the parent);
    moves are chosen by it, not by visits that passed through (:mod:`treelab.mcts.choice`)."""
    proven: Proof | None
    """Game-theoretic result for the player who moved here (stored as 1 win, 0 draw, -1 loss), None unknown."""
    node_id: int
    """Row id in the database: set at creation; a save to a new file renumbers breadth-first, later saves keep it."""
    created_game: int | None
    """The ``games.id`` of the training game that created the node, if any."""
    _prior: float  # -P, or +0.0 for none: prior_of and set_prior (tree.priors)

    def __init__(self, name: str, parent: TreeNode | None = None, *, node_id: int = 0, nb_visit: int = 0,
                 nb_win: int = 0, nb_draw: int = 0, proven: int | None = None, created_game: int | None = None,
                 nb_select: int = 0) -> None:
        self.name, self.nb_visit, self.nb_select, self.nb_win, self.nb_draw = name, nb_visit, nb_select, nb_win, nb_draw
        self.proven = None if proven is None else Proof.of(proven)
        self.node_id, self.created_game = node_id, created_game
        if parent is None:
            self.depth = 0
        else:
            self.depth = parent.depth + 1
            link(self, parent)

    # -- derived numbers ---------------------------------------------------
    @property
    def value_sum(self) -> float:
        """Sum of the values in [-1, 1] (the mover's) of simulations that ended in a value (:func:`mean_reward`)."""
        return getattr(self, "_value_sum", 0.0)

    @value_sum.setter
    def value_sum(self, value: float) -> None:
        self._value_sum = value

    @property
    def prior(self) -> float | None:
        """The prior ``P`` of the move into this node, None if it has none (set through ``tree.priors``)."""
        return prior_of(self)

    @property
    def mover(self) -> int:
        """The player (1 or 2) who made the move into this node."""
        return mover_at_depth(self.depth)

    @property
    def nb_loss(self) -> int:
        """Simulations lost by the player who moved here."""
        return self.nb_visit - self.nb_win - self.nb_draw

    @property
    def mean(self) -> float:
        """Mean reward of the mover in [0, 1], :func:`mean_reward` (0.5 if unvisited)."""
        return mean_reward(self.nb_win, self.nb_draw, self.nb_visit, self.value_sum)

    def ucb1(self, c: float = SQRT2) -> float:
        """UCB1 of this node as a child of its parent: ``mean + c*sqrt(ln N_parent / n)``.

        +inf when unvisited (Auer et al. 2002; Kocsis & Szepesvari 2006).
        """
        parent = getattr(self, PARENT_SLOT, None)
        if parent is None:
            return math.nan  # the root is nobody's child: it has no UCB1 score
        return ucb1_score(self.nb_win, self.nb_draw, self.nb_visit, parent.nb_visit, c, self.value_sum)

    def exploration(self, c: float = SQRT2) -> float:
        """The exploration term ``c*sqrt(ln N_parent / n)`` of :meth:`ucb1` (+inf if unvisited)."""
        return self.ucb1(c) - self.mean if self.nb_visit else math.inf

    if TYPE_CHECKING:

        @property
        def children_view(self) -> Sequence[TreeNode]:
            """The children, without anytree's copy into a new tuple (read only!): :func:`children_of`."""

        kids = children_view  # its name before 2026-11-28, kept for code that uses it
    else:  # the reader itself as the getter: one call, not two (selection reads it at every step)
        children_view = kids = property(children_of, doc="The children, without anytree's copy (read only!).")

    @property
    def moves(self) -> tuple[str, ...]:
        """The move labels from the root to this node."""
        labels = []
        node: TreeNode | None = self
        while node is not None and node.depth > 0:
            labels.append(node.name)
            node = node.parent
        return tuple(reversed(labels))

    @property
    def sequence(self) -> str:
        """The move path joined by ``/`` (``"4/4/5"``; ``"root"`` for the root): the DOT id."""
        moves = self.moves
        return "/".join(moves) if moves else "root"

    def child(self, label: str) -> TreeNode | None:
        """The child reached by move ``label``, or None (scans only this node's children)."""
        for kid in children_of(self):
            if kid.name == label:
                return kid
        return None

    # -- anytree's tree operations on the children slot's three shapes -----------------------
    @property
    def parent(self) -> TreeNode | None:
        """The parent node, None for a root (anytree's ``parent``: setting it detaches and attaches)."""
        return getattr(self, PARENT_SLOT, None)

    @parent.setter
    def parent(self, value: TreeNode | None) -> None:
        parent = getattr(self, PARENT_SLOT, None)
        if parent is value:
            return
        self._LightNodeMixin__check_loop(value)  # anytree's LoopError for a node under itself
        if parent is not None:
            self._pre_detach(parent)
            unlink(self)
            self._post_detach(parent)
        if value is not None:
            self._pre_attach(value)
            link(self, value)
            self._post_attach(value)

    def _children(self) -> tuple[TreeNode, ...]:
        return tuple(children_of(self))

    children = property(  # anytree's setter and deleter work through ``parent`` and this getter
        _children, LightNodeMixin.children.fset, LightNodeMixin.children.fdel, LightNodeMixin.children.__doc__
    )

    @property
    def is_leaf(self) -> bool:
        """Whether the node has no children (anytree's ``is_leaf``)."""
        return not children_of(self)

    @property
    def height(self) -> int:
        """Edges on the longest path down to a leaf (anytree's ``height``)."""
        kids = children_of(self)
        return max(kid.height for kid in kids) + 1 if kids else 0

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """Jupyter shows the subtree below this node as an SVG diagram (once :mod:`treelab.view` is wired)."""
        return display(self, include, exclude)

    def _pre_attach(self, parent: TreeNode) -> None:
        raise TreelabError(
            f"node {self.sequence!r} cannot be moved: a node's place is its move sequence; "
            "build new nodes with Tree.record or Tree.path instead"
        )

    _pre_detach = _pre_attach

    def __repr__(self) -> str:
        proof = "" if self.proven is None else f", proven={int(self.proven)}"
        return (
            f"TreeNode({self.sequence!r}, nb_visit={self.nb_visit}, nb_win={self.nb_win}, "
            f"nb_draw={self.nb_draw}{proof})"
        )


NATIVE_SLOTS = (("node_id",), ("_value_sum", "_prior"))
"""The slots that hold native numbers where the extension is built (``native_slots`` in ``_nodes.c``): ``node_id``
as an int64, the value sum and the prior as doubles, 8 bytes in the node each instead of a pointer to an int or
float of 32 (a loaded tree of a million nodes: 32 MB less, a PUCT tree 100 MB less). They read and write Python
ints and floats as before; an unset one reads 0 (the prior's encoding below makes 0 "none")."""

if speedups.compiled is not None:
    speedups.compiled.native_slots(TreeNode, *NATIVE_SLOTS)


def prior_of(node: TreeNode) -> float | None:
    """The prior ``P`` of the move into ``node`` (PUCT's, an imported search's policy), None if it has none.

    The ``_prior`` slot holds ``-P`` (its sign bit set, also for ``P = 0``) and ``+0.0``, or nothing, for none:
    a native slot starts at ``+0.0``. ``tree.priors`` (:class:`treelab.tree.Priors`) reads and writes it;
    ``get_prior``/``put_prior`` in ``_nodes.c`` spell the same rule.
    """
    raw = getattr(node, "_prior", 0.0)
    return -raw if math.copysign(1.0, raw) < 0 else None


def set_prior(node: TreeNode, prior: float | None) -> None:
    """Give ``node`` the prior ``prior`` (a number >= 0), or none (None): see :func:`prior_of`."""
    if prior is None:
        node._prior = 0.0
        return
    value = float(prior)
    if not value >= 0.0:
        raise ValueError(f"prior {prior!r} is not a probability >= 0")
    node._prior = -value


def link(child: TreeNode, parent: TreeNode) -> None:
    """Attach ``child`` as the last child of ``parent`` in O(1) (``append_child`` in ``_nodes.c``).

    anytree's ``parent`` setter walks to the root to rule out loops; a new
    node cannot form a loop, so this sets the same two slots directly. The
    slot grows from nothing to the child itself, then to a list (a load's tuple
    becomes a list too).
    """
    kids = getattr(parent, CHILDREN_SLOT, None)
    if kids is None:
        setattr(parent, CHILDREN_SLOT, child)
    elif kids.__class__ is list:
        kids.append(child)
    else:
        setattr(parent, CHILDREN_SLOT, [*kids, child] if kids.__class__ is tuple else [kids, child])
    setattr(child, PARENT_SLOT, parent)


def seal(node: TreeNode) -> None:
    """Keep ``node``'s list of children as an exact-size tuple (``seal_children`` in ``_nodes.c``).

    A load's nodes seldom get more children: a tuple of k costs 40 + 8k bytes, an
    appended list 56 and its over-allocated item array. :func:`link` makes it a list again.
    """
    kids = getattr(node, CHILDREN_SLOT, None)
    if kids.__class__ is list:
        setattr(node, CHILDREN_SLOT, tuple(kids))


def unlink(child: TreeNode) -> None:
    """Detach ``child`` from its parent (nothing for a root), the other children keeping their order."""
    parent = getattr(child, PARENT_SLOT, None)
    if parent is None:
        return
    rest = [kid for kid in children_of(parent) if kid is not child]
    if len(rest) > 1:
        setattr(parent, CHILDREN_SLOT, rest)
    elif rest:
        setattr(parent, CHILDREN_SLOT, rest[0])
    else:
        delattr(parent, CHILDREN_SLOT)
    setattr(child, PARENT_SLOT, None)


def walk(top: TreeNode) -> Iterator[TreeNode]:
    """``top`` and every node below it, depth first, children in order (iterative: deep trees are fine)."""
    stack: list[TreeNode] = [top]
    while stack:
        node = stack.pop()
        yield node
        kids = children_of(node)
        if kids:
            stack.extend(reversed(kids))


def preference(proven: int | None, selected: int, visits: int) -> tuple[int, int, int]:
    """The move-choice rule's key of a child (largest played): proof (win first, loss last), nb_select, nb_visit."""
    return (2 if proven == 1 else 0 if proven == -1 else 1, selected, visits)


def best_index(rows: Sequence[tuple[int | None, int, int]]) -> int | None:
    """The position in ``rows`` (``(proven, nb_select, nb_visit)`` in creation order) of the move to play;
    ties go to the first row, None for no rows."""
    best, key = None, None
    for i, row in enumerate(rows):
        k = preference(*row)
        if key is None or k > key:
            best, key = i, k
    return best
