"""Every OpenSpiel two-player, perfect-information, deterministic game as a treelab :class:`Game`.

``find_game("openspiel:breakthrough")`` or ``"openspiel:hex(board_size=5)"``
(OpenSpiel's own parameter syntax) loads the game through ``pyspiel`` (the
optional extra ``treelab[openspiel]``). Moves are OpenSpiel action ids: a node
is named by the decimal id and a position is the comma-separated ids from the
initial state (``"12,7"``); :meth:`OpenSpielGame.action_text` gives OpenSpiel's
own action string (``a7a6``) for what people read. Positions wrap pyspiel's C++
states, so playouts run on them; the board is OpenSpiel's text rendering.

The mover of a move comes from the game (``current_player``), never from a
name list. OpenSpiel's game type does not say whether players alternate, so
:func:`strictly_alternating` checks it on seeded random games when the game is
loaded: player 1 moves first and no player ever moves twice in a row. Such a
game (tic-tac-toe, Connect Four, breakthrough, hex) takes the built-ins' parity
path (no ``movers`` rows), and every move played on it is checked again
(:meth:`OpenSpielState.play` refuses a double move in one line, so a tree on the
parity path never holds one). Any other game (dots and boxes gives a player who
closes a box the next move too; chess starts with OpenSpiel's player 1) is
``alternating = False``: the tree stores the mover of every node (see
:class:`treelab.tree.Tree`). Databases saved with movers for a game now on the
parity path still load: their movers are the parity's, and are not read.

Refused, each in one line: games with more or fewer than two players,
imperfect information, simultaneous moves, chance nodes (not sampled: a
treelab tree holds one outcome per move, so games with dice or shuffles are
refused rather than averaged), and returns other than win/draw/loss.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..errors import GameOverError, IllegalMoveError, NotationError, UnknownGameError, UnsupportedGameError
from .base import Game, State

__all__ = ["PREFIX", "OpenSpielGame", "OpenSpielState", "load_openspiel", "strictly_alternating"]

PREFIX = "openspiel:"
"""How a game name asks for an OpenSpiel game (``openspiel:breakthrough``)."""

_NAME = re.compile(r"[a-z0-9_]+")


class OpenSpielState(State):
    """One OpenSpiel position: a pyspiel state (never changed after creation) and its ply."""

    __slots__ = ("_last", "_spiel", "game", "ply")
    game: OpenSpielGame  # type: ignore[misc]  # a slot here: one adapter per OpenSpiel game string

    def __init__(self, game: OpenSpielGame, spiel: Any, ply: int = 0, last: int = 2) -> None:
        self.game = game
        self._spiel = spiel
        self.ply = ply
        self._last = last  # the player who made the last move (2 at the start: player 1 moves first)

    @property
    def spiel_state(self) -> Any:
        """The wrapped ``pyspiel.State`` (do not change it: positions are immutable)."""
        return self._spiel

    @property
    def to_move(self) -> int:
        player = self._spiel.current_player()
        return player + 1 if player >= 0 else 3 - self._last

    @property
    def winner(self) -> int | None:
        if not self._spiel.is_terminal():
            return None
        return self.game.winner_of(self._spiel.returns())

    @property
    def is_terminal(self) -> bool:
        return bool(self._spiel.is_terminal())

    def legal_moves(self) -> list[int]:
        return list(self._spiel.legal_actions()) if not self._spiel.is_terminal() else []

    def play(self, move: int) -> OpenSpielState:
        spiel = self._spiel
        if spiel.is_terminal():
            raise GameOverError(f"action {move!r} cannot be played: the game is over")
        legal = spiel.legal_actions()
        if move not in legal:
            shown = ", ".join(map(str, legal[:12])) + (", ..." if len(legal) > 12 else "")
            raise IllegalMoveError(f"action {move!r} is not legal here: pick one of {shown}")
        mover = spiel.current_player() + 1
        child = spiel.child(move)
        if self.game.alternating and child.current_player() == mover - 1:  # the parity path's promise, checked
            raise UnsupportedGameError(
                f"openspiel game {self.game.name!r} gave player {mover} a second move in a row after action "
                f"{move} at ply {self.ply + 1}, which its seeded random games never did: report it to treelab"
            )
        return OpenSpielState(self.game, child, self.ply + 1, mover)

    def features(self) -> Any:
        """OpenSpiel's observation tensor (else its information state tensor) for the player to move."""
        tensor = getattr(self.game, "_tensor", None)
        if tensor is None:
            return super().features()  # raises NoEncodingError
        import numpy as np

        player = self._spiel.current_player()
        values = getattr(self._spiel, tensor)(player if player >= 0 else 0)
        return np.asarray(values, dtype=np.float32).reshape(self.game.feature_shape)

    def key(self) -> tuple[str, int]:
        return (str(self._spiel), self._spiel.current_player())

    def board(self) -> str:
        return str(self._spiel).rstrip("\n")

    def winning_moves(self) -> list[int]:
        me = self.to_move
        return [m for m in self.legal_moves() if self.play(m).winner == me]

    def threats(self) -> list[int]:
        """Always empty: OpenSpiel cannot hand the move to the other player to ask."""
        return []

    def __repr__(self) -> str:
        return f"OpenSpielState({self.game.name!r}, ply={self.ply})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpenSpielState) and other.game is self.game and other.key() == self.key()

    def __hash__(self) -> int:
        return hash(self.key())


