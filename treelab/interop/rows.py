"""The plain interchange format: one row per node (JSON lines or CSV), read, checked in order, and written (the
recorder for hand-written searches is :mod:`treelab.interop.recorder`).

A row names a node by its **path** (the move labels from the game's start, comma-separated:
``"4,4,5"``; ``""`` is the root; a JSON list of labels works too) and gives its numbers:

| field | meaning | default |
|---|---|---|
| ``path`` | the node | required |
| ``visits`` | simulations through the node | required |
| ``value_sum`` | sum of the mover's returns in [-1, 1] of the simulations counted in ``draws`` | 0 |
| ``prior`` | the policy's probability of the move into the node | none |
| ``proven`` | ``1``/``win``, ``0``/``draw``, ``-1``/``loss`` for the mover, or empty | none |
| ``wins`` | simulations that ended in a whole win for the mover | 0 |
| ``draws`` | simulations counted as draws, the valued ones included | ``visits - wins`` |
| ``selected`` | simulations that selected the node at its parent | ``visits`` (the root: 0) |

The *mover* of a node is the player who made the move into it. A search that backs up returns in
[-1, 1] writes ``path, visits, value_sum`` (and ``prior``): every simulation is then a "draw" plus
its return, and treelab's mean is ``(1 + value_sum / visits) / 2``
(:func:`treelab.nodes.mean_reward`). treelab's own export writes every field, so export ->
import gives back exactly the same numbers.

Every row's parent path has a row too (the root's is ``""``), so visits add up along paths. A
JSON-lines file may start with ``{"treelab_rows": 1, "game": "connect4"}``, a CSV file with the
line ``# treelab rows: game=connect4`` before its header: importing it as another game is refused.
"""

from __future__ import annotations

import csv
import gc
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import IO, Any

from ..errors import ImportFormatError, NotationError
from ..games import Game, State, find_game
from ..nodes import TreeNode, walk
from ..store.files import bounded_lines, loads
from ..tree import Tree
from .build import Builder, given_twice

__all__ = ["FIELDS", "OutOfOrder", "checked_order", "from_rows", "numbered_rows", "parse_path", "read_rows",
           "row_of", "tree_nodes", "tree_rows", "write_rows"]

FIELDS = ("path", "visits", "wins", "draws", "value_sum", "prior", "proven", "selected")
"""The fields of a row, in the order treelab writes them (CSV columns)."""

_NUMBERS = {"visits": int, "wins": int, "draws": int, "selected": int, "value_sum": float, "prior": float}
_CSV_GAME = "# treelab rows: game="


def parse_path(game: Game, path: object, cache: dict[str, int]) -> tuple[int, ...]:
    """The moves of a row's ``path`` (``"4,4,5"``, ``""``, a list of labels, or the game's notation)."""
    if isinstance(path, list):
        labels = [str(x) for x in path]
    elif isinstance(path, str):
        if "," not in path:
            return game.parse(path) if path else ()
        labels = path.split(",")
    else:
        raise NotationError(f"path {path!r} is not a string of comma-separated moves or a list of moves")
    out = []
    for label in labels:
        move = cache.get(label)
        if move is None:
            move = cache[label] = game.parse_move(label)
        out.append(move)
    return tuple(out)


def read_rows(file: str | os.PathLike[str] | IO[str], source: str | None = None
              ) -> tuple[str | None, Iterator[tuple[int, dict[str, Any]]]]:
    """The game a rows file names (None: none) and its rows as ``(line number, row)``, JSON lines or CSV.

    Memory stays bounded whatever the file holds: a line is at most :data:`treelab.store.files.MAX_LINE`
    characters, JSON nested too deep, text that is not UTF-8 or a CSV field too long is an
    :class:`~treelab.errors.ImportFormatError` naming the line (``source`` names the file in errors).
    """
    stream: IO[str]
    if isinstance(file, str | os.PathLike):
        name = source or os.fspath(file)
        stream = open(file, encoding="utf-8", newline="")  # noqa: SIM115
    else:
        name, stream = source or "rows", file

    def fail(reason: str) -> ImportFormatError:
        stream.close()
        return ImportFormatError(f"{name}: {reason}: is this a rows file (JSON lines or CSV)?")

    lines = bounded_lines(stream, fail)
    number, first = next(((n, line) for n, line in lines if line.strip()), (1, ""))  # blank lines skipped
    if first.lstrip().startswith("{"):
        return _json_rows(stream, lines, number, first, name)
    return _csv_rows(stream, lines, number, first, name)


