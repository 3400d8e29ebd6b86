"""``treelab fit``: a policy/value model fitted from a stored tree."""

from __future__ import annotations

import functools
import json
import sys
from typing import Any

import click

from .options import ExampleLast, database, finite, json_option, library_errors, option


def _layers(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a list of layer sizes, e.g. 128,64") from None
    if not sizes or min(sizes) < 1:
        raise click.BadParameter(f"{text!r} is not a list of layer sizes >= 1, e.g. 128,64")
    return sizes


@click.command(cls=ExampleLast)
@database
@option("-o", "--out", "out", type=click.Path(dir_okay=False), metavar="MODEL", required=True,
        help="The model file to write (.npz; -: standard output); an existing one must be a model of the same game "
             "(it is replaced).")
@option("--min-visits", type=click.IntRange(min=1), default=20,
        help="Learn only from positions visited at least this often.")
@option("--min-selections", type=click.IntRange(min=0), default=0, show_default="0: every position",
        help="Learn only from positions whose moves were chosen at least this often in all: the positions a search "
             "was made from.")
@option("--depth", "max_depth", type=click.IntRange(min=0), default=None, show_default="any depth",
        help="Learn only from positions at most this many moves deep.")
@option("--hidden", type=str, default="128,64", help="Hidden layer sizes, comma-separated.")
@option("--epochs", type=click.IntRange(min=1), default=200, help="At most this many passes over the examples.")
@option("--heldout", type=finite(min=0.0, max=1.0), default=0.1,
        help="Share of positions kept out of training to measure the model on.")
@option("--outcome", type=finite(min=0.0, max=1.0), default=0.0,
        help="Share of the logged games' outcomes in the value target where they passed (0.5: outcome and mean "
             "averaged, 'z + q').")
@option("--root-value", type=finite(min=0.0, max=1.0), default=0.0,
        help="Share of the logged searches' values in the value target where a game searched (0: the position's "
             "mean alone).")
@option("--learning-rate", type=finite(min=0.0, max=1.0), default=2e-3,
        help="Adam's step size.")
@option("--seed", type=int, default=0, help="Seed of the split and of the network's initial weights.")
@json_option
@library_errors
def fit(db: str, out: str, as_json: bool, **settings: Any) -> None:
    """Fit a policy/value model from the tree in DB (scikit-learn's MLPRegressor).

    The examples are the positions with at least --min-visits visits (with
    --min-selections N, only those whose moves were chosen N times: the
    positions a search was made from): the policy target is the share of
    selections of each move, the value target the position's mean (or its
    proof) for the player to move, or where a logged game searched from the
    position the value that search found (--root-value); the game's
    symmetries multiply them. Search with the model through
    'treelab analyse GAME --algorithm puct --model MODEL' or the arena spec
    'puct:iterations=200,model=MODEL'.

    \b
    Example:
      treelab fit c4.db -o c4-model.npz --min-visits 20
    """
    from ..learn.fitting import FitConfig
    from ..learn.fitting import fit as run

    fitting = FitConfig(**{**settings, "hidden": _layers(settings["hidden"])})  # the options are FitConfig's fields
    bar: Any = None

    def progress(epoch: int, total: int, loss: float) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label="fitting", file=sys.stderr,
                                    show_pos=True, item_show_func=lambda item: item)
            bar.__enter__()
        bar.update(1, f"loss {loss:.5f}")

    try:
        model = run(db, out, fitting=fitting, progress=progress)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    from ..store.files import is_stdout

    if as_json:
        click.echo(json.dumps(model.meta()), err=is_stdout(out))
        return
    echo = functools.partial(click.echo, err=is_stdout(out))  # the model alone on standard output
    info = model.info
    held = info["metrics"]["heldout"] or {}
    echo(f"fitted {out}: {model.game}, {info['positions']:,} positions ({info['examples']:,} training examples "
               f"with symmetries), {info['epochs']} epochs in {info['fit_seconds']:.1f}s")
    for name, metrics in (("train", info["metrics"]["train"]), ("held-out", held)):
        if metrics.get("examples"):
            echo(f"  {name:<8}  loss {metrics['loss']:.5f}  value-sign accuracy "
                       f"{_share(metrics['value_sign_accuracy'])}  policy top-1 {_share(metrics['policy_top1'])}  "
                       f"({metrics['examples']:,} positions)")


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


COMMANDS = [fit]
