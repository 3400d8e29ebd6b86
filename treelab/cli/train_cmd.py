"""``treelab train``: grow a tree over many games (one process, worker processes, or Ray)."""

from __future__ import annotations

from typing import Any

import click

from ..games import Game
from .options import (
    ExampleLast,
    finite,
    game_argument,
    iterations_option,
    library_errors,
    option,
    search_options,
    search_options_of,
    seed_option,
)


@click.command(cls=ExampleLast)
@game_argument
@option("--db", required=True, type=click.Path(dir_okay=False), metavar="PATH",
        help="Tree database (created if missing).")
@option("--games", type=click.IntRange(min=0), default=100, help="Games to play.")
@iterations_option(400)
@option("--opponent", type=click.Choice(["self", "random", "heuristic"]), default="self",
        help="Who the tree plays (colours alternate).")
@option("--pool", "pool", multiple=True, metavar="SPEC[,SPEC...]", show_default="no pool",
        help="Draw each game's opponent (seeded) from self, heuristic, random, db=PATH (an earlier tree of "
             "this game, read only, searching with --iterations); replaces --opponent.")
@search_options
@option("--temperature-moves", type=click.IntRange(min=-1), default=None, show_default="8",
        help="Moves of each game sampled with --temperature, the rest the most selected; -1: every move.")
@option("--noise", type=finite(min=0.0, max=1.0), default=None, show_default="0.25 in self-play, else 0",
        help="Share of root Dirichlet noise mixed into the tree's move choice (AlphaZero's 0.25).")
@option("--alpha", type=finite(min=0.0, min_open=True), default=None, show_default="10 / moves",
        help="The noise's Dirichlet alpha.")
@seed_option
@option("--quiet", "-q", is_flag=True, help="No progress bar.")
@option("--workers", type=int, default=None, show_default="this process alone", metavar="N",
        help="Play in N processes at once, one writer merging their games (at most --games).")
@option("--ray", "ray", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]", show_default="no Ray",
        help="Play on Ray: alone, a local Ray; with HOST:PORT, that cluster (pip install 'treelab[ray]').")
@library_errors
def train(game: Game, db: str, games: int, quiet: bool, **options: Any) -> None:
    """Grow the tree in DB by playing whole games; re-running resumes.

    The tree is saved after every game in one transaction (by a writer process
    while the next game is played); Ctrl-C saves and stops cleanly. With
    --workers N (or --ray) games are played in parallel on
    snapshots of the tree and one writer adds what each game learned. Self-play
    explores by default: the first moves of every game are sampled from the
    simulations that selected them (temperature 1), so games differ; the
    settings are logged per game (games.exploration).

    \b
    Example:
      treelab train connect4 --db c4.db --games 50 --iterations 400 --opponent heuristic --seed 1
      treelab train connect4 --db c4.db --games 200 --iterations 400 --workers 2
      treelab train connect4 --db c4.db --games 100 --pool self,heuristic,db=old.db --seed 1
    """
    from ..play.training import train as run
    from ..play.training_config import TEMPERATURE_MOVES, TrainingConfig

    searching = search_options_of(options)  # made into one SearchConfig by train, with its self-play defaults
    moves, ray, workers = options.pop("temperature_moves"), options.pop("ray"), options.pop("workers")
    options["temperature_moves"] = TEMPERATURE_MOVES if moves is None else None if moves == -1 else moves
    options["pool"] = options["pool"] or None
    note = ""
    if workers is not None and 1 <= workers <= games and ray is None:  # local workers: only where they pay
        from ..play.parallel import advice

        workers, note = advice(workers)
    training = TrainingConfig(progress=not quiet, ray=None if ray is None else True if ray == "local" else ray,
                              workers=workers, **options)
    summary = run(game, db, games, training=training, **searching)
    click.echo(summary.describe())
    if note:
        click.echo(f"note: {note}")
    if summary.interrupted:
        click.echo("stopped early: run the same command again to resume")


COMMANDS = [train]