_BATCH = 1 << 20
"""Characters of JSON lines decoded as one JSON array (one call instead of one a line)."""


def _json_rows(stream: IO[str], lines: Iterator[tuple[int, str]], number: int, first: str, name: str
               ) -> tuple[str | None, Iterator[tuple[int, dict[str, Any]]]]:
    try:
        head = loads(first)
    except ValueError as exc:
        stream.close()
        raise ImportFormatError(f"{name}: row {number}: not a JSON object ({exc}): write one JSON object a line"
                                ) from None
    game = head.get("game") if isinstance(head, dict) and "treelab_rows" in head else None

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        with stream:
            if game is None:
                yield number, head
            batch: list[str] = []
            size, start = 0, number + 1
            for n, line in lines:
                if not batch:
                    start = n
                batch.append(line)
                size += len(line)
                if size >= _BATCH:
                    yield from _decoded(batch, start, name)
                    batch, size = [], 0
            yield from _decoded(batch, start, name)

    return game, rows()


def _decoded(lines: list[str], first: int, name: str) -> Iterator[tuple[int, Any]]:
    """The JSON values of ``lines`` (numbered from ``first``), decoded as one array when none is bad or blank."""
    if not lines:
        return
    try:
        decoded = loads("[" + ",".join(lines) + "]")
    except ValueError:
        decoded = None
    if decoded is not None and len(decoded) == len(lines):
        yield from zip(range(first, first + len(lines)), decoded, strict=True)
        return
    for n, line in enumerate(lines, first):  # a blank or bad line in this batch: line by line, naming a bad one
        if not line.strip():
            continue
        try:
            yield n, loads(line)
        except ValueError as exc:
            raise ImportFormatError(f"{name}: row {n}: not a JSON object ({exc}): write one JSON object a line"
                                    ) from None


def _csv_rows(stream: IO[str], lines: Iterator[tuple[int, str]], number: int, first: str, name: str
              ) -> tuple[str | None, Iterator[tuple[int, dict[str, Any]]]]:
    game, start = None, number
    if first.startswith(_CSV_GAME):
        game = first[len(_CSV_GAME):].strip()
        start, first = next(lines, (number + 1, ""))
    reader = csv.DictReader(chain([first], (line for _, line in lines)))  # read as it goes, never held whole
    try:
        names = reader.fieldnames or []
    except csv.Error as exc:
        stream.close()
        raise ImportFormatError(f"{name}: row {start}: not CSV ({exc}): write a header of {', '.join(FIELDS)}"
                                ) from None
    if "path" not in names or "visits" not in names:
        stream.close()
        raise ImportFormatError(f"{name}: row {start}: the CSV header {','.join(names)!r} lacks 'path' or 'visits': "
                                f"write a header of {', '.join(FIELDS)}")

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        with stream:
            n = start
            try:
                for n, row in enumerate(reader, start + 1):
                    if None in row:
                        raise ImportFormatError(f"{name}: row {n}: more values than the header names: check the "
                                                "commas")
                    yield n, {k: _cell(k, v, n, name) for k, v in row.items() if v not in ("", None) or k == "path"}
            except csv.Error as exc:
                raise ImportFormatError(f"{name}: row {n + 1}: not CSV ({exc}): check the quotes and the field"
                                        ) from None

    return game, rows()


def _cell(name: str, text: str, n: int, source: str) -> Any:
    kind = _NUMBERS.get(name)
    if kind is None:
        return text
    try:
        return kind(text)
    except ValueError:
        raise ImportFormatError(f"{source}: row {n}: {name} {text[:40]!r} is not a "
                                f"{'whole ' if kind is int else ''}number") from None


def from_rows(rows_or_file: str | os.PathLike[str] | IO[str] | Iterable[Mapping[str, Any]], game: str | Game,
              source: str | None = None) -> Tree:
    """A tree of ``game`` from rows of the plain format (the module doc): a file (JSON lines or CSV) or dicts.

    Rows in depth-first order (a node's row before its subtree's, as treelab writes them) are
    built as they are read, holding nothing but the tree; rows in any other order are sorted
    first (a second read of a file).

    Raises:
        ImportFormatError: a malformed row, an illegal path, a path given twice or without its
            parent's row, or a file of another game: the message names the row.
    """
    the_game = find_game(game)
    source, numbered = numbered_rows(rows_or_file, the_game, source)
    collecting = gc.isenabled()
    gc.disable()  # a million new nodes would set off full collections that walk the growing tree: 2-3x slower
    try:
        builder = Builder(the_game, source)
        put = builder.set_row
        for node, row, state, where in checked_order(numbered, the_game, source, builder):
            put(node, row, state, where)
        return builder.tree
    finally:
        if collecting:
            gc.enable()


