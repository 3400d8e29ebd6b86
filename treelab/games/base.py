"""The small interface every game implements.

A :class:`Game` is a stateless rule book; a :class:`State` is one immutable
position. Moves are small positive integers whose text label is the move's
notation (Connect Four columns ``1``-``7``, tic-tac-toe cells ``1``-``9``), so a
position is written as the string of its moves from the start (``"4453"``).

Everything outside ``treelab/games/`` (search, evaluators, diagrams, the
explorer) talks to a game only through this interface, so a new game is a new
module here plus one registry entry, and nothing else changes.

**What a game must provide** (abstract: the class cannot be built without them):

- :class:`Game`: :meth:`Game.initial` and :meth:`Game.python_playout`, and the
  class attributes :attr:`Game.name`, :attr:`Game.num_moves`, :attr:`Game.example`.
- :class:`State`: :attr:`State.to_move`, :attr:`State.winner`,
  :attr:`State.is_terminal`, :meth:`State.legal_moves`, :meth:`State.play`,
  :meth:`State.key`, :meth:`State.board` (the text board),
  :meth:`State.winning_moves` and :meth:`State.threats`; and the attributes
  ``game`` (its :class:`Game`) and ``ply`` (moves played so far).

**What has a default** (override to do better):

- move notation: :meth:`Game.label` (``str(move)``), :meth:`Game.parse_move`
  (decimal ``1``..``num_moves``), :meth:`Game.parse`, :meth:`Game.notation`,
  and the words of messages (:attr:`Game.move_word`, :attr:`Game.full_word`);
- drawing: :meth:`State.grid` (None: diagrams show :meth:`State.board` as text)
  and :attr:`Game.look` (the colours and marks a grid is drawn with);
- the heuristic evaluator: :meth:`State.centrality` (1.0 for every move) and
  :meth:`State.prior_weights` (None: the evaluator's generic rule, written with
  ``winning_moves``/``threats``/``play``/``centrality``);
- models (:mod:`treelab.games.encoding`): :attr:`Game.encoding` (None: no input encoding, so
  ``treelab fit`` refuses the game), :attr:`Game.feature_shape`, :meth:`State.features`,
  :attr:`Game.first_move` and :attr:`Game.symmetries`;
- speed: :meth:`Game.playout_board`, :attr:`Game.compiled_playout`,
  :attr:`Game.compiled_replay` (None: the Python reference runs) and
  :meth:`State.play_all`.
"""

from __future__ import annotations

import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import GameOverError, IllegalMoveError, NoEncodingError, NotationError
from .encoding import Symmetry

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BoardLook", "Game", "Grid", "State", "mover_at_depth", "other_player", "written"]

_SEPARATOR = re.compile(r"[,/\s]+")
"""What separates the moves of a written sequence: commas, slashes, white space."""

Grid = tuple[tuple[int, ...], ...]
"""A board as rows of cells, the top row first; each cell is 0 (empty), 1 or 2 (the player holding it)."""


@dataclass(frozen=True)
class BoardLook:
    """How diagrams draw a game's :meth:`State.grid`: a table of coloured cells on a board colour.

    The default is a plain board with X and O marks (tic-tac-toe's look).
    """

    background: str = "#404040"
    """Colour of the board around and between the cells (the title is written on it in white)."""
    cell_size: int = 16
    """Width and height of one cell, in points."""
    cell_padding: int = 1
    """Space inside each cell, in points."""
    fills: tuple[str, str, str] = ("#ffffff", "#ffffff", "#ffffff")
    """Cell colour when empty, held by player 1, held by player 2."""
    marks: tuple[str, str, str] | None = ("", "X", "O")
    """Text written in an empty cell, a cell of player 1, a cell of player 2 (None: no text, colour only)."""
    mark_colours: tuple[str, str, str] = ("#000000", "#b2182b", "#2166ac")
    """Colour of the marks, in the same order."""
    footer: tuple[str, ...] = ()
    """Labels written under the columns (Connect Four's column numbers); empty: no footer row."""


def other_player(player: int) -> int:
    """The opponent of ``player`` (1 <-> 2)."""
    return 3 - player


