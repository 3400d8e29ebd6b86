"""AlphaZero-style PUCT search on the persistent tree, with MCTS-Solver proofs.

Selection follows Silver et al. (2017, "Mastering the game of Go without human
knowledge"; 2018, "A general reinforcement learning algorithm that masters
chess, shogi, and Go through self-play"): from a node with ``N`` visits pick
the child maximising

    ``U = Q + c * P * sqrt(N) / (1 + n)``

where ``Q`` is the child's mean reward for its mover (in [0, 1]), ``P`` its
prior (kept in ``tree.priors``, by node), ``n`` the times this edge was taken (its ``nb_select``) and
``N`` one more than their sum at the node (:func:`~treelab.mcts.puct.chosen_here`: the visits of
searches started deeper in a game never count as exploration here). An unvisited child's
``Q`` is its parent's value for the same player ("first-play urgency" from the
parent, as in Leela Zero and mctx). A leaf is evaluated once by a pluggable
:data:`~treelab.mcts.evaluators.Evaluator`, which gives every legal move its
prior, as in AlphaZero; the priors of the moves not tried yet wait in
``tree.pending`` (by node and move label), and a move's node is made when a
simulation first selects it, as mctx keeps priors in the parent: so PUCT, like
UCT, adds one node per simulation (and a node for each move that ends the game,
proven at once), not one per legal move. Selection scores a waiting move as an
unvisited child.

Backup: every node on the stored path from the root gets ``nb_visit += 1``; values
0, 1/2 and 1 are a loss, draw or win for the player to move. Any other evaluator
value ``v`` (the player to move's at the leaf) is kept, not rounded to a sampled
result: the simulation is a draw and each node on the path adds ``2v - 1`` (``1 - 2v``
where the other player moved in) to its ``value_sum`` (:func:`treelab.nodes.mean_reward`).

With ``solver=True`` (the default) a child whose move ends the game is proven
as soon as it is created, and proofs propagate as in MCTS-Solver (Winands,
Bjornsson & Saito 2008): a position with a winning move is won for the player
to move, one whose moves all lose is lost, and when every move is proven the
position takes the best of them (so draws are proven too). Selection never
enters a proven child, the search stops once its start position is proven,
and :func:`choose_puct_move` always plays a proven win.

This module owns PUCT: its rules at one node (the score, :func:`select_puct`; the priors kept for moves not
yet tried; root noise, whose value :class:`~treelab.mcts.config.RootNoise` is a search option re-exported
here; an evaluator's value as a result) and its phases (:class:`PUCTPhases`; a fitted model's Connect Four
searches run whole batches of the same phases in C, ``_puct.c``). The search that runs these phases,
:func:`treelab.mcts.dispatch.puct_search` (``treelab.puct_search``), and its player,
:class:`treelab.play.players.MCTSPlayer` with ``algorithm="puct"``, live above this module.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .. import speedups
from ..errors import BudgetError
from ..games import Game, State
from ..nodes import Proof
from ..tree import Tree, TreeNode
from .config import C_PUCT, DIRICHLET_FRACTION, RootNoise
from .evaluators import BatchEvaluator, Evaluation, Evaluator, ModelEvaluator
from .loop import BatchFn, Leaf, SearchState, back_up, count_batch, legal_counter, prove_leaf
from .policies import random_playout
from .selection import SelectFn
from .solver import propagate, prove_terminal, replayed_legal_count
from .summary import choose_move

__all__ = [
    "C_PUCT", "DIRICHLET_FRACTION", "PUCTPhases", "RootNoise", "choose_puct_move", "chosen_here",
    "dirichlet_alpha_for", "select_puct",
]

# -- PUCT's rules at one node ------------------------------------------------------------------------------------------
def dirichlet_alpha_for(num_moves: int) -> float:
    """AlphaZero's Dirichlet ``alpha`` "in inverse proportion to the approximate number of legal moves".

    Silver et al. (2018) used 0.3 for chess, 0.15 for shogi and 0.03 for Go,
    about ``10 / moves``; this gives 1.43 for Connect Four and 1.11 for tic-tac-toe.
    """
    if num_moves < 1:
        raise BudgetError(f"num_moves {num_moves!r} must be at least 1")
    return 10.0 / num_moves


def _outcome(value: float, to_move: int, rng: random.Random) -> int | None:
    """One result (the winner, None for a draw) with mean ``value`` for ``to_move`` (see the module doc)."""
    if value >= 1.0:
        return to_move
    if value <= 0.0:
        return 3 - to_move
    if value == 0.5:
        return None
    if value > 0.5:
        return to_move if rng.random() < 2.0 * value - 1.0 else None
    return 3 - to_move if rng.random() < 1.0 - 2.0 * value else None


def select_puct(
    priors: Mapping[TreeNode, float], start: TreeNode | None = None, noisy: Mapping[TreeNode, float] | None = None
) -> SelectFn:
    """PUCT's selection function (a :data:`~treelab.mcts.selection.SelectFn`) over the priors ``priors``.

    The child maximising ``Q + c * P * sqrt(N) / (1 + n)``, unproven children only
    with the solver; an unvisited child's ``Q`` is the parent's value for the
    player to move. At ``start``, the priors in ``noisy`` (root noise) are used
    when it is not empty. Only the node's children are chosen from (the search itself
    also weighs the moves it has not made a node for yet, ``tree.pending``).
    """

    def select(node: TreeNode, c: float, solver: bool) -> TreeNode:
        table = {k.name: p for k, p in noisy.items()} if noisy and node is start else None
        chosen = _pick(node, {}, priors, table, c, solver)
        assert not isinstance(chosen, str)
        return chosen

    return select


def chosen_here(node: TreeNode) -> int:
    """PUCT's ``N`` at ``node``: 1 + the simulations that chose among its children (their ``nb_select`` summed).

    AlphaZero's ``N(s) = sum_b N(s, b)`` counts the edges taken from ``s``; mctx adds the node's own first
    visit, so in a fresh search ``N`` is the node's visit count. In the persistent tree a node on a game's
    line also holds the visits of searches started deeper, which never chose there; counting them made the
    move a game played look explored already and spread a search's choices over its siblings (measured in
    ``docs/notes/learning-loop.md``). So ``N`` and each child's ``n`` are edge counts (``nb_select``); ``Q``
    stays the child's mean over all its visits, deeper searches' included (KataGo's graph search does the same:
    ``docs/GraphSearch.md``).
    """
    return 1 + sum(kid.nb_select for kid in node.children_view)


def _pick(node: TreeNode, waiting: Mapping[str, float], priors: Mapping[TreeNode, float],
          noisy: Mapping[str, float] | None, c: float, solver: bool) -> TreeNode | str:
    """The child, or the label of a waiting move (``tree.pending``), maximising PUCT's score.

    ``noisy``: the priors by label with root noise (None: ``priors`` and ``waiting`` as they are).
    """
    scale = c * math.sqrt(chosen_here(node))
    fpu = 1.0 - node.mean if node.nb_visit else 0.5  # the parent's value for the player to move
    best: TreeNode | str | None = None
    best_score = -math.inf
    for kid in node.children_view:
        if solver and kid.proven is not None:
            continue
        q = kid.mean if kid.nb_visit else fpu  # value sums included (treelab.nodes.mean_reward)
        prior = priors.get(kid, 0.0) if noisy is None else noisy.get(kid.name, 0.0)
        score = q + scale * prior / (1 + kid.nb_select)
        if score > best_score:
            best_score = score
            best = kid
    for label, prior in waiting.items():  # no visits yet: Q is the first-play urgency, n = 0
        score = fpu + scale * (prior if noisy is None else noisy.get(label, 0.0))
        if score > best_score:
            best_score = score
            best = label
    if best is None:  # every move proven but the node not (a tree grown without proofs)
        best = max(node.children_view, key=lambda k: k.nb_visit)
    return best


def _leaf_result(node: TreeNode, state: State, value: float, rng: random.Random) -> int | None:
    """The result backed up for a freshly evaluated leaf (exact once the leaf is proven)."""
    if node.proven is not None:  # e.g. a winning move for the player to move: a fact, not a guess
        if node.proven == Proof.DRAW:
            return None
        return node.mover if node.proven == Proof.WIN else 3 - node.mover
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise BudgetError(f"evaluator value {value!r} is not in [0, 1] (the reward of the player to move)")
    return _outcome(value, state.to_move, rng)


def _expand(tree: Tree, node: TreeNode, state: State, priors: Mapping[int, float], solver: bool) -> None:
    """Keep the prior of every legal move of ``node`` (``tree.priors`` for its children, ``tree.pending``
    for the moves not made yet); with the solver, make and prove at once the children that end the game.

    Priors are renormalised over the legal moves (missing moves get 0; all
    zero becomes uniform), so an evaluator may return raw weights.
    """
    game = tree.game
    have = {kid.name: kid for kid in node.children_view}
    legal = state.legal_moves()
    weights = [float(priors.get(move, 0.0)) for move in legal]
    for move, weight in zip(legal, weights, strict=True):
        if not weight >= 0.0:
            raise BudgetError(f"evaluator prior {weight!r} for move {game.label(move)} is negative or not a number")
    total = 0.0
    for weight in weights:  # added in order, as _puct.c does (sum() compensates since Python 3.12)
        total += weight
    waiting: dict[str, float] = {}
    for move, weight in zip(legal, weights, strict=True):
        label = game.label(move)
        prior = weight / total if total > 0 else 1.0 / len(legal)
        kid = have.get(label)
        if kid is None and solver and state.play(move).is_terminal:
            kid = tree.add_child(node, label, state.to_move)
        if kid is None:
            waiting[label] = prior
            continue
        tree.priors[kid] = prior
        if solver and kid.proven is None:
            after = state.play(move)
            if after.is_terminal:
                tree.mark_dirty(kid)
                kid.proven = prove_terminal(kid, after.winner)
    tree.pending[node] = waiting


def _noisy_priors(kids: Sequence[TreeNode], waiting: Mapping[str, float], priors: Mapping[TreeNode, float],
                  noise: RootNoise, rng: random.Random) -> dict[str, float]:
    """``(1 - fraction) * P + fraction * Dir(alpha)`` over the children and waiting moves, by label
    (Silver et al. 2017)."""
    table = {kid.name: priors.get(kid, 0.0) for kid in kids}
    table.update(waiting)
    draws = [rng.gammavariate(noise.alpha, 1.0) for _ in table]
    total = sum(draws) or 1.0
    return {label: (1.0 - noise.fraction) * p + noise.fraction * d / total
            for (label, p), d in zip(table.items(), draws, strict=True)}

# -- PUCT's phases -----------------------------------------------------------------------------------------------------


_COMPILED = getattr(speedups.compiled, "puct_batch", None)
"""``treelab._speedups.puct_batch`` when built: model-guided PUCT simulations in C
(:meth:`PUCTPhases.compiled_batch`)."""

_PROOFS = (Proof.LOSS, Proof.DRAW, Proof.WIN)
"""The proofs the compiled batch marks terminal children with, by result (-1, 0, 1) plus one."""


@dataclass(eq=False)
class PUCTPhases:
    """PUCT's select, expand and simulate phases for one search (Silver et al. 2017, 2018)."""

    evaluate: Evaluator
    """The leaf evaluator: a value for the player to move and priors over the legal moves."""
    noise: RootNoise | None
    """Root noise (None: none)."""
    move_of: dict[str, int]
    """Each move label's move number."""
    root_priors: dict[str, float] = field(default_factory=dict)
    """The start's moves' priors with Dirichlet noise, by label, for this search (empty: not drawn yet)."""
    batch: BatchFn | None = None
    """:meth:`run_batch` when the evaluator takes positions in batches (:class:`BatchEvaluator`), :meth:`compiled_batch`
    for a fitted model's one-at-a-time evaluation when the C extension is built, else None."""
    watch: Callable[[SelectFn], SelectFn] | None = None
    """Wraps the selection function of every simulation (a trace records each choice); None: none."""
    many: BatchEvaluator | None = None
    """The evaluator again, when it takes batches (set from :attr:`evaluate`)."""
    labels: tuple[str, ...] | None = None
    """Each move's label by move number, for the compiled batch (made at its first call)."""
    checked: Game | None = None
    """The game the compiled batch checked its model against."""

    def __post_init__(self) -> None:
        if isinstance(self.evaluate, BatchEvaluator) and self.evaluate.batch_size > 1:
            self.many, self.batch = self.evaluate, self.run_batch
        elif (_COMPILED is not None and isinstance(self.evaluate, ModelEvaluator)
              and (self.evaluate.mix == 0.0 or self.evaluate.playout is random_playout)):
            self.batch = self.compiled_batch

    def compiled_batch(self, state: SearchState, n: int) -> Leaf | None:
        """Up to ``n`` simulations of these very phases in C (``_puct.c``, a :data:`BatchFn`), where they apply.

        They apply to a fitted model's evaluation (a random playout mixed in or none) of the built-in Connect
        Four on a tree loaded whole (no cut); the network's forward pass, its priors, the playouts' random
        draws and the selection are the Python phases' own, so the same tree grows. A simulation the batch
        hands back (one that reaches a finished game or finds every move proven, or the start's first root
        noise) and every simulation where the batch does not apply run in Python: :meth:`select` here,
        simulated and backed up by the loop.
        """
        tree = state.tree
        game = tree.game
        model = self.evaluate.model  # type: ignore[attr-defined]  # a ModelEvaluator (__post_init__)
        if (vars(type(game)).get("compiled_loop") != 0 or state.cut or state.positions is not None
                or not game.alternating or (self.noise is not None and not self.root_priors)
                or model.first_move != 1 or model.num_moves != game.num_moves):
            return self.select(state)
        if self.checked is not game:
            model.check_game(game)
            self.checked = game
        if self.labels is None:
            self.labels = tuple(game.label(m) for m in range(game.num_moves + 1))
        stats = [0, 0, 0, 0, 0, 0]  # simulations, draws, wins of player 1, of player 2, nodes made, valued
        tree.priors.touch()  # the batch writes priors into the nodes' slots
        cur, mask, ply = game.playout_board(state.position)
        compiled = _COMPILED
        assert compiled is not None  # __post_init__ chose this batch only then
        try:
            handed = compiled(
                state.start, n, state.c, state.solver, cur, mask, ply, tree.baselines, tree.value_baselines,
                tree.new_nodes, tree.depth_counts, tree.node_class, tree.next_id, state.max_size - tree.size,
                self.labels, self.move_of, state.start.depth, tree.priors, tree.pending, self.root_priors,
                state.above, model.weights, model.biases, model.first_move, stats, self._prover(state), _PROOFS,
                float(self.evaluate.mix), state.rng.getrandbits)  # type: ignore[attr-defined]
        finally:  # also on an exception (Ctrl-C): what the batch did is counted
            count_batch(state, stats)
        return self.select(state) if handed else None

    @staticmethod
    def _prover(state: SearchState) -> Callable[[list[TreeNode], list[int]], None]:
        """The compiled batch's ``prove(path, legal_counts)``: a proof found at ``path[-1]`` propagates up (the
        one rule), ``legal_counts[i]`` the number of legal moves at ``path[i]`` (above the start: replayed)."""
        above = len(state.above)
        replayed = replayed_legal_count(state.tree.game, state.above)

        def prove(path: list[TreeNode], legal_counts: list[int]) -> None:
            full = state.above + path
            propagate(state.tree, full, lambda i: legal_counts[i - above] if i >= above else replayed(i),
                      first=len(full) - 1)

        return prove

    def select(self, state: SearchState) -> Leaf:
        """Tree policy: descend by PUCT from the start, expanding and evaluating where needed."""
        return self._descend(state, None)

    def _descend(self, state: SearchState, batched: set[TreeNode] | None) -> Leaf:
        """Descend from the start; with ``batched`` (the leaves already taken for this batch), stop unevaluated
        at a new leaf or at one of those (the batch evaluates it), evaluating only loaded nodes on the way."""
        tree, start, solver, c, rng = state.tree, state.start, state.solver, state.c, state.rng
        priors, pending = tree.priors, tree.pending

        def made_or_waiting(node: TreeNode, c: float, solver: bool) -> TreeNode:  # a SelectFn over both kinds
            table = self.root_priors if node is start and self.root_priors else None
            chosen = _pick(node, pending[node], priors, table, c, solver)
            if isinstance(chosen, str):  # a move tried for the first time: its node is made now
                prior = pending[node].pop(chosen)
                chosen = tree.add_child(node, chosen, position.to_move)
                priors[chosen] = prior
            return chosen

        pick: SelectFn = made_or_waiting if self.watch is None else self.watch(made_or_waiting)
        node, position = start, state.position
        path, positions = [node], [position]
        leaf = Leaf(path, position, None, positions)
        while True:
            if position.is_terminal:  # reached only without the solver (proven children are skipped)
                return leaf
            waiting = pending.get(node)
            if waiting is None:  # not evaluated yet (new, or loaded from the database: priors are not stored)
                if batched is not None and (node.nb_visit == 0 or node in batched):
                    return leaf
                if self.expand(state, leaf):
                    return leaf
                waiting = pending[node]
            if node is start and self.noise is not None and not self.root_priors:
                self.root_priors.update(_noisy_priors(node.children_view, waiting, priors, self.noise, rng))
            node = pick(node, c, solver)
            leaf.position = position = position.play(self.move_of[node.name])
            path.append(node)
            positions.append(position)

    def expand(self, state: SearchState, leaf: Leaf) -> bool:
        """Evaluate the leaf's position and keep its moves' priors; True: the simulation ends here.

        It ends at a new leaf (the evaluation is its result), a node just proven, or a cut
        (a node whose children were not loaded is evaluated, never grown).
        """
        return self._grow(state, leaf, self.evaluate(leaf.position, state.rng))

    def _grow(self, state: SearchState, leaf: Leaf, evaluation: Evaluation) -> bool:
        """:meth:`expand` with the leaf's evaluation given."""
        node, position = leaf.path[-1], leaf.position
        leaf.value = evaluation.value
        if node in state.cut:
            return True
        _expand(state.tree, node, position, evaluation.priors, state.solver)
        if state.solver and any(k.proven is not None for k in node.children_view):
            full = state.above + leaf.path
            propagate(state.tree, full, legal_counter(state, leaf), first=len(full) - 1)
        return node.nb_visit == 0 or (state.solver and node.proven is not None)

    def run_batch(self, state: SearchState, n: int) -> Leaf | None:
        """Up to ``n`` simulations whose new leaves the evaluator takes in one batch (a :data:`BatchFn`).

        Leaves are selected one after another with a **virtual loss**: each node on a selected path counts
        one more visit (and no win) until the batch is evaluated, so the next selections spread over other
        lines (Chaslot, Winands & van den Herik 2008; AlphaGo Zero's evaluation queue, Silver et al. 2017).
        Selection stops at the evaluator's ``batch_size``, at a leaf already taken, or at a finished game,
        which is returned for the loop to prove and back up. Then the virtual losses are taken back, the
        leaves evaluated together, expanded and backed up, each as one simulation.
        """
        many = self.many
        assert many is not None
        size = min(n, many.batch_size)
        leaves: list[Leaf] = []
        taken: set[TreeNode] = set()
        finished: Leaf | None = None
        try:
            while len(leaves) < size:
                leaf = self._descend(state, taken)
                node = leaf.path[-1]
                if leaf.position.is_terminal or leaf.value is not None:  # a finished game, or evaluated on the way
                    finished = leaf
                    break
                if node in taken:  # the same leaf again: evaluate what is taken first
                    break
                taken.add(node)
                leaves.append(leaf)
                for above in leaf.path:
                    above.nb_visit += 1  # the virtual loss: a visit with no win, on every edge taken
                for edge in leaf.path[1:]:
                    edge.nb_select += 1
        finally:
            for leaf in leaves:
                for above in leaf.path:
                    above.nb_visit -= 1
                for edge in leaf.path[1:]:
                    edge.nb_select -= 1
        if not leaves:
            return finished
        evaluations = many.evaluate_many([leaf.position for leaf in leaves], state.rng)
        for leaf, evaluation in zip(leaves, evaluations, strict=True):
            self._grow(state, leaf, evaluation)
            back_up(state, leaf.path, self.simulate(state, leaf))
        return finished

    def simulate(self, state: SearchState, leaf: Leaf) -> int | None:
        """The leaf's result: a finished game's (a proof), else the evaluation's value as one result."""
        if leaf.position.is_terminal:
            return prove_leaf(state, leaf)
        node, value = leaf.path[-1], leaf.value
        assert value is not None
        if node.proven is None and 0.0 < value < 1.0 and value != 0.5:  # a draw plus the value (module doc)
            to_move, v = leaf.position.to_move, 2.0 * value - 1.0
            for n in (*state.above, *leaf.path):
                state.tree.add_value(n, v if n.mover == to_move else -v)
            return None
        return _leaf_result(node, leaf.position, value, state.rng)


def choose_puct_move(
    node: TreeNode, *, temperature: float = 0.0, rng: random.Random | None = None
) -> TreeNode | None:
    """The move to play from ``node``: a proven win if there is one, else by visit counts.

    ``temperature -> 0`` takes the most visited move; larger values sample in
    proportion to ``visits ** (1 / temperature)`` (Silver et al. 2017).
    Proven losses are avoided while other moves remain. PUCT proves a winning
    child the moment it is created, before any visit: the proven win is looked
    for among all children (as :func:`treelab.mcts.summary.choose_move` does).
    """
    return choose_move(node, temperature=temperature, rng=rng)
