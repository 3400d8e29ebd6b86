"""Shared click options, argument types and error handling for every command."""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import TreelabError
from ..games import GAMES, Game, find_game

if TYPE_CHECKING:
    from ..mcts.config import SearchConfig

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
        return "{" + "|".join(GAMES) + "|openspiel:NAME}"


GAME = GameType()


def game_argument(f: F) -> F:
    """The GAME argument: a registered game's name (``connect4``, ``tictactoe``...) or ``openspiel:NAME``."""
    return click.argument("game", type=GAME)(f)  # type: ignore[return-value]


class Option(click.Option):
    """An option whose default, when it is a description (``show_default="sqrt(2)"``), reads
    ``[default: sqrt(2)]`` like every other default, not click's ``[default: (sqrt(2))]``."""

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        if isinstance(self.show_default, str):
            extra["default"] = self.show_default
        return extra


def option(*param_decls: str, **attrs: Any) -> Callable[[F], F]:
    """``click.option`` with :class:`Option`: every command's options are declared through this."""
    return click.option(*param_decls, cls=Option, **attrs)  # type: ignore[return-value]


class FiniteFloat(click.FloatRange):
    """A float in a range that is also finite: ``nan``, ``inf`` and ``1e400`` are refused by name.

    >>> FiniteFloat(min=0.0).convert("0.5", None, None)
    0.5
    >>> FiniteFloat(min=0.0).convert("nan", None, None)
    Traceback (most recent call last):
    ...
    click.exceptions.BadParameter: 'nan' is not a finite number: give one such as 1.5
    """

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number: give one such as 1.5", param, ctx)
        return super().convert(number, param, ctx)


def finite(min: float | None = None, max: float | None = None, *, min_open: bool = False) -> FiniteFloat:
    """A click type: a finite float in ``[min, max]`` (``(min, max]`` with ``min_open``)."""
    return FiniteFloat(min=min, max=max, min_open=min_open)


def seed_option(f: F) -> F:
    """``--seed S``: replay the run exactly."""
    return option("--seed", type=int, default=None, show_default="random",
                  help="Random seed, to replay the run exactly.")(f)


def c_option(f: F) -> F:
    """``--c C``: the UCB1 exploration constant."""
    return option(
        "--c", "c", type=finite(min=0.0), default=math.sqrt(2), show_default="sqrt(2)",
        help="UCB1 exploration constant (rewards in [0, 1]).",
    )(f)


def json_option(f: F) -> F:
    """``--json``: machine-readable output."""
    return option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")(f)


def position_option(name: str = "path") -> Callable[[F], F]:
    """``--path SEQ`` and ``--moves SEQ`` alike: a position (a node of the tree) by its moves.

    Args:
        name: the keyword the command receives (``path`` or ``moves``).
    """
    other = "moves" if name == "path" else "path"
    return option(
        f"--{name}", f"--{other}", name, default="", metavar="SEQ", show_default="the start",
        help="The position as its moves from the start (4453 or 4,4,5,3); --moves and --path are one option.",
    )


path_option = position_option("path")
"""``--path SEQ`` (also ``--moves SEQ``): the subtree's root, passed as ``path``."""