class OpenSpielGame(Game):
    """An OpenSpiel game behind treelab's :class:`Game` interface (build it with :func:`load_openspiel`)."""

    move_word = "action"
    full_word = "not legal there"
    shows_actions = True
    glued = False  # "12" is action 12, never 1 then 2
    _tensor: str | None = None
    """The pyspiel state's method that gives :meth:`OpenSpielState.features` (None: the game has no tensor)."""

    def __init__(self, name: str, spiel_game: Any) -> None:
        self.name = name
        self.spiel_game = spiel_game
        self.max_length = int(spiel_game.max_game_length())
        self.alternating = strictly_alternating(spiel_game, name=name)
        self.num_moves = int(spiel_game.num_distinct_actions())
        first = spiel_game.new_initial_state()
        line = []
        for _ in range(2):
            if first.is_terminal():
                break
            action = first.legal_actions()[0]
            line.append(action)
            first = first.child(action)
        self.example = ",".join(map(str, line))
        self.first_move = 0
        kind = spiel_game.get_type()
        if kind.provides_observation_tensor:
            self.encoding, self._tensor = f"openspiel-observation:{name}", "observation_tensor"
            self.feature_shape = tuple(int(n) for n in spiel_game.observation_tensor_shape())
        elif kind.provides_information_state_tensor:
            self.encoding, self._tensor = f"openspiel-information-state:{name}", "information_state_tensor"
            self.feature_shape = tuple(int(n) for n in spiel_game.information_state_tensor_shape())

    def initial(self) -> OpenSpielState:
        return OpenSpielState(self, self.spiel_game.new_initial_state())

    def winner_of(self, returns: Sequence[float]) -> int | None:
        """The winner (1, 2, None for a draw) of final ``returns``; raises if they are not win/draw/loss."""
        first, second = float(returns[0]), float(returns[1])
        if first == second == 0.0:
            return None
        if first == -second and abs(first) == 1.0:
            return 1 if first > 0 else 2
        raise UnsupportedGameError(
            f"{self.name} ended with returns {list(returns)!r}, not a win, draw or loss: "
            "treelab plays games whose returns are +1/-1 or 0/0"
        )

    def python_playout(self, state: State, rng: random.Random) -> int | None:
        """Uniformly random actions to the end, played on a clone of the pyspiel state."""
        assert isinstance(state, OpenSpielState)
        spiel = state._spiel.clone()
        rand = rng.random
        while not spiel.is_terminal():
            legal = spiel.legal_actions()
            spiel.apply_action(legal[int(rand() * len(legal))])
        return self.winner_of(spiel.returns())

    def label(self, move: int) -> str:
        return str(move)

    def parse_move(self, label: str | int) -> int:
        text = str(label).strip()
        if text.isascii() and text.isdigit() and int(text) < self.num_moves:
            return int(text)
        raise NotationError(
            f"{text!r} is not a {self.name} action id: use a whole number 0-{self.num_moves - 1}"
        )

    def notation(self, moves: Iterable[int]) -> str:
        """Comma-separated action ids (``"12,7"``)."""
        return ",".join(self.label(m) for m in moves)

    @property
    def move_hint(self) -> str:
        return "an action id or OpenSpiel's action string (the legal ones are listed)"

    def action_text(self, state: State, move: int) -> str:
        """OpenSpiel's string for ``move`` played from ``state`` (``a7a6``)."""
        assert isinstance(state, OpenSpielState)
        spiel = state._spiel
        player = spiel.current_player()
        return str(spiel.action_to_string(player if player >= 0 else 0, move))

    def __repr__(self) -> str:
        return f"OpenSpielGame({self.name!r})"


MAX_ACTIONS = 100_000
"""The most distinct actions an OpenSpiel game may have (chess has 4,674, go 19x19 362): beyond it, a
search's children and its priors would not fit, and OpenSpiel allocates boards of that size."""
MAX_GAME_LENGTH = 100_000
"""The longest game an OpenSpiel game may declare (chess: 17,695 moves)."""


