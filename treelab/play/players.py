"""Players behind one interface: random, heuristic, pure Monte Carlo, and the one searching player.

A player answers :meth:`Player.choose` with a move for a position; matches
(:mod:`treelab.play.arena`) and training (:mod:`treelab.play.training`) only use that.
Every player takes an injected ``rng`` so whole matches replay exactly.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from ..errors import BudgetError, UnknownOptionError
from ..games import Game, State
from ..mcts.config import EVALUATORS, RootNoise, SearchConfig, resolve_aliases
from ..mcts.dispatch import run_search
from ..mcts.loop import Limit
from ..mcts.policies import PlayoutFn, find_playout, make_rng
from ..mcts.scores import table_for
from ..mcts.summary import choose_move, search_value, tally
from ..tree import Tree

if TYPE_CHECKING:
    from ..mcts.evaluators import Evaluator

__all__ = [
    "HeuristicPlayer",
    "Limit",
    "MCTSPlayer",
    "MonteCarloPlayer",
    "PUCTPlayer",
    "Player",
    "RandomPlayer",
    "SearchPlayer",
    "Wrapper",
    "add_search_top",
]


class Player(Protocol):
    """Anything that picks moves."""

    name: str
    """A short description, e.g. ``"uct:iterations=400"``."""

    def new_game(self, game: Game) -> None:
        """Called before every game."""

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The move to play in ``state``, reached by ``moves`` from the start."""


class SearchPlayer(Protocol):
    """A player that searches on ``tree`` (:class:`MCTSPlayer`, or a wrapper of one)."""

    name: str
    """A short description."""
    tree: Tree | None
    """The tree it searches on."""
    should_stop: Callable[[], bool] | None
    """Polled by the search (Ctrl-C)."""
    last_value: float | None
    """The value its last search found for the player to move (:func:`treelab.mcts.summary.search_value`)."""

    def new_game(self, game: Game) -> None:
        """Called before every game."""

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The move to play."""


P = TypeVar("P", bound=SearchPlayer)


class Wrapper(Generic[P]):
    """A player around a searching player: its name, tree, stop flag and games are the wrapped player's.

    Subclasses change how moves are chosen (:class:`treelab.play.training.OpeningSampler`) or what happens to the
    tree between games (:class:`treelab.play.stored.StoredTreePlayer`).
    """

    def __init__(self, player: P) -> None:
        self.player = player
        self.name = player.name

    @property
    def tree(self) -> Tree | None:
        """The tree the wrapped player searches on."""
        return self.player.tree

    @property
    def should_stop(self) -> Callable[[], bool] | None:
        """Polled by the search (Ctrl-C)."""
        return self.player.should_stop

    @should_stop.setter
    def should_stop(self, value: Callable[[], bool] | None) -> None:
        self.player.should_stop = value

    @property
    def last_value(self) -> float | None:
        """The value the wrapped player's last search found for the player to move."""
        return self.player.last_value

    def new_game(self, game: Game) -> None:
        """Called before every game."""
        self.player.new_game(game)

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The wrapped player's move."""
        return self.player.choose(state, moves)


class RandomPlayer:
    """Plays a uniformly random legal move."""

    def __init__(self, *, rng: random.Random | int | None = None) -> None:
        self.rng = make_rng(rng)
        self.name = "random"

    def new_game(self, game: Game) -> None:
        return None

    def choose(self, state: State, moves: Sequence[int]) -> int:
        legal = state.legal_moves()
        return legal[int(self.rng.random() * len(legal))]


class HeuristicPlayer:
    """Wins at once if it can, else blocks the opponent's immediate win, else plays at random."""

    def __init__(self, *, rng: random.Random | int | None = None) -> None:
        self.rng = make_rng(rng)
        self.name = "heuristic"

    def new_game(self, game: Game) -> None:
        return None

    def choose(self, state: State, moves: Sequence[int]) -> int:
        options = state.winning_moves() or state.threats() or state.legal_moves()
        return options[int(self.rng.random() * len(options))]


class MonteCarloPlayer:
    """Pure Monte Carlo: ``playouts`` random games after every legal move, best mean wins.

    Brugmann (1993), "Monte Carlo Go"; Abramson (1990), expected-outcome model.
    """

    def __init__(self, *, playouts: int = 100, playout: str | PlayoutFn = "random",
                 rng: random.Random | int | None = None) -> None:
        if playouts < 1:
            raise BudgetError(f"playouts {playouts!r} must be at least 1")
        self.playouts = playouts
        self.playout = find_playout(playout)
        self.rng = make_rng(rng)
        self.name = f"mc:playouts={playouts}"

    def new_game(self, game: Game) -> None:
        return None

    def choose(self, state: State, moves: Sequence[int]) -> int:
        me = state.to_move
        best_move, best_score = -1, -1.0
        for move in state.legal_moves():
            after = state.play(move)
            if after.winner == me:
                return move
            score = 0.0
            for _ in range(self.playouts):
                winner = self.playout(after, self.rng)
                score += 1.0 if winner == me else 0.5 if winner is None else 0.0
            if score > best_score:
                best_move, best_score = move, score
        return best_move


