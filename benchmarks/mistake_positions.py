"""Make treelab's own mistake-rate test positions for Connect Four (``data/connect4/mistakes/positions.txt``).

Positions come from games between players of mixed strength, a new pair of
players for every game, drawn from the game's own seed (``SEED:GAME``): each
side is one of a random player, the heuristic player (win, else block, else
random), UCT with a fresh tree of 100, 400 or 1,500 simulations a move, or an
exact player (UCT with 400 simulations until 16 discs are down, then a random
one of the solver's best moves), and each side plays a uniformly random move
instead with a probability drawn per game (0, 0.1, 0.25 or 0.5). From every game
``--per-stage`` positions per stage (default 2 in the beginning, 2 in the
middle, 3 at the end, where games that last are rarer) are taken at random
numbers of moves played within the stage (beginning: ``--min-played`` to 14,
middle: 15-28, end: 29-41), all different, where the game was still going, and
kept when no earlier position was the same one or its mirror image
(``Game.position_key``).

Each kept position is judged by treelab's exact solver
(:func:`treelab.analysis.mistakes.judge_position`): every legal move's class
(win, draw, loss) and the position's Pons score, hence its moves left under
perfect play and its class. A position whose solve needs more than
``--max-nodes`` positions is left out and counted (the solver has no opening
book: before about 8 discs an exact score can take minutes, hence
``--min-played``). Generation stops once every one of the six classes of Pons'
protocol holds ``--per-class`` positions (later ones of a full class are
dropped), or after ``--max-games`` games or ``--minutes`` minutes (the games played are printed
and written in the file's header: ``--max-games`` with that number replays the
same file). A position whose stage has no class left to fill is not judged.
Each position's half is fixed by its moves
alone (:func:`treelab.analysis.mistakes.split_of`: ``dev`` when the first byte of
the SHA-256 of the moves is even, else ``test``), so adding positions never moves
one from ``test`` to ``dev``.

The output is deterministic given the seed and the options (the solver's
transposition table persists between solves within the process, so the node
budget is met the same way only in one process running the same sequence).
Nothing is trained or tuned on these positions; ``test`` must stay that way.

    .venv/bin/python benchmarks/mistake_positions.py --seed 2026 --per-class 400 --minutes 50 \\
        --out data/connect4/mistakes/positions.txt
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from treelab.analysis.mistakes import (
    PONS_CLASSES,
    JudgedPosition,
    format_position,
    judge_position,
    parse_position,
    split_of,
    stage_of,
)
from treelab.errors import BudgetError
from treelab.games import State, find_game
from treelab.oracle import oracle_for
from treelab.play.arena import make_player

GAME = find_game("connect4")
KINDS = ("random", "heuristic", "uct100", "uct400", "uct1500", "exact")
NOISES = (0.0, 0.1, 0.25, 0.5)
STAGE_RANGES = {"beginning": (None, 14), "middle": (15, 28), "end": (29, 41)}


class Side:
    """One side of a sampling game: its kind of player and its share of random moves."""

    def __init__(self, kind: str, noise: float, rng: random.Random, weak: object) -> None:
        self.kind, self.noise, self.rng, self.weak = kind, noise, rng, weak
        spec = kind if kind in ("random", "heuristic") else \
            f"uct:iterations={ {'uct100': 100, 'uct1500': 1500}.get(kind, 400)}"  # exact: UCT 400 until 16 discs
        self.player = make_player(spec, GAME, rng=rng)  # a fresh tree every game
        self.player.new_game(GAME)

    def choose(self, state: State, moves: list[int]) -> int:
        legal = state.legal_moves()
        if self.rng.random() < self.noise:
            return legal[int(self.rng.random() * len(legal))]
        if self.kind == "exact" and len(moves) >= 16:
            values = self.weak(state)  # type: ignore[operator]
            best = max(values.values())
            return self.rng.choice([m for m in legal if values[m] == best])
        return int(self.player.choose(state, tuple(moves)))


def play_game(index: int, seed: int, weak: object, kinds: tuple[str, ...] = KINDS,
              noises: tuple[float, ...] = NOISES) -> tuple[list[int], random.Random]:
    """One sampling game (the players drawn from ``SEED:INDEX``); its moves and its random stream."""
    rng = random.Random(f"{seed}:{index}")
    sides = [Side(rng.choice(kinds), rng.choice(noises), random.Random(rng.getrandbits(64)), weak) for _ in (1, 2)]
    state, moves = GAME.initial(), []
    while not state.is_terminal:
        move = sides[state.ply & 1].choose(state, moves)  # type: ignore[attr-defined]
        state = state.play(move)
        moves.append(move)
    return moves, rng


def sample_plies(moves: list[int], rng: random.Random, min_played: int, per_stage: tuple[int, ...]) -> list[int]:
    """Up to ``per_stage`` numbers of moves played per stage (beginning, middle, end), drawn at random within the
    stage without repeats, where the game was still going."""
    plies = []
    for (low, high), many in zip(STAGE_RANGES.values(), per_stage, strict=True):
        low = min_played if low is None else low
        high = min(high, len(moves) - 1)  # the position after len(moves) moves is finished
        if low <= high:
            plies += sorted(rng.sample(range(low, high + 1), min(many, high - low + 1)))
    return plies


def split_halves(positions: list[JudgedPosition]) -> list[JudgedPosition]:
    """Each position in its half (:func:`~treelab.analysis.mistakes.split_of`: the parity of the first byte of
    the SHA-256 of its moves, so adding positions never moves one); classes in Pons' order, each by that hash."""
    out = []
    for name in PONS_CLASSES:
        mine = sorted((p for p in positions if p.name == name),
                      key=lambda p: hashlib.sha256(p.moves.encode()).hexdigest())
        out += [JudgedPosition(p.moves, p.score, p.values, split_of(p.moves)) for p in mine]
    return out


