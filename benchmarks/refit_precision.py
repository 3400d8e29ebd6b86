"""A warm refit's training in float32 (today) against float64 (sessions 1-21), side by side, on the same examples.

Until session 22 a refit that started from the previous model copied its weights in as float64, so every product
of the training ran in float64 although the examples are float32 (a cold fit ran in float32 all along). This
script reads a loop's database once as the loop's next refit would (its replay plan at the games logged), warm
starts from ``--model`` (a version of that loop), and trains the same examples for the plan's epochs in turn in
float32 and float64 (``--rounds`` times each, alternating), for each ``--hidden``: it prints each run's seconds,
the medians, their ratio, and the held-out value sign and policy top-1 of the models each made.

    .venv/bin/python benchmarks/refit_precision.py --db c4.db --model c4.npz --rounds 3 --hidden 128,64 256,128
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="a learning loop's database")
    parser.add_argument("--model", required=True, help="a model of that loop (the warm start)")
    parser.add_argument("--hidden", nargs="+", default=["128,64", "256,128"],
                        help="hidden layers to time (a warm start only where the model has them)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import sqlite3

    import numpy as np
    import sklearn.neural_network  # noqa: F401  (imported before any run is timed)

    import treelab
    from treelab.learn.dataset import augment, build_dataset
    from treelab.learn.fitting import _train, measure
    from treelab.learn.model import Model, load_model
    from treelab.play.learning import LOOP_FITTING, replay_plan
    from treelab.store.rows import read_fit_rows

    game = treelab.find_game("connect4")
    start = load_model(args.model, game)
    with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as conn:
        logged = conn.execute("SELECT count(*) FROM games").fetchone()[0]
    plan = replay_plan(LOOP_FITTING, logged, warm=True)
    began = time.perf_counter()
    rows = read_fit_rows(args.db, min_visits=plan.min_visits, max_depth=None, game=game.name)
    data = build_dataset(game, rows, min_visits=plan.min_visits, max_depth=None, outcome=plan.outcome)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(data))
    size = min(plan.sample or len(data), len(data))
    held, kept = order[: size // 10], order[size // 10: size]
    train, test = augment(data.take(kept), game), data.take(held)
    print(f"{logged:,} games logged; {len(train):,} examples (augmented), {len(test):,} held out, "
          f"{plan.epochs} epochs (the loop's plan), read and built in {time.perf_counter() - began:.1f} s")
    print(f"{'hidden':>9} {'type':>8} {'seconds (each round)':>28} {'median':>7} {'value sign':>10} {'top-1':>6}")
    for spec in args.hidden:
        hidden = tuple(int(n) for n in spec.split(","))
        warm = start if start.hidden == hidden else None
        seconds: dict[str, list[float]] = {"float32": [], "float64": []}
        models: dict[str, Model] = {}
        for _ in range(args.rounds):
            for kind in ("float32", "float64"):
                examples = train if kind == "float32" else replace(train, features=train.features.astype(np.float64))
                t = time.perf_counter()
                regressor = _train(examples, hidden, plan.epochs, plan.patience, 0, None, warm, plan.learning_rate)
                seconds[kind].append(time.perf_counter() - t)
                models[kind] = Model(game.name, str(game.encoding), tuple(game.feature_shape), game.first_move,
                                     game.num_moves, tuple(regressor.coefs_), tuple(regressor.intercepts_))
        for kind, times in seconds.items():
            metrics = measure(models[kind], test)
            print(f"{spec:>9} {kind:>8} {' '.join(f'{s:6.2f}' for s in times):>28} {statistics.median(times):7.2f} "
                  f"{metrics['value_sign_accuracy']:>10.1%} {metrics['policy_top1']:>6.1%}"
                  + ("" if warm is not None else "  (cold: the model has other layers)"))
        ratio = statistics.median(seconds["float64"]) / statistics.median(seconds["float32"])
        print(f"{spec:>9} float64 / float32: {ratio:.2f}x")


if __name__ == "__main__":
    main()
