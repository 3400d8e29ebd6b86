"""Commands that grow or use a tree: ``train``, ``analyse``, ``play``, ``info``."""

from __future__ import annotations

import json

import click

from ..games import Game
from ..mcts.policies import PLAYOUTS
from .options import (
    ExampleLast,
    c_option,
    database,
    finite,
    game_argument,
    json_option,
    library_errors,
    option,
    position_option,
    seed_option,
)


def _iterations(default: int | None):  # type: ignore[no-untyped-def]
    return option(
        "--iterations", type=click.IntRange(min=1), default=default,
        show_default=True if default is not None else "1000, or as many as --seconds allows",
        help="Simulations per search.",
    )


def _playout_option(f):  # type: ignore[no-untyped-def]
    return option("--playout", type=click.Choice(sorted(PLAYOUTS)), default="random",
                        help="Playout policy: uniform random, or take wins / block losses first.")(f)


def _solver_option(f):  # type: ignore[no-untyped-def]
    return option("--solver", is_flag=True, help="MCTS-Solver: prove wins, draws and losses.")(f)


def _search_options(f):  # type: ignore[no-untyped-def]
    """The options every searching command shares: algorithm, c, solver, playout, evaluator,
    temperature and move choice."""
    options = [
        option("--algorithm", type=click.Choice(["uct", "puct"]), default="uct",
               help="UCT (UCB1) or AlphaZero-style PUCT."),
        option("--c", "c", type=finite(min=0.0), default=None, show_default="sqrt(2) for uct, 1.25 for puct",
               help="Exploration constant: UCB1's c or PUCT's c_puct."),
        _solver_option,
        _playout_option,
        option("--evaluator", type=click.Choice(["rollout", "heuristic"]), default="rollout",
               help="PUCT's priors and value: uniform + a random rollout, or Connect Four threats/centrality."),
        option("--temperature", type=finite(min=0.0), default=None, show_default="0; train's self-play: 1",
               help="Pick moves by sampling selections^(1/T); 0: the most selected (train: 1 over the opening "
                    "in self-play, see --temperature-moves; otherwise 0)."),
        option("--choice", "how", type=click.Choice(["visits", "ucb1"]), default="visits",
               help="Move to play: the most selected (simulations that chose it, not pass-through visits), "
                    "or the best UCB1 score (the original rule)."),
    ]
    for decorate in reversed(options):
        f = decorate(f)
    return f


@click.command(cls=ExampleLast)
@game_argument
@option("--db", required=True, type=click.Path(dir_okay=False), metavar="PATH",
        help="Tree database (created if missing).")
@option("--games", type=click.IntRange(min=0), default=100, help="Games to play.")
@_iterations(400)
@option("--opponent", type=click.Choice(["self", "random", "heuristic"]), default="self",
        help="Who the tree plays (colours alternate).")
@option("--pool", "pool", multiple=True, metavar="SPEC[,SPEC...]", show_default="no pool",
        help="Draw each game's opponent (seeded) from self, heuristic, random, db=PATH (an earlier tree of "
             "this game, read only, searching with --iterations); replaces --opponent.")
@_search_options
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
def train(game: Game, db: str, games: int, iterations: int, opponent: str, pool: tuple[str, ...], algorithm: str,
          c: float | None, solver: bool, playout: str, evaluator: str, temperature: float | None, how: str,
          temperature_moves: int | None, noise: float | None, alpha: float | None, seed: int | None,
          quiet: bool, workers: int | None, ray: str | None) -> None:
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
    from ..mcts.config import SearchConfig
    from ..play.training import TEMPERATURE_MOVES
    from ..play.training import train as run

    config = SearchConfig.of(algorithm=algorithm, c=c, solver=solver, playout=playout, evaluator=evaluator,
                             choice=how)
    moves = TEMPERATURE_MOVES if temperature_moves is None else None if temperature_moves == -1 else temperature_moves
    summary = run(game, db, games=games, iterations=iterations, opponent=opponent, pool=pool or None, seed=seed,
                  config=config, temperature=temperature, temperature_moves=moves, noise=noise, alpha=alpha,
                  progress=not quiet, workers=workers, ray=None if ray is None else True if ray == "local" else ray)
    click.echo(summary.describe())
    if summary.interrupted:
        click.echo("stopped early: run the same command again to resume")