def mover_at_depth(depth: int) -> int:
    """The player who made the move into a node at ``depth``.

    Player 1 makes the first move (depth 1). The root, at depth 0, counts as
    "moved into" by player 2, the player who is not to move there.
    """
    return 1 if depth % 2 else 2


class State(ABC):
    """One position of a game. States are immutable: :meth:`play` returns a new one."""

    __slots__ = ()

    game: Game
    ply: int

    @property
    @abstractmethod
    def to_move(self) -> int:
        """The player to move, 1 or 2 (also defined once the game is over)."""

    @property
    @abstractmethod
    def winner(self) -> int | None:
        """1 or 2 once a player has won, else None (ongoing or drawn)."""

    @property
    @abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over (a win or a full board)."""

    @abstractmethod
    def legal_moves(self) -> list[int]:
        """The moves that may be played here, in increasing order; empty once over."""

    @abstractmethod
    def play(self, move: int) -> State:
        """The position after ``move``. Raises :class:`IllegalMoveError` if it is not legal."""

    def play_all(self, moves: Sequence[int]) -> State:
        """The position after ``moves``, played in turn from here, each checked as :meth:`play` does.

        Runs the game's compiled replay (:attr:`Game.compiled_replay`) when it is
        built: one call, no position object per move. An illegal move is
        replayed in Python, which raises the error that names it.
        """
        replay = self.game.compiled_replay
        if replay is not None and moves:
            try:
                return type(self)(*replay(*self.game.playout_board(self), bytes(moves)))  # type: ignore[call-arg]
            except (ValueError, TypeError):
                pass
        state: State = self
        for move in moves:
            state = state.play(move)
        return state

    @abstractmethod
    def key(self) -> Hashable:
        """A value that identifies the position (equal positions, equal keys)."""

    @abstractmethod
    def board(self) -> str:
        """A plain-text drawing of the board."""

    @abstractmethod
    def winning_moves(self) -> list[int]:
        """The moves that win at once for the player to move."""

    @abstractmethod
    def threats(self) -> list[int]:
        """The moves with which the opponent would win at once, were it their turn (to block)."""

    def grid(self) -> Grid | None:
        """The board as rows of cells for pictures (top row first), or None to show :meth:`board` as text.

        Every row has the same length; diagrams draw it with :attr:`Game.look`.
        """
        return None

    def centrality(self, move: int) -> float:
        """How central ``move`` is, for the heuristic evaluator's priors (the default: 1.0 for every move).

        Board games use the number of winning lines through the cell the move takes.
        """
        return 1.0

    def prior_weights(self, threat_bonus: float, blunder_weight: float) -> dict[int, float] | None:
        """A fast form of the heuristic evaluator's weights here, or None (the default) for its generic rule.

        An override must return exactly what
        :class:`treelab.mcts.evaluators.HeuristicEvaluator` computes from
        ``winning_moves``, ``threats``, ``play`` and ``centrality`` (weights
        before normalising, one per legal move unless the mover wins or must
        block); the games' tests hold the two equal.
        """
        return None

    def features(self) -> npt.NDArray[np.float32]:
        """The position as a model's input: a float32 array of :attr:`Game.feature_shape`, seen by the player to move.

        Only for games with an :attr:`Game.encoding`; the default raises :class:`NoEncodingError`.
        """
        raise NoEncodingError(
            f"game {self.game.name!r} has no input encoding, so no model can be fitted or used for it: "
            "give its State a features() method and its Game an encoding and feature_shape"
        )

    def __str__(self) -> str:
        return self.board()


class Game(ABC):
    """The rules of one two-player, zero-sum, perfect-information game."""

    name: str = ""
    """Registry name (``"connect4"``)."""
    num_moves: int = 0
    """Move labels are ``1``..``num_moves``."""
    max_length: int | None = None
    """The most moves one game can last (Connect Four 42), bounding the paths a tree can hold; None: unknown."""
    move_word: str = "move"
    """What a move is called in messages (``"column"``, ``"cell"``)."""

    @abstractmethod
    def initial(self) -> State:
        """The starting position."""

    compiled_playout: Callable[[int, int, int, int], int | None] | None = None
    """The compiled playout of this game (:mod:`treelab.speedups`), if it is built:
    ``(*playout_board(state), seed) -> winner``."""

    compiled_decisive: Callable[[int, int, int, int], int | None] | None = None
    """The compiled :func:`treelab.decisive_playout` of this game, if built: ``(*playout_board(state), seed)
    -> winner`` (take a win, else block a loss, else a random move)."""

    compiled_replay: Callable[[int, int, int, bytes], tuple[int, int, int, int | None]] | None = None
    """The compiled :meth:`State.play_all` of this game, if built: ``(*playout_board(state), moves)
    -> the new state's constructor arguments``."""

    compiled_loop: int | None = None
    """The game number of the compiled UCT loop (``treelab._speedups.batch``: 0 Connect Four, 1 tic-tac-toe)
    for these very rules on ``playout_board``'s bitboards; None: the search runs its Python phases."""

    def playout(self, state: State, rng: random.Random | None = None) -> int | None:
        """Play uniformly random moves from ``state`` to the end; return the winner (None: draw).

        Runs the compiled playout (seeded with ``rng.getrandbits(64)``) when it is
        built, else :meth:`python_playout`, the reference. ``rng`` may also be a
        ``numpy.random.Generator``, or None for a fresh unseeded one.
        """
        if rng is None:
            rng = random.Random()
        if state.winner is not None:
            return state.winner
        compiled = self.compiled_playout
        if compiled is None:
            return self.python_playout(state, rng)
        try:
            seed = rng.getrandbits(64)
        except AttributeError:  # a numpy Generator
            from .. import speedups

            seed = speedups.seed64(rng)
        return compiled(*self.playout_board(state), seed)

    @abstractmethod
    def python_playout(self, state: State, rng: random.Random) -> int | None:
        """The pure-Python random playout: the reference, and the fallback without the extension."""

    def playout_board(self, state: State) -> tuple[int, int, int]:
        """The three integers the compiled playout reads (two bitboards and the ply)."""
        raise NotImplementedError(f"{self.name} has no compiled playout")

    def label(self, move: int) -> str:
        """The notation of ``move`` (its node name in a tree)."""
        return str(move)

    def parse_move(self, label: str | int) -> int:
        """The move written ``label``; raises :class:`NotationError` if it is not one."""
        text = str(label).strip()
        # isascii: str.isdigit() also accepts '²' (int() fails) and other scripts' digits
        if text.isascii() and text.isdigit() and 1 <= int(text) <= self.num_moves:
            return int(text)
        raise NotationError(
            f"{text!r} is not a {self.name} {self.move_word}: "
            f"use {self.move_word}s 1-{self.num_moves}"
        )

    def parse(self, moves: str | Iterable[str | int] | None) -> tuple[int, ...]:
        """Parse a move sequence: ``"4453"``, ``"4,4,5,3"``, ``"4 4 5 3"``, ``"/root/4/4/5/3"`` or a list.

        Text without separators is one move per character when :attr:`glued`
        (else one move). Only the notation is checked here; :meth:`replay` also checks the rules.
        """
        if moves is None:
            return ()
        if isinstance(moves, str):
            try:
                return tuple(self.parse_move(p) for p in self.notation_parts(moves))
            except NotationError as exc:
                also = f" or {','.join(self.example)!r}" if self.glued else ""
                raise NotationError(
                    f"{moves!r} is not a {self.name} move sequence ({exc}), e.g. {self.example!r}{also}"
                ) from None
        if not isinstance(moves, Iterable):
            raise NotationError(
                f"{moves!r} is not a {self.name} move sequence: "
                f"write it as a string ({self.example!r}) or a list of {self.move_word}s"
            )
        return tuple(self.parse_move(m) for m in moves)

    def notation_parts(self, moves: str) -> list[str]:
        """The labels a written move sequence is made of (:meth:`parse` reads each with :meth:`parse_move`):
        ``"4453"`` is ``["4", "4", "5", "3"]`` when :attr:`glued`; separators (commas, slashes, spaces) and a
        node's path (``"/root/4/4"``) split it otherwise."""
        text = moves.strip()
        if text.lower() in ("", "root", "/", "/root"):
            return []
        path = text.startswith("/")
        if path:  # "/root/4/4" or "/4/4": a node's path
            text = text.strip("/")
            text = text[4:] if text.startswith("root") else text
        glued = self.glued and not path and not _SEPARATOR.search(text)
        return [p for p in (list(text) if glued else _SEPARATOR.split(text)) if p]

    def replay(self, moves: str | Iterable[str | int] | None) -> State:
        """The position reached by ``moves`` from the start, checking every move."""
        state = self.initial()
        parsed = self.parse(moves)  # once: ``moves`` may be an iterator
        for i, move in enumerate(parsed):
            if state.is_terminal:
                raise GameOverError(
                    f"move {i + 1} ({self.label(move)!r}) of {self.notation(parsed)!r} "
                    "comes after the game has ended: drop the moves after the end"
                )
            if move not in state.legal_moves():
                raise IllegalMoveError(
                    f"move {i + 1} ({self.label(move)!r}) of {self.notation(parsed)!r} "
                    f"is illegal: {self.move_word} {self.label(move)} is {self.full_word}"
                )
            state = state.play(move)
        return state

    glued: bool = True
    """Whether a sequence written without separators is one move per character (``"4453"``); False: one
    move (OpenSpiel's action ids, ``"12"``), so sequences need commas, spaces or slashes."""
    full_word: str = "full"
    """How an unplayable move is described in messages."""
    alternating: bool = True
    """Whether the players strictly alternate, so the mover of a node is the parity of its depth
    (the fast path). False (dots and boxes, OpenSpiel games random play shows moving twice): trees store
    each node's mover."""

    @property
    def move_hint(self) -> str:
        """How to type a move, for prompts (``"columns 1-7"``)."""
        return f"{self.move_word}s 1-{self.num_moves}"

    def turn(self, moves: Iterable[str | int]) -> tuple[int, int]:
        """``(mover, to_move)`` after ``moves``: who moved last (the root: who does not move first), who moves next."""
        parsed = self.parse(list(moves))
        mover = self.replay(parsed[:-1]).to_move if parsed else 3 - self.initial().to_move
        return mover, self.replay(parsed).to_move

    shows_actions: bool = False
    """Whether :meth:`action_text` says more than the label (OpenSpiel's action strings beside the ids)."""

    def action_text(self, state: State, move: int) -> str:
        """What people read for ``move`` played from ``state`` (OpenSpiel's action string; default the label)."""
        return self.label(move)
    example: str = ""
    """An example sequence for messages and help texts."""
    look: BoardLook = BoardLook()
    """How diagrams draw this game's :meth:`State.grid` (the default: X and O marks)."""
    encoding: str | None = None
    """The name of :meth:`State.features`' encoding (recorded in model files); None: the game has none."""
    feature_shape: tuple[int, ...] = ()
    """The shape of :meth:`State.features`' array."""
    first_move: int = 1
    """The smallest move id: a move's place in a model's policy vector is ``move - first_move``."""
    symmetries: tuple[Symmetry, ...] = ()
    """The board's symmetries other than the identity (see :class:`~treelab.games.encoding.Symmetry`)."""

    def position_key(self, state: State) -> str:
        """The key of ``state``'s position in a tree's position table (:mod:`treelab.positions`).

        Equal for every move order that reaches the position (transpositions) and, where the game
        declares :attr:`symmetries`, for its images under them (Connect Four's mirror, tic-tac-toe's
        eight): the statistics of all of them merge. The default is :meth:`State.key` written out,
        which merges transpositions only; a game with symmetries overrides it with a canonical
        image (the smallest). Keys are stored as text in the ``positions`` table: keep them stable.
        """
        return repr(state.key())

    def notation(self, moves: Iterable[int]) -> str:
        """The compact notation of a move sequence (``"4453"``)."""
        return "".join(self.label(m) for m in moves)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def written(labels: Sequence[str], game: Game | None = None) -> str:
    """A position written from its node labels so that it reads back: the game's notation
    (``"4453"``; OpenSpiel's ``"146,598"``), or without the game, commas wherever a label is longer
    than one character (never ``"146598"``, which would read as other moves)."""
    if game is not None:
        return game.notation(game.parse(list(labels)))
    return "".join(labels) if all(len(label) == 1 for label in labels) else ",".join(labels)
