"""Does a learning loop's self-play lock onto one opening? The root, the openings over time, the targets.

The learning loop (:func:`treelab.learning_loop`) grows one persistent tree across its self-play games,
and each game searches on it: PUCT selects on the edge counts and means every earlier game left, and
the temperature sampling of the opening moves draws from the accumulated selection counts
(:func:`treelab.mcts.choice.choose_move`), so past choices decide the next opening. In a one-hour
Connect Four loop (4,876 games) column 2, a losing first move, took 20M of the root's 25M visits and
92% of its selections, while column 4, the only winning first move, held 2% and 0.9%. This script
measures that on any Connect Four tree file, read-only (:func:`treelab.store.dbfile.reading`):

1. **The root's children** (and, with ``--depth1``, the replies to the most-visited first move;
   ``--line MOVES`` any other position): visits, selections (``nb_select``: the simulations that chose a
   move at the position, those of searches made there or higher up, what moves are chosen from; at the
   root, the logged games' first searches alone) and their shares, the stored mean and proof for
   the player making the move (who is to move at the position), the logged games that played each
   move there, and each move's exact game-theoretic value. Values come from treelab's solver
   (:mod:`treelab.oracle`) when it finishes within ``--solve-nodes`` positions a move (about a million
   a second; the solver has no opening book, and a first move can take far more); otherwise the first
   moves take the values of ``--first-move-values`` (by default the known ones: only the centre
   column 4 wins for the first player, 3 and 5 draw, 1, 2, 6, 7 lose; Allis 1988), marked
   ``given``. A reply to a winning move is a loss (``deduced``); other unsolved values are ``?``.
2. **The openings over time**: per ``--bucket`` games (in the order the ``games`` table logged them),
   each first move's share, the shares of first moves that win, draw and lose with perfect play, the
   results, the model versions that played (``games.exploration``), the ``--prefixes`` most frequent
   two-move openings; and, from the ``history`` table, the share of the root's visits each first move
   held after the bucket's last game.
3. With ``--sample N``: the **targets a fit learns** (:mod:`treelab.learn.dataset`) judged by perfect
   play on up to N stored positions drawn at random (``--seed``) among those with ``--min-visits``
   visits and ``--depths`` discs, per class of Pons' protocol (:mod:`treelab.analysis.mistakes`):
   whether the policy target's most likely move (selection shares, or a proof; the fit's
   ``--fit-min-visits`` decides between selections and visits) and the tree's own move choice
   (:func:`treelab.nodes.best_index`) are optimal where a mistake is possible, and whether the value
   target (the node's mean, or its proof) has the right sign where the position is decided. Each
   position's solve may take ``--max-nodes`` positions (more: left out and counted); judging stops
   after ``--sample-seconds``.

The file is read in one short transaction (a snapshot, even of a tree that a run is still writing);
the solving comes after it.

It prints markdown tables; ``--json FILE`` writes the numbers.

    .venv/bin/python benchmarks/opening_lock.py run/c4.db
    .venv/bin/python benchmarks/opening_lock.py run/c4.db --depth1 --bucket 250 --json lock.json
    .venv/bin/python benchmarks/opening_lock.py run/c4.db --solve-nodes 0 --sample 500 --sample-seconds 300 \\
        --cache oracle.sqlite
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from treelab.analysis.mistakes import PONS_CLASSES, judge_position
from treelab.errors import BudgetError, TreelabError
from treelab.games import find_game
from treelab.learn.dataset import _policy_target
from treelab.learn.fitting import FitConfig
from treelab.nodes import best_index, mean_reward
from treelab.oracle import OracleCache, require_oracle
from treelab.store.dbfile import reading

GAME = find_game("connect4")

KNOWN_FIRST_MOVES = "LLDWDLL"
"""The first moves' values for the first player, columns 1-7: only the centre wins (Allis 1988)."""

LETTERS = {1: "W", 0: "D", -1: "L"}
VALUES = {letter: value for value, letter in LETTERS.items()}
WORDS = {1: "win", 0: "draw", -1: "loss", None: "?"}

