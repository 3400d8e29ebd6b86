"""Which hot paths run: the compiled ones (``treelab._speedups``) or pure Python.

The C extension is built at install time when a compiler is present
(declared in ``setup.py``, ``optional=True``). It
holds the uniformly random playouts and the move replays (``State.play_all``)
of Connect Four and tic-tac-toe, the UCT tree walk (``descend``, ``select``,
``backup``) of :func:`treelab.mcts.uct.search` and its whole simulations in batches
(``batch``), and the rows of a first save
(:mod:`treelab.store.bulk`). Without it, or with the environment variable
``TREELAB_PURE_PYTHON=1``, the pure-Python code runs instead: the rules of
:mod:`treelab.games`, which stay the reference, the walk of
:mod:`treelab.mcts.uct` and the rows of :mod:`treelab.store.bulk`.

The compiled walk picks exactly the children the Python one picks. The
compiled playouts play the same uniformly random games but draw their
randomness differently (one 64-bit seed per playout from the search's
``random.Random``), so a seed replays the same tree only with the same kind of
playout: check :data:`ACTIVE` when comparing trees across machines.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

__all__ = ["ACTIVE", "compiled", "describe", "seed64"]

compiled: ModuleType | None = None
"""The compiled module (playouts, ``*_trace``, ``*_replay``, ``descend``, ``select``, ``backup``, first-save rows)."""

_reason = "disabled by TREELAB_PURE_PYTHON"
if os.environ.get("TREELAB_PURE_PYTHON", "") in ("", "0"):
    try:
        from . import _speedups as compiled  # type: ignore[no-redef]
    except ImportError as exc:  # no compiler at install time, or a stale build
        _reason = f"extension not built: {exc}"

ACTIVE = "compiled" if compiled is not None else "python"
"""``"compiled"`` or ``"python"``: the hot paths in use."""


def describe() -> str:
    """One line saying which code runs (for ``--version``, ``info`` and benchmarks)."""
    if compiled is not None:
        return f"compiled playouts, tree walk and save rows ({os.path.basename(compiled.__file__ or '_speedups')})"
    return f"pure-Python playouts, tree walk and save rows ({_reason})"


def seed64(rng: Any) -> int:
    """A 64-bit seed for one compiled playout, drawn from ``rng``.

    ``random.Random.getrandbits(64)``; a ``numpy.random.Generator`` draws a
    ``uint64``; anything else with a ``random()`` method gives 53 random bits.
    """
    try:
        return int(rng.getrandbits(64))
    except AttributeError:
        integers = getattr(rng, "integers", None)
        if integers is not None:
            return int(integers(0, 1 << 64, dtype="uint64"))
        return int(rng.random() * 9007199254740992.0)  # 2**53
