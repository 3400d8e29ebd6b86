"""``treelab info``: what a database holds (game, nodes, games, size, schema version)."""

from __future__ import annotations

import json

import click

from .options import (
    ExampleLast,
    database,
    json_option,
    library_errors,
)


@click.command(cls=ExampleLast)
@database
@json_option
@library_errors
def info(db: str, as_json: bool) -> None:
    """Describe a tree database: game, nodes, games, size, schema version.

    \b
    Example:
      treelab info data/demo.db
    """
    from ..store.records import info as read

    facts = read(db)
    if as_json:
        click.echo(json.dumps(facts))
        return
    width = max(len(k) for k in facts)
    for key, value in facts.items():
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else value
        if key == "size_bytes" and isinstance(value, int):
            shown = f"{value:,} ({value / 1e6:.1f} MB)"
        click.echo(f"{key:<{width}}  {shown}")


COMMANDS = [info]