COLUMNS = "id, move, nb_visit, nb_win, nb_draw, proven, nb_select, value_sum, prior"
"""The node columns read (schema 4 and later; older files read through :func:`treelab.store.schema.read_compat`)."""


# -- 1. a position's children --------------------------------------------------------------------------------------
@dataclass
class Child:
    """One stored move of a position."""

    move: int
    visits: int
    selections: int
    """``nb_select``: the simulations that chose this move at the position (searches made there or higher up)."""
    mean: float
    """The stored mean reward for the player making the move (:func:`treelab.nodes.mean_reward`)."""
    proven: int | None
    """The stored proof for the player making the move (1, 0, -1), or None."""
    prior: float | None
    games: int
    """Logged games that played this move in this position."""
    exact: int | None = None
    """The move's game-theoretic value for the player making it, or None when unknown."""
    source: str = ""
    """Where ``exact`` comes from: ``solved``, ``given``, ``deduced`` or empty (unknown)."""


@dataclass
class Line:
    """A stored position (the moves from the empty board) and its children."""

    moves: str
    visits: int
    games: int
    """Logged games that went through this position."""
    children: list[Child]
    note: str = ""
    """What the exact values could not be computed for, if anything."""

    @property
    def selections(self) -> int:
        """The simulations that chose a move at this position (its children's selections summed)."""
        return sum(c.selections for c in self.children)

    @property
    def children_visits(self) -> int:
        return sum(c.visits for c in self.children)


def node_id(conn: sqlite3.Connection, moves: Sequence[int]) -> int | None:
    """The stored node of the position ``moves``, or None when the tree does not hold it."""
    row = conn.execute("SELECT id FROM nodes WHERE parent_id IS NULL").fetchone()
    for move in moves:
        if row is None:
            return None
        row = conn.execute("SELECT id FROM nodes WHERE parent_id = ? AND move = ?", (row[0], str(move))).fetchone()
    return None if row is None else int(row[0])


def read_line(conn: sqlite3.Connection, moves: Sequence[int], games: Sequence[Sequence[int]]) -> Line | None:
    """The position ``moves`` with its children (in creation order), or None when it is not stored."""
    nid = node_id(conn, moves)
    if nid is None:
        return None
    visits = conn.execute("SELECT nb_visit FROM nodes WHERE id = ?", (nid,)).fetchone()[0]
    depth = len(moves)
    through = [g for g in games if len(g) > depth and list(g[:depth]) == list(moves)]
    played = Counter(g[depth] for g in through)
    children = []
    for _, move, n, wins, draws, proven, select, value_sum, prior in conn.execute(
            f"SELECT {COLUMNS} FROM nodes WHERE parent_id = ? ORDER BY id", (nid,)):
        m = GAME.parse_move(move)
        children.append(Child(m, n, select, mean_reward(wins, draws, n, value_sum or 0.0), proven, prior, played[m]))
    return Line(GAME.notation(list(moves)), visits, len(through), children)


def solve_children(line: Line, oracle: Any, parent_value: int | None = None) -> None:
    """Fill each child's exact value: solved within the oracle's budget, else deduced from ``parent_value`` (the
    value of the move that led here, for the player who made it: after a winning move every reply loses)."""
    state = GAME.replay(line.moves)
    missed = []
    for child in line.children:
        after = state.play(child.move)
        if after.winner is not None or after.is_terminal:
            child.exact, child.source = (1 if after.winner is not None else 0), "solved"
            continue
        if oracle is not None:
            try:
                child.exact, child.source = -oracle.weak(after), "solved"
                continue
            except BudgetError:
                pass
        if parent_value == 1:
            child.exact, child.source = -1, "deduced"
        else:
            missed.append(child.move)
    if missed:
        line.note = (f"not solved within {oracle.max_nodes:,} positions a move: {', '.join(map(str, missed))} "
                     "(raise --solve-nodes, or keep solves with --cache)") if oracle is not None else \
            f"not solved (--solve-nodes 0): {', '.join(map(str, missed))}"


