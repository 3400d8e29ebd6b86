"""A refit's examples built over all rows at once against one node at a time: the same tree, side by side.

On one database, as the learning loop's refit after the games it holds reads it (``replay_plan``: the replay
window, the positions of the last ``--new`` games first), it times, in turn, each ``--runs`` times:

- the examples alone, from the same rows: :func:`treelab.learn.dataset.reference_dataset` (one node at a
  time, the code before the bulk path) against :func:`treelab.learn.dataset.build_dataset` (numpy over all
  rows, :mod:`treelab.learn.bulk`), checked equal array for array; examples built a second;
- the refit without its training (``fit`` with the network's epochs replaced by nothing): reading the rows,
  choosing the sample, the examples, the split, the symmetries and the metrics, the old way (the reference
  examples and the sample chosen one candidate at a time) and the new;
- with ``--train``, the whole refit, both ways, checked to learn the same weights.

It prints the medians and the ratios old / new (above 1: the new is faster), of the wall time and of the
process's CPU time.

    .venv/bin/python benchmarks/fit_examples.py c4.db --runs 5 --train
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import numpy as np

import treelab
from treelab.learn import dataset, fitting
from treelab.learn.dataset import build_dataset, reference_dataset
from treelab.learn.fitting import FitConfig, fit
from treelab.learn.model import Model, load_model
from treelab.play.learning import LOOP_SAMPLE, replay_plan
from treelab.store.rows import read_fit_rows

ARRAYS = ("features", "policy", "value", "legal", "groups", "visits", "nodes")



@contextmanager
def old_code() -> Iterator[None]:
    """``fit`` as before the bulk path: reference examples, the sample chosen one candidate at a time."""
    saved = dataset.bulk_dataset, fitting._pick
    dataset.bulk_dataset, fitting._pick = (lambda *args, **kwargs: None), fitting.reference_pick  # type: ignore[assignment]
    try:
        yield
    finally:
        dataset.bulk_dataset, fitting._pick = saved


@contextmanager
def no_training() -> Iterator[None]:
    """``fit`` with the network's training replaced by the starting weights (zeros without a model)."""
    saved = fitting._train

    def untrained(data: Any, hidden: tuple[int, ...], epochs: int, patience: int, seed: int, progress: Any,
                  start: Model | None = None) -> Any:
        sizes = [data.features.shape[1], *hidden, data.policy.shape[1] + 1]
        weights = [np.asarray(w, np.float64) for w in start.weights] if start is not None else [
            np.zeros((a, b)) for a, b in itertools.pairwise(sizes)]
        biases = [np.asarray(b, np.float64) for b in start.biases] if start is not None else [
            np.zeros(b) for b in sizes[1:]]
        return SimpleNamespace(coefs_=weights, intercepts_=biases, n_iter_=0)

    fitting._train = untrained  # type: ignore[assignment]
    try:
        yield
    finally:
        fitting._train = saved


CPU: list[tuple[float, float]] = []
"""Each timed run's process CPU seconds, beside its wall seconds (on a busy machine the CPU time is the steadier:
it leaves out the waits for a core and for pages the kernel dropped)."""


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    """``run()``'s wall seconds and result; its CPU seconds go to :data:`CPU`."""
    began, cpu = time.perf_counter(), time.process_time()
    result = run()
    CPU.append((time.perf_counter() - began, time.process_time() - cpu))
    return CPU[-1][0], result


def ratio_line(name: str, old: list[float], new: list[float], cpu: tuple[list[float], list[float]]) -> None:
    """The medians of the two ways and their ratio, wall time and CPU time."""
    a, b = statistics.median(old), statistics.median(new)
    c, d = statistics.median(cpu[0]), statistics.median(cpu[1])
    print(f"{name:<30} wall old {a:7.2f}s new {b:7.2f}s old/new {a / b:5.2f}x | "
          f"CPU old {c:7.2f}s new {d:7.2f}s old/new {c / d:5.2f}x"
          f"   (wall runs old {' '.join(f'{t:.2f}' for t in old)}; new {' '.join(f'{t:.2f}' for t in new)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", help="a Connect Four tree grown by the learning loop (only read)")
    parser.add_argument("--model", help="the model a refit starts from (default: none, random weights)")
    parser.add_argument("--new", type=int, default=100, help="the games since the previous refit (default 100)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each, in turn (default 5)")
    parser.add_argument("--train", action="store_true", help="time the whole refit too, training included")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    game = treelab.find_game("connect4")
    import sklearn.neural_network  # noqa: F401  # imported once before any timing: not in the first refit's time

    logged = len(read_fit_rows(args.db, min_visits=1 << 40, max_depth=0).games)
    start = load_model(args.model, game) if args.model else None
    config = replay_plan(FitConfig(sample=LOOP_SAMPLE, seed=args.seed), logged, warm=start is not None)
    since = max(0, logged - args.new)
    print(f"{args.db}: {logged} games; a refit of sample {config.sample}, {config.epochs} epochs, since game {since}")

    # the rows a refit reads, and the positions it picks
    rng = np.random.default_rng(args.seed)
    picked: list[int] = []

    def pick(found: list[tuple[int, int | None]]) -> list[int]:
        assert config.sample is not None
        train, held, _ = fitting._pick(found, config.sample, config.heldout, since, rng)
        picked.extend(train + held)
        return train + held

    seconds, rows = timed(lambda: read_fit_rows(args.db, min_visits=config.min_visits, max_depth=config.max_depth,
                                                pick=pick))
    print(f"read {len(rows.rows):,} rows for {len(picked):,} positions in {seconds:.2f}s")
    only = set(picked)
    options: dict[str, Any] = {"min_visits": config.min_visits, "max_depth": config.max_depth, "only": only}
    old_times, new_times, sizes = [], [], []
    old_cpu, new_cpu = [], []
    for _ in range(args.runs):
        t_old, a = timed(lambda: reference_dataset(game, rows, **options))
        old_cpu.append(CPU[-1][1])
        t_new, b = timed(lambda: build_dataset(game, rows, **options))
        new_cpu.append(CPU[-1][1])
        for name in ARRAYS:
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert (a.proven, a.from_selections) == (b.proven, b.from_selections)
        old_times.append(t_old)
        new_times.append(t_new)
        sizes.append(len(a))
    ratio_line(f"examples ({sizes[0]:,})", old_times, new_times, (old_cpu, new_cpu))
    print(f"{'examples a CPU second':<30} old {sizes[0] / statistics.median(old_cpu):9,.0f}   "
          f"new {sizes[0] / statistics.median(new_cpu):9,.0f}")

    def refit() -> Model:
        return fit(args.db, None, fitting=config, game=game, warm_start=start, since=since)

    for label, wrap in (("refit without training", no_training), ("whole refit", None)):
        if wrap is None and not args.train:
            break
        old_times, new_times, old_cpu, new_cpu = [], [], [], []
        for _ in range(args.runs):
            with old_code(), (wrap() if wrap else _nothing()):
                t_old, m_old = timed(refit)
            old_cpu.append(CPU[-1][1])
            with wrap() if wrap else _nothing():
                t_new, m_new = timed(refit)
            new_cpu.append(CPU[-1][1])
            for x, y in zip(m_old.weights + m_old.biases, m_new.weights + m_new.biases, strict=True):
                assert np.array_equal(x, y), "the two ways learned different weights"
            old_times.append(t_old)
            new_times.append(t_new)
        ratio_line(label, old_times, new_times, (old_cpu, new_cpu))


@contextmanager
def _nothing() -> Iterator[None]:
    yield


if __name__ == "__main__":
    main()
