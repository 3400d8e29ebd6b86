"""The learning curve of a learning loop: each model version's mistake rates (Pons' protocol) against the
minutes and games the loop had trained when it was fitted, drawn and printed.

The loop keeps every version beside its model file (``c4.npz`` -> ``c4.v1.npz``, ``c4.v2.npz``, ...); each
records the games logged when it was fitted, and the database's games table says when each game finished,
so a version's place on the curve is known without any timing of one's own. Every version asked is searched
as ``puct:iterations=N,model=VERSION`` (a fresh tree per position, temperature 0, no noise; ``--mix`` as the
loop's games mix a playout in, 0 by default as the issue's table), on treelab's own judged positions
(``--split test`` by default: the half never tuned on), ``--per-class`` of each of Pons' six classes.

    .venv/bin/python benchmarks/learning_curve.py --db c4.db --model c4.npz --per-class 100 --every 5 \\
        -o docs/img/learning-curve.png --json curve.json
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from datetime import datetime
from pathlib import Path

from treelab.analysis.mistakes import PONS_CLASSES
from treelab.learn.model import load_model
from treelab.play.mistakes import mistake_rates


def versions(model: Path) -> list[tuple[int, Path]]:
    """Every kept version of ``model`` (``NAME.vN.SUFFIX``), by version."""
    pattern = re.compile(rf"^{re.escape(model.stem)}\.v(\d+){re.escape(model.suffix)}$")
    found = [(int(m.group(1)), p) for p in model.parent.iterdir() if (m := pattern.match(p.name))]
    return sorted(found)


def minutes_at(db: Path) -> dict[int, float]:
    """Minutes from the first game's start to the end of each game, by game id."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT id, started_at, finished_at FROM games ORDER BY id").fetchall()
    finally:
        conn.close()
    if not rows:
        return {}
    first = datetime.fromisoformat(rows[0][1])
    return {gid: (datetime.fromisoformat(done) - first).total_seconds() / 60.0 for gid, _, done in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True, help="the loop's database")
    parser.add_argument("--model", type=Path, required=True, help="the loop's model file (its versions beside it)")
    parser.add_argument("--iterations", type=int, default=600)
    parser.add_argument("--mix", type=float, default=0.0)
    parser.add_argument("--per-class", type=int, default=100)
    parser.add_argument("--split", default="test")
    parser.add_argument("--every", type=int, default=1, help="ask every k-th version (the last always)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--reference", default="uct:iterations=600",
                        help="a player drawn as dashed lines beside the curve (empty: none)")
    parser.add_argument("-o", "--out", type=Path, help="draw the curve into this PNG")
    parser.add_argument("--json", type=Path, help="write the points as JSON")
    args = parser.parse_args()

    clock = minutes_at(args.db)
    kept = versions(args.model)
    asked = [v for i, v in enumerate(kept) if i % args.every == args.every - 1 or i == len(kept) - 1]
    points = []
    print(f"{'version':>7} {'games':>6} {'minutes':>7}  " + "  ".join(f"{c:>16}" for c in PONS_CLASSES))
    for version, path in asked:
        games = int(load_model(path).info.get("games_logged", 0))
        mix = f",mix={args.mix}" if args.mix else ""
        report = mistake_rates(f"puct:iterations={args.iterations},model={path}{mix}", split=args.split,
                               per_class=args.per_class, seed=args.seed)
        rates = {row.name: row for row in report.classes}
        point = {"version": version, "games": games, "minutes": clock.get(games),
                 "classes": {name: rates[name].to_dict() for name in PONS_CLASSES if name in rates}}
        points.append(point)
        cells = "  ".join(f"{rates[c].rate:>7.1%} ({rates[c].positions:>4})" if c in rates else f"{'-':>16}"
                          for c in PONS_CLASSES)
        minutes = "-" if point["minutes"] is None else f"{point['minutes']:.1f}"
        print(f"{version:>7} {games:>6} {minutes:>7}  {cells}", flush=True)
    reference = None
    if args.reference:
        reference = mistake_rates(args.reference, split=args.split, per_class=args.per_class, seed=args.seed)
        cells = "  ".join(f"{row.rate:>7.1%} ({row.positions:>4})" for row in reference.classes)
        print(f"{args.reference}: {cells}")
    if args.json is not None:
        args.json.write_text(json.dumps({"db": str(args.db), "model": str(args.model), "iterations": args.iterations,
                                         "mix": args.mix, "split": args.split, "per_class": args.per_class,
                                         "points": points,
                                         "reference": None if reference is None else reference.to_dict()}, indent=1))
    if args.out is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4.5))
        for name in PONS_CLASSES:
            xs = [p["minutes"] for p in points if name in p["classes"] and p["minutes"] is not None]
            ys = [100 * p["classes"][name]["rate"] for p in points if name in p["classes"] and p["minutes"] is not None]
            if xs:
                line, = ax.plot(xs, ys, marker="o", label=name)
                row = reference.rate_of(name) if reference is not None else None
                if row is not None and row.mistakes:
                    ax.axhline(100 * row.rate, color=line.get_color(), linestyle="--", linewidth=1, alpha=0.7)
        ax.set_xlabel("minutes of training (wall time, from the first game)")
        ax.set_ylabel("mistake rate, % (lower is better)")
        counts = [p["classes"][c]["positions"] for p in points[-1:] for c in PONS_CLASSES if c in p["classes"]]
        held = f"{min(counts)}-{max(counts)}" if counts and min(counts) != max(counts) else str(args.per_class)
        ax.set_title(f"Learning loop: mistakes per class, PUCT {args.iterations} simulations, "
                     f"{held} {args.split} positions a class"
                     + (f"\n(dashed: {args.reference}, fresh trees)" if reference is not None else ""), fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2)
        fig.tight_layout()
        fig.savefig(args.out, dpi=110)
        print(f"drew {args.out}")


if __name__ == "__main__":
    main()