def give_values(line: Line, given: str) -> list[int]:
    """Fill the first moves' unknown values from ``given`` (a letter per column); the moves whose solved value
    disagrees with it."""
    disagree = []
    for child in line.children:
        value = VALUES[given[child.move - 1]]
        if child.exact is None:
            child.exact, child.source = value, "given"
        elif child.exact != value:
            disagree.append(child.move)
    return disagree


# -- 2. the openings over time ---------------------------------------------------------------------------------------
@dataclass
class LoggedGame:
    """One row of the ``games`` table."""

    id: int
    moves: list[int]
    winner: int | None
    iterations: int | None
    model_version: int | None


@dataclass
class Bucket:
    """The logged games from ``first`` to ``last`` (ids) and how they opened."""

    first: int
    last: int
    games: int
    first_moves: dict[int, int]
    """Each first move (every column 1-7) and the games that opened with it."""
    by_value: dict[str, int]
    """``win``, ``draw``, ``loss``, ``?``: the games whose first move has that exact value for the first player."""
    results: dict[str, int]
    """``first``, ``second``, ``draw``: who won."""
    prefixes: dict[str, int]
    """Each two-move opening and its games."""
    models: tuple[int, int] | None
    """The lowest and highest model version that played (None: no game with a model)."""
    root_share: dict[int, float] | None = None
    """From ``history``: each first move's share of the root's visits after the bucket's last game."""

    def share(self, count: int) -> float:
        return count / self.games if self.games else 0.0


def read_games(conn: sqlite3.Connection) -> list[LoggedGame]:
    """The logged games in the order of their ids (OpenSpiel-style comma notation is not Connect Four's)."""
    games = []
    for gid, moves, winner, iterations, exploration in conn.execute(
            "SELECT id, moves, winner, iterations, exploration FROM games ORDER BY id"):
        try:
            version = json.loads(exploration).get("model_version") if exploration else None
        except (ValueError, AttributeError):
            version = None
        games.append(LoggedGame(gid, list(GAME.parse(moves)), winner, iterations, version))
    return games


def buckets(games: Sequence[LoggedGame], size: int, first_values: dict[int, int | None]) -> list[Bucket]:
    """The games in runs of ``size`` (the last one may be shorter); ``first_values``: each first move's exact value
    for the first player, where known (:func:`classify` may give them later)."""
    out = []
    for start in range(0, len(games), size):
        part = [g for g in games[start:start + size] if g.moves]
        if not part:
            continue
        opened = Counter(g.moves[0] for g in part)
        versions = [g.model_version for g in part if g.model_version is not None]
        out.append(Bucket(
            first=part[0].id, last=part[-1].id, games=len(part),
            first_moves={m: opened[m] for m in range(1, 8)},
            by_value={},
            results={"first": sum(g.winner == 1 for g in part), "second": sum(g.winner == 2 for g in part),
                     "draw": sum(g.winner not in (1, 2) for g in part)},
            prefixes=dict(Counter(GAME.notation(g.moves[:2]) for g in part).most_common()),
            models=(min(versions), max(versions)) if versions else None,
        ))
    classify(out, first_values)
    return out


def classify(found: list[Bucket], first_values: dict[int, int | None]) -> None:
    """Count each bucket's games by the exact value of their first move (``?`` where it is not known)."""
    for bucket in found:
        bucket.by_value = {w: sum(n for m, n in bucket.first_moves.items() if WORDS[first_values.get(m)] == w)
                           for w in ("win", "draw", "loss", "?")}


def add_history(conn: sqlite3.Connection, found: list[Bucket]) -> None:
    """Each bucket's root visit shares after its last game, from the ``history`` table (where it has a row)."""
    for bucket in found:
        row = conn.execute("SELECT root_children FROM history WHERE game_id <= ? ORDER BY game_id DESC LIMIT 1",
                           (bucket.last,)).fetchone()
        if row is None or not row[0]:
            continue
        try:
            children = {GAME.parse_move(m): float(v[0]) for m, v in json.loads(row[0]).items()}
        except (ValueError, TypeError, KeyError, IndexError, TreelabError):
            continue
        total = sum(children.values())
        if total > 0:
            bucket.root_share = {m: children.get(m, 0.0) / total for m in range(1, 8)}


