"""``treelab converge``: how one search settles on its move, UCT, PUCT and the solver side by side."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..games import Game
from .options import ExampleLast, game_argument, json_option, library_errors, option, position_option, seed_option

_SUFFIXES = (".png", ".svg", ".pdf")


def _out(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and Path(value).suffix.lower() not in _SUFFIXES:
        raise click.BadParameter(f"{value!r} has no known suffix: use one of {', '.join(_SUFFIXES)} (e.g. -o conv.png)")
    return value


def _searches(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    from ..analysis.convergence import CONTENDERS

    names = tuple(part.strip() for part in value.split(",") if part.strip())
    for name in names:
        if name not in CONTENDERS:
            raise click.BadParameter(f"unknown search {name!r}: use one or more of {', '.join(CONTENDERS)}")
    if not names:
        raise click.BadParameter(f"{value!r} names no search: use one or more of uct, puct, solver")
    return names


@click.command(cls=ExampleLast)
@game_argument
@position_option("moves")
@option("--iterations", type=click.IntRange(min=1, max=1_000_000), default=2000, show_default=True,
        help="Simulations of each search.")
@option("--searches", type=str, default="uct,puct,solver", callback=_searches, show_default=True,
        help="The searches to compare, comma-separated: uct, puct, solver (UCT with MCTS-Solver).")
@option("-o", "--out", type=click.Path(dir_okay=False), default=None, callback=_out, show_default="no plot",
        help="Plot each root move's visit share and mean against the simulation (.png, .svg, .pdf).")
@option("--trace", "traces", multiple=True, type=click.Path(dir_okay=False), metavar="FILE.jsonl",
        show_default="none: run the searches",
        help="Draw these recorded traces (analyse --trace) of the position instead of running searches; "
             "repeatable.")
@seed_option
@json_option
@library_errors
def converge(game: Game, moves: str, iterations: int, searches: tuple[str, ...], out: str | None, seed: int | None,
             as_json: bool, traces: tuple[str, ...]) -> None:
    """Watch searches of one position converge: each root move's share and mean after every simulation.

    Each search runs on a fresh tree from the same seed, traced; the best move
    after each simulation is a proven win, else the most visited. "found at"
    is the simulation from which the best move stayed the final one.

    \b
    Example:
      treelab converge connect4 --moves 44536 --iterations 2000 --seed 1 -o conv.png
      treelab converge tictactoe --moves 15 --trace trace.jsonl -o conv.png
    """
    from ..analysis.convergence import converge as run
    from ..analysis.convergence import plot_convergence

    if traces:
        from ..play.tracing import read_trace

        recorded = [read_trace(path, game=game, moves=moves) for path in traces]  # each checked before drawing
        runs = [t.convergence() for t in recorded]
    else:
        runs = run(game, moves, iterations=iterations, searches=searches, seed=1 if seed is None else seed)
    if out is not None:
        plot_convergence(runs, out)
    if as_json:
        click.echo(json.dumps({"game": game.name, "moves": runs[0].position, "runs": [r.to_dict() for r in runs]}))
        return
    click.echo(f"{game.name} at {runs[0].position or '(start)'}:")
    for r in runs:
        proof = f", proven {r.proven[r.final]}" if r.final in r.proven else ""
        found = f"from simulation {r.found_at:,}" if r.found_at else "never"
        share = float(r.visits[r.final][-1]) / r.simulations if r.final in r.visits else 0.0
        click.echo(f"  {r.label:<7} best {r.final} {found} (of {r.simulations:,}; share {share:.2f}{proof})")
    if out is not None:
        click.echo(f"wrote {out}")


COMMANDS = [converge]
