"""Writing output files (diagrams, plots) whole or not at all.

``render``, ``growth`` and ``shape`` write their output through
:func:`write_whole`: the bytes go to a hidden temporary file beside the
output, which replaces it only once complete. A full disk, a read-only
directory or a crash therefore never leaves a 0-byte or half-written file
behind, and never clobbers an earlier good output; the error is one line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import StoreError

__all__ = ["save_figure", "write_whole"]


def write_whole(out: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` to fill a temporary file beside ``out``, then move it to ``out`` in one step.

    ``tmp`` keeps ``out``'s suffix, so writers that pick a format by suffix
    (matplotlib's ``savefig``) see the right one.

    Returns:
        ``out`` as a :class:`~pathlib.Path`.

    Raises:
        StoreError: the file cannot be written (full disk, read-only or missing
            directory, permissions); nothing is left at ``out`` or beside it.
    """
    path = Path(out)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}-{os.urandom(4).hex()}.tmp{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise StoreError(
            f"cannot write {os.fspath(out)!r} ({reason}): free some space, or choose another path with -o"
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
    return path


def save_figure(fig: Any, out: str | os.PathLike[str] | None, dpi: int) -> Any:
    """Save a matplotlib figure to ``out`` whole (:func:`write_whole`) and close it; None: leave it open.

    Returns:
        ``fig``, for a notebook to show.
    """
    if out is not None:
        import matplotlib.pyplot as plt

        Path(out).parent.mkdir(parents=True, exist_ok=True)
        try:
            write_whole(out, lambda tmp: fig.savefig(tmp, dpi=dpi))
        finally:
            plt.close(fig)
    return fig
