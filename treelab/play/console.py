"""What a training run shows and hears at the terminal: its progress bar, and Ctrl-C as a flag.

Used alike by the one-process run (:mod:`treelab.play.training`) and the parallel ones
(:mod:`treelab.play.parallel`, :mod:`treelab.play.processes`).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["progress_bar", "stop_on_signals"]


def progress_bar(total: int, enabled: bool, name: str) -> Any:
    """A tqdm bar counting a run's games (None when ``enabled`` is false).

    It starts no monitor thread (tqdm's own adjusts the refresh of bars that stall): children of a
    process with one thread start forked, at once (:func:`treelab.store.background.start_method`).
    """
    if not enabled:
        return None
    from tqdm.auto import tqdm

    class Bar(tqdm):  # type: ignore[misc, type-arg, valid-type]
        monitor_interval = 0

    return Bar(total=total, desc=f"training {name}", unit="game", dynamic_ncols=True)


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

