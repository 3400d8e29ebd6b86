"""Which network a learning loop's data can use: networks of several sizes fitted on the same positions,
their held-out value sign and policy top-1, the minutes each fit took, and what each costs a search.

Every network is fitted from scratch on the same sample of the database (``--sample`` positions, the newest
first, the held-out share on top, the same seed), as a loop's refit would see them; then each is timed in
the compiled forward pass (one position at a time, as PUCT evaluates its leaves) and in a short PUCT search.

    .venv/bin/python benchmarks/model_size.py --db c4.db --sample 60000 --hidden 128,64 256,128 512,256
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--sample", type=int, default=60_000)
    parser.add_argument("--hidden", nargs="+", default=["128,64", "256,128", "512,256"])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--search", type=int, default=3000, help="simulations of the timed PUCT search")
    args = parser.parse_args()

    import treelab
    from treelab.learn.fitting import FitConfig, fit
    from treelab.mcts.dispatch import puct_search
    from treelab.mcts.evaluators import ModelEvaluator
    from treelab.mcts.loop import Limit

    game = treelab.find_game("connect4")
    print(f"{'hidden':>10} {'fit s':>7} {'epochs':>6} {'value sign':>10} {'policy top-1':>12} "
          f"{'forward us':>10} {'PUCT sims/s':>11}")
    for spec in args.hidden:
        hidden = tuple(int(n) for n in spec.split(","))
        began = time.perf_counter()
        model = fit(args.db, None, fitting=FitConfig(hidden=hidden, sample=args.sample, epochs=args.epochs), game=game)
        seconds = time.perf_counter() - began
        held = model.info.get("metrics", {}).get("heldout") or {}
        reps = 2000
        began = time.perf_counter()
        for _ in range(reps):
            model.predict(game.replay("4453"))
        forward = (time.perf_counter() - began) / reps * 1e6
        tree = treelab.Tree("connect4")
        began = time.perf_counter()
        done = puct_search(tree, "44", limit=Limit(iterations=args.search), evaluator=ModelEvaluator(model), rng=1)
        rate = done / (time.perf_counter() - began)
        print(f"{spec:>10} {seconds:>7.1f} {model.info.get('epochs', '-')!s:>6} "
              f"{held.get('value_sign_accuracy', float('nan')):>10.1%} {held.get('policy_top1', float('nan')):>12.1%} "
              f"{forward:>10.1f} {rate:>11,.0f}", flush=True)


if __name__ == "__main__":
    main()
