"""``treelab play``: a human against the tree in the terminal."""

from __future__ import annotations

import click

from ..games import Game
from .options import (
    ExampleLast,
    c_option,
    game_argument,
    iterations_option,
    library_errors,
    option,
    seed_option,
    solver_option,
)


@click.command(cls=ExampleLast)
@game_argument
@option("--db", type=click.Path(dir_okay=False), metavar="PATH", default=None, show_default="a fresh in-memory tree",
        help="Play with (and grow) this stored tree.")
@iterations_option(2000)
@option("--human", type=click.Choice(["1", "2"]), default="1",
        help="Which side you play (1 moves first).")
@solver_option
@c_option
@seed_option
@library_errors
def play(game: Game, db: str | None, iterations: int, human: str, solver: bool, c: float,
         seed: int | None) -> None:
    """Play against the AI in the terminal.

    Type a move label (a column 1-7, or a cell 1-9) and press Enter; q quits.

    \b
    Example:
      treelab play tictactoe --iterations 3000 --human 2
    """
    from ..play.terminal import play_in_terminal

    play_in_terminal(game, db=db, iterations=iterations, human=int(human), solver=solver, c=c, seed=seed)


COMMANDS = [play]