def database(f: F) -> F:
    """The database a command reads, as a positional ``DB`` or as ``--db PATH`` (one of them).

    The command receives it as ``db``. Naming two different databases, or none, is a usage error.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, db: str | None, db_option: str | None, **kwargs: Any) -> Any:
        if db is not None and db_option is not None and db != db_option:
            raise click.UsageError(f"DB {db!r} and --db {db_option!r} name two databases: give one of them")
        chosen = db if db is not None else db_option
        if chosen is None:
            raise click.UsageError("missing the database: give it as DB or --db PATH")
        return f(*args, db=chosen, **kwargs)

    wrapper = option("--db", "db_option", type=click.Path(dir_okay=False), metavar="PATH", default=None,
                     help="The tree database (the same as the DB argument).")(wrapper)
    return click.argument("db", required=False, type=click.Path(dir_okay=False))(wrapper)  # type: ignore[return-value]


db_argument = database
"""The former name of :func:`database` (a positional ``DB``, now also ``--db PATH``)."""


def refuse_overwriting(out: str, *inputs: str, option: str = "-o", noun: str = "the picture") -> None:
    """Refuse an output path that breaks the rule of every output (:func:`treelab.store.files.check_output`:
    a directory, device, FIFO or socket) or is one of the ``inputs`` (or its ``-wal``/``-shm``/``-journal``
    file), before any work. ``option`` and ``noun`` name the output in the message.

    The same file is recognised by its resolved path, or by its inode when both exist (a hard or
    symbolic link, another spelling of the path).

    Raises:
        StoreError: ``out`` is a directory or a special file other than standard output.
        click.UsageError: ``out`` is an input; nothing has been written.
    """
    from ..store.files import check_output, is_stdout

    check_output(out, option)
    if is_stdout(out):
        return
    target = Path(out)
    for source in inputs:
        for name in (source, *(f"{source}{tail}" for tail in ("-wal", "-shm", "-journal"))):
            candidate = Path(name)
            same = target.resolve() == candidate.resolve()
            if not same and target.exists() and candidate.exists():
                same = os.path.samefile(target, candidate)
            if same:
                raise click.UsageError(
                    f"{option} {out!r} is {source!r}, the file being read (a database or an input): write {noun} "
                    "to another file"
                )


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


def iterations_option(default: int | None):  # type: ignore[no-untyped-def]
    return option(
        "--iterations", type=click.IntRange(min=1), default=default,
        show_default=True if default is not None else "1000, or as many as --seconds allows",
        help="Simulations per search.",
    )


def playout_option(f):  # type: ignore[no-untyped-def]
    from ..mcts.policies import PLAYOUTS

    return option("--playout", type=click.Choice(sorted(PLAYOUTS)), default="random",
                        help="Playout policy: uniform random, or take wins / block losses first.")(f)


def solver_option(f):  # type: ignore[no-untyped-def]
    return option("--solver", is_flag=True, default=None, show_default="on for puct, off for uct",
                  help="MCTS-Solver: prove wins, draws and losses.")(f)


def search_options(f):  # type: ignore[no-untyped-def]
    """The options every searching command shares: algorithm, c, solver, playout, evaluator,
    temperature, move choice and a model (the fields of a SearchConfig, one name each)."""
    options = [
        option("--algorithm", type=click.Choice(["uct", "puct"]), default="uct",
               help="UCT (UCB1) or AlphaZero-style PUCT."),
        option("--c", "c", type=finite(min=0.0), default=None,
               show_default="sqrt(2) for uct, 1.25 for puct, 0.625 for puct on a model's values alone",
               help="Exploration constant: UCB1's c, or PUCT's."),
        solver_option,
        playout_option,
        option("--evaluator", type=click.Choice(["rollout", "heuristic"]), default="rollout",
               help="PUCT's priors and value: uniform + a random rollout, or Connect Four threats/centrality."),
        option("--temperature", type=finite(min=0.0), default=None, show_default="0; train's self-play: 1",
               help="Pick moves by sampling selections^(1/T); 0: the most selected (train: 1 over the opening "
                    "in self-play, see --temperature-moves; otherwise 0)."),
        option("--choice", type=click.Choice(["visits", "ucb1"]), default="visits",
               help="Move to play: the most selected (simulations that chose it, not pass-through visits), "
                    "or the best UCB1 score (the original rule)."),
        option("--statistics", type=click.Choice(["classic", "graph"]), default=None,
               show_default="the --db file's rule, else classic",
               help="UCT's selection: classic UCB1 on visits, or graph search (edge counts, values merged by "
                    "position over move orders and mirror images)."),
        option("--model", type=click.Path(dir_okay=False), metavar="PATH", default=None, show_default="none",
               help="A model fitted by 'treelab fit': PUCT's priors and values (analyse: needs --algorithm puct; "
                    "its JSON adds model_prior per move and model_value; train: see --refit-every)."),
        option("--mix", type=finite(min=0.0, max=1.0), default=None, show_default="0",
               help="With --model: the playout's share of a leaf's value (0: the model's value alone)."),
    ]
    for decorate in reversed(options):
        f = decorate(f)
    return f


def search_options_of(options: dict[str, Any]) -> dict[str, Any]:
    """The options of :func:`search_options`, taken out of ``options`` (the fields of a SearchConfig)."""
    from ..mcts.config import option_names

    return {name: options.pop(name) for name in sorted(option_names()) if name in options}


def search_config(options: dict[str, Any]) -> SearchConfig:
    """The :class:`SearchConfig` of the options of :func:`search_options` (taken out of ``options``)."""
    from ..mcts.config import SearchConfig

    return SearchConfig.of(**search_options_of(options))
