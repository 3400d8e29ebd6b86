"""Strength table: every treelab variant and budget against OpenSpiel's Python MCTSBot.

Each cell is a match at equal simulations per move and equal exploration:
OpenSpiel's ``uct_c = sqrt(2)`` on [-1, 1] returns explores like treelab's
``c = 1/sqrt(2)`` on [0, 1] means (docs/design.md), so UCT variants run with
``c=0.7071``. OpenSpiel plays ``MCTSBot`` with ``RandomRolloutEvaluator(n_rollouts=1)``
and its default ``solve=True`` (``--solve 0``: its plain UCT, to compare with
treelab's plain UCT). Colours alternate; each match is split into chunks of
games played in parallel worker processes, every chunk with its own seed
derived from ``--seed``, so the whole table replays exactly. ``puct`` variants
use treelab's default ``c_puct`` (1.25, :data:`treelab.mcts.puct.C_PUCT`).

    .venv/bin/python benchmarks/vs_openspiel.py --games 64 --budgets 250 1000 --workers 2
    .venv/bin/python benchmarks/vs_openspiel.py --variants uct solver+decisive --budgets 1000
"""

from __future__ import annotations

import argparse
import json
import math
import time
from concurrent.futures import ProcessPoolExecutor

VARIANTS = {
    "uct": "uct:iterations={n},c=0.7071",
    "uct+decisive": "uct:iterations={n},c=0.7071,playout=decisive",
    "solver": "solver:iterations={n},c=0.7071",
    "solver+decisive": "solver:iterations={n},c=0.7071,playout=decisive",
    "puct(rollout)": "puct:iterations={n},evaluator=rollout",
    "puct(heuristic)": "puct:iterations={n},evaluator=heuristic",
    "puct(heuristic+decisive)": "puct:iterations={n},evaluator=heuristic,playout=decisive",
}
"""Variant name -> treelab player spec (``{n}``: simulations per move)."""

OPENSPIEL = "openspiel:simulations={n},c=1.4142135623730951,solve={solve}"


def _chunk(job: tuple[str, str, str, int, int]) -> dict:
    from treelab.play.arena import play_match

    game, a, b, games, seed = job
    return play_match(game, a, b, games=games, seed=seed).to_dict()


def run(game: str, variants: list[str], budgets: list[int], games: int, seed: int, workers: int,
        chunk: int, solve: int = 1) -> list[dict]:
    jobs, keys = [], []
    for n in budgets:
        for v in variants:
            a, b = VARIANTS[v].format(n=n), OPENSPIEL.format(n=n, solve=solve)
            for k in range(math.ceil(games / chunk)):
                size = min(chunk, games - k * chunk)
                jobs.append((game, a, b, size, seed * 1_000_003 + 7919 * k + n))
                keys.append((v, n))
    cells: dict[tuple[str, int], dict] = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for key, result in zip(keys, pool.map(_chunk, jobs), strict=True):
            cell = cells.setdefault(key, {"variant": key[0], "simulations": key[1], "games": 0, "a_wins": 0,
                                          "b_wins": 0, "draws": 0, "a_seconds": 0.0, "b_seconds": 0.0})
            for field in ("games", "a_wins", "b_wins", "draws", "a_seconds", "b_seconds"):
                cell[field] += result[field]
    from treelab.play.arena import elo_difference, wilson_interval

    rows = []
    for cell in cells.values():
        score = (cell["a_wins"] + 0.5 * cell["draws"]) / cell["games"]
        low, high = wilson_interval(score, cell["games"])
        rows.append({**cell, "a_score": score, "ci95": [low, high], "elo": elo_difference(score)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="connect4", choices=["connect4", "tictactoe"])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--budgets", nargs="+", type=int, default=[250, 1000])
    parser.add_argument("--games", type=int, default=64, help="games per cell (even: colours balance)")
    parser.add_argument("--chunk", type=int, default=8, help="games per worker job (even)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--solve", type=int, choices=[0, 1], default=1,
                        help="OpenSpiel's MCTS-Solver (its default: 1)")
    parser.add_argument("--json", help="also write the table to this file")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = run(args.game, args.variants, args.budgets, args.games, args.seed, args.workers, args.chunk, args.solve)
    print(f"{args.game}: treelab vs OpenSpiel MCTSBot (uct_c=sqrt(2), 1 random rollout, solve={bool(args.solve)}), "
          f"equal simulations, colours alternating, seed {args.seed}")
    print(f"| {'variant':<26} | {'sims':>5} | {'games':>5} | {'W-L-D':>9} | {'score':>5} | {'95% CI':>11} |"
          f" {'Elo':>5} | {'s/move ratio':>12} |")
    print(f"|{'-' * 28}|{'-' * 7}|{'-' * 7}|{'-' * 11}|{'-' * 7}|{'-' * 13}|{'-' * 7}|{'-' * 14}|")
    for r in rows:
        elo = "inf" if r["elo"] is None else f"{r['elo']:+.0f}"
        wld = f"{r['a_wins']}-{r['b_wins']}-{r['draws']}"
        ratio = r["a_seconds"] / r["b_seconds"] if r["b_seconds"] else float("nan")
        print(f"| {r['variant']:<26} | {r['simulations']:>5} | {r['games']:>5} | {wld:>9} | {r['a_score']:.3f} |"
              f" {r['ci95'][0]:.2f}-{r['ci95'][1]:.2f} | {elo:>5} | {ratio:>12.2f} |")
    print(f"({time.perf_counter() - started:.0f}s; s/move ratio: treelab's thinking time over OpenSpiel's)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
