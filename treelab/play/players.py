"""Players behind one interface: random, heuristic, pure Monte Carlo and MCTS.

A player answers :meth:`Player.choose` with a move for a position; matches
(:mod:`treelab.play.arena`) and training (:mod:`treelab.play.training`) only use that.
Every player takes an injected ``rng`` so whole matches replay exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from ..errors import BudgetError
from ..games import Game, State
from ..mcts.choice import check_exploration
from ..mcts.config import SearchConfig, resolve_aliases
from ..mcts.policies import PlayoutFn, find_playout, make_rng
from ..mcts.scores import table_for
from ..mcts.summary import choose_move, search_value, tally
from ..mcts.uct import Limit, search
from ..tree import Tree

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
    """UCT (optionally with MCTS-Solver) on a persistent tree.

    Args:
        tree: the tree to search in and grow; None starts a fresh in-memory
            tree every game (as OpenSpiel's ``MCTSBot`` does every move).
        iterations: simulations per move.
        seconds: or a time budget per move.
        search: how to search and pick the move (:class:`~treelab.mcts.config.SearchConfig`, UCT):
            ``c``, ``solver``, ``playout``, ``choice``, ``temperature`` and the node budget.
        noise: the share of root Dirichlet noise mixed into the move choice (0: none).
        alpha: that noise's Dirichlet ``alpha``.
        rng: seed or generator.
        name: the name shown in match results.
        options: fields of ``search`` given as keywords (``c=0.7, solver=True``), replacing them;
            ``config`` and ``how`` are the old spellings of ``search`` and ``choice``.
    """

    def __init__(
        self,
        *,
        tree: Tree | None = None,
        iterations: int | None = 400,
        seconds: float | None = None,
        search: SearchConfig | None = None,
        noise: float = 0.0,
        alpha: float = 1.0,
        rng: random.Random | int | None = None,
        name: str | None = None,
        **options: Any,
    ) -> None:
        if "config" in options:
            options = resolve_aliases(options, {"config": "search"})
            search = options.pop("search") or search
        self.search = config = SearchConfig.of(search, **options)
        check_exploration(config.temperature, noise, alpha, config.choice)
        self.limit = Limit(iterations=iterations, seconds=seconds)
        self.tree = tree
        self.fresh = tree is None
        self.c = config.exploration
        self.solver = config.solver
        self.playout = find_playout(config.playout)
        self.choice = config.choice
        self.temperature = config.temperature
        self.noise = noise
        self.alpha = alpha
        self.rng = make_rng(rng)
        self.name = name or ("solver" if self.solver else "uct") + f":iterations={iterations}"
        self.should_stop: Callable[[], bool] | None = None
        self.last_value: float | None = None

    def new_game(self, game: Game) -> None:
        if self.fresh or self.tree is None:
            self.tree = Tree(game, c=self.c)

    def choose(self, state: State, moves: Sequence[int]) -> int:
        if self.tree is None:
            self.new_game(state.game)
        tree = self.tree
        assert tree is not None
        before = tally(tree.get(moves))
        search(tree, moves, limit=self.limit, c=self.c, solver=self.solver, playout=self.playout,
               rng=self.rng, should_stop=self.should_stop, max_new_nodes=self.search.max_new_nodes,
               select=self.search.rule(tree))
        node = tree.find(moves)
        self.last_value = search_value(node, before)
        best = choose_move(node, choice=self.choice, c=self.c, temperature=self.temperature, noise=self.noise,
                           alpha=self.alpha, rng=self.rng, table=table_for(tree) if self.choice == "ucb1" else None)
        if best is None:  # the search was stopped before expanding anything
            legal = state.legal_moves()
            return legal[int(self.rng.random() * len(legal))]
        return tree.game.parse_move(best.name)
