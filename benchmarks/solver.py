"""MCTS-Solver on the 1,000 gamesolver.org positions of Test_L3_R1: share proven, simulations to proof.

Every position is searched from a fresh tree with proofs on, at each budget;
the search stops as soon as the position is proven. A proof is right when its
sign matches the gamesolver.org score (positive: the player to move wins,
0: draw, negative: loses). The script exits non-zero on any wrong proof.

    .venv/bin/python benchmarks/solver.py                      # UCT solver and PUCT, 2,000 and 20,000
    .venv/bin/python benchmarks/solver.py --solvers uct --budgets 2000 --limit 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "connect4" / "Test_L3_R1"

SOLVERS = {
    "uct": "UCT + MCTS-Solver, random playouts, c=sqrt(2)",
    "uct+decisive": "UCT + MCTS-Solver, decisive playouts",
    "puct": "PUCT (rollout evaluator) + proofs",
    "puct(heuristic)": "PUCT (heuristic evaluator) + proofs",
}


def _one(job: tuple[str, str, int, int]) -> tuple[int | None, int, float]:
    """Search one position; (proven value for the player to move or None, simulations, seconds)."""
    import treelab
    from treelab.puct import puct_search
    from treelab.search import Limit, search

    solver, moves, budget, seed = job
    tree = treelab.Tree("connect4")
    limit = Limit(iterations=budget)
    started = time.perf_counter()
    if solver.startswith("uct"):
        playout = "decisive" if solver == "uct+decisive" else "random"
        done = search(tree, moves, limit=limit, solver=True, playout=playout, rng=seed)
    else:
        evaluator = "heuristic" if solver == "puct(heuristic)" else "rollout"
        done = puct_search(tree, moves, limit=limit, evaluator=evaluator, rng=seed)
    proven = tree.find(moves).proven
    return (None if proven is None else -proven), done, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--solvers", nargs="+", default=["uct", "puct"], choices=list(SOLVERS))
    parser.add_argument("--budgets", nargs="+", type=int, default=[2000, 20000])
    parser.add_argument("--limit", type=int, default=None, help="only the first N positions")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = []
    for line in args.data.read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, (int(score) > 0) - (int(score) < 0)))
    rows = rows[: args.limit]
    print(f"{len(rows)} positions from {args.data.name}; every search from a fresh tree, seed {args.seed}")
    print(f"| {'solver':<16} | {'budget':>6} | {'proven':>7} | {'share':>6} | {'wrong':>5} |"
          f" {'mean sims to proof':>18} | {'median':>6} | {'seconds':>7} |")
    print(f"|{'-' * 18}|{'-' * 8}|{'-' * 9}|{'-' * 8}|{'-' * 7}|{'-' * 20}|{'-' * 8}|{'-' * 9}|")
    wrong_total = 0
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for solver in args.solvers:
            for budget in args.budgets:
                jobs = [(solver, moves, budget, args.seed + i) for i, (moves, _) in enumerate(rows)]
                started = time.perf_counter()
                results = list(pool.map(_one, jobs, chunksize=8))
                elapsed = time.perf_counter() - started
                sims = [done for (value, done, _), _row in zip(results, rows, strict=True) if value is not None]
                wrong = [moves for (value, _, _), (moves, truth) in zip(results, rows, strict=True)
                         if value is not None and value != truth]
                wrong_total += len(wrong)
                proven = len(sims)
                mean = statistics.fmean(sims) if sims else float("nan")
                median = statistics.median(sims) if sims else float("nan")
                print(f"| {solver:<16} | {budget:>6} | {proven:>7} | {proven / len(rows):>6.1%} | {len(wrong):>5} |"
                      f" {mean:>18.0f} | {median:>6.0f} | {elapsed:>7.1f} |", flush=True)
                for moves in wrong[:10]:
                    print(f"  WRONG PROOF: {moves}", file=sys.stderr)
    print("no wrong proof" if wrong_total == 0 else f"{wrong_total} WRONG PROOFS")
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
