"""treelab on OpenSpiel games against OpenSpiel's own Python MCTSBot: strength and simulations per second.

``strength``: treelab UCT against ``MCTSBot`` on the same OpenSpiel game, at
equal simulations per move and equal exploration (OpenSpiel's ``uct_c =
sqrt(2)`` on [-1, 1] returns is treelab's ``c = 1/sqrt(2)`` on [0, 1] means),
one random rollout each, colours alternating, 64 games (the issue's bar: a
score of at least 0.45). ``speed``: simulations per second of one search from
the initial position, treelab's ``search`` against ``MCTSBot.mcts_search``,
alternated rounds, medians and their ratio (noisy machines: only ratios from
the same run mean anything).

    .venv/bin/python benchmarks/openspiel_games.py speed --games breakthrough connect_four --simulations 2000
    .venv/bin/python benchmarks/openspiel_games.py strength --games breakthrough connect_four --simulations 100
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

UCT = "uct:iterations={n},c=0.7071067811865476"
BOT = "openspiel:simulations={n},c=1.4142135623730951,solve={solve}"


def time_treelab(game: str, simulations: int, seed: int) -> float:
    """Seconds for one treelab UCT search of ``simulations`` from the start (a fresh tree)."""
    from treelab import Limit, Tree, search

    tree = Tree(game)
    started = time.perf_counter()
    search(tree, limit=Limit(iterations=simulations), c=1 / math.sqrt(2), rng=seed)
    return time.perf_counter() - started


def time_openspiel(game: str, simulations: int, seed: int) -> float:
    """Seconds for one ``MCTSBot.mcts_search`` of ``simulations`` from the start."""
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    spiel = pyspiel.load_game(game)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
    bot = mcts.MCTSBot(spiel, uct_c=math.sqrt(2), max_simulations=simulations, evaluator=evaluator,
                       solve=True, random_state=np.random.RandomState(seed + 1))
    state = spiel.new_initial_state()
    started = time.perf_counter()
    bot.mcts_search(state)
    return time.perf_counter() - started


def speed(games: list[str], simulations: int, rounds: int) -> None:
    print(f"simulations/s of one search from the start, {simulations} simulations, {rounds} alternated rounds")
    print(f"| {'game':<28} | {'OpenSpiel MCTSBot':>17} | {'treelab UCT':>11} | {'ratio':>5} |")
    print(f"|{'-' * 30}|{'-' * 19}|{'-' * 13}|{'-' * 7}|")
    for game in games:
        name = f"openspiel:{game}"
        time_treelab(name, 50, 0), time_openspiel(game, 50, 0)  # warm up
        ours, theirs = [], []
        for r in range(rounds):
            pair = [(ours, lambda r=r, name=name: time_treelab(name, simulations, r)),
                    (theirs, lambda r=r, game=game: time_openspiel(game, simulations, r))]
            for sink, fn in (pair if r % 2 == 0 else pair[::-1]):
                sink.append(simulations / fn())
        mine, other = statistics.median(ours), statistics.median(theirs)
        print(f"| {name:<28} | {other:>17,.0f} | {mine:>11,.0f} | {mine / other:>5.2f} |")


def _chunk(job: tuple[str, str, str, int, int]) -> dict:
    from treelab.play.arena import play_match

    game, a, b, games, seed = job
    return play_match(game, a, b, games=games, seed=seed).to_dict()


def strength(games: list[str], simulations: int, n_games: int, chunk: int, workers: int, seed: int,
             solve: int) -> None:
    from treelab.play.arena import wilson_interval

    print(f"treelab UCT (c=1/sqrt(2)) vs OpenSpiel MCTSBot (uct_c=sqrt(2), solve={bool(solve)}), "
          f"{simulations} simulations per move each, one random rollout, colours alternating, seed {seed}")
    print(f"| {'game':<28} | {'games':>5} | {'W-L-D':>9} | {'score':>5} | {'95% CI':>11} | {'s/move ratio':>12} |")
    print(f"|{'-' * 30}|{'-' * 7}|{'-' * 11}|{'-' * 7}|{'-' * 13}|{'-' * 14}|")
    for game in games:
        name = f"openspiel:{game}"
        jobs = []
        for k in range(math.ceil(n_games / chunk)):
            size = min(chunk, n_games - k * chunk)
            jobs.append((name, UCT.format(n=simulations), BOT.format(n=simulations, solve=solve), size,
                         seed * 1_000_003 + 7919 * k))
        total = {"games": 0, "a_wins": 0, "b_wins": 0, "draws": 0, "a_seconds": 0.0, "b_seconds": 0.0}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for result in pool.map(_chunk, jobs):
                for key in total:
                    total[key] += result[key]
        score = (total["a_wins"] + 0.5 * total["draws"]) / total["games"]
        low, high = wilson_interval(score, int(total["games"]))
        wld = f"{total['a_wins']}-{total['b_wins']}-{total['draws']}"
        ratio = total["a_seconds"] / total["b_seconds"] if total["b_seconds"] else float("nan")
        print(f"| {name:<28} | {total['games']:>5} | {wld:>9} | {score:.3f} | {low:.2f}-{high:.2f} |"
              f" {ratio:>12.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["speed", "strength"])
    parser.add_argument("--games", nargs="+", default=["breakthrough", "connect_four"],
                        help="OpenSpiel game strings (without the openspiel: prefix)")
    parser.add_argument("--simulations", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5, help="speed: alternated rounds")
    parser.add_argument("--n-games", type=int, default=64, help="strength: games per game (even)")
    parser.add_argument("--chunk", type=int, default=8, help="strength: games per worker job (even)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--solve", type=int, choices=[0, 1], default=1, help="MCTSBot's solver (its default 1)")
    args = parser.parse_args()
    random.seed(args.seed)
    started = time.perf_counter()
    if args.what == "speed":
        speed(args.games, args.simulations, args.rounds)
    else:
        strength(args.games, args.simulations, args.n_games, args.chunk, args.workers, args.seed, args.solve)
    print(f"({time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
