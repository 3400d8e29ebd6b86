"""``treelab import`` and ``treelab export``: trees of other searches in, treelab's trees out."""

from __future__ import annotations

import click

from .options import GAME, ExampleLast, database, library_errors, option, path_option, refuse_overwriting


@click.command("import", cls=ExampleLast)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["rows", "node-link", "gml"]))
@click.argument("file", type=click.Path(dir_okay=False))
@option("--game", type=GAME, required=True, help="The game the tree was searched in.")
@option("--db", "db", type=click.Path(dir_okay=False), metavar="OUT", required=True,
        help="The database to create, or to add the tree to (as treelab merge).")
@library_errors
def import_(fmt: str, file: str, game: str, db: str) -> None:
    """Import the tree in FILE into the database OUT: rows (JSON lines or CSV), node-link or GML.

    Rows are one node each: path (moves from the start, comma-separated; ''
    for the root), visits, and optionally value_sum (the mover's returns in
    [-1, 1]), prior, proven, wins, draws, selected (docs/guide/interop.md).
    Everything is checked before anything is written: a malformed row, an
    illegal path or a file of another game is one line naming the row. OUT
    is created if missing; an existing OUT adds the tree, every count the
    exact sum (importing twice doubles them).

    \b
    Example:
      treelab import rows search.jsonl --game tictactoe --db imported.db
    """
    from ..interop.transfer import import_file

    refuse_overwriting(db, file, option="--db", noun="the database")
    click.echo(import_file(file, fmt, game, db).describe())


@click.command("export", cls=ExampleLast)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["rows", "node-link", "gml", "explorer", "katago"]))
@database
@path_option
@option("--depth", type=click.IntRange(min=0), default=None, show_default="all (explorer, katago: 0)",
        help="Levels below --path to export (explorer and katago: positions, one JSON line each).")
@option("-o", "--out", "out", type=click.Path(dir_okay=False, allow_dash=True), required=True,
        help="The file to write (rows: .csv for CSV, else JSON lines; -: standard output).")
@library_errors
def export(fmt: str, db: str, path: str, depth: int | None, out: str) -> None:
    """Write the tree in DB (the subtree at --path) as FORMAT.

    rows: the plain format, exact (export then import gives the same
    numbers); node-link: JSON for networkx.node_link_graph and d3; gml: for
    Gephi, yEd and networkx.read_gml; explorer: the lichess opening
    explorer's JSON for a position; katago: KataGo's analysis JSON
    (moveInfos, rootInfo) for a position. The file appears only once whole.

    \b
    Example:
      treelab export node-link data/tictactoe.db --depth 3 -o tree.json
    """
    from ..interop.transfer import export as write
    from ..store.files import is_stdout, whole

    refuse_overwriting(out, db, noun="the export")
    with whole(out) as tmp, open(tmp, "w", encoding="utf-8", newline="") as stream:
        count = write(db, fmt, stream, path=path or None, depth=depth, csv=out.endswith(".csv"))
    what = "positions" if fmt in ("explorer", "katago") else "nodes"
    click.echo(f"wrote {out}: {count:,} {what}", err=is_stdout(out))  # the export alone on standard output


COMMANDS = [import_, export]
