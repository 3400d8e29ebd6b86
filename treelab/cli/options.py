"""Shared click options, argument types and error handling for every command."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..errors import TreelabError
from ..games import GAMES, Game, find_game

F = TypeVar("F", bound=Callable[..., Any])


class GameType(click.ParamType):
    """A game name, turned into its :class:`Game`."""

    name = "GAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Game:
        if isinstance(value, Game):
            return value
        try:
            return find_game(value)
        except TreelabError as exc:
            self.fail(str(exc), param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "{" + "|".join(GAMES) + "}"


GAME = GameType()


def game_argument(f: F) -> F:
    """The GAME argument (``connect4`` or ``tictactoe``)."""
    return click.argument("game", type=GAME)(f)  # type: ignore[return-value]


def seed_option(f: F) -> F:
    """``--seed S``: replay the run exactly."""
    return click.option("--seed", type=int, default=None, help="Random seed, to replay the run exactly.")(f)  # type: ignore[return-value]


def c_option(f: F) -> F:
    """``--c C``: the UCB1 exploration constant."""
    return click.option(
        "--c", "c", type=click.FloatRange(min=0.0), default=math.sqrt(2), show_default="sqrt(2)",
        help="UCB1 exploration constant (rewards in [0, 1]).",
    )(f)  # type: ignore[return-value]


def json_option(f: F) -> F:
    """``--json``: machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")(f)  # type: ignore[return-value]


def path_option(f: F) -> F:
    """``--path SEQ``: a node of the tree by its moves."""
    return click.option(
        "--path", "path", default="", metavar="SEQ", help="Subtree root as a move sequence (4453 or 4,4,5,3)."
    )(f)  # type: ignore[return-value]


def db_argument(f: F) -> F:
    """The DB argument: an existing treelab database."""
    return click.argument("db", type=click.Path(dir_okay=False))(f)  # type: ignore[return-value]


def library_errors(f: F) -> F:
    """Turn treelab's errors (and a few builtins) into one-line ``click.ClickException`` s."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return f(*args, **kwargs)
        except TreelabError as exc:
            raise click.ClickException(str(exc)) from None
        except (FileNotFoundError, PermissionError, IsADirectoryError) as exc:
            raise click.ClickException(f"{exc.strerror.lower() if exc.strerror else exc}: {exc.filename!r}") from None

    return wrapper  # type: ignore[return-value]


class ExampleLast(click.Command):
    """A command whose ``--help`` ends with its example.

    The docstring keeps its ``Example:`` block (a ``\\b`` paragraph) where it
    reads naturally; it is moved into the epilog, after the options list.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        marker = "\b\nExample:"
        text = inspect.cleandoc(self.help) if self.help else ""
        if marker in text and not self.epilog:
            head, _, example = text.partition(marker)
            self.help = head.rstrip()
            self.epilog = marker + example.rstrip()
