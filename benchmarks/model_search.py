"""Simulations per second of PUCT guided by a fitted model, beside UCT and PUCT with rollouts, in one run.

Each round searches the same Connect Four positions (a fresh in-memory tree per
search) with these searchers, in turn (the order alternating between rounds):
treelab's UCT (the compiled loop where it is built), PUCT with the ``rollout``
evaluator (one random playout per leaf), PUCT with ``model:MODEL`` evaluating one
leaf at a time (``batch=1``), PUCT with the model evaluating its new leaves in
batches with virtual loss (``--batch``, 8 here; the search's default is one at a time), and the same batched
search with the learning loop's ``mix`` (``--mix``, a playout beside the model's value).
Prints every round and the medians, and the ratios to UCT. Also times the model
alone: one position per call, and a batch of positions.

    .venv/bin/python benchmarks/model_search.py --model c4.npz
    .venv/bin/python benchmarks/model_search.py --model c4.npz --iterations 2000 --rounds 7

Fit a model first: ``treelab train connect4 --db c4.db --games 300 --iterations 200``,
then ``treelab fit c4.db -o c4.npz``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

POSITIONS = ("", "4", "44", "4453", "445362", "3344556")
"""Where the searches start: the empty board and a few openings."""


def _time(search: object, iterations: int, seed: int) -> float:
    """Simulations per second of ``search(tree, moves, iterations, rng)`` summed over :data:`POSITIONS`."""
    import treelab

    total_sims, total_time = 0, 0.0
    for i, moves in enumerate(POSITIONS):
        tree = treelab.Tree("connect4")
        rng = random.Random(seed + i)
        started = time.perf_counter()
        done = search(tree, moves, iterations, rng)  # type: ignore[operator]
        total_time += time.perf_counter() - started
        total_sims += done
    return total_sims / total_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a Connect Four model fitted by treelab fit")
    parser.add_argument("--iterations", type=int, default=1000, help="simulations per search")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8, help="leaves per batch")
    parser.add_argument("--mix", type=float, default=0.5, help="the playout's share in the last searcher")
    args = parser.parse_args()

    import numpy as np

    import treelab
    from treelab.mcts.dispatch import puct_search
    from treelab.mcts.evaluators import ModelEvaluator, find_evaluator
    from treelab.mcts.uct import Limit, search

    model = treelab.load_model(args.model, "connect4")
    batch = args.batch
    one = ModelEvaluator(args.model, game="connect4", batch=1)
    guided = ModelEvaluator(args.model, game="connect4", batch=batch)
    mixed = ModelEvaluator(args.model, game="connect4", batch=batch, mix=args.mix)
    rollout = find_evaluator("rollout")
    limit = Limit(iterations=args.iterations)
    searchers = {
        "uct": lambda tree, moves, n, rng: search(tree, moves, limit=limit, rng=rng),
        "puct+rollout": lambda tree, moves, n, rng: puct_search(tree, moves, limit=limit, evaluator=rollout, rng=rng),
        "puct+model": lambda tree, moves, n, rng: puct_search(tree, moves, limit=limit, evaluator=one, rng=rng),
        f"puct+model/{batch}": lambda tree, moves, n, rng: puct_search(tree, moves, limit=limit, evaluator=guided,
                                                                     rng=rng),
        f"puct+model/{batch},mix": lambda tree, moves, n, rng: puct_search(tree, moves, limit=limit,
                                                                         evaluator=mixed, rng=rng),
    }
    speeds: dict[str, list[float]] = {name: [] for name in searchers}
    print(f"model {args.model}: layers {model.meta()['layers']}, {args.iterations} simulations per search, "
          f"{len(POSITIONS)} positions per round")
    for r in range(args.rounds):
        order = list(searchers) if r % 2 == 0 else list(reversed(searchers))  # alternate who goes first
        for name in order:
            speeds[name].append(_time(searchers[name], args.iterations, seed=100 * r))
        print(f"round {r + 1}: " + ", ".join(f"{name} {speeds[name][-1]:,.0f} sims/s" for name in searchers))
    base = statistics.median(speeds["uct"])
    print("\nmedian simulations per second (ratio to UCT):")
    for name in searchers:
        med = statistics.median(speeds[name])
        print(f"  {name:<18} {med:>10,.0f}  ({med / base:.3f}x)")
    batched = statistics.median(speeds[f"puct+model/{batch}"]) / statistics.median(speeds["puct+model"])
    print(f"batched / one at a time (the model): {batched:.2f}x; load average {os.getloadavg()[0]:.1f}")

    game = treelab.find_game("connect4")
    states = [game.replay(moves) for moves in POSITIONS] * 20
    started = time.perf_counter()
    for state in states:
        model.predict(state)
    single = (time.perf_counter() - started) / len(states)
    started = time.perf_counter()
    for i in range(0, len(states), batch):  # in the search's batches
        model.predict_many(states[i:i + batch])
    per_position = (time.perf_counter() - started) / len(states)
    features = np.stack([s.features().reshape(-1) for s in states])
    started = time.perf_counter()
    for _ in range(20):
        model.forward(features)
    network = (time.perf_counter() - started) / 20 / len(states)
    print(f"\nmodel alone: {single * 1e6:.1f} us a position one by one (features, network, priors), "
          f"{per_position * 1e6:.1f} us in batches of {batch}; the network alone {network * 1e6:.2f} us a position "
          f"in one batch of {len(states)}")
    import warnings

    from sklearn.neural_network import MLPRegressor

    sk = MLPRegressor(hidden_layer_sizes=tuple(int(w.shape[1]) for w in model.weights[:-1]), max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(features[:2], np.zeros((2, model.num_moves + 1)))  # builds the structure; the weights are replaced
    sk.coefs_ = [w.astype(np.float64) for w in model.weights]
    sk.intercepts_ = [b.astype(np.float64) for b in model.biases]
    assert np.allclose(sk.predict(features[:3])[:, : model.num_moves], model.forward(features[:3])[0], atol=1e-4)
    started = time.perf_counter()
    for row in features:
        sk.predict(row[None, :])
    sk_single = (time.perf_counter() - started) / len(features)
    print(f"scikit-learn's predict, one position a call: {sk_single * 1e6:.1f} us (the network alone; "
          f"treelab's numpy forward: {network * 1e6:.2f} us in a batch)")


if __name__ == "__main__":
    main()