def strictly_alternating(spiel_game: Any, *, games: int = 64, moves: int = 20_000, seed: int = 0,
                         name: str = "the openspiel game") -> bool:
    """Whether OpenSpiel's player 0 moves first and the players alternate in seeded random games.

    Plays up to ``games`` uniformly random games (at most ``moves`` moves in all;
    ``seed`` makes the answer the same on every load). False as soon as a
    player moves twice in a row (dots and boxes closes a box within a few random
    moves, checkers' multiple jumps and amazons' three-part turns at once). A
    game that passes still has every move checked in :meth:`OpenSpielState.play`.

    Raises:
        UnsupportedGameError: a random game reached a position that is not over and has no
            legal action (``hex(board_size=1)``), which no search can play.
    """
    rng = random.Random(seed)
    played = 0
    for _ in range(games):
        spiel = spiel_game.new_initial_state()
        if spiel.current_player() != 0:  # parity says player 1 (OpenSpiel's 0) moves first
            return False
        last = -1
        while not spiel.is_terminal() and played < moves:
            player = spiel.current_player()
            if player == last:
                return False
            legal = spiel.legal_actions()
            if not legal:
                raise UnsupportedGameError(
                    f"{name!r} reached a position that is not over but has no legal action "
                    f"(after {spiel.history()!r}): check the game's parameters"
                )
            spiel.apply_action(legal[int(rng.random() * len(legal))])
            last, played = player, played + 1
    return True


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence file descriptors 1 and 2: OpenSpiel's C++ prints its errors and warnings there."""
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def _pyspiel() -> Any:
    try:
        import pyspiel
    except ImportError:
        raise UnsupportedGameError(
            "openspiel games need OpenSpiel, which is not installed: pip install 'treelab[openspiel]'"
        ) from None
    return pyspiel


def canonical_name(name: str) -> str:
    """``"openspiel:hex(board_size=5)"`` with spaces removed and the name lowercased (no ``()``)."""
    text = "".join(name.split())
    body = text[len(PREFIX):] if text.lower().startswith(PREFIX) else text
    short, paren, rest = body.partition("(")
    short = short.lower()
    if not _NAME.fullmatch(short) or (paren and not rest.endswith(")")):
        raise UnknownGameError(
            f"unknown game {name!r}: write openspiel:NAME or openspiel:NAME(param=value,...), "
            "e.g. 'openspiel:hex(board_size=5)'"
        )
    params = rest[:-1]
    return PREFIX + short + (f"({params})" if params else "")


def load_openspiel(name: str) -> OpenSpielGame:
    """The OpenSpiel game ``name`` (``"openspiel:breakthrough"``), checked to be one treelab can play.

    Raises:
        UnknownGameError: no OpenSpiel game of that name, or bad parameters.
        UnsupportedGameError: OpenSpiel is missing, or the game is not two-player,
            perfect-information, sequential, deterministic and win/draw/loss.
    """
    canonical = canonical_name(name)
    pyspiel = _pyspiel()
    body = canonical[len(PREFIX):]
    short = body.split("(", 1)[0]
    if short not in pyspiel.registered_names():
        raise UnknownGameError(
            f"unknown openspiel game {short!r} in {name!r}: see pyspiel.registered_names(), "
            "e.g. openspiel:breakthrough"
        )
    try:
        with _quiet():
            spiel_game = pyspiel.load_game(body)
    except pyspiel.SpielError as exc:
        first = str(exc).splitlines()[0].rstrip(".").lower() if str(exc) else "it cannot be loaded"
        raise UnknownGameError(f"openspiel game {name!r} cannot be loaded ({first}): check its parameters") from None
    kind = spiel_game.get_type()
    why = None
    if spiel_game.num_players() != 2:
        why = f"has {spiel_game.num_players()} players; treelab plays two-player games"
    elif kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        why = "is a simultaneous-move game; treelab plays games where one player moves at a time"
    elif kind.information != pyspiel.GameType.Information.PERFECT_INFORMATION:
        why = "has imperfect information; treelab plays perfect-information games"
    elif kind.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC:
        why = ("has chance nodes; treelab refuses them (outcomes are not sampled): "
               "play a deterministic game")
    elif kind.utility not in (pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM) or (
        spiel_game.min_utility() < -1.0 or spiel_game.max_utility() > 1.0
    ):
        why = (f"returns scores in [{spiel_game.min_utility():g}, {spiel_game.max_utility():g}]; "
               "treelab plays win/draw/loss games (returns in [-1, 1])")
    elif not (0 < spiel_game.num_distinct_actions() <= MAX_ACTIONS
              and 0 < spiel_game.max_game_length() <= MAX_GAME_LENGTH):
        # OpenSpiel computes the sizes in 32-bit ints: a huge board can wrap to 0 or below
        why = (f"is too large or malformed: it declares {spiel_game.num_distinct_actions():,} actions and games "
               f"of up to {spiel_game.max_game_length():,} moves, where treelab holds 1-{MAX_ACTIONS:,} actions "
               f"and 1-{MAX_GAME_LENGTH:,} moves: choose smaller parameters")
    if why:
        raise UnsupportedGameError(f"openspiel game {name!r} {why}")
    return OpenSpielGame(canonical, spiel_game)
