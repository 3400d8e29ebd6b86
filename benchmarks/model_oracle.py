"""A model against perfect play: its value's sign and its policy's top move on held-out Connect Four positions.

Positions are drawn from games the model never saw: ``--games`` games between two
fresh searchers (``--a`` and ``--b``, colours alternating, seeded), ``--per-game``
positions from each with ``--min-discs`` to ``--max-discs`` discs (10-30 by default), not
finished. With ``--db`` (the tree the model was fitted from), a position stored there
with at least the fit's ``min_visits`` visits (one the fit could have trained on) is
left out. The oracle (:mod:`treelab.oracle`, treelab's exact solver) gives every move's
value; the position's value for the player to move is the best of them.

Reported, with 95% Wilson intervals and by disc band:

- **value-sign accuracy**: over positions won or lost with perfect play (draws left
  out, as the fit's own ``value_sign_accuracy``), the share where the model's value
  for the player to move is on the right side of 1/2 (the learning loop's target: 80%);
- **policy optimal share**: the share of all positions where the model's most likely
  move is an optimal move (and where the choice mattered: some move is not optimal).

    .venv/bin/python benchmarks/model_oracle.py --model c4.npz --db c4.db --cache /tmp/oracle.sqlite
    .venv/bin/python benchmarks/model_oracle.py --model c4.npz --games 100 --json
    .venv/bin/python benchmarks/model_oracle.py --model c4.npz --games 300 --seed 0,1,2,3   # ~1,900 positions
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from typing import Any


def positions(args: argparse.Namespace) -> list[tuple[int, ...]]:
    """Positions from ``--games`` games of ``--a`` against ``--b`` per seed of ``--seed`` (a comma list: one
    match of ``--games`` games each): ``--per-game`` positions a game, in the disc range."""
    import treelab
    from treelab.play.arena import play_match

    game = treelab.find_game("connect4")
    found: list[tuple[int, ...]] = []
    for seed in seeds(args.seed):
        rng = random.Random(seed)
        result = play_match(game, args.a, args.b, games=args.games, seed=seed)
        for record in result.records:
            moves = tuple(game.parse(record.moves))
            top = min(args.max_discs, len(moves) - 1)  # the last position of a game is its end
            plies = list(range(args.min_discs, top + 1))
            for ply in rng.sample(plies, min(args.per_game, len(plies))):
                found.append(moves[:ply])
    return found


def seeds(text: str | int) -> list[int]:
    """``--seed``'s seeds: ``"0"`` or ``"1,2,3"``."""
    return [int(part) for part in str(text).split(",") if part.strip()]


def seen_by_fit(db: str, game: Any, min_visits: int) -> Any:
    """A test: was the position stored in ``db`` with at least ``min_visits`` visits (a possible training example)?"""
    from treelab.errors import PathNotFoundError
    from treelab.store.dbfile import reading
    from treelab.store.rows import path_rows

    def seen(moves: tuple[int, ...]) -> bool:
        with reading(db, game.name) as (conn, _):
            try:
                rows = path_rows(conn, game, list(moves), db)
            except PathNotFoundError:
                return False
        return int(rows[-1][3]) >= min_visits

    return seen


def share(hits: int, n: int) -> dict[str, Any]:
    from treelab.play.arena import wilson_interval

    if not n:
        return {"n": 0, "share": None, "ci95": None}
    low, high = wilson_interval(hits / n, n)
    return {"n": n, "share": round(hits / n, 4), "ci95": [round(low, 4), round(high, 4)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a Connect Four model (treelab fit, or the learning loop's)")
    parser.add_argument("--db", default=None, help="the tree it was fitted from: leave out what the fit could see")
    parser.add_argument("--games", type=int, default=150, help="games to draw positions from")
    parser.add_argument("--per-game", type=int, default=2)
    parser.add_argument("--min-discs", type=int, default=10)
    parser.add_argument("--max-discs", type=int, default=30)
    parser.add_argument("--a", default="uct:iterations=200", help="one player of those games")
    parser.add_argument("--b", default="puct:iterations=200,evaluator=heuristic", help="the other")
    parser.add_argument("--max-nodes", type=int, default=20_000_000, help="oracle budget per move")
    parser.add_argument("--cache", default=None, help="an SQLite file keeping solved positions between runs")
    parser.add_argument("--seed", default="0",
                        help="The matches' seed, or several (1,2,3: one match of --games games each, pooled)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import treelab
    from treelab.errors import BudgetError
    from treelab.oracle import OracleCache, require_oracle

    game = treelab.find_game("connect4")
    model = treelab.load_model(args.model, game)
    started = time.perf_counter()
    drawn = positions(args)
    seen = seen_by_fit(args.db, game, int(model.info.get("min_visits", 1))) if args.db else (lambda m: False)
    held = [m for m in dict.fromkeys(drawn) if not seen(m)]
    oracle = require_oracle(game, cache=OracleCache(args.cache) if args.cache else None, max_nodes=args.max_nodes)
    bands = [(10, 14), (15, 19), (20, 24), (25, 30)]
    tally: dict[str, list[int]] = {}
    unsolved = draws = 0

    def count(key: str, hit: bool) -> None:
        tally.setdefault(key, [0, 0])
        tally[key][0] += hit
        tally[key][1] += 1

    for i, moves in enumerate(held):
        state = game.replay(moves)
        try:
            values = oracle(state)
        except BudgetError:
            unsolved += 1
            continue
        priors, value = model.predict(state)
        best = max(values.values())
        band = next((f"{lo}-{hi}" for lo, hi in bands if lo <= len(moves) <= hi), "other")
        top = max(priors, key=lambda m: priors[m])
        count("policy", values[top] == best)
        count(f"policy {band}", values[top] == best)
        if len(set(values.values())) > 1:
            count("policy where it mattered", values[top] == best)
        if best == 0:
            draws += 1
            continue
        right = (value > 0.5) == (best > 0)
        count("value", right)
        count(f"value {band}", right)
        if (i + 1) % 50 == 0:
            print(f"  ... {i + 1} of {len(held)} positions, {time.perf_counter() - started:.0f}s", file=sys.stderr)
    out = {"model": args.model, "db": args.db, "games": args.games, "a": args.a, "b": args.b,
           "discs": [args.min_discs, args.max_discs], "positions_drawn": len(drawn), "held_out": len(held),
           "left_out_as_seen": len(set(drawn)) - len(held), "unsolved": unsolved, "draws": draws,
           "seconds": round(time.perf_counter() - started, 1), "load_average": round(os.getloadavg()[0], 1),
           **{key: share(*tally[key]) for key in sorted(tally)}}
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.model}: {len(held)} held-out positions with {args.min_discs}-{args.max_discs} discs from "
          f"{args.games} games of {args.a} vs {args.b} ({out['left_out_as_seen']} left out as seen by the fit, "
          f"{unsolved} beyond the oracle's budget, {draws} drawn with perfect play)")
    for key in sorted(tally):
        row = out[key]
        print(f"  {key:<26} {row['share']:.1%} [{row['ci95'][0]:.1%}, {row['ci95'][1]:.1%}] over {row['n']}")
    print(f"{out['seconds']}s, load average {out['load_average']}")


if __name__ == "__main__":
    main()