# -- 3. the fit's targets judged by perfect play -------------------------------------------------------------------
@dataclass
class ClassTally:
    """The judged positions of one of Pons' classes."""

    name: str
    judged: int = 0
    decisive: int = 0
    policy_ok: int = 0
    """Decisive positions where the policy target's most likely move is optimal."""
    choice_ok: int = 0
    """Decisive positions where the tree's own move choice (most selected, proofs first) is optimal."""
    decided: int = 0
    value_ok: int = 0
    """Decided positions where the value target is on the winner's side of 1/2."""


@dataclass
class Sample:
    """What ``--sample`` judged."""

    candidates: int
    drawn: int
    judged: int = 0
    over_budget: int = 0
    seconds: float = 0.0
    classes: list[ClassTally] = field(default_factory=list)


def path_of(conn: sqlite3.Connection, nid: int) -> list[int]:
    """The moves from the empty board to the node ``nid``."""
    rows = conn.execute("""WITH RECURSIVE up(id, parent_id, move, depth) AS (
        SELECT id, parent_id, move, depth FROM nodes WHERE id = ?
        UNION ALL SELECT n.id, n.parent_id, n.move, n.depth FROM nodes n JOIN up ON n.id = up.parent_id)
        SELECT move FROM up WHERE parent_id IS NOT NULL ORDER BY depth""", (nid,)).fetchall()
    return [GAME.parse_move(m) for (m,) in rows]


@dataclass
class Drawn:
    """One drawn stored position, as read: its moves, its node's row and its children's rows (``COLUMNS``)."""

    moves: list[int]
    node: tuple[Any, ...]
    children: list[tuple[Any, ...]]


def draw_sample(conn: sqlite3.Connection, count: int, *, min_visits: int, depths: tuple[int, int],
                seed: int) -> tuple[int, list[Drawn]]:
    """The number of candidates (``min_visits`` visits or more, ``depths`` discs) and up to ``count`` of them
    drawn at random, read at once (the solving comes after the read: the file's snapshot is held briefly)."""
    pool = conn.execute("SELECT id FROM nodes WHERE nb_visit >= ? AND depth BETWEEN ? AND ?",
                        (min_visits, *depths)).fetchall()
    drawn = []
    for nid in random.Random(seed).sample([r[0] for r in pool], min(count, len(pool))):
        node = conn.execute(f"SELECT {COLUMNS} FROM nodes WHERE id = ?", (nid,)).fetchone()
        kids = conn.execute(f"SELECT {COLUMNS} FROM nodes WHERE parent_id = ? ORDER BY id", (nid,)).fetchall()
        drawn.append(Drawn(path_of(conn, nid), tuple(node), [tuple(k) for k in kids]))
    return len(pool), drawn


def judge_sample(candidates: int, drawn: Sequence[Drawn], *, seconds: float, fit_min_visits: int, max_nodes: int,
                 cache: OracleCache | None = None) -> Sample:
    """Judge the fit's targets at the ``drawn`` positions in turn for at most ``seconds`` (see the module doc)."""
    sample = Sample(candidates, len(drawn), classes=[ClassTally(name) for name in PONS_CLASSES])
    tally = {c.name: c for c in sample.classes}
    oracles = (require_oracle(GAME, cache=cache, max_nodes=max_nodes),
               require_oracle(GAME, cache=cache, score=True, max_nodes=max_nodes))
    started = time.perf_counter()
    for one in drawn:
        if time.perf_counter() - started > seconds:
            break
        kids = one.children
        if GAME.replay(one.moves).is_terminal or not kids:
            continue
        try:
            judged = judge_position(one.moves, oracles=oracles)
        except BudgetError:
            sample.over_budget += 1
            continue
        sample.judged += 1
        row = tally[judged.name]
        row.judged += 1
        _, _, visits, wins, draws, proven, _, value_sum, _ = one.node
        if judged.decisive:
            row.decisive += 1
            target, _ = _policy_target([(k[0], k[1], k[2], k[6], k[5]) for k in kids], fit_min_visits,
                                       GAME.parse_move)
            if target:
                row.policy_ok += not judged.is_mistake(max(target, key=target.__getitem__))
            pick = best_index([(k[5], k[6], k[2]) for k in kids])
            if pick is not None:
                row.choice_ok += not judged.is_mistake(GAME.parse_move(kids[pick][1]))
        if judged.best != 0:
            row.decided += 1
            mover = (proven + 1) / 2 if proven is not None else mean_reward(wins, draws, visits, value_sum or 0.0)
            row.value_ok += ((1.0 - mover) > 0.5) == (judged.best > 0)  # the player to move's value
    sample.seconds = time.perf_counter() - started
    return sample


