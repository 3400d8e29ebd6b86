"""Mistake rates per class (Pascal Pons' test protocol) of one or more players, side by side.

Each ``--player SPEC`` (as ``treelab arena`` reads them: ``uct:iterations=600``,
``puct:iterations=600,model=M.npz``, ``puct:iterations=600,model=M.npz,db=TREE.db``
for a stored tree, read only) is asked for its move in treelab's own judged
positions (``data/connect4/mistakes/positions.txt``, see the README beside it):
a fresh tree per position unless ``db=``, temperature 0 and no root noise unless
the spec says otherwise, seeded by ``--seed``. A move is a mistake when another
legal move has a strictly better game-theoretic class (win > draw > loss). The
table gives each class's mistake rate with its Wilson 95% interval; a second
table gives the rate among the positions that allow a mistake at all (some legal
move worse than another: ``decisive``), since every position counts in the first.

``--split test`` (the default) uses the held-out half: never tune anything on
it; ``--split dev`` is the half allowed for tuning. ``--per-class N`` asks the
first N positions of each class (the file orders a class by a hash of the
moves). The last rows quote published figures for reference: AlphaZero.jl's
agent after 15 iterations and its depth-5 minimax baseline, as
quoted from AlphaZero.jl's tutorial, measured on **Pons' own test positions, not these**: a comparison of
levels, not of the same positions.

    .venv/bin/python benchmarks/mistakes.py --player uct:iterations=600 --per-class 200
    .venv/bin/python benchmarks/mistakes.py --player uct:iterations=600 \\
        --player puct:iterations=600,model=loop.npz --split dev --json /tmp/mistakes.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from treelab.analysis.mistakes import DEFAULT_POSITIONS, PONS_CLASSES, SPLITS, read_positions
from treelab.play.mistakes import MistakeReport, mistake_rates

PUBLISHED = {
    "AlphaZero.jl, 15 iterations (published, Pons' positions)": (0.0, 0.0, 0.0, 2.0, 2.8, 7.0),
    "AlphaZero.jl minimax depth 5 (published, Pons' positions)": (1.7, 0.7, 1.4, 7.3, 9.2, 23.5),
}
"""Mistake rates in percent, in the order of :data:`PONS_CLASSES`, as read from AlphaZero.jl's
tutorial (``docs/src/tutorial/connect_four.md``, read from its plot: the easy classes about 0%)."""

SHORT = {"beginning": "begin", "middle": "middle", "end": "end"}


def header() -> str:
    names = [f"{SHORT[n.split('-')[0]]}-{n.split('-')[1]}" for n in PONS_CLASSES]
    return "| player | " + " | ".join(names) + " |\n|---|" + "---|" * len(names)


def row(report: MistakeReport, decisive: bool = False) -> str:
    """A report's table row: each class's rate, its 95% interval and its counts (``decisive``: among the
    positions where a mistake was possible)."""
    cells = []
    for name in PONS_CLASSES:
        found = report.rate_of(name)
        if found is None:
            cells.append("-")
            continue
        rate, (low, high), n = ((found.decisive_rate, found.decisive_ci95, found.decisive) if decisive
                                else (found.rate, found.ci95, found.positions))
        cells.append(f"{100 * rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}] ({found.mistakes}/{n})")
    return f"| {report.player} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--player", action="append", required=True, metavar="SPEC",
                        help="a player spec (several allowed: columns side by side)")
    parser.add_argument("--split", choices=SPLITS, default="test")
    parser.add_argument("--per-class", type=int, default=None, help="positions per class (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--positions", type=Path, default=DEFAULT_POSITIONS, help="the judged positions")
    parser.add_argument("--json", type=Path, default=None, help="also write every report as JSON here")
    args = parser.parse_args(argv)
    positions = read_positions(args.positions, split=args.split)
    reports = []
    for spec in args.player:
        report = mistake_rates(spec, positions, per_class=args.per_class, seed=args.seed, progress=True)
        reports.append(report)
        print(f"{spec}: {len(report.verdicts)} positions in {report.seconds:.0f} s", file=sys.stderr)
    print(f"Mistake rates, {args.split} split of {args.positions.name}, seed {args.seed}: "
          "rate [95% Wilson interval] (mistakes/positions)")
    print(header())
    for report in reports:
        print(row(report))
    for name, figures in PUBLISHED.items():
        print(f"| {name} | " + " | ".join(f"{value:g}%" for value in figures) + " |")
    print("\nThe same, among the positions where a mistake is possible (some legal move worse than another): "
          "rate [95% Wilson interval] (mistakes/such positions)")
    print(header())
    for report in reports:
        print(row(report, decisive=True))
    if args.json is not None:
        args.json.write_text(json.dumps({"split": args.split, "seed": args.seed, "per_class": args.per_class,
                                         "positions": str(args.positions),
                                         "reports": [r.to_dict() for r in reports]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
