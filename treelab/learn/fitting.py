"""``treelab.fit``: a policy/value model fitted from a stored tree with scikit-learn, and its metrics.

The network is scikit-learn's :class:`~sklearn.neural_network.MLPRegressor`
(ReLU hidden layers, Adam) with one output per move (the policy shares) and
one for the value (``2 v - 1``), trained one epoch at a time with
``partial_fit`` so progress can be shown, until the training loss stops
improving. The positions are split into training and held-out sets by
position (transpositions and, after augmentation, mirror images stay on one
side); the held-out set is only measured, never trained or stopped on.

A refit (the learning loop's) is incremental: it starts from the previous model's weights
(``warm_start``) and trains on at most :attr:`FitConfig.sample` positions, the positions whose
node was made since the previous fit first (``since``, a game id) and a uniform replay sample of
the older ones for the rest, as AlphaZero trains on a window of recent games while its network
carries what it learned before (Silver et al. 2017). Only the sampled positions are built into
examples, so a refit's cost stays flat while the database grows.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import BudgetError, FitError, require_extra
from ..games import Game, find_game
from ..store.files import check_output
from ..store.rows import read_fit_rows
from ..store.schema import DbPath, display
from .dataset import Dataset, augment, build_dataset, candidates
from .model import Model, load_model

__all__ = ["FitConfig", "FitProgress", "fit", "measure", "reference_pick", "require_learning"]

FitProgress = Callable[[int, int, float], None]
"""``progress(epoch, max_epochs, training_loss)`` after each epoch."""

BATCH = 512
"""Examples per Adam step."""
LEARNING_RATE = 2e-3
"""Adam's step size unless :attr:`FitConfig.learning_rate` says otherwise (scikit-learn's default is 1e-3)."""
MIN_EXAMPLES = 8
"""Fewer positions than this cannot make a model worth its file."""


def require_learning() -> None:
    """Refuse, in one line naming the extra to install, when scikit-learn (the ``learn`` extra) is missing.

    Fitting needs it; a fitted model's inference (:mod:`treelab.learn.model`) is plain numpy and does not.

    Raises:
        MissingExtraError: scikit-learn is not installed.
    """
    require_extra("sklearn.neural_network", "learn", "fitting a model (treelab fit, the learning loop)", "scikit-learn")


@dataclass(frozen=True)
class FitConfig:
    """What a fit takes from the tree and how long it trains (``treelab fit``'s options)."""

    min_visits: int = 20
    """Positions with fewer visits are left out (their statistics are noise)."""
    max_depth: int | None = None
    """Positions deeper than this are left out (None: any depth)."""
    hidden: tuple[int, ...] = (128, 64)
    """The sizes of the hidden layers."""
    epochs: int = 200
    """At most this many passes over the training examples."""
    patience: int = 10
    """Stop after this many epochs without the training loss improving by 0.1%."""
    heldout: float = 0.1
    """The share of positions kept out of training, to measure the model on."""
    seed: int = 0
    """The split's and the network's random seed."""
    learning_rate: float = LEARNING_RATE
    """Adam's step size (Kingma & Ba 2015); a refit's Adam starts afresh at it. The learning loop lowers it as
    its games grow (:func:`treelab.play.learning.replay_plan`)."""
    sample: int | None = None
    """At most this many positions are built and trained on, with the held-out share on top (None: all of
    them); the positions made since the previous fit first, the rest a uniform sample of the others."""
    outcome: float = 0.0
    """The share of the logged games' outcomes in the value target, at the positions they passed through
    (0: the node's mean alone; 0.5: their average, "z + q"; see :mod:`treelab.learn.dataset`)."""
    root_value: float = 0.0
    """The share of the logged searches' values in the value target, at the positions a logged game searched
    from (``games.root_values``; 0: the node's mean alone; see :mod:`treelab.learn.dataset`). Measured in a
    1,000-game learning loop (``docs/notes/learning-loop.md``, session 11): on 300 decided searched positions
    the logged values had the right sign in 71%, the stored means in 80% (a searched position's mean also
    holds the searches made later on the line the game played: hindsight), and the loop learning from them
    was no better (value sign 80.9% against 81.8%), so 0 is the default."""
    min_selections: int = 0
    """Learn only from positions whose children were selected at least this often in all: the positions a
    search was made from, as AlphaZero learns from the positions its games searched (Silver et al. 2017).
    A position only passed through holds a few dozen visits of searches aimed elsewhere, and its mean is a
    poor value target; but a learning loop that kept only the searched positions was no better in play or
    against perfect play (``docs/notes/model.md``), so 0 (every position) is the default."""

    def __post_init__(self) -> None:
        _check(self.min_visits, self.max_depth, self.hidden, self.epochs, self.patience, self.heldout)
        if self.sample is not None and (isinstance(self.sample, bool) or not isinstance(self.sample, int)
                                        or self.sample < MIN_EXAMPLES):
            raise BudgetError(f"sample {self.sample!r} must be a whole number >= {MIN_EXAMPLES}, or None for all")
        if isinstance(self.min_selections, bool) or not isinstance(self.min_selections, int) or self.min_selections < 0:
            raise BudgetError(f"min_selections {self.min_selections!r} must be a whole number >= 0 (0: every position)")
        rate = self.learning_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < 1:
            raise BudgetError(f"learning_rate {rate!r} must be a number between 0 and 1 (Adam's step size; "
                              f"the default is {LEARNING_RATE})")
        for name, share in (("outcome", self.outcome), ("root_value", self.root_value)):
            if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
                raise BudgetError(f"{name} {share!r} must be a share between 0 and 1 "
                                  "(0: the node's mean alone; 0.5: it and the logged figure averaged)")


def fit(
    db: DbPath,
    out: str | os.PathLike[str] | None,
    *,
    fitting: FitConfig | None = None,
    game: str | Game | None = None,
    progress: FitProgress | None = None,
    warm_start: Model | None = None,
    since: int | None = None,
    on_snapshot: Callable[[], None] | None = None,
    **options: Any,
) -> Model:
    """Fit a policy/value model on the tree in ``db`` and save it to ``out`` (None: keep it in memory).

    Args:
        db: the tree's database (only read).
        out: the model file to write, replaced atomically; an existing file must be a model of the same game.
        fitting: what to fit on and how long (:class:`FitConfig`; the name :func:`treelab.learning_loop`
            and the command line give it too; the old keyword ``config`` is read with a
            :class:`DeprecationWarning`).
        game: if given, ``db`` must hold this game.
        progress: called after each epoch (the command line's progress bar).
        warm_start: start from this model's weights (a model of the same game and layers; else from random ones).
        since: with :attr:`FitConfig.sample`, the positions whose node was made after this game id come first.
        on_snapshot: called once the read of ``db`` holds its snapshot (one read transaction): the model learns
            from the file as it was then, whatever is written to it afterwards.
        options: fields of ``fitting`` as keywords (``min_visits=50, hidden=(64, 32)``), replacing them.

    Raises:
        StoreError, GameMismatchError: ``db`` cannot be read, or holds another game than ``game``.
        NoEncodingError: the game has no input encoding.
        ModelFileError, ModelMismatchError: ``out`` exists and is not a model of this game.
        FitError: too few positions with ``min_visits`` visits.
        BudgetError: a setting out of range.
        TypeError: an option that is not a field of :class:`FitConfig`.
        MissingExtraError: scikit-learn (the ``learn`` extra) is not installed.
    """
    require_learning()  # before any work
    if "config" in options:  # the old name of ``fitting``
        old = options.pop("config")
        warnings.warn("fit(config=...) is now fit(fitting=...)", DeprecationWarning, stacklevel=2)
        if fitting is not None and old is not None and old != fitting:
            raise TypeError("config= and fitting= name one value: give fitting= only")
        fitting = fitting if fitting is not None else old
    cfg = replace(fitting or FitConfig(), **options) if options else (fitting or FitConfig())
    min_visits, max_depth, hidden, epochs, patience, heldout, seed = (
        cfg.min_visits, cfg.max_depth, tuple(cfg.hidden), cfg.epochs, cfg.patience, cfg.heldout, cfg.seed)
    started = time.perf_counter()
    wanted = None if game is None else find_game(game).name
    target = None if out is None else check_output(out)  # a FIFO or device: refused now, never opened
    kept = target is not None and target.exists()
    if kept and out is not None:
        load_model(out, wanted)  # an old model of another game or a foreign file: refuse before any work
    rng = np.random.default_rng(seed)
    chose = cfg.min_selections
    sampled: list[Any] = []  # (pool, picked) of a sampled read

    def pick(found: list[tuple[int, int | None]]) -> list[int]:
        assert cfg.sample is not None
        chosen = _pick(found, cfg.sample, heldout, since, rng)
        sampled.extend((found, chosen))
        return chosen[0] + chosen[1]

    partial = _reads_sample_only(cfg)
    rows = read_fit_rows(db, min_visits=min_visits, max_depth=max_depth, game=wanted,
                         pick=pick if partial else None, on_snapshot=on_snapshot)
    rules = find_game(rows.game)
    if kept and out is not None:
        load_model(out, rules)
    if partial:
        pool, picked = sampled
    else:
        pool = candidates(rows, min_visits=min_visits, max_depth=max_depth, min_selections=chose)
        picked = _pick(pool, cfg.sample, heldout, since, rng) if cfg.sample is not None else None
    only = set(picked[0]) | set(picked[1]) if picked is not None else {nid for nid, _ in pool} if chose else None
    data = build_dataset(rules, rows, min_visits=min_visits, max_depth=max_depth, only=only, outcome=cfg.outcome,
                         root_value=cfg.root_value)
    if len(data) < MIN_EXAMPLES:
        raise FitError(
            f"{display(db)!r} has {len(data)} positions with at least {min_visits} visits"
            + (f" and {chose} selections" if chose else "") + f" (need {MIN_EXAMPLES}): "
            + ("lower --min-visits or --min-selections" if chose else "lower --min-visits")
            + ", or train the tree longer"
        )
    if picked is None:
        groups = np.unique(data.groups)
        held = rng.permutation(groups)[: max(1, round(len(groups) * heldout))] if heldout > 0 else groups[:0]
        held_mask = np.isin(data.groups, held)
        train_mask = ~held_mask
    else:  # a transposition of a held-out position is left out of training too
        held_mask = np.isin(data.nodes, picked[1])
        train_mask = ~held_mask & ~np.isin(data.groups, np.unique(data.groups[held_mask]))
    train, test = data.take(np.flatnonzero(train_mask)), data.take(np.flatnonzero(held_mask))
    train_aug = augment(train, rules)
    start = warm_start if warm_start is not None and _fits(warm_start, rules, hidden) else None
    regressor = _train(train_aug, hidden, epochs, patience, seed, progress, start, cfg.learning_rate)
    model = Model(
        rules.name, str(rules.encoding), tuple(rules.feature_shape), rules.first_move, rules.num_moves,
        tuple(np.asarray(w, dtype=np.float32) for w in regressor.coefs_),
        tuple(np.asarray(b, dtype=np.float32) for b in regressor.intercepts_),
    )
    info: dict[str, Any] = {
        "source_db": str(Path(db).resolve()), "source_nodes": rows.nodes, "source_simulations": rows.simulations,
        "positions": len(data), "examples": len(train_aug), "heldout_positions": len(test),
        "candidates": len(pool), "sample": cfg.sample, "new_positions": None if picked is None else picked[2],
        "warm_start": None if start is None else start.info.get("version", start.path or True), "since": since,
        "proven_positions": data.proven, "policy_from_selections": data.from_selections,
        "symmetries": [s.name for s in rules.symmetries], "min_visits": min_visits, "min_selections": chose,
        "max_depth": max_depth,
        "outcome": cfg.outcome, "root_value": cfg.root_value,
        "hidden": list(hidden), "epochs": regressor.n_iter_, "learning_rate": cfg.learning_rate, "seed": seed,
        "treelab_version": _version(), "library": f"scikit-learn {_sklearn_version()}",
        "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "metrics": {"train": measure(model, train), "heldout": measure(model, test) if len(test) else None},
    }
    info["fit_seconds"] = round(time.perf_counter() - started, 3)
    model = Model(model.game, model.encoding, model.feature_shape, model.first_move, model.num_moves,
                  model.weights, model.biases, info)
    return model.save(out) if out is not None else model


def _reads_sample_only(cfg: FitConfig) -> bool:
    """Whether a fit reads only the positions it samples (with their children and ancestors) instead of the whole
    well-visited tree: a sampled fit, unless ``min_selections`` needs every row's selection sums. The logged games'
    outcomes and values (``outcome``, ``root_value``) need only the games' paths down to the sampled positions,
    which their ancestors give (until session 19 they forced the whole read: one refit of a 24,000-game loop file
    with ``outcome=0.5`` took 29-30 s that way, 19-22 s now, 18 s without the outcome)."""
    return cfg.sample is not None and not cfg.min_selections


def _check(min_visits: int, max_depth: int | None, hidden: tuple[int, ...], epochs: int, patience: int,
           heldout: float) -> None:
    if isinstance(min_visits, bool) or not isinstance(min_visits, int) or min_visits < 1:
        raise BudgetError(f"min_visits {min_visits!r} must be a whole number >= 1")
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0):
        raise BudgetError(f"max_depth {max_depth!r} must be a whole number >= 0, or None for any depth")
    if not hidden or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in hidden):
        raise BudgetError(f"hidden layers {hidden!r} must be one or more whole numbers >= 1, e.g. (128, 64)")
    if epochs < 1 or patience < 1:
        raise BudgetError(f"epochs {epochs!r} and patience {patience!r} must be at least 1")
    if not 0.0 <= heldout < 1.0:
        raise BudgetError(f"heldout {heldout!r} must be in [0, 1): the share of positions kept out of training")


