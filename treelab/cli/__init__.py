"""The ``treelab`` command line: a thin click group; every command calls the library.

Commands live in small modules (``search.py``: train, analyse, play, info;
``view.py``: render, stats, growth; ``match.py``: arena) and are registered here.
"""

from __future__ import annotations

import click

from .. import __version__

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="treelab")
def cli() -> None:
    """Grow, keep, draw and measure Monte Carlo Tree Search trees.

    \b
    Example:
      treelab train connect4 --db c4.db --games 50 --iterations 400
      treelab analyse connect4 --moves 4453 --db c4.db --json
    """


def _register() -> None:
    import importlib

    for module in ("search", "view", "match"):
        try:
            mod = importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:  # a command module not written yet
            if exc.name != f"{__name__}.{module}":
                raise
            continue
        for command in getattr(mod, "COMMANDS", ()):
            cli.add_command(command)


_register()


def main() -> None:
    """Entry point of the ``treelab`` script and ``python -m treelab``."""
    cli(prog_name="treelab")
