"""Optimal-move share of stored trees against perfect play, with a fresh UCT search as the same-run reference.

For every position of the tree in DB whose children were selected at least
``--min-selections`` times in all, the tree's move (treelab's move-choice rule,
``treelab/mcts/choice.py``: a proven win, never a proven loss, else the most
selected child) is judged by the game's perfect-play oracle (``treelab.oracle``):
optimal when it keeps the position's game-theoretic value. The same positions
are searched by a fresh UCT tree of ``--iterations`` simulations (seeded per
position) and its move judged too: a paired comparison (McNemar's
``z = (fresh wrong, tree right - tree wrong, fresh right) / sqrt(their sum)``,
positive when the tree is better).

Judging is cheap by default: the chosen move's child is solved, then one
null-window search of the position proves no other move better (or stops at the
first that is); once a position's value is known, judging another move costs one
null-window search of its child. ``--mattered`` values every move instead (far
costlier for early Connect Four positions), to count where the choice mattered.

``--sample N`` judges N positions per depth band, drawn at random (``--seed``: a
position's place in the order is a hash of the seed and its moves, so two trees'
samples share the positions both hold, and reruns meet the same positions);
``--seconds S`` stops a band after S seconds of judging (the sample is in random
order, so what was judged is still a random sample, minus the positions beyond
``--max-nodes``, which are counted). Shares come with 95% Wilson intervals.
``--cache FILE`` keeps every value and bound learned, for the next run.

``--model PATH`` adds a second reference: a fresh PUCT search of ``--iterations``
simulations guided by that fitted model (``--mix``: the playout's share of a leaf's
value, the learning loop's 0.5 by default), paired with the stored tree too. For a
learning loop's tree and its final model it tells how far the stored moves, chosen
by the model versions of their day, lag what the final model's search plays now.

With two databases (e.g. one tree trained with ``--statistics classic``, one
with ``--statistics graph``), each is judged on its own positions, and then both
on the positions both hold (sampled the same way): the paired comparison of the
second against the first, with McNemar's z.

    .venv/bin/python benchmarks/oracle.py data/connect4.db --cache /tmp/oracle.sqlite
    .venv/bin/python benchmarks/oracle.py loop.db --model loop.npz --bands 3-5 6-9 10+ --sample 400 \\
        --seconds 300 --max-nodes 100000000 --cache /tmp/s8/oracle.sqlite
    .venv/bin/python benchmarks/oracle.py plain.db graph.db --bands 3-5 6-9 --sample 150 --seconds 900 \\
        --max-nodes 300000000 --cache /tmp/s8/oracle.sqlite --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Sequence

import treelab
from treelab.analysis.optimality import (
    Chooser,
    Verdict,
    judge_positions,
    puct_chooser,
    tree_chooser,
    tree_positions,
    uct_chooser,
)
from treelab.mcts.evaluators import ModelEvaluator
from treelab.oracle import OracleCache, require_oracle
from treelab.play.arena import wilson_interval

Band = tuple[int, int | None]


def parse_band(text: str) -> Band:
    if text.endswith("+"):
        return int(text[:-1]), None
    first, _, last = text.partition("-")
    return int(first), int(last or first)


def band_name(band: Band) -> str:
    return f"{band[0]}+" if band[1] is None else f"{band[0]}-{band[1]}"


def in_band(moves: Sequence[int], band: Band) -> bool:
    return len(moves) >= band[0] and (band[1] is None or len(moves) <= band[1])


def draw(seed: int, notation: str) -> str:
    """A position's place in the random order of ``seed``: the same in every tree and every run (bottom-k
    sampling), so the samples of two trees share the positions both hold, and a rerun meets the same ones."""
    return hashlib.sha256(f"{seed}:{notation}".encode()).hexdigest()


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def share(right: int, n: int) -> dict[str, object]:
    low, high = wilson_interval(right / n, n) if n else (0.0, 1.0)
    return {"optimal": right, "n": n, "share": right / n if n else None, "low": low, "high": high}


def shown(s: dict[str, object]) -> str:
    if not s["n"]:
        return "-"
    return f"{s['share']:.1%} ({s['low']:.1%}-{s['high']:.1%})"


def paired(first: list[bool], second: list[bool]) -> dict[str, object]:
    """McNemar's test of ``second`` against ``first`` over the same positions (z > 0: second better)."""
    better = sum(b and not a for a, b in zip(first, second, strict=True))
    worse = sum(a and not b for a, b in zip(first, second, strict=True))
    z = (better - worse) / math.sqrt(better + worse) if better + worse else 0.0
    return {"second_only": better, "first_only": worse, "z": z}