class MCTSPlayer:
    """The one searching player: a :class:`~treelab.mcts.config.SearchConfig` and a :class:`Limit`.

    As python-chess's ``engine.play(board, Limit(...))``: the config says how to search and pick the move,
    the limit how long each move's search runs. Every field of the config is honoured (``algorithm``,
    ``c``, ``solver``, ``playout``, ``evaluator``, ``model`` and ``mix``, ``choice``, ``temperature``,
    ``statistics``, ``noise``, ``max_new_nodes``) through the one dispatch,
    :func:`treelab.mcts.dispatch.run_search`. UCT and PUCT players are this class.

    Args:
        search: how to search (default: UCT's :class:`~treelab.mcts.config.SearchConfig`).
        limit: each move's budget (default ``Limit(iterations=400)``).
        tree: the tree to search in and grow; None starts a fresh in-memory
            tree every game (as OpenSpiel's ``MCTSBot`` does every move).
        record: a tree to keep what the searches found (no ``tree`` then): every move is searched on a fresh
            tree of its own, as AlphaZero's self-play searches (Silver et al. 2017), and the top of each search
            is added to ``record`` (:func:`add_search_top`: the position's visits and value backed up along its
            path from the start, each move's selections, visits, value and proof). The learning loop's
            games play so (``TrainingConfig.searches="fresh"``): their moves follow the model's search of now,
            not counts that weaker models gathered on the one tree.
        rng: seed or generator.
        name: the name shown in match results.
        options: fields of ``search`` (``c=0.7, solver=True``) or of ``limit`` (``iterations``, ``seconds``)
            as keywords, replacing them. Old spellings keep working with a :class:`DeprecationWarning`:
            ``config`` (``search``), ``how`` (``choice``), ``c_puct`` (``c``), ``noise=FRACTION`` with
            ``alpha=A`` and ``dirichlet_alpha``/``dirichlet_fraction`` (``noise=RootNoise(alpha, fraction)``).

    Example:
        >>> import treelab
        >>> player = MCTSPlayer(SearchConfig(algorithm="puct"), Limit(iterations=50), rng=1)
        >>> player.choose(treelab.find_game("tictactoe").initial(), ()) in range(1, 10)
        True
    """

    def __init__(
        self,
        search: SearchConfig | None = None,
        limit: Limit | None = None,
        *,
        tree: Tree | None = None,
        record: Tree | None = None,
        rng: random.Random | int | None = None,
        name: str | None = None,
        **options: Any,
    ) -> None:
        if tree is not None and record is not None:
            raise UnknownOptionError("give tree (search on it) or record (search fresh trees, keep their tops in it), "
                              "not both")
        options = resolve_aliases(options, {"config": "search"})
        if "search" in options:
            search = options.pop("search") or search
        budget = {key: options.pop(key) for key in ("iterations", "seconds") if key in options}
        if limit is not None and budget:
            raise BudgetError(f"give the budget once: limit={limit!r} or {', '.join(budget)}")
        if limit is None:
            budget = {"iterations": 400, **budget} if "seconds" not in budget else budget
            limit = Limit(**budget)
        options = _noise_of(options)
        evaluator = options.get("evaluator")
        if isinstance(evaluator, str) and evaluator not in EVALUATORS:
            from ..mcts.evaluators import find_evaluator  # PUCT's modules load only for PUCT

            options["evaluator"] = find_evaluator(evaluator)  # "model:PATH", or the error naming the choices
        self.search = SearchConfig.of(search, **options)
        self.limit = limit
        self.tree = tree
        self.fresh = tree is None
        self.record = record
        """The tree each move's fresh search is added to (None: the searches are :attr:`tree`'s own)."""
        self.rng = make_rng(rng)
        kind = self.search.algorithm if self.search.algorithm == "puct" or not self.search.proves else "solver"
        self.name = name or f"{kind}:iterations={limit.iterations}"
        self.should_stop: Callable[[], bool] | None = None
        self.last_value: float | None = None
        self.evaluator: Evaluator | None = None
        """PUCT's evaluator, made from :attr:`search` once (a model is loaded and checked against the game once)."""
        if (tree or record) is not None and self.search.algorithm == "puct":
            self.evaluator = self._evaluator((tree or record).game)  # type: ignore[union-attr]

    def _evaluator(self, game: Game) -> Evaluator:
        """PUCT's evaluator of :attr:`search` for ``game`` (a model file loaded and checked now)."""
        from ..mcts.evaluators import evaluator_of  # PUCT's modules (numpy, for a model) load only for PUCT

        return evaluator_of(self.search, game)

    def new_game(self, game: Game) -> None:
        """Start a fresh tree (unless playing from a given one)."""
        if self.fresh or self.tree is None:
            self.tree = Tree(game, c=self.search.score_c)
        if self.evaluator is None and self.search.algorithm == "puct":
            self.evaluator = self._evaluator(game)

    def choose(self, state: State, moves: Sequence[int], *, temperature: float | None = None) -> int:
        """Search the position and pick a move by the config's rule (a proven win first).

        ``temperature``: this move's, in place of the config's (self-play samples its opening only).
        """
        if self.tree is None or self.record is not None:  # a fresh tree for this game, or for every move
            self.new_game(state.game)
        tree = self.tree
        assert tree is not None
        config = self.search
        tau = config.temperature if temperature is None else temperature
        if self.evaluator is None and config.algorithm == "puct":
            self.evaluator = self._evaluator(tree.game)
        before = tally(tree.get(moves))
        run_search(tree, moves, config, self.limit, rng=self.rng, should_stop=self.should_stop,
                   evaluator=self.evaluator)
        node = tree.find(moves)
        self.last_value = search_value(node, before)
        if self.record is not None:
            add_search_top(tree, moves, self.record)
        if config.algorithm == "puct":  # the noise went into the root's priors; the choice has none
            best = choose_move(node, temperature=tau, rng=self.rng)
        else:  # UCT has no priors: its root noise goes into the move choice
            noise = config.noise
            best = choose_move(node, choice=config.choice, c=config.exploration, temperature=tau,
                               noise=noise.fraction if noise is not None else 0.0,
                               alpha=noise.alpha if noise is not None else 1.0, rng=self.rng,
                               table=table_for(tree) if config.choice == "ucb1" else None)
        if best is None:  # the search was stopped before expanding anything
            legal = state.legal_moves()
            return legal[int(self.rng.random() * len(legal))]
        return tree.game.parse_move(best.name)


