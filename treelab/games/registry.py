"""The game registry: built-in games, ``register_game``, the ``treelab.games`` entry points and OpenSpiel.

``find_game(name)`` is the one place a game name becomes a :class:`Game`:

* a registered name (``connect4``, ``tictactoe``, ``nim`` and whatever
  :func:`register_game` added), or one of a few aliases (``c4``, ``ttt``);
* ``openspiel:NAME`` or ``openspiel:NAME(param=value,...)``: an OpenSpiel game
  (:mod:`treelab.games.openspiel`), loaded once per canonical name;
* a name provided by an installed package through the entry point group
  ``treelab.games``: the entry point's name is the game's name and its object a
  :class:`Game`, a :class:`Game` subclass or a function returning one::

      [project.entry-points."treelab.games"]
      mygame = "mypackage.rules:MyGame"
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import metadata

from ..errors import UnknownGameError, UnsupportedGameError
from .base import Game

__all__ = ["ENTRY_POINT_GROUP", "GAMES", "find_game", "register_game"]

ENTRY_POINT_GROUP = "treelab.games"
"""The entry point group through which installed packages add games."""

GAMES: dict[str, Game] = {}
"""Every registered game by name (OpenSpiel games are found by ``openspiel:NAME``, not listed)."""

_ALIASES = {"c4": "connect4", "connect-four": "connect4", "connectfour": "connect4",
            "ttt": "tictactoe", "tic-tac-toe": "tictactoe"}
_NAME = re.compile(r"[a-z][a-z0-9_\-]*")
_OPENSPIEL: dict[str, Game] = {}
_plugins_loaded = False

GameSource = Game | type[Game] | Callable[[], Game]
"""What :func:`register_game` and an entry point accept: a game, a game class, or a function making one."""


def _make(source: GameSource, where: str) -> Game:
    """The :class:`Game` behind ``source`` (instantiated if it is a class or a factory)."""
    game = source if isinstance(source, Game) else source() if callable(source) else source
    if not isinstance(game, Game):
        raise UnsupportedGameError(
            f"{where} gave {game!r}, not a treelab Game: subclass treelab.Game (see the README's game protocol)"
        )
    return game


def register_game(game: GameSource, *, name: str | None = None, replace: bool = False) -> Game:
    """Make ``game`` findable by name everywhere a game is accepted (CLI, ``Tree``, ``analyse``).

    Args:
        game: a :class:`Game` (or a subclass, or a function returning one) written
            against the protocol in :mod:`treelab.games.base`.
        name: the registry name (default: ``game.name``); lowercase letters,
            digits, ``_`` and ``-``, starting with a letter.
        replace: allow replacing a game registered under the same name.

    Returns:
        The registered game.

    Raises:
        UnsupportedGameError: not a Game, a bad name, or the name is taken.
    """
    the_game = _make(game, "register_game")
    key = (name if name is not None else the_game.name).strip().lower()
    if not _NAME.fullmatch(key) or key.startswith("openspiel"):
        raise UnsupportedGameError(
            f"game name {key!r} cannot be registered: use lowercase letters, digits, '_' or '-' "
            "(not 'openspiel...', which names OpenSpiel games)"
        )
    if key != the_game.name:
        raise UnsupportedGameError(
            f"game name {key!r} differs from the game's own name {the_game.name!r}: "
            "set the Game's name attribute to the name it is registered under"
        )
    old = GAMES.get(key)
    if old is not None and old is not the_game and not replace:
        raise UnsupportedGameError(f"game name {key!r} is taken by {old!r}: pick another name or pass replace=True")
    GAMES[key] = the_game
    return the_game


def _load_plugins() -> None:
    """Register every game of the ``treelab.games`` entry point group (once)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if point.name.lower() in GAMES:
            continue
        try:
            game = _make(point.load(), f"entry point {point.value!r}")
        except UnsupportedGameError:
            raise
        except Exception as exc:  # a broken plugin is named in one line, without a traceback
            raise UnsupportedGameError(
                f"game {point.name!r} from entry point {point.value!r} cannot be loaded ({exc!r}): "
                "fix or uninstall the package that provides it"
            ) from None
        register_game(game, name=point.name)


def reload_plugins() -> None:
    """Read the ``treelab.games`` entry points again (after installing a package at run time)."""
    global _plugins_loaded
    _plugins_loaded = False
    _load_plugins()


def find_game(name: str | Game) -> Game:
    """The game called ``name`` (a :class:`Game` is returned as it is).

    Raises:
        UnknownGameError: ``name`` is not a registered game nor an OpenSpiel game.
        UnsupportedGameError: an OpenSpiel game treelab cannot play, or OpenSpiel is missing.
    """
    if isinstance(name, Game):
        return name
    text = str(name).strip()
    if text.lower().startswith("openspiel:"):
        from .openspiel import canonical_name, load_openspiel

        canonical = canonical_name(text)
        game = _OPENSPIEL.get(canonical)
        if game is None:
            game = _OPENSPIEL[canonical] = load_openspiel(canonical)
        return game
    key = text.lower()
    key = _ALIASES.get(key, key)
    if key not in GAMES:
        _load_plugins()
    try:
        return GAMES[key]
    except KeyError:
        raise UnknownGameError(
            f"unknown game {name!r}: use one of {', '.join(sorted(GAMES))} or openspiel:NAME"
        ) from None
