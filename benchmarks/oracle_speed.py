"""Seconds per position of treelab's Connect Four oracle, by depth (discs on the board).

For each depth, a few positions reached by seeded random (non-losing-at-once)
moves are solved move by move: every child is weak-solved (win/draw/loss) by
the compiled solver with its transposition table emptied first, so each figure
is a cold solve of one child position (one more disc than the depth). Prints
per depth the median and the largest seconds per child and positions searched,
and the solver's rate. The machine's other load changes the seconds; the
positions searched do not.

    .venv/bin/python benchmarks/oracle_speed.py                       # depths 3 4 5 6 8, 2 positions each
    .venv/bin/python benchmarks/oracle_speed.py --depths 5 --positions 4 --max-nodes 500000000
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from treelab.games import find_game
from treelab.oracle.compiled import compiled_solver


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 4, 5, 6, 8])
    parser.add_argument("--positions", type=int, default=2)
    parser.add_argument("--max-nodes", type=int, default=400_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    solver = compiled_solver()
    game = find_game("connect4")
    rng = random.Random(args.seed)
    print("depth  position  children  median s/child  max s/child  median positions  gave up  M positions/s")
    for depth in args.depths:
        seconds, counts, gave_up, shown = [], [], 0, []
        for _ in range(args.positions):
            while True:
                moves = [rng.choice(range(1, 8)) for _ in range(depth)]
                try:
                    state = game.replay(moves)
                except ValueError:
                    continue
                if not state.is_terminal and not state.winning_moves() and not state.threats():
                    break
            shown.append("".join(map(str, moves)))
            for move in state.legal_moves():
                child = state.play(move)
                if child.is_terminal or child.winning_moves():
                    continue
                solver.reset()
                start = time.perf_counter()
                try:
                    solver.solve(child.cur, child.mask, child.ply, weak=True, max_nodes=args.max_nodes)
                except RuntimeError:
                    gave_up += 1
                seconds.append(time.perf_counter() - start)
                counts.append(solver.nodes())
        rate = sum(counts) / sum(seconds) / 1e6
        print(f"{depth:5}  {','.join(shown):>8}  {len(seconds):8}  {statistics.median(seconds):14.2f}  "
              f"{max(seconds):11.2f}  {statistics.median(counts):16,.0f}  {gave_up:7}  {rate:13.2f}", flush=True)


if __name__ == "__main__":
    main()