def add_search_top(search: Tree, moves: Sequence[int], into: Tree) -> int:
    """Add the top of the search made at ``moves`` on ``search`` (a tree of its own) to ``into``.

    The top is the path from the start to the searched position, the position, and its children: every
    simulation of the search backed up along that path (its visits, wins, draws and value sums, which ``into``'s
    nodes there add), the children hold what each move's subtree found and how often it was selected (the policy
    a fit learns, :mod:`treelab.learn.dataset`) and their proofs (not their priors: the root's hold the search's
    noise). The nodes below the children are left
    out, as a playout's are: ``into`` grows by the games' positions and their moves, not by every simulation.
    ``into`` reads as though the search had been made on it, minus the deeper nodes; its earlier counts do not
    steer the next search. Returns the nodes created in ``into``.
    """
    from ..nodes import children_of
    from ..store.merging import COUNTS, Increment, add

    path, _ = search.path(moves, create=False)
    kids = list(children_of(path[-1]))
    nodes = path + kids
    last = len(path) - 1
    return add(into, Increment(
        parents=[-1, *range(last), *([last] * len(kids))],
        labels=[node.name for node in nodes],
        counts=[tuple(getattr(node, slot) for slot in COUNTS) for node in nodes],
        proven=[None if node.proven is None else int(node.proven) for node in nodes],
        values=[node.value_sum for node in nodes]))


class PUCTPlayer(MCTSPlayer):
    """Deprecated: :class:`MCTSPlayer` with ``algorithm="puct"``, searching with the ``"heuristic"`` evaluator
    unless told otherwise (this alias's old default; the config's own default is ``"rollout"``)."""

    def __init__(self, search: SearchConfig | None = None, limit: Limit | None = None, *,
                 evaluator: str | Evaluator = "heuristic", **options: Any) -> None:
        warnings.warn("PUCTPlayer is now MCTSPlayer(SearchConfig(algorithm='puct'), Limit(...))",
                      DeprecationWarning, stacklevel=2)
        super().__init__(search, limit, algorithm="puct", evaluator=evaluator, **options)


def _noise_of(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the old spellings of root noise made into one :class:`RootNoise` (with a warning)."""
    noise = options.get("noise")
    if isinstance(noise, (int, float)) and not isinstance(noise, bool):  # the old UCT form: a share, and alpha
        warnings.warn("noise=FRACTION, alpha=A is now noise=RootNoise(alpha=A, fraction=FRACTION)",
                      DeprecationWarning, stacklevel=3)
        options = dict(options)
        alpha = options.pop("alpha", None)
        options["noise"] = RootNoise(1.0 if alpha is None else alpha, noise) if noise > 0 else None
    elif "alpha" in options and noise is None:
        options = dict(options)
        options.pop("alpha")  # without a share, the old alpha meant no noise
    if "dirichlet_alpha" in options or "dirichlet_fraction" in options:
        options = dict(options)
        old = {key: options.pop(key) for key in ("dirichlet_alpha", "dirichlet_fraction") if key in options}
        if noise is not None:
            raise UnknownOptionError("give the root noise once: noise=RootNoise(alpha, fraction)")
        options["noise"] = RootNoise.of(**old)
    return options