def numbered_rows(rows_or_file: str | os.PathLike[str] | IO[str] | Iterable[Mapping[str, Any]], game: Game,
                  source: str | None = None) -> tuple[str, Callable[[], Iterable[tuple[int, Any]]]]:
    """The name errors give the rows (``source``, else a file's path, else ``"rows"``) and a function giving them
    as ``(line number, row)`` (a file is read again at each call; the game it names is checked).

    Raises:
        ImportFormatError: the file names another game, or is read a second time (rows out of order) when it
            is a pipe or device that cannot be read twice.
    """
    if isinstance(rows_or_file, str | os.PathLike):
        file = rows_or_file
        name = source or os.fspath(file)
        reads = [0]

        def numbered() -> Iterable[tuple[int, Any]]:
            reads[0] += 1
            if reads[0] > 1 and not stat.S_ISREG(os.stat(file).st_mode):
                raise ImportFormatError(
                    f"{name}: the rows are not in depth-first order (each node's row before its subtree's), so "
                    f"they must be read twice, and {name!r} is not a regular file that can be: save them to a file "
                    "first, or write them in that order")
            named, rows = read_rows(file, name)
            if named is not None and named != game.name:
                raise ImportFormatError(f"{name}: row 1: the rows are of {named}, not {game.name}: "
                                        f"import them with game {named!r}")
            return rows

        return name, numbered
    name = source or "rows"
    if hasattr(rows_or_file, "readline"):
        named, stream = read_rows(rows_or_file, name)  # type: ignore[arg-type]
        if named is not None and named != game.name:
            raise ImportFormatError(f"{name}: row 1: the rows are of {named}, not {game.name}: "
                                    f"import them with game {named!r}")
        listed = list(stream)
    else:
        listed = list(enumerate(rows_or_file, 1))  # type: ignore[arg-type]
    return name, lambda: listed


def checked_order(numbered: Callable[[], Iterable[tuple[int, Any]]], game: Game, source: str, sink: Any, *,
                  sort: bool = False) -> Iterator[tuple[Any, Any, State, _Row]]:
    """Each row of ``numbered()`` (``(line number, row)``) with its node made by ``sink`` (a :class:`Builder`, or
    anything with its ``root`` and ``child``), its position and where it is, a node after its parent.

    Rows in depth-first order are passed on as they are read. Rows out of that order are all read again
    (``numbered()`` a second time), sorted in memory and passed on from the first: a sink with a ``restart``
    method is restarted first; without one, :class:`OutOfOrder` is raised (``sort=True``: sorted at once).
    """
    try:
        if not sort:
            yield from _walk(numbered(), game, source, sink, ordered=False)
            return
    except OutOfOrder:
        if not hasattr(sink, "restart"):
            raise
        sink.restart()
    cache: dict[str, int] = {}
    keyed = [(_moves(game, n, row, cache, source), n, row) for n, row in numbered()]
    keyed.sort(key=_first)  # a parent's path sorts before its children's: a depth-first walk
    yield from _walk(((n, row) for _, n, row in keyed), game, source, sink, ordered=True)


class OutOfOrder(Exception):
    """A row came before its parent's: sort the rows and build again (:func:`checked_order`)."""


class _Row:
    """Where a row is, as error messages name it (formatted only for a message)."""

    __slots__ = ("n", "path")

    def __init__(self, n: int, path: object) -> None:
        self.n, self.path = n, path

    def __str__(self) -> str:
        return f"row {self.n} (path {self.path!r})"


def _moves(game: Game, n: int, row: Any, cache: dict[str, int], source: str) -> tuple[int, ...]:
    if not isinstance(row, Mapping) or "path" not in row or "visits" not in row:
        raise ImportFormatError(f"{source}: row {n}: {row!r} lacks 'path' or 'visits': give both")
    if not row.keys() <= _KNOWN:
        unknown = sorted(set(row) - _KNOWN)[0]
        raise ImportFormatError(f"{source}: row {n}: unknown field {unknown!r}: the fields are {', '.join(FIELDS)}")
    try:
        return parse_path(game, row["path"], cache)
    except (NotationError, ValueError) as exc:
        raise ImportFormatError(f"{source}: row {n}: path {row['path']!r}: {exc}") from None


