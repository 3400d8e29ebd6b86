"""Matches between players: specs, colours alternating, scores with a confidence interval and Elo.

A player spec is ``kind[:key=value,...]`` (``treelab arena --a SPEC``):

===========  ==========================================================================
``random``   a uniformly random legal move
``heuristic`` win at once if possible, else block, else random
``mc``       pure Monte Carlo: ``playouts=N`` random games per move, ``playout=``
``uct``      UCT: ``iterations=N``, ``seconds=T``, ``c=C``, ``db=PATH`` (read only: every game
             starts from the stored tree; ``learn=1`` saves after every move; ``c``
             defaults to the tree's), ``playout=random|decisive``, ``solver=0|1``, ``temperature=TAU``
``solver``   UCT with MCTS-Solver (``uct:...,solver=1``), same keys
``puct``     PUCT: ``iterations``, ``seconds``, ``c``, ``evaluator=rollout|heuristic``,
             ``playout``, root noise ``alpha=ALPHA|auto`` and ``fraction=EPS`` (default 0.25),
             ``solver=0|1``, ``temperature``, ``db``, ``model``, ``mix``
``openspiel`` OpenSpiel's Python ``MCTSBot`` with ``RandomRolloutEvaluator(n_rollouts=1)``:
             ``simulations=N``, ``c=C`` (its ``uct_c``, default sqrt(2) on [-1, 1] returns, which
             explores like treelab's ``c = 1/sqrt(2)``), ``solve=0|1`` (OpenSpiel's default 1)

Old keys still read, with a warning: ``dirichlet=`` (``alpha=``), ``uct_c=`` (``c=``).
===========  ==========================================================================

Matches alternate colours (``a`` moves first in games 1, 3, 5, ...) and are
replayed exactly from ``seed``.
"""

from __future__ import annotations

import math
import random
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import SpecError
from ..games import Game, find_game
from ..mcts.config import CHOICES, DIRICHLET_FRACTION, STATISTICS, RootNoise, SearchConfig
from ..mcts.loop import Limit
from ..mcts.policies import PLAYOUTS
from ..mcts.puct import dirichlet_alpha_for
from ..tree import SQRT2, Tree
from .console import bar as new_bar
from .openspiel_bot import OpenSpielPlayer
from .players import HeuristicPlayer, MCTSPlayer, MonteCarloPlayer, Player, RandomPlayer
from .stored import StoredTreePlayer, stored_tree

__all__ = [
    "SPEC_KEYS",
    "GameRecord",
    "MatchResult",
    "OpenSpielPlayer",
    "elo_difference",
    "make_player",
    "parse_spec",
    "play_game",
    "play_match",
    "wilson_interval",
]

Z95 = 1.959963984540054
"""The two-sided 95% quantile of the standard normal distribution."""

_SEARCH_KEYS = ("iterations", "seconds", "c", "db", "learn", "playout", "solver", "temperature", "choice")
SPEC_KEYS: dict[str, tuple[str, ...]] = {
    "random": (),
    "heuristic": (),
    "mc": ("playouts", "playout"),
    "uct": (*_SEARCH_KEYS, "statistics"),
    "solver": (*_SEARCH_KEYS, "statistics"),
    "puct": (*_SEARCH_KEYS, "evaluator", "alpha", "fraction", "model", "mix"),
    "openspiel": ("simulations", "c", "solve"),
}
"""The keys each kind of player spec accepts (one name per option, as in Python and on the command line)."""

SPEC_ALIASES: dict[str, dict[str, str]] = {"puct": {"dirichlet": "alpha"}, "openspiel": {"uct_c": "c"}}
"""Old spellings of spec keys, still accepted with a :class:`DeprecationWarning`: ``dirichlet=`` is the root
noise's ``alpha=``, OpenSpiel's ``uct_c=`` its ``c=``."""

