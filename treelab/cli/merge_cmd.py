"""``treelab merge``: add trees of one game into one database along identical move paths."""

from __future__ import annotations

import click

from .options import ExampleLast, library_errors


@click.command(cls=ExampleLast)
@click.argument("out", type=click.Path(dir_okay=False))
@click.argument("inputs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="IN...")
@library_errors
def merge(out: str, inputs: tuple[str, ...]) -> None:
    """Add the trees IN... into OUT: every count the exact sum along identical move paths.

    OUT is created if missing; if it holds a tree, that tree is one of the
    summands. Games are the union (each logged with the file it came from);
    proofs are merged, and two that disagree are an error. Trees of different
    games are refused, and nothing is written. One transaction.

    \b
    Example:
      treelab merge all.db run1.db run2.db run3.db
    """
    from ..store.merging import merge as run

    click.echo(run(out, *inputs).describe())


COMMANDS = [merge]
