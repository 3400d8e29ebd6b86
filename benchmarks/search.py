"""Connect Four simulations per second: treelab's UCT against OpenSpiel's MCTSBot (Python, and C++ in-process).

Both search the empty board with the same number of simulations: OpenSpiel's
``MCTSBot`` (``uct_c = sqrt(2)`` on [-1, 1] returns, ``RandomRolloutEvaluator(n_rollouts=1)``,
``solve=False``) and treelab's UCT (``c = 1/sqrt(2)`` on [0, 1] means: the same
exploration, see docs/design.md), one random playout per simulation. Two modes:

``process`` (the Scale issue's measure): whole processes, start-up included,
timed alternately in one run -- ``treelab analyse connect4 --iterations N --c 0.7071
--seed S --json`` against a ``python -c`` script that builds the bot and runs N
simulations -- at several budgets; prints the median time of each and the ratio.

``inprocess``: both searches in this process, imports done, alternating; prints
every round and the median speed ratio (the search loop alone).

``cpp``: treelab against the C++ bot alone, in this process, at 10,000 and 50,000
simulations (``--cpp-budgets``), alternating; the median speed ratio per budget
(the target of the compiled batch loop, ``treelab/_loop.c``: at least 2x).

``statistics``: the classic rule (compiled batch, and its Python phases) against graph statistics
(Python phases only: ``_loop.c`` has not the rule), simulations per second in this checkout.

``versions``: this checkout's search loop against another checkout's (``--against DIR``, e.g.
the main branch's worktree, its extension built), in separate processes that alternate, the
best of 3 searches a round: the compiled batch, the Python phases (UCT, and UCT with the
solver on tic-tac-toe) and PUCT; prints the median per-round speed ratio of each.

    .venv/bin/python benchmarks/search.py                      # both modes
    .venv/bin/python benchmarks/search.py --mode process --budgets 2000 10000 50000 --rounds 5
    .venv/bin/python benchmarks/search.py --mode inprocess --simulations 20000 --rounds 7
    .venv/bin/python benchmarks/search.py --mode cpp --rounds 7
    .venv/bin/python benchmarks/search.py --mode versions --against ../main --rounds 15
    .venv/bin/python benchmarks/search.py --mode statistics --rounds 7
    TREELAB_PURE_PYTHON=1 .venv/bin/python benchmarks/search.py  # without the compiled playouts
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OPENSPIEL_SCRIPT = """\
import sys
import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts
n, seed = int(sys.argv[1]), int(sys.argv[2])
game = pyspiel.load_game("connect_four")
evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
bot = mcts.MCTSBot(game, uct_c=2 ** 0.5, max_simulations=n, evaluator=evaluator,
                   random_state=np.random.RandomState(seed + 1), solve=False)
print(bot.step(game.new_initial_state()))
"""
"""OpenSpiel's side of the process mode: N simulations from the empty board, the chosen move printed."""


_DESCRIBE = """\
import os, treelab
here = os.path.dirname(treelab.__file__)
if os.path.exists(os.path.join(here, "speedups.py")):
    from treelab import speedups
    print(here, "-", speedups.describe())
elif os.path.exists(os.path.join(here, "fastpath.py")):  # before the rename to treelab.speedups
    from treelab import fastpath
    print(here, "-", fastpath.describe())
else:
    print(here, "- pure Python (before treelab.fastpath)")
"""
"""Which treelab a process imports, and whether its compiled hot paths run."""


def time_openspiel(simulations: int, seed: int) -> float:
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("connect_four")
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed))
    bot = mcts.MCTSBot(game, uct_c=2**0.5, max_simulations=simulations, evaluator=evaluator,
                       random_state=np.random.RandomState(seed + 1), solve=False)
    state = game.new_initial_state()
    started = time.perf_counter()
    bot.step(state)
    return time.perf_counter() - started


def time_openspiel_cpp(simulations: int, seed: int) -> float:
    """OpenSpiel's C++ ``MCTSBot`` (``pyspiel.MCTSBot``, one-rollout ``RandomRolloutEvaluator``), same settings."""
    import pyspiel

    game = pyspiel.load_game("connect_four")
    evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
    bot = pyspiel.MCTSBot(game, evaluator, 2**0.5, simulations, 1000, False, seed + 1, False)
    state = game.new_initial_state()
    started = time.perf_counter()
    bot.step(state)
    return time.perf_counter() - started


