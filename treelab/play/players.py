"""Players behind one interface: random, heuristic, pure Monte Carlo and MCTS.

A player answers :meth:`Player.choose` with a move for a position; matches
(:mod:`treelab.arena`) and training (:mod:`treelab.training`) only use that.
Every player takes an injected ``rng`` so whole matches replay exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from ..errors import BudgetError
from ..games import Game, State
from ..mcts.config import MAX_NEW_NODES, SearchConfig
from ..mcts.policies import PlayoutFn, find_playout, make_rng
from ..mcts.summary import choose_move
from ..mcts.uct import Limit, search
from ..tree import SQRT2, Tree

__all__ = ["HeuristicPlayer", "MCTSPlayer", "MonteCarloPlayer", "Player", "RandomPlayer", "SearchPlayer", "Wrapper"]


class Player(Protocol):
    """Anything that picks moves."""

    name: str
    """A short description, e.g. ``"uct:iterations=400"``."""

    def new_game(self, game: Game) -> None:
        """Called before every game."""

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """The move to play in ``state``, reached by ``moves`` from the start."""


class SearchPlayer(Protocol):
    """A player that searches on ``tree`` (:class:`MCTSPlayer`, ``PUCTPlayer``)."""

    name: str
    """A short description."""
    tree: Tree | None
    """The tree it searches on."""
    should_stop: Callable[[], bool] | None
    """Polled by the search (Ctrl-C)."""

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
    """UCT (optionally with MCTS-Solver) on a persistent tree.

    Args:
        tree: the tree to search in and grow; None starts a fresh in-memory
            tree every game (as OpenSpiel's ``MCTSBot`` does every move).
        iterations: simulations per move.
        seconds: or a time budget per move.
        c: UCB1 exploration constant (rewards in [0, 1]).
        solver: MCTS-Solver proofs.
        playout: ``"random"`` or ``"decisive"``.
        how: move choice, ``"visits"`` (most selected) or ``"ucb1"``.
        temperature: > 0 samples moves from the selected counts (:func:`~treelab.mcts.choice.choose_move`).
        noise: the share of root Dirichlet noise mixed into the move choice (0: none).
        alpha: that noise's Dirichlet ``alpha``.
        rng: seed or generator.
        config: a :class:`~treelab.mcts.config.SearchConfig` (UCT) to take ``c``, ``solver``,
            ``playout``, ``how`` (its ``choice``), ``temperature`` and the node budget from
            instead of the keywords.
    """

    def __init__(
        self,
        *,
        tree: Tree | None = None,
        iterations: int | None = 400,
        seconds: float | None = None,
        c: float = SQRT2,
        solver: bool = False,
        playout: str | PlayoutFn = "random",
        how: str = "visits",
        temperature: float = 0.0,
        noise: float = 0.0,
        alpha: float = 1.0,
        rng: random.Random | int | None = None,
        name: str | None = None,
        config: SearchConfig | None = None,
    ) -> None:
        if config is not None:
            c, solver, playout, how, temperature = (config.exploration, config.solver, config.playout,
                                                    config.choice, config.temperature)
        self.max_new_nodes = config.max_new_nodes if config is not None else MAX_NEW_NODES
        self.limit = Limit(iterations=iterations, seconds=seconds)
        self.tree = tree
        self.fresh = tree is None
        self.c = c
        self.solver = solver
        self.playout = find_playout(playout)
        self.how = how
        self.temperature = temperature
        self.noise = noise
        self.alpha = alpha
        self.rng = make_rng(rng)
        self.name = name or ("solver" if solver else "uct") + f":iterations={iterations}"
        self.should_stop: Callable[[], bool] | None = None

    def new_game(self, game: Game) -> None:
        if self.fresh or self.tree is None:
            self.tree = Tree(game, c=self.c)

    def choose(self, state: State, moves: Sequence[int]) -> int:
        if self.tree is None:
            self.new_game(state.game)
        tree = self.tree
        assert tree is not None
        search(tree, moves, limit=self.limit, c=self.c, solver=self.solver, playout=self.playout,
               rng=self.rng, should_stop=self.should_stop, max_new_nodes=self.max_new_nodes)
        node = tree.find(moves)
        best = choose_move(node, how=self.how, c=self.c, temperature=self.temperature, noise=self.noise,
                           alpha=self.alpha, rng=self.rng)
        if best is None:  # the search was stopped before expanding anything
            legal = state.legal_moves()
            return legal[int(self.rng.random() * len(legal))]
        return tree.game.parse_move(best.name)
