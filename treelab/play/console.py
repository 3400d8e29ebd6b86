"""What a run shows and hears at the terminal: a training run's progress bar, Ctrl-C as a flag, and
elapsed times written so that real work never reads ``0.00s`` (:func:`duration`), and the note under a
moves table whose visits and selections differ (:func:`selected_note`).

Used alike by the one-process run (:mod:`treelab.play.training`) and the parallel ones
(:mod:`treelab.play.training.parallel`, :mod:`treelab.play.training.processes`).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["bar", "duration", "progress_bar", "selected_note", "stop_on_signals"]


def progress_bar(total: int, enabled: bool, name: str) -> Any:
    """A bar counting a run's games (None when ``enabled`` is false); :data:`UNBOUNDED` shows no total."""
    if not enabled:
        return None
    return bar(total if total < UNBOUNDED else None, f"training {name}", "game", leave=True)


def bar(total: int | None, desc: str, unit: str, *, leave: bool = False) -> Any:
    """A tqdm bar that starts no monitor thread, for every bar of treelab's.

    tqdm's monitor (a thread that adjusts the refresh of bars that stall) would outlive the bar: a process
    with a second thread starts its children as fresh interpreters (:func:`treelab.store.writer.start_method`),
    half a second each, and a Ctrl-C could reach that thread while a child starts. Without it children fork, at
    once, and the signal reaches the main thread.
    """
    from tqdm.auto import tqdm

    class Bar(tqdm):  # type: ignore[misc, type-arg, valid-type]
        monitor_interval = 0

    return Bar(total=total, desc=desc, unit=unit, dynamic_ncols=True, leave=leave)


UNBOUNDED = 1 << 40
"""A number of games that stands for "no limit" (a run bounded by its minutes): its bar shows no total."""


@contextlib.contextmanager
def stop_on_signals() -> Iterator[Callable[[], bool]]:
    """Turn SIGINT/SIGTERM into a flag the search polls, so work ends between simulations."""
    flag = {"stop": False}

    def handler(signum: int, frame: Any) -> None:
        flag["stop"] = True

    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: no signal handling, run to the end
        previous = {}
    try:
        yield lambda: flag["stop"]
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def duration(seconds: float) -> str:
    """``seconds`` as people read it, with two significant figures below a second, never ``0.00s`` for real work.

    >>> [duration(s) for s in (2.14, 0.35, 0.0042, 0.00004, 0.0)]
    ['2.1s', '0.35s', '4.2 ms', '0.04 ms', '0 ms']
    """
    if seconds >= 1:
        return f"{seconds:.1f}s"
    if seconds >= 0.1:
        return f"{seconds:.2f}s"
    ms = seconds * 1000
    if ms >= 10:
        return f"{ms:.0f} ms"
    if ms >= 1:
        return f"{ms:.1f} ms"
    return "0 ms" if ms <= 0 else f"{ms:.2g} ms" if ms >= 0.01 else "< 0.01 ms"


def selected_note(children: list[dict[str, Any]]) -> list[str]:
    """The line under a moves table (rows with ``nb_select`` and ``nb_visit``) whose visits and selections
    differ: which count ranks the moves, and why the two differ (none when they agree)."""
    if all(k["nb_select"] == k["nb_visit"] for k in children):
        return []
    return ["selected: simulations that chose the move here, which rank the moves (proofs first); visits also "
            "count searches started deeper in a game, which passed through without choosing here"]
