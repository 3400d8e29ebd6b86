"""The ``arena`` command: a match between two players, colours alternating."""

from __future__ import annotations

import json

import click

from ..games import Game
from .options import game_argument, json_option, library_errors, option, seed_option

_SPEC_HELP = (
    "Player spec: random, heuristic, mc:playouts=N, uct:iterations=N[,c=C][,db=PATH][,playout=decisive]"
    "[,statistics=graph], "
    "solver:iterations=N, puct:iterations=N[,evaluator=heuristic|rollout][,alpha=auto][,fraction=0.25], "
    "openspiel:simulations=N[,c=C]. A db=PATH player reads the stored tree (every game starts from it "
    "again; the file is never written) unless learn=1 is given: then it saves what it learns after every move."
)


def _elo(value: float | None, *, low: bool) -> str:
    if value is None:
        return "-inf" if low else "+inf"
    return f"{value:+.0f}"


_EXAMPLE = """\b
Example:
  treelab arena connect4 --a uct:iterations=400 --b heuristic --games 20 --seed 1
  treelab arena connect4 --a solver:iterations=1000,c=0.7071,playout=decisive \\
      --b openspiel:simulations=1000 --games 64 --json
"""


@click.command(epilog=_EXAMPLE)
@game_argument
@option("--a", "spec_a", required=True, metavar="SPEC", help=_SPEC_HELP)
@option("--b", "spec_b", required=True, metavar="SPEC", help="The other player (same forms as --a).")
@option("--games", type=click.IntRange(min=1), default=10,
        help="Games to play; A moves first in games 1, 3, 5, ...")
@seed_option
@json_option
@option("--quiet", "-q", is_flag=True, help="No progress bar.")
@library_errors
def arena(game: Game, spec_a: str, spec_b: str, games: int, seed: int | None, as_json: bool, quiet: bool) -> None:
    """Play a match between two players with colours alternating.

    Prints the score of A with a 95% confidence interval (Wilson) and the
    Elo difference it implies. The same --seed replays the match exactly.
    A player with db=PATH searches a trained tree, which is never saved back.
    """
    from ..play.arena import play_match

    result = play_match(game, spec_a, spec_b, games=games, seed=seed, progress=not quiet)
    if as_json:
        click.echo(json.dumps(result.to_dict()))
        return
    low, high = result.ci95
    elo_low, elo_high = result.elo_ci95
    first, second = result.side(1), result.side(2)
    click.echo(f"{result.game}: A = {result.a}, B = {result.b}; {result.games} games, colours alternating, "
               f"seed {result.seed}")
    click.echo(f"A wins {result.a_wins}, B wins {result.b_wins}, draws {result.draws}")
    click.echo(f"A scores {result.a_score:.3f} (95% CI {low:.3f}-{high:.3f}), Elo difference "
               f"{_elo(result.elo, low=False)} (95% CI {_elo(elo_low, low=True)} to {_elo(elo_high, low=False)})")
    click.echo(f"A moving first: {first['wins']} won, {first['draws']} drawn, {first['losses']} lost; "
               f"moving second: {second['wins']} won, {second['draws']} drawn, {second['losses']} lost")
    click.echo(f"{result.seconds:.1f}s (thinking: A {result.a_seconds:.1f}s, B {result.b_seconds:.1f}s)")


COMMANDS = [arena]