def time_treelab(simulations: int, seed: int) -> float:
    import treelab

    tree = treelab.Tree("connect4")
    started = time.perf_counter()
    treelab.search(tree, "", limit=treelab.Limit(iterations=simulations), c=2**-0.5, rng=seed)
    treelab.choose_move(tree.root)
    return time.perf_counter() - started


def time_treelab_phases(simulations: int, seed: int) -> float:
    """:func:`time_treelab` with the Python phases (each calling the compiled walk and playout): the loop before
    ``treelab/_loop.c``, and its reference."""
    from treelab.mcts import uct_phases as uct  # where the compiled batch is chosen

    compiled = uct._compiled_batch
    uct._compiled_batch = lambda *args: None
    try:
        return time_treelab(simulations, seed)
    finally:
        uct._compiled_batch = compiled


def in_process(simulations: int, rounds: int) -> float:
    """The in-process mode; returns the median ratio (treelab's speed over OpenSpiel's)."""
    ratios, ours, theirs, cpp, cpp_ratios = [], [], [], [], []
    time_treelab(200, 0), time_openspiel(200, 0), time_openspiel_cpp(200, 0)  # warm up imports
    exec(_DESCRIBE, {})
    print(f"in-process, {simulations:,} simulations from the empty board")
    print(f"{'round':>5} {'openspiel sims/s':>17} {'openspiel C++':>14} {'treelab sims/s':>15} {'ratio':>6} "
          f"{'vs C++':>7}")
    for r in range(rounds):
        order = [time_openspiel, time_openspiel_cpp, time_treelab]
        times = {f: f(simulations, r) for f in (order if r % 2 == 0 else order[::-1])}
        t_os, t_cpp, t_tl = times[time_openspiel], times[time_openspiel_cpp], times[time_treelab]
        theirs.append(simulations / t_os)
        cpp.append(simulations / t_cpp)
        ours.append(simulations / t_tl)
        ratios.append(t_os / t_tl)
        cpp_ratios.append(t_cpp / t_tl)
        print(f"{r + 1:>5} {theirs[-1]:>17,.0f} {cpp[-1]:>14,.0f} {ours[-1]:>15,.0f} {ratios[-1]:>6.2f} "
              f"{cpp_ratios[-1]:>7.2f}")
    ratio = statistics.median(ratios)
    print(f"median: openspiel {statistics.median(theirs):,.0f} sims/s, openspiel C++ {statistics.median(cpp):,.0f} "
          f"sims/s, treelab {statistics.median(ours):,.0f} sims/s: treelab is {ratio:.2f}x the Python bot, "
          f"{statistics.median(cpp_ratios):.2f}x the C++ bot")
    return ratio


def versus_cpp(budgets: list[int], rounds: int) -> dict[int, float]:
    """The ``cpp`` mode: treelab's UCT against OpenSpiel's C++ MCTSBot alone, in this process, at each budget.

    Rounds alternate which goes first; returns the median speed ratio (treelab over C++) per budget.
    """
    time_treelab(200, 0), time_treelab_phases(200, 0), time_openspiel_cpp(200, 0)  # warm up imports
    exec(_DESCRIBE, {})
    print(f"in-process against OpenSpiel's C++ MCTSBot, {rounds} alternated rounds a budget; 'phases': treelab's "
          "Python phases (the loop before _loop.c)")
    print(f"{'simulations':>11} {'C++ sims/s':>11} {'phases sims/s':>14} {'treelab sims/s':>15} {'phases':>7} "
          f"{'ratio':>6} {'(min-max)':>12}")
    results = {}
    for n in budgets:
        rates: dict[object, list[float]] = {f: [] for f in (time_openspiel_cpp, time_treelab_phases, time_treelab)}
        ratios, before = [], []
        for r in range(rounds):
            order = list(rates) if r % 2 == 0 else list(rates)[::-1]
            times = {f: f(n, r) for f in order}
            for f, t in times.items():
                rates[f].append(n / t)
            ratios.append(times[time_openspiel_cpp] / times[time_treelab])
            before.append(times[time_openspiel_cpp] / times[time_treelab_phases])
        results[n] = statistics.median(ratios)
        cpp, phases, ours = (statistics.median(v) for v in rates.values())
        print(f"{n:>11,} {cpp:>11,.0f} {phases:>14,.0f} {ours:>15,.0f} {statistics.median(before):>7.2f} "
              f"{results[n]:>6.2f} {f'({min(ratios):.2f}-{max(ratios):.2f})':>12}")
    return results


