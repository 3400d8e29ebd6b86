"""Model-guided PUCT simulations per second: this checkout against UCT and against previous code, in one run.

Each round times, in turn (the order rotating between rounds), one search per searcher from the same
Connect Four positions, each in a fresh process:

- ``puct``: PUCT guided by the model (``treelab.puct_search`` with ``evaluator=model:MODEL``), this checkout
  (the compiled batch of ``_puct.c`` where it is built);
- ``puct-python``: the same search on the Python phases alone (``TREELAB_PURE_PYTHON=1`` is not used: it
  would also slow the game's moves; the batch is switched off instead), the reference the compiled path
  must equal;
- ``uct``: UCT with random playouts (the compiled loop), the same budget;
- ``previous``: the model-guided search of another checkout (``--previous PATH``, a git worktree of an
  earlier commit with its extension built), when given.

Prints each round and the medians of the simulations per second, and the ratios: PUCT to UCT, and this
checkout's PUCT to the previous code's and to its own Python phases.

    .venv/bin/python benchmarks/puct_speed.py --model c4.npz
    git worktree add /tmp/prev HEAD~5 && (cd /tmp/prev && make setup)  # or build its extension in place
    .venv/bin/python benchmarks/puct_speed.py --model c4.npz --previous /tmp/prev --iterations 5000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

POSITIONS = ("", "44", "4453", "445362")
"""Where the searches start: the empty board and a few openings."""

_SCRIPT = r"""
import json, random, sys, time
kind, model, iterations, seed, positions = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
import treelab
from treelab.mcts.evaluators import find_evaluator
try:
    from treelab.mcts.dispatch import puct_search
except ImportError:  # code before the one dispatch
    from treelab.mcts.puct import puct_search
from treelab.mcts.loop import Limit
if kind == "puct-python":
    import treelab.mcts.puct as phases
    phases._COMPILED = None
evaluator = find_evaluator("model:" + model, game="connect4") if kind != "uct" else None
sims = seconds = 0.0
for i, moves in enumerate(positions):
    moves = "" if moves == "-" else moves
    tree = treelab.Tree("connect4")
    started = time.perf_counter()
    if kind == "uct":
        done = treelab.search(tree, moves, limit=Limit(iterations=iterations), rng=seed + i)
    else:
        done = puct_search(tree, moves, limit=Limit(iterations=iterations), evaluator=evaluator, rng=seed + i)
    seconds += time.perf_counter() - started
    sims += done
print(json.dumps({"rate": sims / seconds, "sims": sims}))
"""


def _rate(kind: str, root: Path, model: str, iterations: int, seed: int) -> float:
    """Simulations per second of one searcher over :data:`POSITIONS`, in a fresh process on ``root``'s code."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("TREELAB_PURE_PYTHON", None)
    positions = [p or "-" for p in POSITIONS]
    out = subprocess.run([sys.executable, "-c", _SCRIPT, kind, model, str(iterations), str(seed), *positions],
                         env=env, capture_output=True, text=True, check=True, cwd=root)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["rate"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="a Connect Four model fitted by treelab fit")
    parser.add_argument("--previous", type=Path, help="a checkout of earlier code (its extension built) to compare")
    parser.add_argument("--iterations", type=int, default=3000, help="simulations per search")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    model = str(Path(args.model).resolve())
    searchers: dict[str, Path] = {"puct": here, "puct-python": here, "uct": here}
    if args.previous is not None:
        searchers["previous"] = args.previous.resolve()
    rates: dict[str, list[float]] = {name: [] for name in searchers}
    names = list(searchers)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            kind = "puct" if name == "previous" else name
            rates[name].append(_rate(kind, searchers[name], model, args.iterations, args.seed))
        print(f"round {r + 1}: " + "  ".join(f"{n} {rates[n][-1]:,.0f}/s" for n in names), flush=True)
    median = {n: statistics.median(v) for n, v in rates.items()}
    print(f"\nmedians over {args.rounds} rounds, {args.iterations} simulations from each of {len(POSITIONS)} "
          "positions:")
    for n in names:
        print(f"  {n:12s} {median[n]:>10,.0f} simulations/s")
    print(f"  PUCT with the model / UCT:              1/{median['uct'] / median['puct']:.1f}")
    print(f"  compiled PUCT / its Python phases:      {median['puct'] / median['puct-python']:.1f}x")
    if "previous" in median:
        print(f"  this checkout's PUCT / previous code's: {median['puct'] / median['previous']:.1f}x "
              f"(previous 1/{median['uct'] / median['previous']:.1f} of UCT)")


if __name__ == "__main__":
    main()
