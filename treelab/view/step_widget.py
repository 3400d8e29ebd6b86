"""Step through a search one simulation at a time: the notebook widget, and the data its page draws.

:func:`stepper_data` turns a search's trace (:mod:`treelab.mcts.tracer`) into what the front end
(``explorer/static/stepper.js``, one ES module) draws: the start position's board and, per
simulation, the selection at every level with its score terms, the node expanded, the cells the
path's and the playout's moves fill (numbered), the result and each node's backup increments; the
front end also draws each root move's visit share against the simulation (the convergence).

:class:`Stepper` is an `anywidget <https://anywidget.dev>`_ widget holding that data and the step
shown (``step``, from 1, synced both ways): it runs in JupyterLab, classic Notebook, VS Code and
Colab without a server or an extension to install, where :func:`treelab.explore`'s page needs a
local port. The explorer's step mode draws the very same module. Step forward and back from Python
(:meth:`Stepper.forward`, :meth:`Stepper.back`, :meth:`Stepper.go`) or with its buttons and slider.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import TraceError, require_extra
from ..games import Game, State, find_game
from ..mcts.tracer import check_records
from ..nodes import mean_reward
from .explorer.data import board_grid

__all__ = ["ESM", "MAX_STEPS", "Stepper", "stepper", "stepper_data"]

ESM = Path(__file__).with_name("explorer") / "static" / "stepper.js"
"""The front end: one ES module (``export default {render}``), for the widget and the explorer alike."""

MAX_STEPS = 2000
"""Simulations a stepper carries by default (its page holds every record: ~3 KB each)."""

try:  # the `notebook` extra: anywidget pulls IPython and ipywidgets, which the command line never needs
    import anywidget
    import traitlets

    _Widget: Any = anywidget.AnyWidget
except ImportError:  # stepper_data (the explorer's step mode) works without it; a Stepper says what to install
    traitlets = None  # type: ignore[assignment]

    class _Widget:  # type: ignore[no-redef]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            require_extra("anywidget", "notebook", "the notebook stepper")


def _synced(trait: str, *args: Any) -> Any:
    """A traitlets trait synced with the front end (None without the ``notebook`` extra)."""
    return None if traitlets is None else getattr(traitlets, trait)(*args).tag(sync=True)


def _cells(state: State, moves: Sequence[int]) -> list[list[int] | None]:
    """The grid cell ``[row, col]`` each of ``moves`` fills, played in turn from ``state`` (None: not one cell)."""
    out: list[list[int] | None] = []
    grid = state.grid()
    for move in moves:
        state = state.play(move)
        after = state.grid() or ()
        changed = [[r, c] for r, row in enumerate(after) for c, cell in enumerate(row) if grid and cell != grid[r][c]]
        out.append(changed[0] if len(changed) == 1 else None)
        grid = after
    return out


def _frame(game: Game, start: State, into: int, record: Mapping[str, Any], grid: bool) -> dict[str, Any]:
    """What the front end needs of one record: the record, less what it does not draw, with the cells
    each move fills and the player making each move (``movers[0]``: the one who moved into the start)."""
    frame = {k: record[k] for k in ("simulation", "path", "expanded", "playout", "winner", "levels", "proofs",
                                    "backup", "created") if k in record}
    moves = [game.parse_move(m) for m in [*record["path"], *(record.get("playout") or [])]]
    if grid:
        frame["cells"] = _cells(start, moves)
    movers, state = [into], start
    for move in moves:
        movers.append(state.to_move)
        state = state.play(move)
    frame["movers"] = movers
    return frame


def stepper_data(source: Any, *, max_steps: int = MAX_STEPS) -> dict[str, Any]:
    """The front end's data for a trace: ``source`` is a :class:`~treelab.play.tracing.SearchTrace` or its records.

    Carries the first ``max_steps`` simulations; the convergence curve (``shares``) covers them all.
    """
    records: Sequence[Mapping[str, Any]] = getattr(source, "records", source)
    check_records(records)
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise TraceError(f"max_steps {max_steps!r} must be a whole number of at least 1")
    first = records[0]
    game = find_game(first["game"])
    start = game.replay(first["position"])
    board = board_grid(game, start)
    grid = board["kind"] == "grid"
    board.pop("targets", None)
    parsed = game.parse(first["position"])
    depth = len(parsed)
    into = game.replay(parsed[:-1]).to_move if parsed else 2  # the root counts as moved into by player 2
    series = _root_series(records, depth)
    return {
        "game": game.name, "position": first["position"], "algorithm": first.get("algorithm", "uct"),
        "solver": bool(first.get("solver")), "c": first.get("c"), "to_move": start.to_move,
        "board": board, "simulations": len(records), "depth": depth,
        "frames": [_frame(game, start, into, r, grid) for r in records[:max_steps]],
        "roots": series["visits"], "means": series["means"],
    }


def _root_series(records: Sequence[Mapping[str, Any]], depth: int) -> dict[str, dict[str, list[float]]]:
    """Each root move's visits and mean (for its mover) after every simulation (at most 400 points, evenly spaced).

    Returns ``{"visits": {move: [...], "_at": [simulation numbers]}, "means": {move: [...]}}``; a mean is
    :func:`treelab.nodes.mean_reward` of what the move's node gained in this search, 0 before its first visit.
    """
    n = len(records)
    every = max(1, -(-n // 400))
    totals: dict[str, list[float]] = {}  # move -> [visits, wins, draws, value sum]
    visits: dict[str, list[float]] = {}
    means: dict[str, list[float]] = {}
    points = 0
    for i, record in enumerate(records, 1):
        path = record["path"]
        if path:
            gained = record["backup"][depth + 1]
            total = totals.setdefault(path[0], [0, 0, 0, 0.0])
            for k in range(3):
                total[k] += gained[k]
            if "values" in record:
                total[3] += record["values"][depth + 1]
        if i % every == 0 or i == n:
            for move in totals:
                visits.setdefault(move, [0] * points)
                means.setdefault(move, [0.0] * points)
            for move, values in visits.items():
                seen, wins, draws, value = totals.get(move, (0, 0, 0, 0.0))
                values.append(seen)
                means[move].append(round(mean_reward(wins, draws, seen, value), 4) if seen else 0.0)
            points += 1
    visits["_at"] = [min(n, (k + 1) * every) for k in range(points)]
    return {"visits": visits, "means": means}


class Stepper(_Widget):
    """A search, one simulation at a time, in a notebook (see the module doc).

    It needs the ``notebook`` extra (``pip install 'treelab[notebook]'``, anywidget); without it,
    making one raises :class:`~treelab.errors.MissingExtraError`.
    """

    _esm = ESM
    data = _synced("Dict")
    """:func:`stepper_data`'s object."""
    step = _synced("Int", 1)
    """The simulation shown, from 1."""

    @property
    def steps(self) -> int:
        """The simulations this stepper carries."""
        return len(self.data.get("frames", ()))

    @property
    def record(self) -> dict[str, Any]:
        """The record of the simulation shown, as the front end holds it (with ``cells`` and ``movers``)."""
        return dict(self.data["frames"][self.step - 1])

    def go(self, step: int) -> Stepper:
        """Show simulation ``step`` (from 1); a step past the end is a :class:`~treelab.errors.TraceError`."""
        if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= self.steps:
            raise TraceError(f"step {step!r} is outside this search: use 1 to {self.steps}")
        self.step = step
        return self

    def forward(self, n: int = 1) -> Stepper:
        """Step ``n`` simulations on (stopping at the last)."""
        return self.go(min(self.steps, self.step + n))

    def back(self, n: int = 1) -> Stepper:
        """Step ``n`` simulations back (stopping at the first)."""
        return self.go(max(1, self.step - n))


def stepper(source: Any, *, step: int = 1, max_steps: int = MAX_STEPS) -> Stepper:
    """A :class:`Stepper` over a trace (a :class:`~treelab.play.tracing.SearchTrace` or its records), at ``step``.

    Example:
        >>> import treelab
        >>> w = treelab.trace("tictactoe", "15", iterations=30, seed=1).stepper()
        >>> w.forward(10).step, w.record["simulation"]
        (11, 11)
    """
    widget = Stepper(data=stepper_data(source, max_steps=max_steps))
    return widget.go(step)