def generate(seed: int, per_class: int, max_games: int, max_nodes: int, min_played: int, minutes: float,
             per_stage: tuple[int, ...], kinds: tuple[str, ...] = KINDS,
             noises: tuple[float, ...] = NOISES, half: str | None = None) -> tuple[list[JudgedPosition], dict]:
    """The positions (at most ``per_class`` a class, first come first kept; only those of ``half`` when it is
    given, the others left unjudged) and what it took."""
    weak = oracle_for(GAME, max_nodes=max_nodes)
    strong = oracle_for(GAME, score=True, max_nodes=max_nodes)
    kept: dict[str, list[JudgedPosition]] = {name: [] for name in PONS_CLASSES}
    seen: set[str] = set()
    stats: Counter[str] = Counter()
    started = time.perf_counter()
    bar = tqdm(total=per_class * len(PONS_CLASSES), unit="pos", desc="positions", dynamic_ncols=True)
    games = 0
    for games in range(1, max_games + 1):
        moves, rng = play_game(games, seed, weak, kinds, noises)
        for ply in sample_plies(moves, rng, min_played, per_stage):
            stage = stage_of(ply)
            if all(len(v) >= per_class for name, v in kept.items() if name.startswith(stage)):
                stats["stage_full"] += 1  # not judged: no class of its stage takes more
                continue
            key = GAME.position_key(GAME.replay(moves[:ply]))
            if key in seen:
                stats["duplicates"] += 1
                continue
            seen.add(key)
            if half is not None and split_of(GAME.notation(moves[:ply])) != half:
                stats["other_half"] += 1  # not judged: the solve is the cost, and this half is not wanted
                continue
            try:
                position = judge_position(moves[:ply], oracles=(weak, strong))
            except BudgetError:
                stats["over_budget"] += 1
                continue
            stats["judged"] += 1
            if position.name not in kept:
                raise AssertionError(f"a class outside Pons' six: {position.name} after {position.moves}")
            if len(kept[position.name]) < per_class:
                kept[position.name].append(position)
                bar.update(1)
            else:
                stats["class_full"] += 1
        bar.set_postfix_str(" ".join(f"{name[:3]}-{name.split('-')[1][0]} {len(v)}" for name, v in kept.items()))
        if all(len(v) >= per_class for v in kept.values()) or time.perf_counter() - started > 60 * minutes:
            break
    bar.close()
    stats["games"] = games
    stats["seconds"] = round(time.perf_counter() - started)
    return split_halves([p for v in kept.values() for p in v]), dict(stats)


