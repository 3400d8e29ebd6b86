"""The logged games' figures by node (``game_outcomes``, ``logged_values``) against a plain walk of each game.

A refit with the games' outcomes in its value targets (``--outcome``, "z + q") follows every logged game down
the rows it read. treelab follows them all at once (a sorted search a depth at a time); the reference
(:func:`walked`) follows each game alone from the root, a dictionary lookup a move, as treelab did until
session 21. Both run in turn on the same rows (a sampled read of ``--db``, as a refit's), ``--rounds`` times;
the script checks they agree and prints, for each figure, both medians and their ratio (a refit with
``--outcome`` asks for the outcomes only; ``--root-value`` for the values).

    .venv/bin/python benchmarks/game_paths.py --db c4.db --sample 100000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Literal

import numpy as np

from treelab.games import Game, find_game
from treelab.learn.dataset import game_outcomes, logged_values
from treelab.learn.fitting import _pick
from treelab.store.rows import FitRows, read_fit_rows

Figures = dict[int, tuple[int, float]]
Figure = Literal["outcomes", "values"]
"""The games' outcomes where they passed (``game_outcomes``), or their searches' values (``logged_values``)."""
OURS: dict[Figure, Callable[[Game, FitRows], Figures]] = {"outcomes": game_outcomes, "values": logged_values}


def walked(game: Game, rows: FitRows, figure: Figure) -> Figures:
    """One figure the plain way: each game from the root, a dictionary lookup a move, sums in game order."""
    child = {(r[1], game.parse_move(r[2])): r[0] for r in rows.rows if r[1] is not None}
    root = next((r[0] for r in rows.rows if r[1] is None), None)
    found: Figures = {}
    for moves, winner, text in rows.games:
        if figure == "values" and not text:
            continue
        score = 0.5 if winner not in (1, 2) else float(winner == 1)
        logged = json.loads(text) if figure == "values" else []
        played = game.parse(moves)
        nid, depth = root, 0
        while nid is not None:
            if figure == "outcomes" or (depth < len(logged) and logged[depth] is not None):
                count, total = found.get(nid, (0, 0.0))
                found[nid] = (count + 1, total + (score if figure == "outcomes" else float(logged[depth])))
            nid = child.get((nid, played[depth])) if depth < len(played) else None
            depth += 1
    return found


def sampled(sample: int, seed: int) -> Callable[[list[tuple[int, int | None]]], list[int]]:
    """A refit's pick: ``sample`` candidates (a tenth held out), the newest first."""
    rng = np.random.default_rng(seed)

    def pick(found: list[tuple[int, int | None]]) -> list[int]:
        chosen = _pick(found, sample, 0.1, None, rng)
        return chosen[0] + chosen[1]
    return pick


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="a tree with logged games")
    parser.add_argument("--sample", type=int, default=100_000, help="positions read, as a refit's (0: every row)")
    parser.add_argument("--min-visits", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    rows = read_fit_rows(args.db, min_visits=args.min_visits, max_depth=None,
                         pick=sampled(args.sample, 1) if args.sample else None)
    game = find_game(rows.game)
    print(f"{len(rows.rows):,} rows, {len(rows.games):,} games")
    for figure, ours in OURS.items():
        times: dict[str, list[float]] = {"treelab": [], "reference": []}
        for _ in range(args.rounds):
            began = time.perf_counter()
            fast = ours(game, rows)
            times["treelab"].append(time.perf_counter() - began)
            began = time.perf_counter()
            plain = walked(game, rows, figure)
            times["reference"].append(time.perf_counter() - began)
            if fast != plain:
                print(f"treelab's {figure} differ from the reference's", file=sys.stderr)
                return 1
        medians = {name: statistics.median(seconds) for name, seconds in times.items()}
        print(f"{figure:9} treelab {medians['treelab']:7.3f} s  reference {medians['reference']:7.3f} s  "
              f"reference / treelab {medians['reference'] / medians['treelab']:5.2f}x  (medians of {args.rounds})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
