"""Connect Four simulations per second: treelab's UCT against OpenSpiel's Python MCTSBot.

Both search the empty board with the same number of simulations (OpenSpiel:
``RandomRolloutEvaluator(n_rollouts=1)``, one random playout per simulation;
treelab: one random playout per simulation), alternating in one run. Each
round starts from a fresh tree. Prints every round and the median speed ratio.

    .venv/bin/python benchmarks/search.py --simulations 5000 --rounds 7
"""

from __future__ import annotations

import argparse
import statistics
import time


def time_openspiel(simulations: int, seed: int) -> float:
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("connect_four")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
    bot = mcts.MCTSBot(game, uct_c=2**0.5, max_simulations=simulations, evaluator=evaluator,
                       random_state=np.random.RandomState(seed + 1), solve=False)
    state = game.new_initial_state()
    started = time.perf_counter()
    bot.step(state)
    return time.perf_counter() - started


def time_treelab(simulations: int, seed: int) -> float:
    import treelab

    tree = treelab.Tree("connect4")
    started = time.perf_counter()
    treelab.search(tree, "", limit=treelab.Limit(iterations=simulations), c=2**-0.5, rng=seed)
    treelab.choose_move(tree.root)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--simulations", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ratios, ours, theirs = [], [], []
    time_treelab(200, 0), time_openspiel(200, 0)  # warm up imports
    print(f"{'round':>5} {'openspiel sims/s':>17} {'treelab sims/s':>15} {'ratio':>6}")
    for r in range(args.rounds):
        if r % 2 == 0:
            t_os = time_openspiel(args.simulations, r)
            t_tl = time_treelab(args.simulations, r)
        else:
            t_tl = time_treelab(args.simulations, r)
            t_os = time_openspiel(args.simulations, r)
        theirs.append(args.simulations / t_os)
        ours.append(args.simulations / t_tl)
        ratios.append(t_os / t_tl)
        print(f"{r + 1:>5} {theirs[-1]:>17,.0f} {ours[-1]:>15,.0f} {ratios[-1]:>6.2f}")
    print(f"median: openspiel {statistics.median(theirs):,.0f} sims/s, treelab {statistics.median(ours):,.0f} "
          f"sims/s, treelab is {statistics.median(ratios):.2f}x faster")


if __name__ == "__main__":
    main()