def merge(paths: list[Path], per_class: int) -> tuple[list[JudgedPosition], list[str]]:
    """The positions of several files of this script, in order, without repeats (mirror images included), at
    most ``per_class`` a class, split again; and the files' ``# made by`` lines."""
    kept: list[JudgedPosition] = []
    seen: set[str] = set()
    taken: Counter[str] = Counter()
    made: list[str] = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()  # each run's line and the counts line after it
        made += [line for before, line in zip(["", *lines], lines, strict=False)
                 if line.startswith("# made by") or (before.startswith("# made by") and line.startswith("# "))]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()  # the half is the rule's, whatever the file said (older files alternated)
            position = parse_position(" ".join([*fields[:4], split_of(fields[0]), *fields[5:]]), f"{path}:{number}")
            key = GAME.position_key(GAME.replay(position.moves))
            if key not in seen and taken[position.name] < per_class:
                seen.add(key)
                taken[position.name] += 1
                kept.append(position)
    return split_halves(kept), made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--per-class", type=int, default=500, help="positions kept per class (both splits)")
    parser.add_argument("--max-games", type=int, default=100_000)
    parser.add_argument("--max-nodes", type=int, default=30_000_000, help="the solver's budget for one solve")
    parser.add_argument("--min-played", type=int, default=8, help="fewest moves played in a beginning position")
    parser.add_argument("--per-stage", type=int, nargs=3, default=[2, 2, 3], metavar=("B", "M", "E"),
                        help="positions drawn per game in the beginning, middle and end stages")
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="the players drawn from")
    parser.add_argument("--noises", type=float, nargs="+", default=list(NOISES),
                        help="the random-move shares drawn from")
    parser.add_argument("--half", choices=("dev", "test"), default=None,
                        help="judge and keep only positions of this half (a larger dev half for choosing recipes "
                             "costs half the solves); merge the file into the main one with a larger --per-class")
    parser.add_argument("--minutes", type=float, default=float("inf"),
                        help="stop after this long (the games played are printed: --max-games replays the same)")
    parser.add_argument("--merge", type=Path, nargs="+", default=None, metavar="FILE",
                        help="instead of generating: join files made by this script (earlier files first, repeats "
                             "and positions past --per-class dropped) and split them again")
    parser.add_argument("--out", type=Path, default=Path("data/connect4/mistakes/positions.txt"))
    args = parser.parse_args(argv)
    if args.merge:
        positions, made = merge(args.merge, args.per_class)
        stats = {"files": len(args.merge)}
    else:
        positions, stats = generate(args.seed, args.per_class, args.max_games, args.max_nodes, args.min_played,
                                    args.minutes, tuple(args.per_stage), tuple(args.kinds), tuple(args.noises),
                                    args.half)
        made = [f"# made by: benchmarks/mistake_positions.py --seed {args.seed} --per-class {args.per_class} "
                f"--max-games {stats['games']} --max-nodes {args.max_nodes} --min-played {args.min_played} "
                f"--per-stage {' '.join(map(str, args.per_stage))}"
                + (f" --kinds {' '.join(args.kinds)}" if tuple(args.kinds) != KINDS else "")
                + (f" --noises {' '.join(map(str, args.noises))}" if tuple(args.noises) != NOISES else "")
                + (f" --half {args.half}" if args.half else ""),
                "# " + ", ".join(f"{k} {v}" for k, v in stats.items())]
    counts = Counter((p.name, p.split) for p in positions)
    undecided = Counter(p.name for p in positions if not p.decisive)
    header = [
        "# treelab's Connect Four mistake-rate positions (see README.md beside this file).",
        *made,
        *([f"# merged by: benchmarks/mistake_positions.py --per-class {args.per_class} --merge "
           + " ".join(path.name for path in args.merge)] if args.merge else []),
        "# MOVES SCORE LEFT CLASS SPLIT VALUES (columns 1-7: W win, D draw, L loss, . full)",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(header + [format_position(p) for p in positions]) + "\n", encoding="utf-8")
    for name in PONS_CLASSES:
        print(f"{name:17} dev {counts[name, 'dev']:4}  test {counts[name, 'test']:4}  "
              f"no mistake possible {undecided[name]:4}")
    print(stats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