# -- the report ------------------------------------------------------------------------------------------------------
@dataclass
class Report:
    """Everything the script measures on one file."""

    db: str
    games: int
    iterations: int
    """The logged games' simulations at the root summed (``games.iterations``)."""
    root: Line | None
    lines: list[Line]
    buckets: list[Bucket]
    bucket_size: int
    disagree: list[int] = field(default_factory=list)
    """First moves whose solved value disagrees with ``--first-move-values``."""
    sample: Sample | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for line, raw in zip([self.root, *self.lines], [data["root"], *data["lines"]], strict=True):
            if line is not None:
                raw.update(selections=line.selections, children_visits=line.children_visits)
        return data


def measure(db: str | Path, *, bucket: int = 500, depth1: bool = False, lines: Sequence[str] = (),
            solve_nodes: int = 5_000_000, first_move_values: str = KNOWN_FIRST_MOVES, cache: OracleCache | None = None,
            sample: int = 0, sample_seconds: float = 300.0, min_visits: int = 50, depths: tuple[int, int] = (8, 28),
            fit_min_visits: int | None = None, max_nodes: int = 3_000_000, seed: int = 0) -> Report:
    """Read ``db`` (a Connect Four tree, read-only) and measure what the module doc says."""
    with reading(db, game=GAME.name) as (conn, _):  # one short read: the solving comes after it
        logged = read_games(conn)
        paths = [g.moves for g in logged]
        root = read_line(conn, [], paths)
        wanted: list[Sequence[int]] = [GAME.parse(m) for m in lines]
        if depth1 and root is not None and root.children:
            top = max(root.children, key=lambda c: (c.visits, c.selections))
            wanted.insert(0, [top.move])
        found = []
        for moves in wanted:
            line = read_line(conn, moves, paths)
            if line is None:
                raise TreelabError(f"the tree holds no position {GAME.notation(list(moves))!r}: "
                                   "name a stored line (--line)")
            found.append(line)
        runs = buckets(logged, bucket, {})
        add_history(conn, runs)
        candidates, drawn = draw_sample(conn, sample, min_visits=min_visits, depths=depths, seed=seed) \
            if sample > 0 else (0, [])
    oracle = require_oracle(GAME, cache=cache, max_nodes=solve_nodes) if solve_nodes > 0 else None
    disagree: list[int] = []
    if root is not None:
        solve_children(root, oracle)
        disagree = give_values(root, first_move_values)
    values = {c.move: c.exact for c in root.children} if root is not None else {}
    for line, moves in zip(found, wanted, strict=True):
        solve_children(line, oracle, values.get(moves[0]) if len(moves) == 1 else None)
    classify(runs, {m: values.get(m) for m in range(1, 8)})
    judged = None
    if sample > 0:
        judged = judge_sample(candidates, drawn, seconds=sample_seconds, max_nodes=max_nodes, cache=cache,
                              fit_min_visits=FitConfig().min_visits if fit_min_visits is None else fit_min_visits)
    return Report(str(db), len(logged), sum(g.iterations or 0 for g in logged), root, found, runs, bucket, disagree,
                  judged)


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def line_table(line: Line) -> list[str]:
    """A position's children as a markdown table, most visited first."""
    title = "the root (first moves)" if not line.moves else f"after {line.moves}"
    out = [f"### {title}: {line.visits:,} visits, {line.selections:,} selections, {line.games:,} logged games", ""]
    rows = []
    for c in sorted(line.children, key=lambda c: (-c.visits, c.move)):
        rows.append([c.move, f"{c.visits:,}", _pct(c.visits, line.children_visits), f"{c.selections:,}",
                     _pct(c.selections, line.selections), f"{c.mean:.3f}", WORDS[c.proven] if c.proven is not None
                     else "", "" if c.prior is None else f"{c.prior:.3f}", f"{c.games:,}", _pct(c.games, line.games),
                     f"{WORDS[c.exact]}" + (f" ({c.source})" if c.source and c.source != "solved" else "")])
    out += _table(["move", "visits", "visit share", "selections", "selection share", "mean (mover)", "proof", "prior",
                   "games", "game share", "exact value"], rows)
    return out


