"""The one rule of stored counts, as SQL: they only ever add up.

Every writer adds a change to the stored counts, never sets them, so two writers (or two workers'
batches, or a merge) add up exactly in any order: the ``nodes`` counts (:mod:`.deltas`) and the
``positions`` rows (:mod:`.positiontable`) are both written with :func:`adding`'s terms.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["adding"]


def adding(columns: Iterable[str], source: str = "?") -> str:
    """The one rule of stored counts as SQL: they only ever add up. The ``SET`` terms adding ``source`` (a
    parameter; ``"excluded."``: an upsert's new row's column) to each of ``columns``:
    ``nb_visit = nb_visit + ?, ...`` (the ``nodes`` of :mod:`.deltas`, the ``positions`` of :mod:`.positiontable`).

    >>> adding(["nb_visit", "nb_win"], "excluded.")
    'nb_visit = nb_visit + excluded.nb_visit, nb_win = nb_win + excluded.nb_win'
    """
    return ", ".join(f"{c} = {c} + {source}{c if source.endswith('.') else ''}" for c in columns)
