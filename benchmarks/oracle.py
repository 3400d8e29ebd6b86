"""Optimal-move share of a stored tree against perfect play, with a fresh UCT search as the same-run reference.

For every position of the tree in DB whose children were selected at least
``--min-selections`` times in all, the tree's move (treelab's move-choice rule,
``treelab/mcts/choice.py``: a proven win, never a proven loss, else the most
selected child) is judged by the game's perfect-play oracle (``treelab.oracle``):
optimal when its game-theoretic value equals the best move's. The same
positions are then searched by a fresh UCT tree of ``--iterations`` simulations
(seeded per position), judged the same way, on exactly the positions the oracle
solved (paired). Shares are printed by depth band,
with the positions where the choice mattered (some move is not optimal).

Connect Four positions with few discs are expensive to solve exactly (a child
of a 5-disc position: about 20 s median on this machine, minutes for some); the
oracle gives up after ``--max-nodes`` positions per child (the position is then
left out of both reports and counted as beyond the budget), and ``--cache FILE`` keeps every solved position for the
next run. ``--min-depth`` leaves the opening out.

    .venv/bin/python benchmarks/oracle.py data/connect4.db --cache /tmp/oracle.sqlite
    .venv/bin/python benchmarks/oracle.py /tmp/x.db --min-selections 200 --iterations 200 --min-depth 3 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import treelab
from treelab.analysis.optimality import optimal_share, tree_chooser, tree_positions, uct_chooser
from treelab.errors import BudgetError
from treelab.oracle import OracleCache, require_oracle


def table(name: str, report) -> str:
    lines = [f"{name}:", "  depths  positions  optimal  share   (where the choice mattered: positions, share)"]
    for band in (*report.bands, report.overall):
        share = "-" if band.share is None else f"{band.share:.1%}"
        mattered = (f"{band.optimal_with_choice / band.with_choice:.1%}" if band.with_choice else "-")
        lines.append(f"  {band.band:>6}  {band.positions:9}  {band.optimal:7}  {share:>6}   "
                     f"({band.with_choice}, {mattered})")
    lines.append(f"  skipped (no move, or the oracle's budget): {report.skipped}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db")
    parser.add_argument("--min-selections", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=200, help="the fresh UCT reference's simulations")
    parser.add_argument("--min-depth", type=int, default=0)
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument("--max-nodes", type=int, default=30_000_000, help="oracle budget per child position")
    parser.add_argument("--cache", default=None, help="an SQLite file keeping solved positions between runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    tree = treelab.load(args.db)
    game = tree.game
    cache = OracleCache(args.cache) if args.cache else None
    oracle = require_oracle(game, cache=cache, max_nodes=args.max_nodes) if game.name == "connect4" \
        else require_oracle(game)
    positions = tree_positions(tree, args.min_selections, min_depth=args.min_depth, max_depth=args.max_depth)
    start = time.perf_counter()
    progress = {"n": 0}

    def tick(moves, chosen, values) -> None:
        progress["n"] += 1
        if progress["n"] % 25 == 0:
            print(f"  ... {progress['n']} positions, {time.perf_counter() - start:.0f}s", file=sys.stderr, flush=True)

    # Solve first, so that both choosers are judged on exactly the same positions (paired).
    solved: dict[object, dict[int, int]] = {}
    unsolved = 0
    for moves in positions:
        state = game.replay(moves)
        try:
            solved[state.key()] = oracle(state)
        except BudgetError:
            unsolved += 1
        tick(moves, None, None)
    judged = [m for m in positions if game.replay(m).key() in solved]
    solved_at = time.perf_counter()

    def known(state):
        return solved[state.key()]

    stored = optimal_share(game, judged, tree_chooser(tree), oracle=known)
    fresh = optimal_share(game, judged, uct_chooser(game, args.iterations, c=tree.c, seed=args.seed), oracle=known)
    if args.json:
        print(json.dumps({"db": args.db, "game": game.name, "positions": len(positions), "unsolved": unsolved,
                          "min_selections": args.min_selections, "iterations": args.iterations,
                          "tree": stored.to_dict(), "fresh_uct": fresh.to_dict()}))
        return
    print(f"{args.db}: {game.name}, {len(tree):,} nodes, {len(positions)} positions with >= "
          f"{args.min_selections} selections among the children (depths {args.min_depth}-"
          f"{'' if args.max_depth is None else args.max_depth}); {unsolved} beyond the oracle's budget of "
          f"{args.max_nodes:,} positions a move, the other {len(judged)} judged; oracle {solved_at - start:.0f}s")
    print(table("stored tree (most selected move, proven first)", stored))
    print(table(f"fresh UCT, {args.iterations} simulations from each position (reference, same run)", fresh))


if __name__ == "__main__":
    main()
