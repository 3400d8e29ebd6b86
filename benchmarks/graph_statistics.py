"""Classic against graph statistics: two trees trained alike, judged against perfect play on the same positions.

Train two trees with the same games, simulations and seed, one per selection rule
(``--statistics classic`` and ``--statistics graph``, treelab.mcts.graph), then:

    .venv/bin/python benchmarks/graph_statistics.py CLASSIC.db GRAPH.db --min-depth 3 --max-depth 9 \\
        --max-nodes 3000000 --cache /tmp/oracle.sqlite

The positions judged are those where **both** trees have at least ``--min-selections`` selections
among the children (the same positions for both: a paired comparison), that the oracle solves
within ``--max-nodes`` positions a move. At each, each tree's move (treelab's move-choice rule:
a proven win, never a proven loss, else the most selected child) is optimal or not; a fresh UCT
search of ``--iterations`` simulations from the position is the same-run reference. Printed by
depth band: the optimal-move share of each, and the paired test of graph against classic
(discordant positions: graph right where classic is wrong, and the reverse; McNemar's
``z = (c - b) / sqrt(b + c)``). Each tree's shares over its own positions (unpaired, as
``benchmarks/oracle.py`` reports them) are printed too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time

import treelab
from treelab.analysis.optimality import tree_chooser, tree_positions, uct_chooser
from treelab.errors import BudgetError
from treelab.mcts.choice import best_child
from treelab.mcts.uct import Limit, search
from treelab.oracle import OracleCache, require_oracle

BANDS = ((0, 2), (3, 5), (6, 9), (10, None))


def band_of(depth: int) -> str:
    for low, high in BANDS:
        if depth >= low and (high is None or depth <= high):
            return f"{low}-{high}" if high is not None else f"{low}+"
    return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("classic")
    parser.add_argument("graph")
    parser.add_argument("--min-selections", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=200, help="the fresh UCT reference's simulations")
    parser.add_argument("--min-depth", type=int, default=3)
    parser.add_argument("--max-depth", type=int, default=9)
    parser.add_argument("--max-nodes", type=int, default=3_000_000, help="oracle budget per child position")
    parser.add_argument("--cache", default=None, help="an SQLite file keeping solved positions between runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--common-only", action="store_true",
                        help="solve only the positions both trees hold (the unpaired shares are then over those)")
    parser.add_argument("--oracle-seconds", type=float, default=None,
                        help="stop solving after this long (deepest positions first) and judge what was solved")
    args = parser.parse_args()

    trees = {"classic": treelab.load(args.classic), "graph": treelab.load(args.graph)}
    game = trees["classic"].game
    cache = OracleCache(args.cache) if args.cache else None
    oracle = require_oracle(game, cache=cache, max_nodes=args.max_nodes) if game.name == "connect4" \
        else require_oracle(game)
    own = {name: set(tree_positions(tree, args.min_selections, min_depth=args.min_depth, max_depth=args.max_depth))
           for name, tree in trees.items()}
    both = sorted(own["classic"] & own["graph"], key=lambda m: (-len(m), m))  # deepest first: the cheapest to solve
    wanted = both if args.common_only else sorted(own["classic"] | own["graph"], key=lambda m: (-len(m), m))
    print(f"positions with >= {args.min_selections} selections at depths {args.min_depth}-{args.max_depth}: "
          f"classic {len(own['classic'])}, graph {len(own['graph'])}, both {len(both)}", flush=True)
    start = time.perf_counter()
    solved: dict[tuple[int, ...], dict[int, int]] = {}
    for i, moves in enumerate(wanted, 1):
        if args.oracle_seconds is not None and time.perf_counter() - start > args.oracle_seconds:
            break  # the rest is left out of every table, as beyond the budget
        with contextlib.suppress(BudgetError):  # beyond the budget: left out of every table
            solved[moves] = oracle(game.replay(moves))
        if i % 25 == 0:
            print(f"  ... {i}/{len(wanted)} positions, {len(solved)} solved, {time.perf_counter() - start:.0f}s",
                  file=sys.stderr, flush=True)
    stored = {"classic": tree_chooser(trees["classic"]), "graph": tree_chooser(trees["graph"])}
    fresh = uct_chooser(game, args.iterations, c=trees["classic"].c, seed=args.seed)

    def played(name: str):  # the tree's move after a search of --iterations with its own rule (as in a match)
        tree = trees[name]

        def choose(state, moves):
            search(tree, moves, limit=Limit(iterations=args.iterations), rng=args.seed, select=name)
            best = best_child(tree.find(moves))
            return None if best is None else game.parse_move(best.name)

        return choose

    def right(chooser, moves: tuple[int, ...]) -> bool:
        values = solved[moves]
        move = chooser(game.replay(moves), moves)
        return move is not None and values[move] == max(values.values())

    out: dict[str, object] = {"min_selections": args.min_selections, "max_nodes": args.max_nodes,
                              "positions": {k: len(v) for k, v in own.items()}, "both": len(both), "tables": {}}
    print(f"oracle {time.perf_counter() - start:.0f}s, {len(solved)} of {len(wanted)} positions solved within "
          f"{args.max_nodes:,} positions a move")
    judged = {
        "stored move, positions both trees hold (>= min selections)": (
            [m for m in both if m in solved], {**stored, "fresh UCT": fresh}),
        f"move after {args.iterations} more simulations with the tree's rule, positions either tree holds": (
            [m for m in wanted if m in solved], {"classic": played("classic"), "graph": played("graph"),
                                                 "fresh UCT": fresh}),
    }
    for title, (paired, choosers) in judged.items():
        verdict = {m: {name: right(chooser, m) for name, chooser in choosers.items()} for m in paired}
        table: dict[str, object] = {}
        print(f"{title}: {len(paired)} positions")
        print(f"{'depths':>7} {'n':>5} {'classic':>8} {'graph':>8} {'fresh UCT':>10} {'graph+':>7} {'classic+':>9} "
              f"{'z':>6}")
        labels = sorted({band_of(len(m)) for m in paired}, key=lambda b: int(b.split("-")[0].rstrip("+")))
        for label in [*labels, "all"]:
            group = [m for m in paired if label == "all" or band_of(len(m)) == label]
            if not group:
                continue
            share = {name: sum(verdict[m][name] for m in group) / len(group) for name in choosers}
            c = sum(verdict[m]["graph"] and not verdict[m]["classic"] for m in group)
            b = sum(verdict[m]["classic"] and not verdict[m]["graph"] for m in group)
            z = (c - b) / math.sqrt(b + c) if b + c else 0.0
            table[label] = {"n": len(group), **share, "graph_only": c, "classic_only": b, "z": z}
            print(f"{label:>7} {len(group):>5} {share['classic']:>8.1%} {share['graph']:>8.1%} "
                  f"{share['fresh UCT']:>10.1%} {c:>7} {b:>9} {z:>6.2f}")
        out["tables"][title] = table  # type: ignore[index]
    out["own"] = {}
    print("each tree on its own positions (unpaired):")
    for name in trees:
        mine = [m for m in own[name] if m in solved]
        for label in sorted({band_of(len(m)) for m in mine}, key=lambda b: int(b.split('-')[0].rstrip('+'))):
            group = [m for m in mine if band_of(len(m)) == label]
            share = sum(right(stored[name], m) for m in group) / len(group)
            out["own"][f"{name} {label}"] = {"n": len(group), "share": share}  # type: ignore[index]
            print(f"  {name:>8} {label:>5}: {share:.1%} of {len(group)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
