"""A traced search and its file: :func:`trace`, :func:`read_trace`, :class:`SearchTrace` (``analyse --trace``).

:func:`trace` searches one position as :func:`treelab.analyse` does, with a
:class:`~treelab.mcts.tracer.Tracer` riding along, and returns every simulation's record
with the search's summary. On a stored tree (``db=``) it only reads the file unless
``save=True``. :meth:`SearchTrace.write` writes the JSON Lines file of
``treelab analyse ... --trace FILE`` (gzip-compressed when the name ends in ``.gz``), and
:func:`read_trace` reads one back, refusing a cut or damaged file, or one of another game or
position, in one line.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import IO, Any

from ..errors import TraceError
from ..games import Game, find_game
from ..mcts.config import SearchConfig, resolve_aliases
from ..mcts.summary import SearchSummary
from ..mcts.tracer import TRACE_KEYS, Tracer, check_records
from ..mcts.uct import Limit
from ..store.files import loads
from ..tree import Moves

__all__ = ["SearchTrace", "open_trace_file", "read_trace", "trace", "trace_file", "write_records"]


@dataclass(frozen=True)
class SearchTrace:
    """One search, simulation by simulation: the records of its trace and what it found."""

    game: str
    """The game's name."""
    position: str
    """The position searched, in the game's notation (``""``: the start)."""
    records: tuple[dict[str, Any], ...]
    """One record per simulation, in order (the file format of ``docs/guide/tracing.md``)."""
    summary: SearchSummary | None = None
    """What the search found (the ``analyse --json`` object); None for a trace read from a file."""

    def __len__(self) -> int:
        return len(self.records)

    def step(self, n: int) -> dict[str, Any]:
        """The record of simulation ``n`` (from 1); a step past the end is a :class:`~treelab.errors.TraceError`."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(self.records):
            raise TraceError(f"step {n!r} is outside this trace: use 1 to {len(self.records)}")
        return self.records[n - 1]

    @property
    def algorithm(self) -> str:
        """``"uct"`` or ``"puct"``, with ``"+solver"`` for UCT's solver."""
        first = self.records[0] if self.records else {}
        name = str(first.get("algorithm", "uct"))
        return name + "+solver" if name == "uct" and first.get("solver") else name

    def write(self, path: str | PathLike[str]) -> Path:
        """Write the JSON Lines file (gzip when ``path`` ends in ``.gz``); returns its path."""
        return write_records(self.records, path)

    def stepper(self, **options: Any) -> Any:
        """The notebook widget stepping through this search (:func:`treelab.view.step_widget.stepper`)."""
        from ..view.step_widget import stepper

        return stepper(self, **options)

    def convergence(self) -> Any:
        """Each root move's visit share and mean after every simulation
        (:func:`treelab.analysis.convergence.converge_records`)."""
        from ..analysis.convergence import converge_records

        return converge_records(self.records, label=self.algorithm)


def trace(
    game: str | Game,
    moves: Moves = None,
    *,
    iterations: int | None = None,
    seconds: float | None = None,
    search: SearchConfig | None = None,
    seed: int | random.Random | None = None,
    db: str | PathLike[str] | None = None,
    save: bool = False,
    **options: Any,
) -> SearchTrace:
    """Search the position ``moves`` as :func:`treelab.analyse` does, recording every simulation.

    Args:
        game: game name or :class:`~treelab.games.Game`.
        moves: the position, as moves from the start.
        iterations: simulations to run (default 200 when ``seconds`` is not given either).
        seconds: a time budget instead of, or as well as, ``iterations``.
        search: how to search (:class:`~treelab.mcts.config.SearchConfig`): ``algorithm="uct"`` or
            ``"puct"``, ``solver``, ``c``, ``playout``, ``evaluator``...
        seed: replay the search exactly (a traced UCT search grows the tree the untraced one grows).
        db: search in this stored tree (only the subtree at the position is read).
        save: write what the search added back to ``db`` (False: the file is only read).
        options: fields of ``search`` as keywords (``algorithm="puct"``, ``solver=True``).

    Example:
        >>> import treelab
        >>> t = treelab.trace("tictactoe", "15", iterations=50, seed=1)
        >>> first = t.step(1)
        >>> step = first["levels"].pop()  # the only level: a fresh tree can only try a move
        >>> first["simulation"], step["why"], first["expanded"] in first["path"]
        (1, 'untried', True)
    """
    from .positions import search_position

    the_game = find_game(game)
    options = resolve_aliases(options, {"how": "choice", "config": "search"})
    cfg = SearchConfig.of(search, **options)
    if iterations is None and seconds is None:
        iterations = 200
    tracer = Tracer()
    summary, _ = search_position(the_game, moves, Limit(iterations=iterations, seconds=seconds), cfg, seed=seed,
                                 db=db, trace=tracer, save=save)
    return SearchTrace(the_game.name, summary.moves, tuple(tracer.records), summary)


