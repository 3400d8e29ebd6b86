"""Does the persistent tree learn? Score of a trained tree against a fresh one, as training goes on.

For each exploration setting, self-play training grows one database in steps
(``--checkpoints``, games in all); after each step the trained tree plays a
match against a fresh UCT tree at the same simulations per move, colours
alternating. The trained player searches on its stored tree *read only*: every
game of the match starts from the database again (``uct:...,db=PATH``, see
:mod:`treelab.play.stored`), so the match measures what the training stored,
not what the match itself taught it. Scores come with 95% Wilson intervals.

At the last checkpoint of the first setting it also plays OpenSpiel's
``MCTSBot`` at the same simulations (``uct_c = sqrt(2)`` on [-1, 1] returns,
which explores like treelab's ``c = 1/sqrt(2)``; docs/design.md) and, as the
reference in the same run, a fresh UCT tree against the same bot; and it asks
how many fresh simulations per move match the trained tree (fresh UCT at
larger budgets against it: the budget where the trained tree's score crosses
0.5).

Results go to a JSON file per setting (``--out``); ``--plot`` draws every JSON
given into one figure (the README's ``docs/img/learning.png``).

    .venv/bin/python benchmarks/learning.py --setting default --checkpoints 0 50 100 200 500 1000
    .venv/bin/python benchmarks/learning.py --setting none --checkpoints 0 100 200 --final-games 64
    .venv/bin/python benchmarks/learning.py --plot docs/img/learning.png runs/*.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},  # treelab's defaults: tau = 1 for the first 8 moves, root noise 0.25
    "tau8": {"noise": 0.0},  # the temperature alone
    "noise": {"noise": 0.25},  # tau = 1 for 8 moves and AlphaZero's root Dirichlet noise share (the default)
    "none": {"temperature": 0.0, "noise": 0.0},  # no exploration: the most selected move, every move
    "tau-all": {"temperature_moves": None},  # tau = 1 for every move
    "tau-4": {"temperature_moves": 4},
    "tau-16": {"temperature_moves": 16},
    "pool": {"pool": "self,heuristic"},  # each game against self or the heuristic player, drawn with the seed
}
"""Exploration settings compared (keyword arguments of :func:`treelab.train` over its defaults)."""


def match(db: Path | None, opponent: str, games: int, iterations: int, seed: int) -> dict[str, Any]:
    """The trained tree (``db``; None: a fresh tree) against ``opponent``, colours alternating."""
    from treelab.play.arena import play_match

    me = f"uct:iterations={iterations}" + (f",db={db}" if db is not None else "")
    result = play_match("connect4", me, opponent, games=games, seed=seed)
    low, high = result.ci95
    return {"games": games, "score": result.a_score, "low": low, "high": high, "opponent": opponent,
            "seconds": round(result.seconds, 1)}


def run(setting: str, checkpoints: list[int], iterations: int, games: int, final_games: int, seed: int,
        openspiel: bool, budgets: list[int], workdir: Path) -> dict[str, Any]:
    import treelab

    options = SETTINGS[setting]
    db = workdir / f"{setting}.db"
    db.unlink(missing_ok=True)
    curve = []
    done = 0
    train_seconds = 0.0
    distinct = 0
    for target in checkpoints:
        if target > done:
            started = time.perf_counter()
            summary = treelab.train("connect4", db, games=target - done, iterations=iterations,
                                    seed=seed + target, progress=False, **options)
            train_seconds += time.perf_counter() - started
            distinct += summary.distinct
            done = target
        n = final_games if target == checkpoints[-1] else games
        point = match(db if done else None, f"uct:iterations={iterations}", n, iterations, seed + 7 * target)
        point["trained_games"] = done
        curve.append(point)
        print(f"{setting:>8} after {done:>5} games: score {point['score']:.3f} "
              f"[{point['low']:.3f}, {point['high']:.3f}] over {n} games ({point['seconds']}s)", flush=True)
    out: dict[str, Any] = {"setting": setting, "options": options, "iterations": iterations, "curve": curve,
                           "train_seconds": round(train_seconds, 1), "games_trained": done,
                           "distinct_games": distinct}
    if openspiel and done:
        bot = f"openspiel:simulations={iterations}"
        out["vs_openspiel"] = {"trained": match(db, bot, final_games, iterations, seed + 11),
                               "fresh": match(None, bot, final_games, iterations, seed + 11)}
        print(f"vs OpenSpiel MCTSBot at {iterations}: trained {out['vs_openspiel']['trained']['score']:.3f}, "
              f"fresh {out['vs_openspiel']['fresh']['score']:.3f}", flush=True)
    if budgets and done:
        rows = []
        for budget in budgets:
            point = match(db, f"uct:iterations={budget}", games, iterations, seed + budget)
            point["fresh_iterations"] = budget
            rows.append(point)
            print(f"trained at {iterations} vs fresh at {budget}: {point['score']:.3f} "
                  f"[{point['low']:.3f}, {point['high']:.3f}]", flush=True)
        out["vs_budgets"] = rows
        out["matching_fresh_iterations"] = crossing(iterations, curve[-1]["score"], rows)
        print(f"a fresh tree needs about {out['matching_fresh_iterations']} simulations a move to match",
              flush=True)
    return out


def crossing(iterations: int, score: float, rows: list[dict[str, Any]]) -> float | None:
    """The fresh budget where the trained tree's score crosses 0.5 (log-linear interpolation).

    None if it stays above 0.5 at every budget tried (then it is more than the largest).
    """
    points = [(iterations, score)] + [(r["fresh_iterations"], r["score"]) for r in rows]
    for (n0, s0), (n1, s1) in itertools.pairwise(points):
        if s0 >= 0.5 >= s1 and s0 != s1:
            t = (s0 - 0.5) / (s0 - s1)
            return round(math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0))))
    return None if points[-1][1] > 0.5 else iterations


def plot(target: Path, files: list[Path]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for f in files:
        data = json.loads(f.read_text())
        xs = [p["trained_games"] for p in data["curve"]]
        ys = [p["score"] for p in data["curve"]]
        lo = [p["score"] - p["low"] for p in data["curve"]]
        hi = [p["high"] - p["score"] for p in data["curve"]]
        label = data.get("label") or data["setting"] + (f" {data['options']}" if data["options"] else "")
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=label)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.axhline(0.75, color="grey", lw=0.8, ls=":")
    ax.set_xticks([0, 50, 100, 200, 500, 1000])
    ax.set_xlabel("self-play training games (Connect Four, 200 simulations a move)")
    ax.set_ylabel("score vs a fresh UCT tree (95% CI)")
    ax.set_ylim(0.3, 1.0)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title("Does the persistent tree learn?")
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    print(f"wrote {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setting", choices=sorted(SETTINGS), default="default")
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[0, 50, 100, 200, 500, 1000])
    parser.add_argument("--iterations", type=int, default=200, help="Simulations a move, both sides.")
    parser.add_argument("--games", type=int, default=64, help="Match games at each checkpoint but the last.")
    parser.add_argument("--final-games", type=int, default=200, help="Match games at the last checkpoint.")
    parser.add_argument("--openspiel", action="store_true", help="Also play OpenSpiel's MCTSBot at the end.")
    parser.add_argument("--budgets", type=int, nargs="*", default=[],
                        help="Fresh UCT budgets to play the final tree against (e.g. 400 800 1600).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None, help="Where the databases go (default: a temp dir).")
    parser.add_argument("--out", type=Path, default=None, help="JSON results file.")
    parser.add_argument("--plot", type=Path, default=None, help="Draw the JSON files given into this image.")
    parser.add_argument("files", type=Path, nargs="*", help="JSON results to plot (with --plot).")
    args = parser.parse_args()
    if args.plot is not None:
        plot(args.plot, args.files)
        return
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        out = run(args.setting, sorted(set(args.checkpoints)), args.iterations, args.games, args.final_games,
                  args.seed, args.openspiel, args.budgets, workdir)
    text = json.dumps(out, indent=1)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
