"""Reading files from outside with bounded memory: lines, JSON nesting, and special files.

Every reader of outside input (rows, node-link and GML imports, trace files) reads through these:
a line is at most :data:`MAX_LINE` characters (``/dev/zero``, or a gzip of gigabytes of NUL bytes,
once filled memory with one "line"), JSON nested too deep is one error instead of a
``RecursionError``, text that is not UTF-8 is one error, and a reader that must read a file twice
or whole refuses a FIFO, device or socket (:func:`regular_input`) before opening it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import IO, Any

from ..errors import StoreError
from .outfile import special_kind

__all__ = ["MAX_LINE", "bounded_lines", "loads", "regular_input"]

MAX_LINE = 1 << 24
"""The longest line (characters) a reader of outside files accepts: 16 Mi, far beyond any row or trace record."""


def bounded_lines(stream: IO[str], fail: Callable[[str], Exception], start: int = 1) -> Iterator[tuple[int, str]]:
    """The lines of ``stream`` numbered from ``start``, none longer than :data:`MAX_LINE` characters.

    Raises:
        ``fail(reason)``: a line is longer, or the text is not UTF-8.
    """
    n = start
    while True:
        try:
            line = stream.readline(MAX_LINE + 1)
        except UnicodeDecodeError as exc:
            raise fail(f"line {n} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        if not line:
            return
        if len(line) > MAX_LINE:
            raise fail(f"line {n} is longer than {MAX_LINE:,} characters")
        yield n, line
        n += 1


def loads(text: str) -> Any:
    """``json.loads``, with nesting too deep for the parser a ``ValueError`` like any other malformed JSON."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def regular_input(file: str | os.PathLike[str], what: str = "input") -> None:
    """Refuse an input ``file`` that is not a regular file, for a reader that reads it twice or whole (a FIFO
    cannot be read twice; ``/dev/zero`` never ends). Nothing is opened.

    Raises:
        StoreError: no such file, a directory or a special file.
    """
    name = os.fspath(file)
    try:
        st = os.stat(file)
    except FileNotFoundError:
        raise StoreError(f"no such {what} file {name!r}: check the path") from None
    except OSError as exc:
        raise StoreError(f"cannot read {what} file {name!r} ({exc.strerror or exc}): check the path") from None
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise StoreError(f"{what} file {name!r} is {kind}, not a regular file: save it to a file first, "
                         "then give that file")