def judge_sample(game, sample: list[tuple[int, ...]], choosers: dict[str, Chooser], oracle, *, mattered: bool,
                 seconds: float | None, label: str) -> tuple[dict[str, list[bool]], list[tuple[int, ...]], int]:
    """Judge every chooser at each position of ``sample`` in order, until ``seconds``.

    Returns each chooser's verdicts (same positions, paired), the positions judged and the number beyond the
    oracle's budget. A position is kept only when every chooser's move was judged.
    """
    start = time.perf_counter()
    verdicts: dict[str, list[bool]] = {name: [] for name in choosers}
    unsolved = tried = 0
    judged: list[tuple[int, ...]] = []
    for moves in sample:
        if seconds is not None and time.perf_counter() - start > seconds:
            break
        tried += 1
        got: dict[str, Verdict | None] = {}
        for name, chooser in choosers.items():
            got[name] = judge_positions(game, [moves], chooser, oracle=oracle, mattered=mattered)[0]
            if got[name] is None:
                break
        if any(v is None for v in got.values()) or len(got) < len(choosers):
            unsolved += 1
            continue
        judged.append(moves)
        for name, verdict in got.items():
            verdicts[name].append(verdict.optimal)  # type: ignore[union-attr]
        if tried % 10 == 0:
            print(f"  ... {label}: {tried}/{len(sample)} tried, {tried - unsolved} judged, "
                  f"{time.perf_counter() - start:.0f}s, load {load()}", file=sys.stderr, flush=True)
    return verdicts, judged, unsolved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dbs", nargs="+", metavar="DB", help="one tree, or two to compare (paired)")
    parser.add_argument("--min-selections", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=200, help="the fresh UCT reference's simulations")
    parser.add_argument("--bands", nargs="+", default=["0-2", "3-5", "6-9", "10+"], help="depth bands (discs)")
    parser.add_argument("--sample", type=int, default=0, help="positions drawn at random per band (0: all)")
    parser.add_argument("--seconds", type=float, default=None, help="stop judging a band after this long")
    parser.add_argument("--max-nodes", type=int, default=30_000_000, help="oracle budget per search")
    parser.add_argument("--cache", default=None, help="an SQLite file keeping solved positions between runs")
    parser.add_argument("--mattered", action="store_true",
                        help="value every move (costly), to count where the choice mattered")
    parser.add_argument("--no-fresh", action="store_true", help="leave out the fresh UCT reference")
    parser.add_argument("--common-only", action="store_true",
                        help="with two databases: only the positions both hold (not each tree's own)")
    parser.add_argument("--model", default=None, help="also a fresh PUCT search guided by this fitted model")
    parser.add_argument("--mix", type=float, default=0.5, help="with --model: the playout's share of the leaf value")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()
    if len(args.dbs) > 2:
        parser.error("one or two databases")

    bands = [parse_band(b) for b in args.bands]
    deepest = None if any(b[1] is None for b in bands) else max(b[1] for b in bands)  # type: ignore[type-var]
    began = time.perf_counter()
    trees = {db: treelab.load(db, depth=None if deepest is None else deepest + 1) for db in args.dbs}
    game = next(iter(trees.values())).game
    cache = OracleCache(args.cache) if args.cache else None
    oracle = require_oracle(game, cache=cache, max_nodes=args.max_nodes) if game.name == "connect4" \
        else require_oracle(game)
    fresh = uct_chooser(game, args.iterations, c=next(iter(trees.values())).c, seed=args.seed)
    guided_name = f"fresh PUCT+model, {args.iterations} sims"
    guided = None if args.model is None else puct_chooser(
        game, args.iterations, ModelEvaluator(args.model, game=game, mix=args.mix), seed=args.seed)
    own = {db: tree_positions(tree, args.min_selections, min_depth=min(b[0] for b in bands), max_depth=deepest)
           for db, tree in trees.items()}
    out: dict[str, object] = {"dbs": args.dbs, "model": args.model, "mix": args.mix, "game": game.name,
                              "min_selections": args.min_selections,
                              "iterations": args.iterations, "max_nodes": args.max_nodes, "sample": args.sample,
                              "seconds": args.seconds, "seed": args.seed, "mattered": args.mattered,
                              "load_start": load(), "tables": []}
    print(f"{game.name}; >= {args.min_selections} selections among the children; oracle budget "
          f"{args.max_nodes:,} positions a search; load {load()} (trees read in {time.perf_counter() - began:.0f}s)")

    def run(title: str, population: list[tuple[int, ...]], choosers: dict[str, Chooser], pairs) -> None:
        print(f"\n{title}")
        for band in bands:
            members = [m for m in population if in_band(m, band)]
            order = sorted(members, key=lambda m: draw(args.seed, game.notation(m)))
            sample = order[:args.sample] if args.sample else order
            start = time.perf_counter()
            verdicts, positions, unsolved = judge_sample(game, sample, choosers, oracle, mattered=args.mattered,
                                                      seconds=args.seconds, label=f"{title[:30]} {band_name(band)}")
            row: dict[str, object] = {"title": title, "band": band_name(band), "population": len(members),
                                      "sampled": len(sample), "judged": len(positions), "beyond_budget": unsolved,
                                      "seconds": round(time.perf_counter() - start), "load": load()}
            row.update({name: share(sum(v), len(v)) for name, v in verdicts.items()})
            for first, second in pairs:
                row[f"{second} vs {first}"] = paired(verdicts[first], verdicts[second])
            row["verdicts"] = {game.notation(m): [verdicts[name][i] for name in choosers]
                               for i, m in enumerate(positions)}
            out["tables"].append(row)  # type: ignore[attr-defined]
            print(f"  depths {band_name(band)}: {len(members)} positions, {len(sample)} sampled, "
                  f"{len(positions)} judged, {unsolved} beyond the budget, {row['seconds']}s, load {row['load']}")
            for name in choosers:
                print(f"    {name:>34}: {shown(row[name])}")  # type: ignore[arg-type]
            for first, second in pairs:
                p = row[f"{second} vs {first}"]
                print(f"    {second} vs {first}: {p['second_only']} right where the other is wrong, "  # type: ignore[index]
                      f"{p['first_only']} the reverse, z = {p['z']:.2f}")  # type: ignore[index]

    for db, tree in trees.items():
        if args.common_only and len(trees) == 2:
            break
        choosers: dict[str, Chooser] = {"stored tree": tree_chooser(tree)}
        if not args.no_fresh:
            choosers[f"fresh UCT, {args.iterations} sims"] = fresh
        pairs = [] if args.no_fresh else [(f"fresh UCT, {args.iterations} sims", "stored tree")]
        if guided is not None:
            choosers[guided_name] = guided
            pairs.append((guided_name, "stored tree"))
        run(f"{db} ({len(tree):,} nodes read)", own[db], choosers, pairs)
    if len(trees) == 2:
        first, second = args.dbs
        common = sorted(set(own[first]) & set(own[second]))
        choosers = {first: tree_chooser(trees[first]), second: tree_chooser(trees[second])}
        if not args.no_fresh:
            choosers[f"fresh UCT, {args.iterations} sims"] = fresh
        run(f"positions both trees hold: {second} against {first}", common, choosers, [(first, second)])
    out["load_end"] = load()
    out["total_seconds"] = round(time.perf_counter() - began)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