def note(line: Line) -> list[str]:
    """The line saying which exact values the solver did not find, if any."""
    return ["", f"Exact values {line.note}."] if line.note else []


def markdown(report: Report) -> str:
    """The report as markdown tables."""
    out = [f"## {report.db}: {report.games:,} logged games", ""]
    root = report.root
    if root is None:
        out.append("The tree is empty.")
    else:
        out += line_table(root)
        out += ["", f"Root visits {root.visits:,} = children's {root.children_visits:,} + "
                f"{root.visits - root.children_visits:,}; selections {root.selections:,} of the logged games' "
                f"{report.iterations:,} root simulations."]
        if root.children:
            top = max(root.children, key=lambda c: (c.selections, c.visits))
            out.append(f"Most selected first move: {top.move} ({_pct(top.selections, root.selections)} of the "
                       f"selections), a {WORDS[top.exact]} for the first player.")
        if report.disagree:
            out.append(f"The solver disagrees with --first-move-values on {report.disagree}.")
        out += note(root)
    for line in report.lines:
        out += ["", *line_table(line), *note(line)]
    if report.buckets:
        out += ["", f"### openings per {report.bucket_size} games", ""]
        rows = []
        for b in report.buckets:
            models = "" if b.models is None else f"v{b.models[0]}" + (
                f"-v{b.models[1]}" if b.models[1] != b.models[0] else "")
            rows.append([f"{b.first}-{b.last}", b.games] + [_pct(b.first_moves[m], b.games) for m in range(1, 8)]
                        + [_pct(b.by_value[w], b.games) for w in ("win", "draw", "loss")]
                        + [_pct(b.results[r], b.games) for r in ("first", "second", "draw")] + [models])
        out += _table(["games", "n", *(f"first {m}" for m in range(1, 8)), "winning", "drawing", "losing",
                       "1st wins", "2nd wins", "draws", "models"], rows)
        if any(b.root_share for b in report.buckets):
            out += ["", "### the root's visit shares after each bucket's last game (history)", ""]
            out += _table(["games", *(f"{m}" for m in range(1, 8))],
                          [[f"{b.first}-{b.last}"] + [_pct(b.root_share[m], 1) for m in range(1, 8)]
                           for b in report.buckets if b.root_share])
    return "\n".join(out)


def prefix_table(report: Report, top: int) -> str:
    """The ``top`` most frequent two-move openings' shares per bucket."""
    overall: Counter[str] = Counter()
    for b in report.buckets:
        overall.update(b.prefixes)
    names = [name for name, _ in overall.most_common(top)]
    rows = [[f"{b.first}-{b.last}"] + [_pct(b.prefixes.get(n, 0), b.games) for n in names]
            + [_pct(b.games - sum(b.prefixes.get(n, 0) for n in names), b.games)] for b in report.buckets]
    return "\n".join([f"### the {len(names)} most played two-move openings per bucket", "",
                      *_table(["games", *names, "other"], rows)])


