"""``treelab analyse``: search one position and report each move's statistics."""

from __future__ import annotations

import functools
import json
import sys
from contextlib import nullcontext
from typing import Any

import click

from ..games import Game
from ..store.files import is_stdout
from .options import (
    ExampleLast,
    finite,
    game_argument,
    iterations_option,
    json_option,
    library_errors,
    option,
    position_option,
    search_config,
    search_options,
    seed_option,
)


@click.command(cls=ExampleLast)
@game_argument
@position_option("moves")
@option("--db", type=click.Path(dir_okay=False), metavar="PATH", default=None, show_default="a fresh in-memory tree",
        help="Search in (and save to) this stored tree.")
@iterations_option(None)
@option("--seconds", type=finite(min=0.0, min_open=True), default=None, show_default="no time limit",
        help="Time budget instead of (or as well as) --iterations.")
@search_options
@option("--oracle", "with_oracle", is_flag=True,
        help="Add each move's perfect-play value for its player (1 win, 0 draw, -1 loss) from the game's "
             "oracle (connect4, tictactoe); an early Connect Four position can take minutes.")
@option("--trace", "trace_file", type=click.Path(dir_okay=False), metavar="FILE.jsonl", default=None,
        show_default="no trace",
        help="Record every simulation into this JSON Lines file (gzip'd when it ends in .gz): the path "
             "taken, each level's candidates with their score terms, the playout's moves, the result and what "
             "each node gained (docs/guide/tracing.md). The search then runs its Python phases.")
@seed_option
@json_option
@library_errors
def analyse(game: Game, moves: str, db: str | None, iterations: int | None, seconds: float | None, seed: int | None,
            as_json: bool, with_oracle: bool, trace_file: str | None, **options: Any) -> None:
    """Search a position and report every move's statistics.

    Without --iterations or --seconds, 1,000 simulations are run.

    \b
    Example:
      treelab analyse connect4 --moves 4453 --iterations 2000 --seed 1 --json
      treelab analyse connect4 --moves 44536 --json --oracle
      treelab analyse tictactoe --moves 15 --iterations 200 --trace trace.jsonl
    """
    from ..play.positions import analyse as run

    oracle = None
    if with_oracle:  # refused before the search (a game without an oracle writes nothing)
        from ..oracle import require_oracle

        oracle = require_oracle(game)

    writing: Any = nullcontext()
    if trace_file is not None:  # each simulation written as it is made; the file appears whole at the end
        from ..play.tracing import trace_file as tracing
        from .options import refuse_overwriting

        if db is not None:
            refuse_overwriting(trace_file, db)
        writing = tracing(trace_file)
    with writing as tracer:
        result = run(game, moves, iterations=iterations, seconds=seconds, search=search_config(options), seed=seed,
                     db=db, trace=tracer)
    if trace_file is not None and is_stdout(trace_file):  # the trace alone on standard output, the report on stderr
        click.get_current_context().call_on_close(functools.partial(setattr, sys, "stdout", sys.stdout))
        sys.stdout = sys.stderr
    if tracer is not None and not as_json:
        click.echo(f"wrote {tracer.count:,} simulations to {trace_file}")
    if as_json:
        data = result.to_dict()
        if oracle is not None:
            from ..oracle import annotate

            annotate(game, moves, data["children"], oracle)
        click.echo(json.dumps(data))
        return
    from ..play.console import duration, selected_note

    state = game.replay(moves)
    click.echo(state.board())
    click.echo(
        f"\n{game.name} after {result.moves or '(start)'}: player {result.to_move} to move, "
        f"{result.iterations:,} simulations in {duration(result.seconds)}"
    )
    verdict = f", proven {result.proven}" if result.proven else ""
    best = f"{result.best_move} ({result.best_action})" if result.best_action else result.best_move
    click.echo(f"best move {best}, value {result.value:.3f} for player {result.to_move}{verdict}")
    first = result.children[0].move if result.children else None
    if result.best_move is not None and result.best_move != first:  # the search chose by another rule
        how = "its score (--choice ucb1)" if options.get("choice") == "ucb1" else "sampling (--temperature)"
        click.echo(f"  chosen by {how}; the table is in the order of the default rule, whose move is {first}")
    click.echo("")
    actions = {ch.move: ch.action for ch in result.children if ch.action is not None}  # OpenSpiel's strings
    width = max(map(len, actions.values()), default=0)
    action_head = f" {'action':<{width}}" if width else ""
    click.echo(f"{'move':>4}{action_head} {'selected':>9} {'visits':>9} {'wins':>8} {'draws':>7} {'mean':>6} "
               f"{'ucb1':>7}  proven")
    for ch in result.children:
        ucb = "inf" if ch.ucb1 is None else f"{ch.ucb1:.3f}"
        action = f" {actions[ch.move]:<{width}}" if width else ""
        click.echo(f"{ch.move:>4}{action} {ch.nb_select:>9,} {ch.nb_visit:>9,} {ch.nb_win:>8,} {ch.nb_draw:>7,} "
                   f"{ch.mean:>6.3f} {ucb:>7}  {ch.proven or ''}")
    for line in selected_note([{"nb_select": ch.nb_select, "nb_visit": ch.nb_visit} for ch in result.children]):
        click.echo(line)
    if oracle is not None:
        from ..oracle import annotate, oracle_line

        click.echo(oracle_line(annotate(game, moves, result.to_dict()["children"], oracle)))


COMMANDS = [analyse]
