"""``treelab train``: grow a tree over many games (one process, worker processes, or Ray)."""

from __future__ import annotations

from typing import Any

import click

from ..games import Game
from .options import (
    ExampleLast,
    finite,
    game_argument,
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
@option("--games", type=click.IntRange(min=0), default=None, show_default="100, or no limit with --minutes",
        help="Games to play.")
@option("--minutes", type=finite(min=0.0, min_open=True), default=None, show_default="no limit",
        help="Stop cleanly after this much wall time (the game under way is finished and saved); with --games, "
             "whichever comes first. Running the same command again resumes.")
@option("--iterations", type=click.IntRange(min=1), default=None,
        show_default="400; 200 in the learning loop (--refit-every)", help="Simulations per search.")
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
        help="Play in N processes at once, one writer merging their games (at most --games); where that would "
             "be slower (UCT, N = 1, one core) trains in one process and says so.")
@option("--refit-every", "refit_every", type=click.IntRange(min=1), default=None, metavar="K",
        show_default="no refits",
        help="The learning loop: fit --model again after every K games logged (the first fit creates it; later "
             "ones start from the previous model); the games search with PUCT and the latest model once there is "
             "one, before it with PUCT and the game's heuristic.")
@option("--searches", "searches", type=click.Choice(["tree", "fresh"]), default=None,
        show_default="tree; fresh in the learning loop",
        help="What each move's search runs on: tree: the stored tree itself (every simulation grows it); fresh: a "
             "tree of its own (AlphaZero's self-play), whose top (the position, its path, its moves' counts and "
             "values) is then added to the stored tree.")
@option("--refits", "refits", type=click.Choice(["beside", "between"]), default="beside", show_default=True,
        help="With --refit-every: beside: each refit after the first runs in a process of its own while the next K "
             "games play on with the model before it (the games wait only for what it has not finished by then); "
             "between: the games wait for every refit.")
@option("--min-visits", "min_visits", type=click.IntRange(min=1), default=None, show_default="20",
        help="With --refit-every: learn only from positions visited at least this often.")
@option("--min-selections", "min_selections", type=click.IntRange(min=0), default=None,
        show_default="0: every position",
        help="With --refit-every: learn only from positions whose moves were chosen at least this often in all "
             "(the positions the games searched from).")
@option("--outcome", "outcome", type=finite(min=0.0, max=1.0), default=None, show_default="0.5",
        help="With --refit-every: the share of the logged games' outcomes in the value target at the positions they "
             "passed (0.5: outcome and mean averaged, 'z + q'); 0: the position's mean alone.")
@option("--learning-rate", "learning_rate", type=finite(min=0.0, max=1.0), default=None, show_default="0.002",
        help="With --refit-every: Adam's step size in the refits, lowered as the inverse square root of the games "
             "logged once the replay window is full (5,000 games).")
@option("--root-value", "root_value", type=finite(min=0.0, max=1.0), default=None, show_default="0",
        help="With --refit-every: the share of the value each game's search found at a position (logged per move "
             "in games.root_values) in the value target there; 0: the position's mean alone.")
@option("--ray", "ray", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]", show_default="no Ray",
        help="Play on Ray: alone, a local Ray; with HOST:PORT, that cluster (pip install 'treelab[ray]').")
