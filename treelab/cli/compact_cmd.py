"""``treelab compact``: rewrite a database file without its free pages."""

from __future__ import annotations

import click

from .options import (
    ExampleLast,
    database,
    library_errors,
)


@click.command(cls=ExampleLast)
@database
@library_errors
def compact(db: str) -> None:
    """Fold the write-ahead log into DB and drop free pages (SQLite VACUUM).

    Safe beside readers and a running train: saves wait for it (up to 60 s), and
    the tree is unchanged.

    \b
    Example:
      treelab compact data/demo.db
    """
    from ..store.records import compact as run

    before, after = run(db)
    click.echo(f"{db}: {before:,} -> {after:,} bytes ({100 * (before - after) / max(before, 1):.1f}% smaller)")


COMMANDS = [compact]
