"""The learning loop on Connect Four, measured: score of the model-guided player against fresh searches.

One run, all at ``--iterations`` simulations a move for both sides, colours alternating, 95% Wilson
intervals:

1. the loop (:func:`treelab.learning_loop`) trains a fresh database for ``--games`` self-play games,
   refitting the model every ``--refit-every`` games (``--self-play-iterations`` simulations a move if
   given, on ``--workers`` processes; the loop's defaults: PUCT with the heuristic
   evaluator until the first model, then PUCT with the model; ``--mix``: the playout's share of the
   leaf value; refits warm-started on ``--sample`` positions); wall time and each refit's held-out
   metrics recorded;
2. at each ``--checkpoints`` count of loop games (default: only the last), the model-guided player
   ``puct:iterations=N,model=M,mix=W`` (no stored tree at match time) plays a fresh
   ``uct:iterations=N``; at the last also OpenSpiel's ``MCTSBot`` at equal simulations;
3. the same-run reference: the plain persistent tree, trained the same number of games with
   :func:`treelab.train`'s defaults (UCT, no model), playing read-only from its database
   (``uct:iterations=N,db=PLAIN.db``) against a fresh UCT tree.

OpenSpiel's exploration is put on treelab's scale: treelab's UCT uses ``c = sqrt(2)`` on [0, 1]
means and OpenSpiel's ``uct_c`` applies to [-1, 1] returns, so ``uct_c = 2*sqrt(2)`` (``--openspiel-uct-c``,
2.8284) explores like the fresh UCT opponent (docs/design.md; ``benchmarks/vs_openspiel.py`` instead
matches OpenSpiel's default sqrt(2) with treelab's ``c = 1/sqrt(2)``).

Results are written to ``--out`` after every stage (a stopped run keeps what it measured); the
databases and models stay in ``--workdir``, so a run given the same ``--workdir`` resumes the loop.

    .venv/bin/python benchmarks/learning_loop.py --games 300 --refit-every 100 --out out/loop.json
    .venv/bin/python benchmarks/learning_loop.py --games 400 --checkpoints 200 400 --plot out/loop.png
    .venv/bin/python benchmarks/learning_loop.py --games 300 --algorithm puct --evaluator heuristic --no-plain
    .venv/bin/python benchmarks/learning_loop.py --games 1000 --self-play-iterations 400 --workers 2 --no-plain
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path
from typing import Any


def match(a: str, b: str, games: int, seed: int) -> dict[str, Any]:
    """``a`` against ``b``, colours alternating, with the score's 95% interval."""
    from treelab.play.arena import play_match

    result = play_match("connect4", a, b, games=games, seed=seed)
    low, high = result.ci95
    return {"a": a, "b": b, "games": result.games, "a_wins": result.a_wins, "b_wins": result.b_wins,
            "draws": result.draws, "score": round(result.a_score, 4), "ci95": [round(low, 4), round(high, 4)],
            "seed": seed, "seconds": round(result.seconds, 1)}


def _say(label: str, row: dict[str, Any]) -> None:
    low, high = row["ci95"]
    print(f"{label}: {row['score']:.3f} [{low:.3f}, {high:.3f}] over {row['games']} games "
          f"({row['a_wins']}-{row['b_wins']}-{row['draws']}, {row['seconds']}s)", flush=True)


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def run(args: argparse.Namespace, save: Any) -> dict[str, Any]:
    import treelab
    from treelab.learn.fitting import FitConfig
    from treelab.play.learning import first_search

    n = args.iterations
    work = args.workdir
    db, model = work / "loop.db", work / "loop.npz"
    pre: dict[str, Any] = {k: v for k, v in (("algorithm", args.algorithm), ("evaluator", args.evaluator)) if v}
    playing: dict[str, Any] = {} if args.temperature_moves is None else {"temperature_moves": args.temperature_moves}
    if args.workers:
        playing["workers"] = args.workers
    hidden = {"hidden": tuple(int(x) for x in args.hidden.split(","))} if args.hidden else {}
    out: dict[str, Any] = {
        "game": "connect4", "iterations": n, "games": args.games, "refit_every": args.refit_every, "mix": args.mix,
        "min_visits": args.min_visits, "min_selections": args.min_selections, "sample": args.sample, "seed": args.seed,
        "outcome": args.outcome, "root_value": args.root_value, **hidden, **playing,
        "self_play_iterations": args.self_play_iterations or n,
        "before_first_model": pre or first_search(treelab.find_game("connect4")) or {"algorithm": "uct"},
        "cpus": os.cpu_count(), "load_at_start": _load(), "loop": {"seconds": 0.0, "refits": []}, "curve": []}
    player = f"puct:iterations={n},model={model}" + (f",mix={args.mix}" if args.mix else "")
    fresh = f"uct:iterations={n}"
    done = treelab.info(db)["games"] if db.exists() else 0
    for target in sorted(set(args.checkpoints or []) | {args.games}):
        if target > done:
            summary = treelab.learning_loop(
                "connect4", db, model, target - done, refit_every=args.refit_every,
                fitting=FitConfig(min_visits=args.min_visits, min_selections=args.min_selections,
                                  sample=args.sample or None,
                                  outcome=args.outcome, root_value=args.root_value, **hidden),
                iterations=args.self_play_iterations or n,
                mix=args.mix, seed=args.seed, progress=False, **pre, **playing)
            out["loop"]["seconds"] = round(out["loop"]["seconds"] + summary.seconds, 1)
            out["loop"]["refits"] += [
                {"version": r.version, "games": r.games, "positions": r.positions,
                 "value_sign_accuracy": r.value_sign_accuracy, "policy_top1": r.policy_top1,
                 "seconds": round(r.seconds, 1)} for r in summary.refits]
            out["loop"]["notes"] = list(summary.notes)
            out["loop"].setdefault("steps", []).extend(
                {"games": r.games, "seconds": round(r.seconds, 1), "nodes": r.nodes} for r in summary.runs)
            print(summary.describe(), flush=True)
            done = summary.total_games
        out["loop"]["total_games"] = done
        out["loop"]["load_after"] = _load()
        if not model.exists():
            print(f"after {done} games: no model yet (see the notes), nothing to measure", flush=True)
            continue
        point = match(player, fresh, args.match_games, args.seed + 7 * target)
        point["trained_games"] = done
        out["curve"].append(point)
        _say(f"loop after {done} games vs {fresh}", point)
        save(out)
    if args.openspiel and model.exists():
        bot = f"openspiel:simulations={n},c={args.openspiel_uct_c}"
        out["vs_openspiel"] = match(player, bot, args.match_games, args.seed + 11)
        _say(f"loop vs {bot}", out["vs_openspiel"])
        save(out)
    if args.plain:
        plain = work / "plain.db"
        have = treelab.info(plain)["games"] if plain.exists() else 0
        started = time.perf_counter()
        if have < done:
            treelab.train("connect4", plain, games=done - have, iterations=n, seed=args.seed, progress=False)
        row = match(f"uct:iterations={n},db={plain}", fresh, args.match_games, args.seed + 13)
        row["trained_games"] = done
        row["train_seconds"] = round(time.perf_counter() - started - row["seconds"], 1)
        out["plain"] = row
        _say(f"plain tree after {done} games vs {fresh}", row)
    out["load_at_end"] = _load()
    save(out)
    return out


