"""How good are a learning loop's value targets? Judged by perfect play on the positions a fit learns from.

The loop's model stays near 80% value sign against perfect play whatever the loop changes, and
this script asks why. It draws ``--positions`` positions of a Connect Four tree that a fit
could learn from (at least the fit's ``--min-visits`` visits, ``--min-discs`` to ``--max-discs``
discs, decided with perfect play: treelab's solver, :mod:`treelab.oracle`) and reports, with
95% Wilson intervals, the share whose value has the right sign (above 1/2 where the player to
move wins) for:

- the **stored target**, what :func:`treelab.fit` trains on (the node's mean, or its proof),
  split by whether a search was made there (its children selected ``--searched`` times or more)
  or the games only passed through;
- the **model** ``--model`` (e.g. the loop's last version);
- a **fresh PUCT search** of each ``--sims`` simulations guided by the model, for each
  ``--mix``: the root value a "reanalyse" (Schrittwieser et al. 2021) would learn from instead.

With ``--refit N``, it also fits, on N such positions (any disc count), the same network twice, on
the stored targets and on the fresh searches' (root value and selection shares: ``--sims``'s
first, ``--mix``'s first), from the model's weights (as a loop's refit) or from random ones
(``--cold``), and judges both on ``--eval`` positions drawn as ``benchmarks/model_oracle.py``
draws them (games between fresh searchers the fits never saw).

    .venv/bin/python benchmarks/value_targets.py loop.db --model loop.npz --cache oracle.sqlite
    .venv/bin/python benchmarks/value_targets.py loop.db --model loop.v9.npz --refit 10000 --sims 200
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", help="a Connect Four tree (a learning loop's)")
    parser.add_argument("--model", required=True, help="a model of it (treelab fit, or the loop's)")
    parser.add_argument("--positions", type=int, default=300, help="decided positions to judge")
    parser.add_argument("--min-visits", type=int, default=20, help="the fit's --min-visits")
    parser.add_argument("--min-discs", type=int, default=10)
    parser.add_argument("--max-discs", type=int, default=30)
    parser.add_argument("--searched", type=int, default=150, help="selections that mark a position searched")
    parser.add_argument("--sims", default="50,200", help="fresh searches' simulations, comma-separated")
    parser.add_argument("--mix", default="0.5,0", help="fresh searches' playout shares, comma-separated")
    parser.add_argument("--refit", type=int, default=0, help="also fit on this many positions, both targets")
    parser.add_argument("--cold", action="store_true", help="with --refit: from random weights")
    parser.add_argument("--eval", type=int, default=200, help="with --refit: games to draw judged positions from")
    parser.add_argument("--cache", default=None, help="an SQLite file keeping solved positions between runs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import treelab
    from treelab.oracle import OracleCache, require_oracle
    from treelab.store.rows import read_fit_rows

    game = treelab.find_game("connect4")
    model = treelab.load_model(args.model, game)
    oracle = require_oracle(game, cache=OracleCache(args.cache) if args.cache else None, max_nodes=30_000_000)
    rows = read_fit_rows(args.db, min_visits=args.min_visits, max_depth=None, game=game.name)
    sims = [int(s) for s in args.sims.split(",")]
    mixes = [float(m) for m in args.mix.split(",")]
    started = time.perf_counter()
    tree = _Paths(rows, args.min_visits)
    signs(args, game, model, oracle, rows, tree, sims, mixes)
    if args.refit:
        refit(args, game, model, oracle, rows, tree, sims[0], mixes[0])
    print(f"{time.perf_counter() - started:.0f}s")


def signs(args: argparse.Namespace, game: Any, model: Any, oracle: Any, rows: Any, tree: _Paths, sims: list[int],
          mixes: list[float]) -> None:
    """The sign shares of the stored targets, the model and fresh searches on decided tree positions."""
    from treelab.learn.dataset import build_dataset

    pool = [nid for nid in tree.pool if args.min_discs <= tree.depth[nid] <= args.max_discs]
    random.Random(args.seed).shuffle(pool)
    picked: list[tuple[int, Any, bool]] = []
    for nid in pool:
        state = game.replay(tree.path(nid))
        if state.is_terminal:
            continue
        best = max(oracle(state).values())
        if best != 0:
            picked.append((nid, state, best > 0))
        if len(picked) >= args.positions:
            break
    data = build_dataset(game, rows, min_visits=args.min_visits, max_depth=None, only={p[0] for p in picked})
    target = dict(zip(data.nodes.tolist(), data.value.tolist(), strict=True))
    tally: dict[str, list[int]] = {}

    def count(key: str, right: bool) -> None:
        tally.setdefault(key, [0, 0])
        tally[key][0] += right
        tally[key][1] += 1

    for nid, state, wins in picked:
        right = (target[nid] > 0.5) == wins
        count("stored target", right)
        where = "searched" if tree.selections.get(nid, 0) >= args.searched else "passed through"
        count(f"stored target, {where}", right)
        count("model", (model.predict(state)[1] > 0.5) == wins)
        for mix in mixes:
            for n in sims:
                value, _ = fresh_search(game, model, tree.path(nid), n, mix, nid)
                count(f"fresh search, {n} sims, mix {mix:g}", (value > 0.5) == wins)
    print(f"{args.db}: {len(picked)} decided positions with {args.min_discs}-{args.max_discs} discs and at least "
          f"{args.min_visits} visits")
    for key, (hits, n) in tally.items():
        low, high = _wilson(hits, n)
        print(f"  {key:<34} {hits / n:.1%} ({low:.1%}-{high:.1%}) of {n}")


def fresh_search(game: Any, model: Any, moves: list[int], sims: int, mix: float, seed: int) -> tuple[float, Any]:
    """``(root value, selection shares by move place)`` of a fresh PUCT search guided by ``model``."""
    from treelab.mcts.dispatch import puct_search
    from treelab.mcts.evaluators import ModelEvaluator
    from treelab.mcts.loop import Limit
    from treelab.mcts.summary import search_value, tally
    from treelab.tree import Tree

    tree = Tree(game)
    puct_search(tree, moves, limit=Limit(iterations=sims), evaluator=ModelEvaluator(model, game=game, mix=mix),
                rng=random.Random(seed))
    node = tree.find(moves)
    shares = np.zeros(game.num_moves, np.float32)
    for child in node.children:
        shares[game.parse_move(child.name) - game.first_move] = child.nb_select
    return float(search_value(node, tally(None))), shares


def refit(args: argparse.Namespace, game: Any, model: Any, oracle: Any, rows: Any, tree: _Paths, sims: int,
          mix: float) -> None:
    """One network fitted on stored targets and one on fresh searches' targets, judged by perfect play."""
    import model_oracle

    from treelab.learn.dataset import Dataset, augment, build_dataset
    from treelab.learn.fitting import MIN_EXAMPLES, _train
    from treelab.learn.model import Model

    pool = list(tree.pool)
    random.Random(args.seed).shuffle(pool)
    data = build_dataset(game, rows, min_visits=args.min_visits, max_depth=None, only=set(pool[: args.refit]))
    if len(data) < MIN_EXAMPLES:
        sys.exit(f"{args.db!r} has too few positions to fit")
    values, shares = [], []
    for nid in data.nodes.tolist():
        value, counts = fresh_search(game, model, tree.path(nid), sims, mix, nid)
        values.append(value)
        shares.append(counts / counts.sum() if counts.sum() > 0 else None)
    policy = np.stack([s if s is not None else p for s, p in zip(shares, data.policy, strict=True)])
    fresh = Dataset(data.features, policy.astype(np.float32), np.array(values, np.float32), data.legal,
                    data.groups, data.visits, data.nodes, data.proven, data.from_selections)
    hidden = tuple(int(w.shape[1]) for w in model.weights[:-1])
    drawn = model_oracle.positions(argparse.Namespace(
        seed=str(args.seed), games=args.eval, per_game=2, min_discs=10, max_discs=30,
        a="uct:iterations=200", b="puct:iterations=200,evaluator=heuristic"))
    judged = [(game.replay(m), oracle(game.replay(m))) for m in dict.fromkeys(drawn)]
    print(f"fits on {len(data)} positions ({sims}-simulation searches, mix {mix:g}), "
          f"{'from random weights' if args.cold else 'from the model'}, judged on {len(judged)} positions:")
    for name, examples in (("the model itself", None), ("stored targets", data), ("fresh searches' targets", fresh)):
        fitted = model
        if examples is not None:
            network = _train(augment(examples, game), hidden, 200 if args.cold else 30, 10, args.seed, None,
                             None if args.cold else model)
            fitted = Model(game.name, str(game.encoding), tuple(game.feature_shape), game.first_move,
                           game.num_moves, tuple(np.asarray(w, np.float32) for w in network.coefs_),
                           tuple(np.asarray(b, np.float32) for b in network.intercepts_))
        right = decided = best_moves = 0
        for state, moves in judged:
            priors, value = fitted.predict(state)
            best = max(moves.values())
            best_moves += moves[max(priors, key=priors.__getitem__)] == best
            if best != 0:
                decided += 1
                right += (value > 0.5) == (best > 0)
        print(f"  {name:<26} value sign {right / decided:.1%} of {decided}, "
              f"most likely move optimal {best_moves / len(judged):.1%} of {len(judged)}")


class _Paths:
    """The tree's rows as parent links: each node's move path, depth and children's selections."""

    def __init__(self, rows: Any, min_visits: int) -> None:
        from treelab.learn.dataset import candidates

        self.parent = {r[0]: r[1] for r in rows.rows}
        self.move = {r[0]: r[2] for r in rows.rows}
        self.depth = {r[0]: r[3] for r in rows.rows}
        self.selections: dict[int, int] = {}
        for r in rows.rows:
            if r[1] is not None:
                self.selections[r[1]] = self.selections.get(r[1], 0) + r[8]
        self.pool = [nid for nid, _ in candidates(rows, min_visits=min_visits, max_depth=None)]

    def path(self, nid: int) -> list[int]:
        moves = []
        while self.parent[nid] is not None:
            moves.append(int(self.move[nid]))
            nid = self.parent[nid]
        return moves[::-1]


def _wilson(hits: int, n: int) -> tuple[float, float]:
    from treelab.play.arena import wilson_interval

    return wilson_interval(hits / n, n)


if __name__ == "__main__":
    main()
