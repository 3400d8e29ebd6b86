"""The ``treelab`` command line: a thin click group; every command calls the library.

Commands live in small modules (``search.py``: train, analyse, play, info;
``view.py``: render, stats, growth; ``match.py``: arena) and are registered here.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import __version__
from ..fastpath import describe
from .options import ExampleLast

__all__ = ["cli", "main"]


_VERSION = f"%(prog)s %(version)s; hot paths: {describe()}"


class _Group(ExampleLast, click.Group):
    """A group whose errors are always one line: ``Error: <what>`` and a non-zero exit."""

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="treelab", message=_VERSION)
def cli() -> None:
    """Grow, keep, draw and measure Monte Carlo Tree Search trees.

    \b
    Example:
      treelab train connect4 --db c4.db --games 50 --iterations 400
      treelab analyse connect4 --moves 4453 --db c4.db --json
    """


def _register() -> None:
    from . import match, search, view

    for module in (search, view, match):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def main() -> None:
    """Entry point of the ``treelab`` script and ``python -m treelab``."""
    cli(prog_name="treelab")