def _pick(pool: list[tuple[int, int | None]], sample: int, heldout: float, since: int | None,
          rng: np.random.Generator) -> tuple[list[int], list[int], int]:
    """``(training node ids, held-out node ids, new positions trained)`` of a sampled fit (:attr:`FitConfig.sample`).

    The held-out positions are a uniform sample (``heldout`` of the sample's size); of the others, the
    nodes made after game ``since`` fill at least half the sample (all of it if there are enough),
    and a uniform sample of the older ones the rest.
    """
    order = rng.permutation(len(pool))
    held_count = min(len(pool) // 2, round(min(sample, len(pool)) * heldout)) if heldout > 0 else 0
    ids = np.fromiter((nid for nid, _ in pool), dtype=np.int64, count=len(pool))[order]
    if since is None:
        made_new = np.zeros(len(pool), dtype=bool)
    else:  # made after game ``since`` (a node of no logged game counts as old)
        made_new = np.fromiter((made is not None and made > since for _, made in pool), dtype=bool,
                               count=len(pool))[order]
    held = ids[:held_count].tolist()
    new, old = ids[held_count:][made_new[held_count:]], ids[held_count:][~made_new[held_count:]]
    new_count = min(len(new), max(sample // 2, sample - len(old)))
    return new[:new_count].tolist() + old[: sample - new_count].tolist(), held, new_count


def reference_pick(pool: list[tuple[int, int | None]], sample: int, heldout: float, since: int | None,
                   rng: np.random.Generator) -> tuple[list[int], list[int], int]:
    """:func:`_pick`'s answer one candidate at a time, as first written: the reference its numpy form is held to
    (``tests/learn/test_bulk_dataset.py``) and timed against (``benchmarks/fit_examples.py``)."""
    order = rng.permutation(len(pool))
    held_count = min(len(pool) // 2, round(min(sample, len(pool)) * heldout)) if heldout > 0 else 0
    held = [pool[i][0] for i in order[:held_count]]
    rest = [pool[i] for i in order[held_count:]]
    new = [nid for nid, made in rest if since is not None and made is not None and made > since]
    old = [nid for nid, made in rest if not (since is not None and made is not None and made > since)]
    new_count = min(len(new), max(sample // 2, sample - len(old)))
    return new[:new_count] + old[: sample - new_count], held, new_count


def _fits(model: Model, game: Game, hidden: tuple[int, ...]) -> bool:
    """Whether ``model`` can start a fit of ``game`` with these hidden layers (same encoding and shape)."""
    return (model.game == game.name and model.encoding == str(game.encoding)
            and tuple(model.feature_shape) == tuple(game.feature_shape)
            and model.hidden == tuple(hidden))


def _targets(data: Dataset) -> npt.NDArray[np.float32]:
    return np.hstack([data.policy, (2.0 * data.value - 1.0)[:, None]]).astype(np.float32)


def _train(data: Dataset, hidden: tuple[int, ...], epochs: int, patience: int, seed: int,
           progress: FitProgress | None, start: Model | None = None, learning_rate: float = LEARNING_RATE) -> Any:
    from sklearn.neural_network import MLPRegressor
    from threadpoolctl import threadpool_limits

    regressor = MLPRegressor(hidden_layer_sizes=hidden, activation="relu", solver="adam", alpha=1e-4,
                             batch_size=min(BATCH, len(data)), learning_rate_init=learning_rate, random_state=seed)
    x, y = data.features, _targets(data)
    best, stale = float("inf"), 0
    with threadpool_limits(1):  # small matrices: BLAS threads only fight (measured 8x slower on a busy 2-core machine)
        for epoch in range(1, epochs + 1):
            if epoch == 1 and start is not None:  # one step builds the network; then the old weights replace it
                regressor.partial_fit(x[: regressor.batch_size], y[: regressor.batch_size])
                # in the examples' float32, as a cold fit's: float64 weights would make every product float64
                regressor.coefs_ = [np.array(w, dtype=x.dtype) for w in start.weights]
                regressor.intercepts_ = [np.array(b, dtype=x.dtype) for b in start.biases]
                del regressor._optimizer  # Adam starts afresh on the new weights
            regressor.partial_fit(x, y)
            loss = float(regressor.loss_)
            if progress is not None:
                progress(epoch, epochs, loss)
            if loss < best * 0.999:
                best, stale = loss, 0
            else:
                stale += 1
                if stale >= patience:
                    break
    regressor.n_iter_ = epoch
    return regressor


def measure(model: Model, data: Dataset) -> dict[str, Any]:
    """A model's metrics on examples: ``loss`` (half the mean squared error over all outputs, as
    scikit-learn's, without the weight penalty), ``value_mae``, ``value_sign_accuracy`` (over
    examples whose target is not a draw: the predicted value on the same side of 1/2) and
    ``policy_top1`` (the legal move with the highest output is a move with the highest target)."""
    if not len(data):
        return {"examples": 0}
    raw, value = model.forward(data.features)
    predicted = np.hstack([raw, (2.0 * value - 1.0)[:, None]])
    loss = float(((predicted - _targets(data)) ** 2).mean() / 2.0)
    decided = np.abs(data.value - 0.5) > 1e-6
    sign = float(((value[decided] > 0.5) == (data.value[decided] > 0.5)).mean()) if decided.any() else None
    masked = np.where(data.legal, raw, -np.inf)
    choice = masked.argmax(axis=1)
    chosen = data.policy[np.arange(len(data)), choice]
    top1 = float((chosen >= data.policy.max(axis=1) - 1e-6).mean())
    mae = float(np.abs(value - data.value).mean())
    return {"examples": len(data), "loss": round(loss, 6), "value_mae": round(mae, 4),
            "value_sign_accuracy": None if sign is None else round(sign, 4),
            "value_sign_examples": int(decided.sum()), "policy_top1": round(top1, 4)}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("treelab")
    except PackageNotFoundError:
        return "unknown"


def _sklearn_version() -> str:
    import sklearn

    return str(sklearn.__version__)