def open_trace_file(path: str | PathLike[str], mode: str) -> IO[str]:
    """A trace file opened as text (``"r"`` or ``"w"``), through gzip when its name ends in ``.gz``."""
    if str(path).endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]  # a text wrapper
    return open(path, mode, encoding="utf-8")


@contextmanager
def trace_file(path: str | PathLike[str]) -> Iterator[Tracer]:
    """A :class:`~treelab.mcts.tracer.Tracer` writing each record into ``path`` as it is made (memory stays
    small); the file appears whole when the block ends, and not at all if it raises. ``path`` follows the
    rule of every output (:mod:`treelab.store.files`): ``-`` is standard output, a link's target is
    written, a device, FIFO or socket is refused before the search starts."""
    from ..store.files import whole

    with whole(path, "--trace") as part, open_trace_file(part, "w") as out:  # the same suffix: gzip or not

        def write(record: dict[str, Any]) -> None:
            out.write(json.dumps(record, separators=(",", ":")) + "\n")

        yield Tracer(sink=write, keep=False)


def write_records(records: Sequence[Mapping[str, Any]], path: str | PathLike[str]) -> Path:
    """Write ``records`` as JSON Lines into ``path`` (whole or not at all: a temporary file is renamed)."""
    with trace_file(path) as tracer:
        assert tracer.sink is not None
        for record in records:
            tracer.sink(dict(record))
    return Path(path)


MAX_BLANK = 10_000
"""Blank lines in a row a trace file may hold (treelab writes none)."""
INFLATION = 25
"""A gzip'd trace may unpack to at most this many times its size (records compress about 12.5 times)..."""
MAX_UNPACKED = 1 << 24
"""... or to 16 MiB, whichever is more: a gzip of gigabytes of repeated lines stops in one line."""


_KEYS = (*TRACE_KEYS, "game", "position", "backup")


def _lines(path: str | PathLike[str]) -> Iterator[tuple[int, str]]:
    """The numbered lines of a trace file, each at most :data:`treelab.store.files.MAX_LINE` characters (a
    gzip of gigabytes of NUL bytes stops at the first too-long "line", in one error)."""
    from ..store.files import bounded_lines

    def bad(reason: str) -> TraceError:
        return TraceError(f"{str(path)!r} is not a readable trace file ({reason}): record it again")

    try:
        with open_trace_file(path, "r") as lines:
            unpacked = getattr(lines, "buffer", None) if str(path).endswith(".gz") else None  # the GzipFile
            limit = max(MAX_UNPACKED, INFLATION * os.path.getsize(path))
            blank = 0
            for number, line in bounded_lines(lines, bad):
                if unpacked is not None and number % 1024 == 0 and unpacked.tell() > limit:
                    raise bad(f"it unpacks to more than {limit:,} bytes, {INFLATION} times its size: a gzip bomb")
                blank = blank + 1 if not line.strip() else 0
                if blank > MAX_BLANK:
                    raise bad(f"more than {MAX_BLANK:,} blank lines in a row at line {number:,}")
                yield number, line
    except FileNotFoundError:
        raise TraceError(f"no trace file {str(path)!r}: record one with treelab analyse ... --trace FILE") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise bad(str(exc)) from None


def read_trace(path: str | PathLike[str], *, game: str | Game | None = None, moves: Moves = None) -> SearchTrace:
    """Read a trace file (JSON Lines, or gzip'd ``.gz``) written by ``analyse --trace`` or :meth:`SearchTrace.write`.

    Args:
        path: the file.
        game: the game it must be of (None: any).
        moves: the position it must have searched (None: any; checked only with ``game``).

    Raises:
        TraceError: no such file, a cut or damaged line, records out of order, another game or position.
    """
    records: list[dict[str, Any]] = []
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except ValueError as exc:
            cut = "" if line.endswith("\n") else " (cut off: the file ends mid-record)"
            why = " (nested too deeply)" if "nested" in str(exc) else ""
            raise TraceError(f"line {number} of {str(path)!r} is not JSON{cut}{why}: record the trace again") from None
        records.append(record)
        if not isinstance(record, dict) or record.get("simulation") != len(records) or any(
                k not in record for k in _KEYS):
            check_records(records)  # a record out of place: said now, before a damaged file is held whole
    expected_game = find_game(game) if game is not None else None
    position = None
    if expected_game is not None and moves is not None:
        position = expected_game.notation(expected_game.parse(moves))
    check_records(records, game=expected_game.name if expected_game else None, position=position)
    return SearchTrace(records[0]["game"], records[0]["position"], tuple(records))