def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``"uct:iterations=200,c=0.7"`` into ``("uct", {"iterations": "200", "c": "0.7"})``.

    Raises:
        SpecError: an unknown kind or key, or a malformed ``key=value``.
    """
    text = str(spec).strip()
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    if kind not in SPEC_KEYS:
        raise SpecError(f"unknown player {kind!r} in spec {spec!r}: use one of {', '.join(SPEC_KEYS)}")
    options: dict[str, str] = {}
    for part in rest.split(","):
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if key in SPEC_ALIASES.get(kind, {}):
            new = SPEC_ALIASES[kind][key]
            warnings.warn(f"the spec key {key!r} is now called {new!r}", DeprecationWarning, stacklevel=2)
            key = new
        if not eq or not value.strip():
            raise SpecError(f"{part.strip()!r} in spec {spec!r} is not key=value, e.g. 'uct:iterations=200,c=0.7'")
        if key not in SPEC_KEYS[kind]:
            allowed = ", ".join(SPEC_KEYS[kind]) or "no options"
            raise SpecError(f"unknown key {key!r} for {kind!r} in spec {spec!r}: {kind} takes {allowed}")
        if key in options:
            raise SpecError(f"key {key!r} is given twice in spec {spec!r}")
        options[key] = value.strip()
    return kind, options


def _number(options: dict[str, str], key: str, spec: str, kind: type, default: Any = None,
            minimum: float | None = None) -> Any:
    if key not in options:
        return default
    raw = options[key]
    try:
        value = kind(raw)
    except ValueError:
        raise SpecError(f"{key}={raw!r} in spec {spec!r} is not {'a whole number' if kind is int else 'a number'}"
                        ) from None
    if kind is float and not math.isfinite(value):
        raise SpecError(f"{key}={raw!r} in spec {spec!r} is not a finite number: give one such as {key}=1.5")
    if minimum is not None and value < minimum:
        raise SpecError(f"{key}={raw!r} in spec {spec!r} must be at least {minimum}")
    return value


def _flag(options: dict[str, str], key: str, spec: str, default: bool) -> bool:
    if key not in options:
        return default
    raw = options[key].lower()
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise SpecError(f"{key}={options[key]!r} in spec {spec!r} is not 0 or 1")


def _choice(options: dict[str, str], key: str, spec: str, allowed: Sequence[str], default: str) -> str:
    value = options.get(key, default).lower()
    if value not in allowed:
        raise SpecError(f"{key}={options[key]!r} in spec {spec!r} is not one of {', '.join(allowed)}")
    return value


def make_player(spec: str | Player, game: str | Game, *, rng: random.Random | int | None = None) -> Player:
    """The player described by ``spec`` (a :class:`Player` is returned as it is).

    Raises:
        SpecError: the spec cannot be parsed, or names an unavailable player.
    """
    if not isinstance(spec, str):
        return spec
    the_game = find_game(game)
    kind, opts = parse_spec(spec)
    name = spec.strip()
    if kind == "random":
        return RandomPlayer(rng=rng)
    if kind == "heuristic":
        return HeuristicPlayer(rng=rng)
    playout = _choice(opts, "playout", spec, sorted(PLAYOUTS), "random")
    if kind == "mc":
        mc = MonteCarloPlayer(playouts=_number(opts, "playouts", spec, int, 100, 1), playout=playout, rng=rng)
        mc.name = name
        return mc
    if kind == "openspiel":
        return OpenSpielPlayer(the_game, simulations=_number(opts, "simulations", spec, int, 1000, 1),
                               c=_number(opts, "c", spec, float, SQRT2, 0.0),
                               solve=_flag(opts, "solve", spec, True), rng=rng, name=name)
    iterations = _number(opts, "iterations", spec, int, None, 1)
    seconds = _number(opts, "seconds", spec, float, None, 1e-9)
    iterations = 400 if iterations is None and seconds is None else iterations
    temperature = _number(opts, "temperature", spec, float, 0.0, 0.0)
    tree, learn = stored_tree(opts.get("db"), spec, the_game), _flag(opts, "learn", spec, False)
    if learn and tree is None:
        raise SpecError(f"learn=1 in spec {spec!r} needs a stored tree to learn in: add db=PATH")
    searcher = _searcher(kind, opts, spec, the_game, tree, iterations, seconds, temperature, playout, name, rng)
    return searcher if tree is None else StoredTreePlayer(searcher, opts["db"], learn=learn)


def _searcher(kind: str, opts: dict[str, str], spec: str, the_game: Game, tree: Tree | None, iterations: int | None,
              seconds: float | None, temperature: float, playout: str, name: str, rng: Any) -> MCTSPlayer:
    """The UCT or PUCT player of a spec (its tree, if any, loaded from ``db=``): one SearchConfig and a Limit."""
    named: dict[str, Any] = {"playout": playout, "temperature": temperature,
                             "choice": _choice(opts, "choice", spec, CHOICES, "visits")}  # checked names
    if kind in ("uct", "solver"):
        if "statistics" in opts:  # else the db's rule (classic for a fresh tree)
            named["statistics"] = _choice(opts, "statistics", spec, STATISTICS, "classic")
        search = SearchConfig(c=_number(opts, "c", spec, float, tree.c if tree is not None else SQRT2, 0.0),
                              solver=_flag(opts, "solver", spec, kind == "solver"), **named)
    else:
        given, alpha = opts.get("alpha"), None
        if given is not None:
            alpha = (dirichlet_alpha_for(the_game.num_moves) if given.lower() == "auto"
                     else _number(opts, "alpha", spec, float, None, 1e-9))
        if ("model" in opts and "evaluator" in opts) or ("mix" in opts and "model" not in opts):
            raise SpecError(f"spec {spec!r}: model= replaces evaluator=, and mix= (the playout's share of the value) "
                            "needs model=")
        fraction = _number(opts, "fraction", spec, float, DIRICHLET_FRACTION, 0.0)
        if fraction > 1.0:
            raise SpecError(f"fraction={opts['fraction']!r} in spec {spec!r} must be at most 1 (the noise's share)")
        named.update(evaluator=_choice(opts, "evaluator", spec, ("rollout", "heuristic"), "heuristic"),
                     model=opts.get("model"), mix=_number(opts, "mix", spec, float, 0.0, 0.0),
                     noise=RootNoise(alpha, fraction) if alpha is not None else None)
        search = SearchConfig(algorithm="puct", c=_number(opts, "c", spec, float, None, 0.0),
                              solver=_flag(opts, "solver", spec, True), **named)
    player = MCTSPlayer(search, Limit(iterations=iterations, seconds=seconds), tree=tree, rng=rng, name=name)
    player.new_game(the_game)  # PUCT's evaluator made now: a bad model file fails here, before any game
    return player


@dataclass(frozen=True)
class GameRecord:
    """One game of a match."""

    moves: str
    """The moves, in the game's notation."""
    winner: int | None
    """1, 2, or None for a draw."""
    a_player: int
    """Which side player ``a`` played (1 moves first)."""


