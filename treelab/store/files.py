"""Files from and to the outside world (not a tree's database): every file treelab writes, by one rule, whole
or not at all, and every outside file it reads, with bounded memory.

The rule for an output path (``-o``, ``--trace``, model files, exports, renders, ``fit -o``;
:func:`check_output`, used by :func:`whole` and :func:`write_whole`):

- ``-``, or a path that *is* standard output (the same file as descriptor 1: ``/dev/stdout``, a
  link to ``/proc/self/fd/1``), is written as a stream to standard output;
- a symbolic link is followed and its target written, the link kept;
- a regular file (or a new one) is written beside, into a hidden temporary file, and moved into
  place in one step once complete: a full disk, a read-only or missing directory or a crash never
  leaves a 0-byte or half-written file, never clobbers an earlier good output, and the error is one
  line;
- a directory, a character or block device, a named pipe (FIFO) or a socket is refused in one line
  before anything is written (``-o /dev/full`` once replaced the device with a regular file).

Every reader of outside input (rows, node-link and GML imports, trace files) reads through
:func:`bounded_lines`, :func:`loads` and :func:`regular_input`: a line is at most :data:`MAX_LINE`
characters (``/dev/zero``, or a gzip of gigabytes of NUL bytes, once filled memory with one "line"),
JSON nested too deep is one error instead of a ``RecursionError``, text that is not UTF-8 is one error,
and a reader that must read a file twice or whole refuses a FIFO, device or socket before opening it.

The database paths of :mod:`treelab.store.dbfile` name special files with the same words
(:func:`special_kind`) and are made durable by the same :func:`fsync_path`.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, NoReturn

from ..errors import StoreError, TreelabError

__all__ = [
    "MAX_LINE", "STDOUT", "bounded_lines", "check_output", "fsync_path", "is_stdout", "loads", "regular_input",
    "save_figure", "special_kind", "whole", "write_whole",
]

# -- output files, whole or not at all ---------------------------------------------------------------------------------
STDOUT = "-"
"""The output path that means standard output."""


def special_kind(mode: int) -> str | None:
    """What a file of ``st_mode`` ``mode`` is, in words, when it is no regular file (None: a regular file)."""
    if stat.S_ISREG(mode):
        return None
    return ("a directory" if stat.S_ISDIR(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def is_stdout(out: str | os.PathLike[str]) -> bool:
    """Whether ``out`` is ``-`` or the very file standard output (descriptor 1) is."""
    if os.fspath(out) == STDOUT:
        return True
    try:
        return os.path.samestat(os.stat(out), os.fstat(1))
    except (OSError, ValueError):  # no such file, or descriptor 1 closed
        return False


def check_output(out: str | os.PathLike[str], what: str = "-o") -> Path | None:
    """The file to write for the output path ``out`` by the module's rule: None for standard output, else the
    path to move a finished file to (a symbolic link's target). Nothing is opened (a FIFO would block).

    Raises:
        StoreError: ``out`` is a directory or a special file, or its directory is missing; ``what`` names
            the option in the message.
    """
    name = os.fspath(out)
    if is_stdout(out):
        return None
    path = Path(out)
    if path.is_symlink():  # write the file it points to, never replace the link itself
        path = Path(os.path.realpath(path))
    try:
        st = path.stat()
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise StoreError(f"cannot write {what} {name!r}: no such directory {str(path.parent)!r}: "
                             "create it, or choose another path") from None
        return path
    except OSError as exc:
        raise StoreError(f"cannot write {what} {name!r} ({exc.strerror or exc}): choose another path") from None
    kind = special_kind(st.st_mode)
    if kind is not None:
        raise StoreError(f"{what} {name!r} is {kind}, not a regular file: treelab writes only regular files "
                         f"(or {STDOUT} for standard output); choose another path")
    return path


@contextmanager
def whole(out: str | os.PathLike[str], what: str = "-o") -> Iterator[Path]:
    """A temporary file to fill for the output path ``out``; when the block ends cleanly it becomes ``out``
    (:func:`check_output`'s rule: moved into place, or copied to standard output). An exception in the block
    leaves ``out`` as it was and nothing beside it.

    ``tmp`` keeps ``out``'s suffix, so writers that pick a format by suffix (matplotlib's ``savefig``, gzip
    by ``.gz``) see the right one.

    Raises:
        StoreError: ``out`` is refused (:func:`check_output`), or cannot be written (full disk, read-only
            directory, permissions); nothing is left at ``out`` or beside it.
    """
    name = os.fspath(out)
    target = check_output(out, what)
    suffix = "".join(Path(name).suffixes[-2:]) if name != STDOUT else ""
    folder = Path(tempfile.gettempdir()) if target is None else target.parent
    stem = "stdout" if target is None else target.name
    tmp = folder / f".{stem}.{os.getpid()}-{os.urandom(4).hex()}.tmp{suffix}"
    try:
        try:
            yield tmp
        except OSError as exc:  # the block's own errors go on as they are; the output's become one line
            if isinstance(exc, TreelabError) or not (exc.errno in _FULL or exc.filename == os.fspath(tmp)):
                raise
            _cannot(what, name, exc)
        try:
            if target is None:
                _copy_to_stdout(tmp)
            else:
                fsync_path(tmp)
                if target.exists() and special_kind(target.stat().st_mode):
                    check_output(out, what)  # became special meanwhile: refused, not replaced
                os.replace(tmp, target)
        except OSError as exc:
            if isinstance(exc, TreelabError):
                raise
            _cannot(what, name, exc)
    finally:
        tmp.unlink(missing_ok=True)


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})
"""The errors of writing a file that say the medium refuses it (full, over quota or size limit, read-only)."""


def _cannot(what: str, name: str, exc: OSError) -> NoReturn:
    reason = exc.strerror or str(exc)
    raise StoreError(f"cannot write {what} {name!r} ({reason}): free some space, or choose another path") from None


def fsync_path(path: Path) -> None:
    """Flush ``path`` (a file or a folder) to the disk; nothing if it cannot be opened or flushed."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # not written at all: the move says so
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _copy_to_stdout(tmp: Path) -> None:
    stream: Any = getattr(sys.stdout, "buffer", None)
    sys.stdout.flush()
    with open(tmp, "rb") as src:
        if stream is None:  # a text-only standard output (a test's capture): decode
            sys.stdout.write(src.read().decode("utf-8"))
        else:
            shutil.copyfileobj(src, stream, 1 << 20)
            stream.flush()
    sys.stdout.flush()


def write_whole(out: str | os.PathLike[str], write: Callable[[Path], object], what: str = "-o") -> Path:
    """Call ``write(tmp)`` to fill a temporary file, which then becomes ``out`` (:func:`whole`).

    Returns:
        ``out`` as a :class:`~pathlib.Path`.

    Raises:
        StoreError: see :func:`whole`.
    """
    with whole(out, what) as tmp:
        write(tmp)
    return Path(out)


def save_figure(fig: Any, out: str | os.PathLike[str] | None, dpi: int) -> Any:
    """Save a matplotlib figure to ``out`` whole (:func:`write_whole`) and close it; None: leave it open.

    Returns:
        ``fig``, for a notebook to show.
    """
    if out is not None:
        import matplotlib.pyplot as plt

        try:
            if not is_stdout(out):
                Path(out).parent.mkdir(parents=True, exist_ok=True)
            write_whole(out, lambda tmp: fig.savefig(tmp, dpi=dpi, format=_format(out)))
        finally:
            plt.close(fig)
    return fig


def _format(out: str | os.PathLike[str]) -> str | None:
    suffix = Path(out).suffix.lower().lstrip(".")
    return suffix or None

# -- outside inputs, read with bounded memory --------------------------------------------------------------------------


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