def plot(target: Path, data: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = [p["trained_games"] for p in data["curve"]]
    ys = [p["score"] for p in data["curve"]]
    err = [[p["score"] - p["ci95"][0] for p in data["curve"]], [p["ci95"][1] - p["score"] for p in data["curve"]]]
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=f"loop (mix {data['mix']}) vs fresh UCT")
    if "plain" in data:
        p = data["plain"]
        ax.errorbar([p["trained_games"]], [p["score"]], yerr=[[p["score"] - p["ci95"][0]], [p["ci95"][1] - p["score"]]],
                    marker="s", capsize=3, ls="none", label="plain persistent tree vs fresh UCT")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.axhline(0.85, color="grey", lw=0.8, ls=":", label="target 0.85")
    ax.set_xlabel(f"self-play games (Connect Four, {data['iterations']} simulations a move)")
    ax.set_ylabel("score (95% CI)")
    ax.set_ylim(0.3, 1.0)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    print(f"wrote {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300, help="Self-play games of the loop.")
    parser.add_argument("--iterations", type=int, default=200, help="Simulations a move, every player.")
    parser.add_argument("--refit-every", type=int, default=100)
    parser.add_argument("--mix", type=float, default=0.5, help="The playout's share of the leaf value (0: model only).")
    parser.add_argument("--min-visits", type=int, default=20, help="The fits' --min-visits.")
    parser.add_argument("--min-selections", type=int, default=0,
                        help="The fits' --min-selections (0: every position).")
    parser.add_argument("--hidden", default=None, help="The refits' hidden layers, e.g. 256,128 (default: the loop's).")
    parser.add_argument("--outcome", type=float, default=0.0,
                        help="The refits' --outcome: the games' outcomes' share of the value target (0.5: z + q).")
    parser.add_argument("--self-play-iterations", type=int, default=None,
                        help="The loop's simulations a move (default: --iterations; the matches keep --iterations).")
    parser.add_argument("--workers", type=int, default=None, help="The loop's self-play processes (default: one).")
    parser.add_argument("--temperature-moves", type=int, default=None,
                        help="Self-play moves sampled with temperature 1 (default: train's, 8).")
    parser.add_argument("--root-value", type=float, default=0.0,
                        help="The logged searches' values' share of the value target where a game searched.")
    parser.add_argument("--sample", type=int, default=10_000, help="Positions a refit trains on at most (0: all).")
    parser.add_argument("--algorithm", default=None,
                        help="Search before the first model (default: the loop's, PUCT with the heuristic).")
    parser.add_argument("--evaluator", default=None, help="PUCT's evaluator before the first model (e.g. heuristic).")
    parser.add_argument("--checkpoints", type=int, nargs="*", default=[], help="Loop game counts to measure at too.")
    parser.add_argument("--match-games", type=int, default=100, help="Games per match (even: colours balance).")
    parser.add_argument("--openspiel", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--openspiel-uct-c", type=float, default=round(2 * math.sqrt(2), 4))
    parser.add_argument("--plain", action=argparse.BooleanOptionalAction, default=True,
                        help="Also train and measure the plain persistent tree (the same-run reference).")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("out/learning_loop"))
    parser.add_argument("--out", type=Path, default=None, help="JSON results (default: WORKDIR/results.json).")
    parser.add_argument("--plot", type=Path, default=None, help="Draw the score curve into this image.")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    target = args.out or args.workdir / "results.json"

    def save(data: dict[str, Any]) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(data, indent=1))

    out = run(args, save)
    if args.plot is not None and out["curve"]:
        plot(args.plot, out)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
