"""MCTS-Solver on the 1,000 gamesolver.org positions of Test_L3_R1: share proven, simulations to proof.

Every position is searched from a fresh tree with proofs on, at each budget;
the search stops as soon as the position is proven. A proof is right when its
sign matches the gamesolver.org score (positive: the player to move wins,
0: draw, negative: loses). With ``--every-node`` every proven node of every
tree (positions nobody published) is also checked against the exact alpha-beta
solver of ``tests/helpers/exact_solver.py``. The script exits non-zero on any wrong proof.

    .venv/bin/python benchmarks/solver.py                      # UCT solver and PUCT, 2,000 and 20,000
    .venv/bin/python benchmarks/solver.py --solvers uct --budgets 2000 --limit 200 --every-node
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "connect4" / "Test_L3_R1"

SOLVERS = {
    "uct": "UCT + MCTS-Solver, random playouts, c=sqrt(2)",
    "uct+decisive": "UCT + MCTS-Solver, decisive playouts",
    "puct": "PUCT (rollout evaluator) + proofs",
    "puct(heuristic)": "PUCT (heuristic evaluator) + proofs",
}


_EXACT: list = []


def _check_nodes(tree, start_depth: int) -> tuple[int, int]:
    """(proven nodes at or below the searched position, wrong ones) by the exact solver."""
    if not _EXACT:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))
        from exact_solver import ExactSolver

        _EXACT.append(ExactSolver(max_nodes=10_000_000))
    exact = _EXACT[0]
    if len(exact.table) > 5_000_000:
        exact.table.clear()
    checked = wrong = 0
    stack = [(tree.root, tree.game.initial())]
    while stack:
        node, state = stack.pop()
        if node.proven is not None and node.depth >= start_depth:
            checked += 1
            wrong += node.proven != -exact.value(state)
        stack.extend((kid, state.play(int(kid.name))) for kid in node.children_view)
    return checked, wrong


def _one(job: tuple[str, str, int, int, bool]) -> tuple[int | None, int, float, int, int]:
    """Search one position: (proven value for the player to move or None, simulations, seconds,
    proven nodes checked, wrong ones)."""
    import treelab
    from treelab.mcts.dispatch import puct_search
    from treelab.mcts.uct import Limit, search

    solver, moves, budget, seed, every_node = job
    tree = treelab.Tree("connect4")
    limit = Limit(iterations=budget)
    started = time.perf_counter()
    if solver.startswith("uct"):
        playout = "decisive" if solver == "uct+decisive" else "random"
        done = search(tree, moves, limit=limit, solver=True, playout=playout, rng=seed)
    else:
        evaluator = "heuristic" if solver == "puct(heuristic)" else "rollout"
        done = puct_search(tree, moves, limit=limit, evaluator=evaluator, rng=seed)
    elapsed = time.perf_counter() - started
    proven = tree.find(moves).proven
    checked, wrong = _check_nodes(tree, len(moves)) if every_node else (0, 0)
    return (None if proven is None else -proven), done, elapsed, checked, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--solvers", nargs="+", default=["uct", "puct"], choices=list(SOLVERS))
    parser.add_argument("--budgets", nargs="+", type=int, default=[2000, 20000])
    parser.add_argument("--limit", type=int, default=None, help="only the first N positions")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--every-node", action="store_true", help="check every proven node with the exact solver")
    args = parser.parse_args()
    rows = []
    for line in args.data.read_text().splitlines():
        if line.strip():
            moves, score = line.split()
            rows.append((moves, (int(score) > 0) - (int(score) < 0)))
    rows = rows[: args.limit]
    print(f"{len(rows)} positions from {args.data.name}; every search from a fresh tree, seed {args.seed}")
    print(f"| {'solver':<16} | {'budget':>6} | {'proven':>7} | {'share':>6} | {'wrong':>5} |"
          f" {'mean sims to proof':>18} | {'median':>6} | {'search s':>8} | {'nodes checked':>17} |")
    print(f"|{'-' * 18}|{'-' * 8}|{'-' * 9}|{'-' * 8}|{'-' * 7}|{'-' * 20}|{'-' * 8}|{'-' * 10}|{'-' * 19}|")
    wrong_total = 0
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for solver in args.solvers:
            for budget in args.budgets:
                jobs = [(solver, moves, budget, args.seed + i, args.every_node) for i, (moves, _) in enumerate(rows)]
                results = list(pool.map(_one, jobs, chunksize=8))
                elapsed = sum(r[2] for r in results)
                sims = [r[1] for r in results if r[0] is not None]
                wrong = [moves for r, (moves, truth) in zip(results, rows, strict=True)
                         if r[0] is not None and r[0] != truth]
                checked, wrong_nodes = sum(r[3] for r in results), sum(r[4] for r in results)
                wrong_total += len(wrong) + wrong_nodes
                proven = len(sims)
                mean = statistics.fmean(sims) if sims else float("nan")
                median = statistics.median(sims) if sims else float("nan")
                nodes = f"{checked:,} ({wrong_nodes} wrong)" if args.every_node else "-"
                print(f"| {solver:<16} | {budget:>6} | {proven:>7} | {proven / len(rows):>6.1%} | {len(wrong):>5} |"
                      f" {mean:>18.0f} | {median:>6.0f} | {elapsed:>8.1f} | {nodes:>17} |", flush=True)
                for moves in wrong[:10]:
                    print(f"  WRONG PROOF: {moves}", file=sys.stderr)
    print("no wrong proof" if wrong_total == 0 else f"{wrong_total} WRONG PROOFS")
    return 1 if wrong_total else 0


if __name__ == "__main__":
    sys.exit(main())