@click.command(cls=ExampleLast)
@game_argument
@position_option("moves")
@option("--db", type=click.Path(dir_okay=False), metavar="PATH", default=None, show_default="a fresh in-memory tree",
        help="Search in (and save to) this stored tree.")
@_iterations(None)
@option("--seconds", type=finite(min=0.0, min_open=True), default=None, show_default="no time limit",
        help="Time budget instead of (or as well as) --iterations.")
@_search_options
@seed_option
@json_option
@click.option("--oracle", "with_oracle", is_flag=True,
              help="Add each move's perfect-play value for its player (1 win, 0 draw, -1 loss) from the game's "
                   "oracle (connect4, tictactoe); an early Connect Four position can take minutes.")
@library_errors
def analyse(game: Game, moves: str, db: str | None, iterations: int | None, seconds: float | None,
            algorithm: str, solver: bool, playout: str, evaluator: str, temperature: float | None, how: str,
            c: float | None, seed: int | None, as_json: bool, with_oracle: bool = False) -> None:
    """Search a position and report every move's statistics.

    Without --iterations or --seconds, 1,000 simulations are run.

    \b
    Example:
      treelab analyse connect4 --moves 4453 --iterations 2000 --seed 1 --json
      treelab analyse connect4 --moves 44536 --json --oracle
    """
    from ..mcts.config import SearchConfig
    from ..play.positions import analyse as run

    config = SearchConfig.of(algorithm=algorithm, c=c, solver=solver, playout=playout, evaluator=evaluator,
                             temperature=temperature, choice=how)
    oracle = None
    if with_oracle:  # refused before the search (a game without an oracle writes nothing)
        from ..oracle import require_oracle

        oracle = require_oracle(game)
    result = run(game, moves, iterations=iterations, seconds=seconds, config=config, seed=seed, db=db)
    if as_json:
        data = result.to_dict()
        if oracle is not None:
            from ..oracle import annotate

            annotate(game, moves, data["children"], oracle)
        click.echo(json.dumps(data))
        return
    state = game.replay(moves)
    click.echo(state.board())
    click.echo(
        f"\n{game.name} after {result.moves or '(start)'}: player {result.to_move} to move, "
        f"{result.iterations:,} simulations in {result.seconds:.2f}s"
    )
    verdict = f", proven {result.proven}" if result.proven else ""
    best = f"{result.best_move} ({result.best_action})" if result.best_action else result.best_move
    click.echo(f"best move {best}, value {result.value:.3f} for player {result.to_move}{verdict}\n")
    actions = {ch.move: ch.action for ch in result.children if ch.action is not None}  # OpenSpiel's strings
    width = max(map(len, actions.values()), default=0)
    click.echo(f"{'move':>4} {'action':<{width}} {'visits':>9} {'wins':>8} {'draws':>7} {'mean':>6} {'ucb1':>7}  proven"
               if width else f"{'move':>4} {'visits':>9} {'wins':>8} {'draws':>7} {'mean':>6} {'ucb1':>7}  proven")
    for ch in result.children:
        ucb = "inf" if ch.ucb1 is None else f"{ch.ucb1:.3f}"
        action = f" {actions[ch.move]:<{width}}" if width else ""
        click.echo(f"{ch.move:>4}{action} {ch.nb_visit:>9,} {ch.nb_win:>8,} {ch.nb_draw:>7,} {ch.mean:>6.3f} "
                   f"{ucb:>7}  {ch.proven or ''}")
    if oracle is not None:
        from ..oracle import annotate, oracle_line

        click.echo(oracle_line(annotate(game, moves, result.to_dict()["children"], oracle)))


@click.command(cls=ExampleLast)
@game_argument
@option("--db", type=click.Path(dir_okay=False), metavar="PATH", default=None, show_default="a fresh in-memory tree",
        help="Play with (and grow) this stored tree.")
@_iterations(2000)
@option("--human", type=click.Choice(["1", "2"]), default="1",
        help="Which side you play (1 moves first).")
@_solver_option
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


COMMANDS = [train, analyse, play, info, compact]
