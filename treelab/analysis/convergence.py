"""How one search converges: each root move's visit share and mean, and the best move, after every simulation.

The numbers come from a search's trace (:mod:`treelab.mcts.tracer`): the root move each simulation
took and what it gained there, so they count this search's own simulations only (also on a stored
tree). :func:`converge` runs the searches to compare (UCT, PUCT and UCT with the solver, from the
same seed on fresh trees) and :func:`plot_convergence` draws them side by side, answering "how many
simulations until it found the move": :attr:`Convergence.found_at` is the first simulation from which
the best move stayed the one the search ended with.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UnknownOptionError
from ..games import Game, find_game
from ..mcts.config import SearchConfig
from ..mcts.dispatch import traced_search
from ..mcts.policies import make_rng
from ..mcts.tracer import Tracer, check_records
from ..mcts.uct import Limit
from ..nodes import mean_reward
from ..store.files import save_figure
from ..tree import Moves, Tree

__all__ = ["CONTENDERS", "Convergence", "converge", "converge_records", "plot_convergence"]

CONTENDERS: dict[str, SearchConfig] = {
    "uct": SearchConfig(),
    "puct": SearchConfig(algorithm="puct"),
    "solver": SearchConfig(solver=True),
}
"""The searches :func:`converge` compares by name: UCT (UCB1, random playouts), PUCT (rollout evaluator,
its solver always on) and UCT with MCTS-Solver."""


@dataclass(frozen=True, eq=False)
class Convergence:
    """One search's root statistics after every simulation."""

    label: str
    """The search's name (``"uct"``, ``"puct"``, ``"solver"``)."""
    game: str
    """The game's name."""
    position: str
    """The position searched, in the game's notation."""
    visits: dict[str, np.ndarray]
    """Each root move's visits from this search after simulation 1, 2, ... (int arrays of one length)."""
    means: dict[str, np.ndarray]
    """Each root move's mean for the player to move after every simulation (NaN while unvisited)."""
    best: tuple[str | None, ...]
    """The best move after every simulation: a proven win, else the most visited (None: none yet)."""
    proven: dict[str, str]
    """Root moves proven during the search (``"win"``, ``"draw"``, ``"loss"`` for the player making them)."""

    @property
    def simulations(self) -> int:
        """Simulations the search ran."""
        return len(self.best)

    @property
    def final(self) -> str | None:
        """The best move when the search ended."""
        return self.best[-1] if self.best else None

    @property
    def found_at(self) -> int | None:
        """The first simulation (from 1) from which the best move stayed :attr:`final`; None: no best move."""
        final = self.final
        if final is None:
            return None
        i = len(self.best)
        while i > 0 and self.best[i - 1] == final:
            i -= 1
        return i + 1

    def shares(self) -> dict[str, np.ndarray]:
        """Each root move's share of the simulations so far."""
        sims = np.arange(1, self.simulations + 1)
        return {move: v / sims for move, v in self.visits.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: the best move, when it was found, and each move's final share and mean."""
        n = self.simulations
        return {"label": self.label, "game": self.game, "position": self.position, "simulations": n,
                "best_move": self.final, "found_at": self.found_at, "proven": self.proven,
                "moves": [{"move": m, "nb_visit": int(v[-1]), "share": round(float(v[-1]) / n, 6),
                           "mean": None if math.isnan(self.means[m][-1]) else round(float(self.means[m][-1]), 6)}
                          for m, v in self.visits.items()] if n else []}


def converge_records(records: Sequence[Mapping[str, Any]], *, label: str = "search") -> Convergence:
    """The :class:`Convergence` of a trace's records (:meth:`treelab.play.tracing.SearchTrace.convergence`)."""
    check_records(records)
    game: Game = find_game(records[0]["game"])
    position = records[0]["position"]
    depth = len(game.parse(position))
    counts: dict[str, list[int]] = {}
    rows: list[tuple[str | None, int, float]] = []  # per simulation: root move, visit, reward gained (mean_reward's)
    proven: dict[str, str] = {}
    best: list[str | None] = []
    for record in records:
        path = record["path"]
        if path:
            gain = record["backup"][depth + 1]
            value = record["values"][depth + 1] if "values" in record else 0.0
            rows.append((path[0], gain[0], mean_reward(gain[1], gain[2], 1, value)))
            counts.setdefault(path[0], [0])[0] += gain[0]
        else:
            rows.append((None, 0, 0.0))
        for moves, word in record.get("proofs", {}).items():
            labels = game.parse(moves)
            if len(labels) == depth + 1:
                proven[game.label(labels[-1])] = word
        wins = [m for m, w in proven.items() if w == "win"]
        if wins:
            best.append(wins[0])
        else:
            live = {m: c[0] for m, c in counts.items() if proven.get(m) != "loss"}
            live = live or {m: c[0] for m, c in counts.items()}
            best.append(max(live, key=lambda m: (live[m], -game.parse_move(m))) if live else None)
    order = sorted(counts, key=game.parse_move)
    n = len(records)
    visits = {m: np.zeros(n, dtype=np.int64) for m in order}
    wins_at = {m: np.zeros(n) for m in order}
    for i, (move, visit, reward) in enumerate(rows):
        if move is not None:
            visits[move][i] = visit
            wins_at[move][i] = reward
    visits = {m: np.cumsum(v) for m, v in visits.items()}
    means = {}
    for m in order:
        with np.errstate(invalid="ignore", divide="ignore"):
            means[m] = np.where(visits[m] > 0, np.cumsum(wins_at[m]) / np.maximum(visits[m], 1), np.nan)
    return Convergence(label, game.name, position, visits, means, tuple(best), proven)


def converge(game: str | Game, moves: Moves = None, *, iterations: int = 1000,
             searches: Sequence[str] = tuple(CONTENDERS), seed: int | None = 1) -> list[Convergence]:
    """Run each of ``searches`` (names of :data:`CONTENDERS`) on a fresh tree from the same seed, traced.

    Example:
        >>> runs = converge("tictactoe", "1425", iterations=200, searches=("uct", "solver"))
        >>> [r.final for r in runs]  # X completes the top row or the left column
        ['3', '3']
    """
    the_game = find_game(game)
    parsed = the_game.parse(moves)
    the_game.replay(parsed)  # bad input fails before anything runs
    for name in searches:
        if name not in CONTENDERS:
            raise UnknownOptionError(f"unknown search {name!r}: use one of {', '.join(CONTENDERS)}")
    limit = Limit(iterations=iterations)
    runs = []
    for name in searches:
        tracer = Tracer()
        traced_search(Tree(the_game), parsed, limit=limit, search=CONTENDERS[name], rng=make_rng(seed), tracer=tracer)
        if not tracer.records:
            raise UnknownOptionError(f"the position {the_game.notation(parsed)!r} is over: there is nothing to search")
        runs.append(converge_records(tracer.records, label=name))
    return runs


def plot_convergence(runs: Sequence[Convergence], out: str | os.PathLike[str] | None = None, *,
                     dpi: int = 110) -> Any:
    """Visit shares (top) and means (bottom) of every root move against the simulation, one column a search.

    A dashed line marks :attr:`Convergence.found_at`. Saves to ``out`` if given (and closes the figure);
    returns the figure.
    """
    import matplotlib.pyplot as plt

    cols = max(1, len(runs))
    fig, axes = plt.subplots(2, cols, figsize=(4.6 * cols, 6.4), layout="constrained", squeeze=False,
                             sharey="row")
    moves = sorted({m for r in runs for m in r.visits}, key=lambda m: (len(m), m))
    colours = plt.get_cmap("tab10")
    colour = {m: colours(i % 10) for i, m in enumerate(moves)}
    if runs:
        fig.suptitle(f"How the search converges: {runs[0].game} at {runs[0].position or 'the start'}", fontsize=12)
    for k, run in enumerate(runs):
        top, bottom = axes[0][k], axes[1][k]
        x = np.arange(1, run.simulations + 1)
        for m, share in run.shares().items():
            top.plot(x, share, color=colour[m], lw=2.2 if m == run.final else 1.1, label=m)
            bottom.plot(x, run.means[m], color=colour[m], lw=2.2 if m == run.final else 1.1)
        found = run.found_at
        title = f"{run.label}: best {run.final}" + (f" from simulation {found:,}" if found else "")
        if run.proven.get(run.final or "") == "win":
            title += " (proven win)"
        top.set_title(title, fontsize=10)
        for ax in (top, bottom):
            if found:
                ax.axvline(found, color="0.3", ls="--", lw=1)
            ax.set_xscale("log")
            ax.grid(alpha=0.3)
        top.set_ylim(0, 1)
        bottom.set_ylim(0, 1)
        bottom.set_xlabel("simulation")
        if k == 0:
            top.set_ylabel("share of the visits")
            bottom.set_ylabel("mean for the player to move")
    if runs:
        axes[0][-1].legend(title="move", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return save_figure(fig, out, dpi)
