"""Values, not keyword lists: no public function takes more than 10 parameters.

Checked over every callable the front door resolves (``treelab._LAZY``, a class by its ``__init__``), the library
functions behind the command line, and the command-line callbacks themselves. Counted: the named
parameters (``self`` aside). Not counted: a ``**options`` catch-all, which takes the fields of a
config value by their names (:meth:`treelab.mcts.config.SearchConfig.of`,
:func:`treelab.play.training.config.split_options`, both refusing unknown names, tested in
``tests/mcts/test_search_config.py``). Frozen dataclasses are values: their fields are what they hold.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Iterator

import click

import treelab
from treelab.cli import cli

LIMIT = 10

LIBRARY = [  # the library functions the command line calls (beyond the front door's names)
    "treelab.play.training:train",
    "treelab.play.training:make_players",
    "treelab.play.positions:analyse",
    "treelab.play.arena:make_player",
    "treelab.play.arena:play_match",
    "treelab.play.training.parallel:train_parallel",
    "treelab.play.players:MCTSPlayer",
    "treelab.play.players:PUCTPlayer",
    "treelab.mcts.dispatch:puct_search",
    "treelab.mcts.uct:search",
    "treelab.mcts.dispatch:run_search",
]

NOT_YET: set[str] = set()
"""Still over the limit (none now: the drawing options became one value, ``DiagramOptions``). A name here
makes the test fail once it is within the limit, so the list cannot go stale."""


def count(fn: Callable[..., object]) -> int:
    """The named parameters of ``fn`` (``self`` aside; ``*args`` and ``**options`` not counted)."""
    named = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
             inspect.Parameter.KEYWORD_ONLY)
    return sum(1 for p in inspect.signature(fn).parameters.values() if p.kind in named and p.name != "self")


def public() -> Iterator[tuple[str, Callable[..., object]]]:
    for name in sorted(treelab._LAZY):  # advertised in __all__ or not
        obj = getattr(treelab, name)
        if inspect.isclass(obj):
            if dataclasses.is_dataclass(obj) or "__init__" not in vars(obj):
                continue  # a value (its fields), or no constructor of its own
            yield f"treelab.{name}", obj.__init__
        elif inspect.isfunction(obj):  # not a type alias such as Evaluator
            yield f"treelab.{name}", obj
    for spec in LIBRARY:
        module, _, attr = spec.partition(":")
        obj = getattr(importlib.import_module(module), attr)
        yield spec, obj.__init__ if inspect.isclass(obj) else obj
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):  # the commands load on demand
        command = cli.get_command(ctx, name)
        assert command is not None and command.callback is not None
        yield f"cli {name}", command.callback


def test_no_public_function_takes_more_than_ten_parameters() -> None:
    counts = dict(public())
    assert len(counts) > 40 and "cli train" in counts  # the API and every command are really walked
    over = {name: count(fn) for name, fn in counts.items() if count(fn) > LIMIT}
    assert set(over) == NOT_YET, over


def test_the_count_sees_every_named_parameter() -> None:
    def eleven(a, b, /, c, d, *args, e, f, g, h, i, j, k, **options):  # type: ignore[no-untyped-def]
        return None

    assert count(eleven) == 11
    assert count(treelab.train) <= LIMIT < count(eleven)