@library_errors
def train(game: Game, db: str, games: int | None, minutes: float | None, quiet: bool, **options: Any) -> None:
    """Grow the tree in DB by playing whole games; re-running resumes.

    The tree is saved after every game in one transaction (by a writer process
    while the next game is played); Ctrl-C saves and stops cleanly. With
    --workers N (or --ray) games are played in parallel on
    snapshots of the tree and one writer adds what each game learned (locally
    only where that pays: a PUCT search, several cores). Self-play
    explores by default: the first moves of every game are sampled from the
    simulations that selected them (temperature 1), so games differ; the
    settings are logged per game (games.exploration).

    The learning loop (--model M --refit-every K): every K games the model
    M is fitted again from the database (created by the first fit; later fits
    start from the previous model and train on the newest positions and a
    replay sample), and the games after it search with PUCT guided by it;
    before the first model they search with PUCT and the game's heuristic
    (where it has one; --algorithm/--evaluator choose otherwise). Each move
    of the loop's games is searched on a fresh tree of its own, whose top is
    added to the stored tree (--searches tree: on the stored tree itself).
    Which model version played each game is logged. Re-running resumes tree
    and model.
    Each refit after the first runs beside the next K games (their own
    process; the games play on with the version before); --refits between
    makes the games wait for it.

    \b
    Example:
      treelab train connect4 --db c4.db --games 50 --iterations 400 --opponent heuristic --seed 1
      treelab train connect4 --db c4.db --games 200 --iterations 400 --workers 2
      treelab train connect4 --db c4.db --games 100 --pool self,heuristic,db=old.db --seed 1
      treelab train connect4 --db c4.db --games 400 --iterations 200 --model c4.npz --refit-every 100
      treelab train connect4 --db c4.db --model c4.npz --refit-every 100 --minutes 60 --seed 1
      treelab train connect4 --db c4.db --model c4.npz --refit-every 100 --games 400 --refits between
    """
    import time

    from ..play.console import UNBOUNDED
    from ..play.training import train as run
    from ..play.training.config import TEMPERATURE_MOVES, TrainingConfig

    until = time.monotonic() + 60.0 * minutes if minutes is not None else None
    if games is None:
        games = 100 if minutes is None else UNBOUNDED  # --minutes alone: as many games as the time allows
    searching = search_options_of(options)  # made into one SearchConfig by train, with its self-play defaults
    moves, ray, workers = options.pop("temperature_moves"), options.pop("ray"), options.pop("workers")
    options["temperature_moves"] = TEMPERATURE_MOVES if moves is None else None if moves == -1 else moves
    options["pool"] = options["pool"] or None
    note = ""
    if workers is not None and 1 <= workers <= games and ray is None:  # local workers: only where they pay
        from ..play.training.parallel import advice

        puct = searching.get("algorithm") == "puct" or searching.get("model") is not None
        workers, note = advice(workers, algorithm="puct" if puct else "uct")
    refit_every, model = options.pop("refit_every"), searching.pop("model")
    if options["iterations"] is None:  # the loop plays more, shorter searches: its games are its data
        from ..play.learning import LOOP_ITERATIONS

        options["iterations"] = LOOP_ITERATIONS if refit_every is not None else 400
    fitting = {name: value for name in ("min_visits", "min_selections", "outcome", "root_value", "learning_rate")
               if (value := options.pop(name)) is not None}
    training = TrainingConfig(progress=not quiet, ray=None if ray is None else True if ray == "local" else ray,
                              workers=workers, **options)
    if refit_every is None and click.get_current_context().get_parameter_source("refits") is not \
            click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--refits is for the learning loop: give --model and --refit-every too")
    if refit_every is not None or model is not None:
        _learn(game, db, games, training, searching, model, refit_every, fitting, minutes)
        if note:  # a model's run says how its workers ran too
            click.echo(f"note: {note}")
        return
    if fitting:
        flag = "--" + next(iter(fitting)).replace("_", "-")
        raise click.UsageError(f"{flag} is for the learning loop: give --model and --refit-every too")
    if searching.get("mix") is not None:
        raise click.UsageError("--mix blends a playout into a model's value: give --model too")
    summary = run(game, db, games, training=training, until=until, **searching)
    click.echo(summary.describe())
    if note:
        click.echo(f"note: {note}")
    if summary.interrupted:
        click.echo("stopped early: run the same command again to resume")


def _learn(game: Game, db: str, games: int, training: Any, searching: dict[str, Any], model: str | None,
           refit_every: int | None, fitting_options: dict[str, Any], minutes: float | None) -> None:
    """``--model`` (and ``--refit-every``): the learning loop, or self-play guided by a fixed model."""
    import time
    from dataclasses import replace
    from pathlib import Path

    from ..play.learning import learning_loop
    from ..play.training import train as run

    if model is None:
        raise click.UsageError("--refit-every K needs --model PATH: the model file the loop fits and searches with")
    if refit_every is None:
        if not Path(model).exists():
            raise click.UsageError(f"--model {model!r} does not exist: add --refit-every K to fit it from the games, "
                                   "or fit one first with treelab fit")
        until = time.monotonic() + 60.0 * minutes if minutes is not None else None
        summary = run(game, db, games, training=training, until=until,
                      **{**searching, "algorithm": "puct", "model": model})
        click.echo(summary.describe())
        if summary.interrupted:
            click.echo("stopped early: run the same command again to resume")
        return
    from ..play.learning import LOOP_FITTING

    fitting = replace(LOOP_FITTING, **fitting_options)
    context = click.get_current_context()
    for name in ("algorithm", "evaluator"):  # not given: the loop's own start (PUCT with the game's heuristic)
        if context.get_parameter_source(name) is click.core.ParameterSource.DEFAULT:
            searching.pop(name, None)
    from ..play.console import UNBOUNDED

    result = learning_loop(game, db, model, None if games >= UNBOUNDED else games, refit_every=refit_every,
                           minutes=minutes, training=training, fitting=fitting, **searching)
    for step in result.runs:
        click.echo(step.describe())
    click.echo(result.describe())
    if result.interrupted:
        click.echo("stopped early: run the same command again to resume (tree and model)")


COMMANDS = [train]
