"""Training cost as the tree grows: time per game and per save from 10k to 1M nodes.

Plays Connect Four training games (the tree against the heuristic player, as
``treelab train --opponent heuristic``) into one database until the tree holds
``--nodes`` nodes, timing each game's searches and its incremental save
separately. Prints a table at each size and draws both curves to PNG. Flat
curves mean the cost follows the work done, not the size of the tree.

    .venv/bin/python benchmarks/growth.py --nodes 1000000 --iterations 400 -o docs/img/growth-timing.png
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from pathlib import Path

import treelab
from treelab.play.players import HeuristicPlayer, MCTSPlayer, Player
from treelab.store.deltas import stamp
from treelab.store.persistence import kept_open, open_tree, save


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("-o", "--output", default=None, help="PNG of time per game and per save against nodes")
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp(prefix="treelab-growth-")) / "c4.db"
    game = treelab.find_game("connect4")
    tree = open_tree(db, game)
    me = MCTSPlayer(tree=tree, iterations=args.iterations, rng=1)
    other = HeuristicPlayer(rng=2)
    rows: list[tuple[int, float, float, int, int]] = []  # nodes, search s, save s, simulations, rows saved
    marks = [m for m in (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000) if m <= args.nodes]
    print(f"{'nodes':>10} {'games':>6} {'ms/game':>8} {'µs/sim':>7} {'ms/save':>8} {'rows/save':>9}")
    with kept_open(tree):  # as treelab.train does: one connection for all the saves
        _grow(args.nodes, args.iterations, tree, db, (me, other), rows, marks)
    if args.output:
        _plot(args.output, args.iterations, rows)


def _grow(nodes: int, iterations: int, tree: treelab.Tree, db: Path, players: tuple[Player, Player],
          rows: list[tuple[int, float, float, int, int]], marks: list[int]) -> None:
    """Train until the tree holds ``nodes`` nodes, one row of timings per game; print a line at each mark."""
    game, (me, other) = tree.game, players
    game_id = 0
    while len(tree) < nodes:
        game_id += 1
        mine = 1 + game_id % 2
        sims = tree.root.nb_visit
        started = time.perf_counter()
        state, moves = game.initial(), list[int]()
        while not state.is_terminal:
            player = me if state.to_move == mine else other
            move = player.choose(state, moves)
            state = state.play(move)
            moves.append(move)
        searched = time.perf_counter() - started
        changed = tree.unsaved
        started = time.perf_counter()
        stamp(tree, game_id)  # as training does: the game's new nodes name it
        save(tree, db, games=[{"id": game_id, "moves": game.notation(moves), "winner": state.winner,
                               "opponent": "heuristic", "tree_player": mine, "iterations": iterations}])
        rows.append((len(tree), searched, time.perf_counter() - started, tree.root.nb_visit - sims, changed))
        gc.freeze()  # as treelab.train does after every save: the collector need not walk the tree again
        while marks and len(tree) >= marks[0]:
            recent = rows[-20:]
            print(f"{len(tree):>10,} {game_id:>6} {1000 * statistics.median(r[1] for r in recent):>8.0f} "
                  f"{1e6 * statistics.median(r[1] / max(r[3], 1) for r in recent):>7.1f} "
                  f"{1000 * statistics.median(r[2] for r in recent):>8.1f} "
                  f"{statistics.median(r[4] for r in recent):>9,.0f}", flush=True)
            marks.pop(0)


def _plot(output: str, iterations: int, rows: list[tuple[int, float, float, int, int]]) -> None:
    """Both cost curves against the tree size, to PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6), constrained_layout=True)
    nodes = [r[0] for r in rows]
    ax[0].plot(nodes, [1e6 * r[1] / max(r[3], 1) for r in rows], ".", ms=3, alpha=0.6)
    ax[0].set(xscale="log", xlabel="nodes in the tree", ylabel="µs per simulation", title="search")
    ax[1].plot(nodes, [1000 * r[2] for r in rows], ".", ms=3, alpha=0.6, color="tab:orange")
    ax[1].set(xscale="log", xlabel="nodes in the tree", ylabel="ms per save", title="incremental save per game")
    from matplotlib.ticker import FuncFormatter, NullFormatter

    for a in ax:
        a.grid(alpha=0.3)
        a.set_ylim(bottom=0)
        a.xaxis.set_minor_formatter(NullFormatter())
        a.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    fig.suptitle(f"Connect Four training, {iterations} simulations per move: cost per game as the tree grows")
    fig.savefig(output, dpi=120)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