_KNOWN = frozenset(FIELDS)


def _walk(rows: Iterable[tuple[int, Any]], game: Game, source: str, sink: Any, *, ordered: bool
          ) -> Iterator[tuple[Any, Any, State, _Row]]:
    """The rows in depth-first order with their nodes (else :class:`OutOfOrder`, or an error once ``ordered``)."""
    cache: dict[str, int] = {}
    line: list[tuple[str, Any, State]] = []  # the path text, node and position at each depth of the current line
    child = sink.child
    for n, row in rows:
        if not isinstance(row, dict) or not row.keys() <= _KNOWN or "visits" not in row:
            _moves(game, n, row, cache, source)  # the error
        text = row.get("path")
        if type(text) is str and "," in text:  # the common case: the parent's path, a comma, a label
            head, _, last = text.rpartition(",")
            depth = text.count(",") + 1
            move = cache.get(last)
            if move is None:
                move = _moves(game, n, {"path": [last], "visits": 0}, cache, source)[0]
        else:
            moves = _moves(game, n, row, cache, source)
            depth = len(moves)
            head = ",".join(game.label(m) for m in moves[:-1])
            move = moves[-1] if moves else 0
            text = ",".join(game.label(m) for m in moves)
        where = _Row(n, row["path"])
        if depth == 0:
            if line:
                raise given_twice(source, where)
            node, state = sink.root, game.initial()
        else:
            if len(line) < depth or line[depth - 1][0] != head:
                if not ordered:
                    raise OutOfOrder
                raise ImportFormatError(f"{source}: {where}: no row for its parent: give a row for every node "
                                        "on the path, the root's ('') included")
            _, parent, at = line[depth - 1]
            node, state = child(parent, at, move, where, new=True)
            del line[depth:]
        yield node, row, state, where
        line.append((text, node, state))


def _first(item: tuple[tuple[int, ...], int, Any]) -> tuple[int, ...]:
    return item[0]


def row_of(tree: Tree, node: TreeNode, moves: Sequence[str]) -> dict[str, Any]:
    """The row of ``node`` (its labels from the root: ``moves``), every field written."""
    prior = tree.priors.get(node)
    value = node.value_sum
    return {"path": ",".join(moves), "visits": node.nb_visit, "wins": node.nb_win, "draws": node.nb_draw,
            "value_sum": value, "prior": prior, "proven": None if node.proven is None else int(node.proven),
            "selected": node.nb_select}


def tree_nodes(tree: Tree, top: TreeNode | None = None, depth: int | None = None
               ) -> Iterator[tuple[TreeNode, list[str]]]:
    """The nodes from the root down to ``top``, then the subtree at ``top`` (``depth`` levels; None: all), depth
    first, each with its move labels from the root (a list reused from one node to the next: copy it to keep it)."""
    top = tree.root if top is None else top
    line = [top]
    while line[-1].parent is not None:
        line.append(line[-1].parent)
    for node in reversed(line[1:]):
        yield node, list(node.moves)
    limit = top.depth + (depth if depth is not None else 1 << 30)
    labels: list[str] = list(top.moves)
    for node in walk(top):
        if node.depth > limit:
            continue
        if node is not top:
            del labels[node.depth - 1:]
            labels.append(node.name)
        yield node, labels


def tree_rows(tree: Tree, top: TreeNode | None = None, depth: int | None = None) -> Iterator[dict[str, Any]]:
    """The rows of ``tree``: the nodes from the root down to ``top`` and the subtree at ``top`` (``depth`` levels)."""
    for node, labels in tree_nodes(tree, top, depth):
        yield row_of(tree, node, labels)


def write_rows(rows: Iterable[Mapping[str, Any]], out: IO[str], game: str, *, fmt: str = "jsonl") -> int:
    """Write ``rows`` to ``out`` as JSON lines (``fmt="jsonl"``) or CSV (``"csv"``), with the game's header line;
    returns the rows written. Floats are written exactly (``repr``), so reading them back gives the same numbers."""
    count = 0
    if fmt == "csv":
        out.write(f"{_CSV_GAME}{game}\n")
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(FIELDS)
        for row in rows:
            writer.writerow(["" if row.get(k) is None else repr(row[k]) if isinstance(row[k], float) else row[k]
                             for k in FIELDS])
            count += 1
        return count
    out.write(json.dumps({"treelab_rows": 1, "game": game}) + "\n")
    for row in rows:
        out.write(json.dumps({k: v for k, v in row.items() if v is not None}) + "\n")
        count += 1
    return count