def sample_table(sample: Sample, min_visits: int, depths: tuple[int, int]) -> str:
    """The judged targets per Pons class."""
    out = [f"### the fit's targets judged by perfect play: {sample.judged} of {sample.drawn} positions drawn "
           f"from {sample.candidates:,} with >= {min_visits} visits and {depths[0]}-{depths[1]} discs "
           f"({sample.over_budget} over the solver's budget, {sample.seconds:.0f} s)", ""]
    rows = []
    total = ClassTally("all")
    for c in sample.classes:
        for name in ("judged", "decisive", "policy_ok", "choice_ok", "decided", "value_ok"):
            setattr(total, name, getattr(total, name) + getattr(c, name))
    for c in [*sample.classes, total]:
        rows.append([c.name, c.judged, c.decisive, f"{_pct(c.policy_ok, c.decisive)} ({c.policy_ok})",
                     f"{_pct(c.choice_ok, c.decisive)} ({c.choice_ok})", c.decided,
                     f"{_pct(c.value_ok, c.decided)} ({c.value_ok})"])
    out += _table(["class", "judged", "decisive", "policy target optimal", "tree's choice optimal", "decided",
                   "value target sign right"], rows)
    return "\n".join(out)


def _depths(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    try:
        pair = int(low), int(high or low)
    except ValueError:
        raise TreelabError(f"--depths {text!r} is not a range of discs like 8-28") from None
    if not 0 <= pair[0] <= pair[1] <= 41:
        raise TreelabError(f"--depths {text!r} must be a range of discs within 0-41, low first")
    return pair


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("db", help="a Connect Four tree file (a learning loop's); only read")
    parser.add_argument("--bucket", type=int, default=500, help="logged games per row of the openings table")
    parser.add_argument("--prefixes", type=int, default=0, help="also the N most played two-move openings per bucket")
    parser.add_argument("--depth1", action="store_true", help="also the replies to the most-visited first move")
    parser.add_argument("--line", action="append", default=[], metavar="MOVES",
                        help="also the children of this stored position (repeatable)")
    parser.add_argument("--solve-nodes", type=int, default=5_000_000,
                        help="solver budget per move, in positions (0: do not solve)")
    parser.add_argument("--first-move-values", default=KNOWN_FIRST_MOVES,
                        help="W/D/L per column 1-7 for the first moves the solver did not finish")
    parser.add_argument("--cache", default=None, help="an SQLite file keeping solved positions between runs")
    parser.add_argument("--sample", type=int, default=0, help="judge the fit's targets on up to N stored positions")
    parser.add_argument("--sample-seconds", type=float, default=300.0, help="stop judging after this long")
    parser.add_argument("--min-visits", type=int, default=50, help="the sampled positions' least visits")
    parser.add_argument("--depths", default="8-28", help="the sampled positions' discs, LOW-HIGH")
    parser.add_argument("--fit-min-visits", type=int, default=FitConfig().min_visits,
                        help="the fit's --min-visits (selections below it: the policy target uses visits)")
    parser.add_argument("--max-nodes", type=int, default=3_000_000, help="solver budget per sampled position")
    parser.add_argument("--seed", type=int, default=0, help="the sample's random draw")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    try:
        for name in ("bucket", "max_nodes"):
            if getattr(args, name) < 1:
                raise TreelabError(f"--{name.replace('_', '-')} {getattr(args, name)!r} must be 1 or more")
        for name in ("prefixes", "solve_nodes", "sample", "min_visits", "fit_min_visits"):
            if getattr(args, name) < 0:
                raise TreelabError(f"--{name.replace('_', '-')} {getattr(args, name)!r} must be 0 or more")
        given = args.first_move_values.upper()
        if len(given) != 7 or set(given) - set(VALUES):
            raise TreelabError(f"--first-move-values {args.first_move_values!r} must be 7 letters W, D or L, "
                               f"one per column (the known values: {KNOWN_FIRST_MOVES})")
        depths = _depths(args.depths)
        cache = OracleCache(args.cache) if args.cache else None
        report = measure(args.db, bucket=args.bucket, depth1=args.depth1, lines=args.line,
                         solve_nodes=args.solve_nodes, first_move_values=given, cache=cache, sample=args.sample,
                         sample_seconds=args.sample_seconds, min_visits=args.min_visits, depths=depths,
                         fit_min_visits=args.fit_min_visits, max_nodes=args.max_nodes, seed=args.seed)
    except TreelabError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(markdown(report))
    if args.prefixes and report.buckets:
        print("\n" + prefix_table(report, args.prefixes))
    if report.sample is not None:
        print("\n" + sample_table(report.sample, args.min_visits, depths))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