def wilson_interval(score: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion (Wilson 1927); a draw counts half a win.

    Counting a draw as half a win of a binomial trial overstates the variance
    when there are draws, so the interval is conservative then.
    """
    if n <= 0:
        return (0.0, 1.0)
    z2 = z * z
    centre = (score + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(score * (1 - score) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if score <= 0.0 else max(0.0, centre - half)  # exact at the ends, despite rounding
    high = 1.0 if score >= 1.0 else min(1.0, centre + half)
    return (low, high)


def elo_difference(score: float) -> float | None:
    """The Elo difference that predicts ``score``: ``400 * log10(s / (1 - s))``; None if infinite."""
    if score <= 0.0 or score >= 1.0:
        return None
    return 400.0 * math.log10(score / (1.0 - score))


@dataclass(frozen=True)
class MatchResult:
    """The outcome of a match between players ``a`` and ``b``."""

    game: str
    """Game name."""
    a: str
    """Player ``a``'s spec."""
    b: str
    """Player ``b``'s spec."""
    games: int
    """Games played."""
    a_wins: int
    """Games ``a`` won."""
    b_wins: int
    """Games ``b`` won."""
    draws: int
    """Drawn games."""
    seed: int
    """The seed that replays the match exactly."""
    seconds: float = 0.0
    """Wall-clock time of the match."""
    a_seconds: float = 0.0
    """Time ``a`` spent choosing moves."""
    b_seconds: float = 0.0
    """Time ``b`` spent choosing moves."""
    records: tuple[GameRecord, ...] = field(default=(), repr=False)
    """Every game, in order."""

    @property
    def a_score(self) -> float:
        """``(a_wins + draws / 2) / games`` (0.5 for no games)."""
        return (self.a_wins + 0.5 * self.draws) / self.games if self.games else 0.5

    @property
    def ci95(self) -> tuple[float, float]:
        """95% Wilson interval of ``a_score``."""
        return wilson_interval(self.a_score, self.games)

    @property
    def elo(self) -> float | None:
        """Elo difference of ``a`` over ``b``; a perfect score counts as ``games - 1/2`` points (finite)."""
        n = self.games
        if n == 0:
            return 0.0
        s = min(max(self.a_score, 0.5 / n), 1.0 - 0.5 / n)
        return elo_difference(s)

    @property
    def elo_ci95(self) -> tuple[float | None, float | None]:
        """The Elo difference at both ends of :attr:`ci95` (None: unbounded)."""
        low, high = self.ci95
        return (elo_difference(low), elo_difference(high))

    def side(self, player: int) -> dict[str, int]:
        """``a``'s wins, draws and losses in the games where it played side ``player``."""
        mine = [r for r in self.records if r.a_player == player]
        wins = sum(r.winner == player for r in mine)
        draws = sum(r.winner is None for r in mine)
        return {"wins": wins, "draws": draws, "losses": len(mine) - wins - draws}

    def to_dict(self) -> dict[str, Any]:
        """The ``treelab arena --json`` object."""
        return {
            "game": self.game, "a": self.a, "b": self.b, "games": self.games,
            "a_wins": self.a_wins, "b_wins": self.b_wins, "draws": self.draws, "a_score": self.a_score,
            "ci95": list(self.ci95), "elo": self.elo, "elo_ci95": list(self.elo_ci95),
            "a_first": self.side(1), "a_second": self.side(2), "seed": self.seed,
            "seconds": self.seconds, "a_seconds": self.a_seconds, "b_seconds": self.b_seconds,
            "records": [{"moves": r.moves, "winner": r.winner, "a_player": r.a_player} for r in self.records],
        }


def play_game(game: Game, first: Player, second: Player,
              clock: list[float] | None = None) -> tuple[tuple[int, ...], int | None]:
    """Play one game to the end; returns the moves and the winner (None: draw).

    ``clock`` (two floats) accumulates each side's thinking time.

    Raises:
        SpecError: a player chose an illegal move.
    """
    first.new_game(game)
    second.new_game(game)
    state = game.initial()
    moves: list[int] = []
    players = (first, second)
    while not state.is_terminal:
        side = state.ply & 1
        started = time.perf_counter()
        move = players[side].choose(state, tuple(moves))
        if clock is not None:
            clock[side] += time.perf_counter() - started
        if move not in state.legal_moves():
            raise SpecError(f"player {players[side].name!r} chose the illegal move {move!r} after "
                            f"{game.notation(moves)!r}")
        state = state.play(move)
        moves.append(move)
    return tuple(moves), state.winner


def play_match(
    game: str | Game,
    a: str | Player,
    b: str | Player,
    *,
    games: int = 10,
    seed: int | None = None,
    progress: bool = False,
    on_game: Callable[[GameRecord], None] | None = None,
) -> MatchResult:
    """Play ``games`` games between ``a`` and ``b``, colours alternating (``a`` first in the odd games).

    Args:
        game: the game (name or :class:`Game`).
        a: the first player: a spec (``"uct:iterations=200"``) or a :class:`Player` object.
        b: the second player, the same way.
        games: how many games.
        seed: replays the match exactly; None draws one (reported in the result).
        progress: show a progress bar (on stderr) with the running score.
        on_game: called with every finished game.
    """
    if games < 0:
        raise SpecError(f"games {games!r} must be at least 0")
    the_game = find_game(game)
    if seed is None:
        seed = random.SystemRandom().getrandbits(32)
    master = random.Random(seed)
    player_a = make_player(a, the_game, rng=random.Random(master.getrandbits(64)))
    player_b = make_player(b, the_game, rng=random.Random(master.getrandbits(64)))
    name_a = a if isinstance(a, str) else player_a.name
    name_b = b if isinstance(b, str) else player_b.name
    bar = new_bar(games, f"{name_a} vs {name_b}", "game") if progress else None
    records: list[GameRecord] = []
    wins = [0, 0, 0]  # a, b, draws
    clock = [0.0, 0.0]
    started = time.perf_counter()
    try:
        for i in range(games):
            a_player = 1 if i % 2 == 0 else 2
            first, second = (player_a, player_b) if a_player == 1 else (player_b, player_a)
            sides = [0.0, 0.0]
            moves, winner = play_game(the_game, first, second, sides)
            clock[0] += sides[a_player - 1]
            clock[1] += sides[2 - a_player]
            record = GameRecord(the_game.notation(moves), winner, a_player)
            records.append(record)
            wins[2 if winner is None else (0 if winner == a_player else 1)] += 1
            if on_game is not None:
                on_game(record)
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"a {wins[0]} b {wins[1]} draws {wins[2]}")
    finally:
        if bar is not None:
            bar.close()
    return MatchResult(game=the_game.name, a=str(name_a), b=str(name_b), games=len(records), a_wins=wins[0],
                       b_wins=wins[1], draws=wins[2], seed=seed, seconds=time.perf_counter() - started,
                       a_seconds=clock[0], b_seconds=clock[1], records=tuple(records))