def _treelab_command(pythonpath: str | None) -> list[str]:
    """The installed ``treelab`` script (next to this Python), or ``python -m treelab`` from a source tree."""
    script = Path(sys.executable).with_name("treelab")
    if pythonpath is None and script.exists():
        return [str(script)]
    return [sys.executable, "-m", "treelab"]


def _run(command: list[str], env: dict[str, str], cwd: str | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def whole_processes(budgets: list[int], rounds: int, pythonpath: str | None = None) -> dict[int, float]:
    """The process mode; returns the median time ratio (OpenSpiel's over treelab's) per budget."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    treelab = _treelab_command(pythonpath)
    which = subprocess.run([sys.executable, "-c", _DESCRIBE], env=env, cwd=pythonpath, capture_output=True, text=True)
    print(f"whole processes, start-up included, alternating; treelab: {' '.join(treelab)} [{which.stdout.strip()}]")
    print(f"{'simulations':>11} {'openspiel s':>12} {'treelab s':>10} {'os sims/s':>10} {'tl sims/s':>10} "
          f"{'ratio':>6} {'(min-max)':>12}")
    _run([sys.executable, "-c", OPENSPIEL_SCRIPT, "10", "0"], env)  # warm the file cache
    _run([*treelab, "analyse", "connect4", "--iterations", "10", "--json"], env, pythonpath)
    results = {}
    for n in budgets:
        t_os, t_tl, ratios = [], [], []
        for r in range(rounds):
            os_cmd = [sys.executable, "-c", OPENSPIEL_SCRIPT, str(n), str(r)]
            tl_cmd = [*treelab, "analyse", "connect4", "--iterations", str(n), "--c", "0.7071",
                      "--seed", str(r), "--json"]
            if r % 2 == 0:
                a, b = _run(os_cmd, env), _run(tl_cmd, env, pythonpath)
            else:
                b, a = _run(tl_cmd, env, pythonpath), _run(os_cmd, env)
            t_os.append(a)
            t_tl.append(b)
            ratios.append(a / b)
        m_os, m_tl = statistics.median(t_os), statistics.median(t_tl)
        results[n] = statistics.median(ratios)
        print(f"{n:>11,} {m_os:>12.3f} {m_tl:>10.3f} {n / m_os:>10,.0f} {n / m_tl:>10,.0f} {results[n]:>6.2f} "
              f"{f'({min(ratios):.2f}-{max(ratios):.2f})':>12}")
    return results


VERSION_CASES = """\
import json, sys, time
import treelab
from treelab.mcts import uct_phases as uct  # where the compiled batch is chosen
from treelab.mcts.dispatch import puct_search

def best_of_3(fn):
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best

def grow(game, n, phases=False, **options):
    real = uct._compiled_batch
    if phases:
        uct._compiled_batch = lambda *args: None
    try:
        treelab.search(treelab.Tree(game), "", limit=treelab.Limit(iterations=n), rng=seed, **options)
    finally:
        uct._compiled_batch = real

seed = int(sys.argv[1])
print(json.dumps({
    "compiled batch, connect4, 20k": best_of_3(lambda: grow("connect4", 20000, c=2 ** -0.5)),
    "Python phases, connect4, 5k": best_of_3(lambda: grow("connect4", 5000, True, c=2 ** -0.5)),
    "Python phases, tictactoe solver, 5k": best_of_3(lambda: grow("tictactoe", 5000, True, solver=True)),
    "PUCT heuristic, connect4, 2k": best_of_3(lambda: puct_search(
        treelab.Tree("connect4"), "", limit=treelab.Limit(iterations=2000), evaluator="heuristic", rng=seed)),
}))
"""
"""The ``versions`` mode's cases, run in a process that imports one checkout's treelab."""


def versions(against: str, rounds: int) -> dict[str, float]:
    """The ``versions`` mode; returns the median per-round speed ratio (this checkout over ``against``) per case."""
    here = str(Path(__file__).resolve().parents[1])
    checkouts = {"this": here, "other": str(Path(against).resolve())}
    for name, root in checkouts.items():
        which = subprocess.run([sys.executable, "-c", _DESCRIBE], env={**os.environ, "PYTHONPATH": root}, cwd=root,
                               capture_output=True, text=True, check=True)
        print(f"{name}: {which.stdout.strip()}")
    times: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for r in range(rounds):
        for name in (list(checkouts) if r % 2 == 0 else list(checkouts)[::-1]):
            root = checkouts[name]
            out = subprocess.run([sys.executable, "-c", VERSION_CASES, str(r)], env={**os.environ, "PYTHONPATH": root},
                                 cwd=root, capture_output=True, text=True, check=True)
            times[name].append(json.loads(out.stdout))
    ratios = {}
    print(f"{'case':<38} {'this s':>8} {'other s':>8} {'speed ratio':>12}  (medians of {rounds} alternated rounds)")
    for case in times["this"][0]:
        mine = statistics.median(t[case] for t in times["this"])
        theirs = statistics.median(t[case] for t in times["other"])
        ratios[case] = statistics.median(o[case] / t[case] for t, o in zip(times["this"], times["other"], strict=True))
        print(f"{case:<38} {mine:>8.3f} {theirs:>8.3f} {ratios[case]:>12.3f}")
    return ratios


STATISTICS_CASES = """\
import json, sys, time
import treelab
from treelab.mcts import uct_phases as uct  # where the compiled batch is chosen

def timed(n, moves, **options):
    tree = treelab.Tree("connect4")
    treelab.search(tree, "", limit=treelab.Limit(iterations=2000), rng=0)  # a stored opening to search under
    started = time.perf_counter()
    treelab.search(tree, moves, limit=treelab.Limit(iterations=n), rng=int(sys.argv[1]), **options)
    return time.perf_counter() - started

def phases(n, moves):
    real = uct._compiled_batch
    uct._compiled_batch = lambda *args: None
    try:
        return timed(n, moves)
    finally:
        uct._compiled_batch = real

print(json.dumps({
    "classic, compiled batch": timed(5000, "44"),
    "classic, Python phases": phases(5000, "44"),
    "graph (Python phases)": timed(5000, "44", select="graph"),
}))
"""
"""The ``statistics`` mode's cases: 5,000 simulations at ``44`` under a 2,000-simulation opening, each rule."""


def statistics_mode(rounds: int) -> dict[str, float]:
    """The ``statistics`` mode: simulations per second of the classic rule (compiled batch, Python phases) and the
    graph rule (Python phases only), in fresh processes, alternated; returns the medians per case."""
    here = str(Path(__file__).resolve().parents[1])
    runs = []
    for r in range(rounds):
        out = subprocess.run([sys.executable, "-c", STATISTICS_CASES, str(r)], env={**os.environ, "PYTHONPATH": here},
                             cwd=here, capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout))
    medians = {case: statistics.median(run[case] for run in runs) for case in runs[0]}
    print(f"{'case':<28} {'median s':>9} {'sims/s':>9}  (5,000 simulations at 44, medians of {rounds} rounds)")
    for case, seconds in medians.items():
        print(f"{case:<28} {seconds:>9.3f} {5000 / seconds:>9,.0f}")
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=["process", "inprocess", "cpp", "versions", "statistics", "both"],
                        default="both",
                        help="both: process, inprocess and cpp")
    parser.add_argument("--budgets", nargs="+", type=int, default=[2000, 10000, 50000],
                        help="simulations per search (process mode)")
    parser.add_argument("--simulations", type=int, default=10000, help="simulations per search (in-process mode)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpp-budgets", nargs="+", type=int, default=[10000, 50000],
                        help="simulations per search (cpp mode)")
    parser.add_argument("--pythonpath", help="time the treelab found here (python -m treelab) instead of the "
                        "installed one: to compare two versions")
    parser.add_argument("--against", metavar="DIR", help="versions mode: the other checkout (its extension built)")
    args = parser.parse_args()
    if args.mode == "versions":
        if args.against is None:
            parser.error("--mode versions needs --against DIR, e.g. --against ../main")
        versions(args.against, args.rounds)
        return
    if args.mode == "statistics":
        statistics_mode(args.rounds)
        return
    if args.mode in ("process", "both"):
        whole_processes(args.budgets, args.rounds, args.pythonpath)
    if args.mode in ("inprocess", "both"):
        if args.pythonpath is not None:
            sys.path.insert(0, args.pythonpath)
        in_process(args.simulations, args.rounds)
    if args.mode in ("cpp", "both"):
        versus_cpp(args.cpp_budgets, args.rounds)


if __name__ == "__main__":
    main()
