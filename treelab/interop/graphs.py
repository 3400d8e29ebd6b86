"""Trees as graphs for graph tools: node-link JSON (networkx, d3) and GML (Gephi, yEd, networkx), both ways.

Every node carries the fields of a row of the plain format (:data:`treelab.interop.rows.FIELDS`:
``path``, ``visits``, ``wins``, ``draws``, ``value_sum``, ``prior``, ``proven``, ``selected``)
and, for the reader's convenience, ``move``, ``depth``, ``mover`` and ``mean``
(:func:`treelab.nodes.mean_reward`). A node's id is its move path joined by ``/`` (the DOT id;
``"root"``). ``networkx.node_link_graph(data)`` reads the node-link file (its ``edges`` key,
networkx 3.4 and later) and ``networkx.read_gml(file)`` the GML one. Reading them back
(:func:`rows_of_node_link`, :func:`rows_of_gml`) gives the rows again, so export -> import is exact
(floats are written with ``repr``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import ImportFormatError
from ..nodes import mean_reward
from ..store.files import loads, regular_input
from .rows import FIELDS

__all__ = ["gml_text", "node_link", "read_graph", "rows_of_gml", "rows_of_node_link"]


def _ident(path: str) -> str:
    return path.replace(",", "/") if path else "root"


def _extra(row: Mapping[str, Any], mover: int) -> dict[str, Any]:
    path = row["path"]
    return {"move": path.rsplit(",", 1)[-1] if path else "root", "depth": path.count(",") + 1 if path else 0,
            "mover": mover, "mean": mean_reward(row["wins"], row["draws"], row["visits"], row["value_sum"])}


def node_link(rows: Iterable[tuple[Mapping[str, Any], int]], game: str, path: str) -> dict[str, Any]:
    """The node-link JSON object of ``rows`` (each with its node's mover), ``path`` the position exported."""
    nodes, edges = [], []
    for row, mover in rows:
        ident = _ident(row["path"])
        nodes.append({"id": ident, **{k: row[k] for k in FIELDS}, **_extra(row, mover)})
        if row["path"] and nodes[0]["id"] != ident:
            edges.append({"source": _ident(row["path"].rpartition(",")[0]), "target": ident})
    return {"directed": True, "multigraph": False, "graph": {"game": game, "path": path, "format": "treelab"},
            "nodes": nodes, "edges": edges}


def rows_of_node_link(data: Any, source: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The game and the rows of a node-link object written by :func:`node_link`."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise ImportFormatError(f"{source}: not a node-link JSON object with a 'nodes' list")
    game = data.get("graph", {}).get("game") if isinstance(data.get("graph"), dict) else None
    rows = []
    for n, node in enumerate(data["nodes"], 1):
        if not isinstance(node, dict) or "path" not in node:
            raise ImportFormatError(f"{source}: node {n}: {node!r} has no 'path': only treelab's node-link "
                                    "export (or one with the same node fields) can be imported")
        rows.append({k: node[k] for k in FIELDS if node.get(k) is not None})
    return game, rows


def _gml_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if math.isinf(value) or math.isnan(value):
            raise ValueError(f"GML cannot hold {value!r}")
        if "." not in text:  # GML reals need a decimal point: 1e-05 -> 1.0e-05
            mantissa, _, exponent = text.partition("e")
            text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
        return text
    return '"' + str(value).replace("&", "&amp;").replace('"', "&quot;") + '"'


def gml_text(rows: Iterable[tuple[Mapping[str, Any], int]], game: str, path: str) -> Iterator[str]:
    """The GML lines of ``rows`` (each with its node's mover); absent values (no prior, no proof) are left out."""
    yield "graph ["
    yield "  directed 1"
    yield f"  game {_gml_value(game)}"
    yield f"  path {_gml_value(path)}"
    ids: dict[str, int] = {}
    edges = []
    for row, mover in rows:
        i = ids[row["path"]] = len(ids)
        fields = {"id": i, "label": _ident(row["path"]), **{k: row[k] for k in FIELDS}, **_extra(row, mover)}
        yield "  node [ " + " ".join(f"{k} {_gml_value(v)}" for k, v in fields.items() if v is not None) + " ]"
        parent = row["path"].rpartition(",")[0] if row["path"] else None
        if parent is not None and parent in ids:
            edges.append((ids[parent], i))
    for a, b in edges:
        yield f"  edge [ source {a} target {b} ]"
    yield "]"


_TOKEN = re.compile(
    r'\s*(?:(\[)|(\])|"([^"]*)"|([A-Za-z_][A-Za-z0-9_]*)|([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?|[-+]?INF|NAN))')


def rows_of_gml(text: str, source: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The game and the rows of a GML graph written by :func:`gml_text` (a small GML reader: lists, strings,
    numbers)."""
    tokens = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            line = text.count("\n", 0, pos) + 1
            raise ImportFormatError(f"{source}: line {line}: not GML near {text[pos:pos + 20]!r}")
        tokens.append(m.groups())
        pos = m.end()
    stack: list[list[tuple[str, Any]]] = [[]]
    keys: list[str] = []  # the key of each list being read
    key: str | None = None
    for opening, closing, string, name, number in tokens:
        if name is not None and key is None:
            key = name
        elif opening:
            if key is None:
                raise ImportFormatError(f"{source}: a list without a key in the GML")
            stack.append([])
            keys.append(key)
            key = None
        elif closing:
            if len(stack) < 2 or key is not None:
                raise ImportFormatError(f"{source}: unbalanced brackets in the GML")
            items = stack.pop()
            stack[-1].append((keys.pop(), items))
        else:
            if key is None:
                raise ImportFormatError(f"{source}: a value without a key in the GML")
            try:
                value: Any = string.replace("&quot;", '"').replace("&amp;", "&") if string is not None else (
                    name if name is not None else float(number) if any(c in number for c in ".eEIN") else int(number))
            except ValueError:
                raise ImportFormatError(f"{source}: {key} {number[:40]!r} is not a GML number") from None
            stack[-1].append((key, value))
            key = None
    graphs = [items for k, items in stack[0] if k == "graph" and isinstance(items, list)]
    if len(stack) != 1 or not graphs:
        raise ImportFormatError(f"{source}: no complete 'graph [ ... ]' in the GML")
    graph = graphs[0]
    game = next((v for k, v in graph if k == "game"), None)
    rows = []
    for n, (_, items) in enumerate((item for item in graph if item[0] == "node"), 1):
        if not isinstance(items, list):
            raise ImportFormatError(f"{source}: node {n} is {items!r}, not a list 'node [ ... ]'")
        fields = dict(items)
        if "path" not in fields:
            raise ImportFormatError(f"{source}: node {n} has no 'path': only treelab's GML export can be imported")
        rows.append({f: fields[f] for f in FIELDS if f in fields})
    return (game if isinstance(game, str) else None), rows


def read_graph(file: str, fmt: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The game and rows of a node-link (``fmt="node-link"``) or GML file (read whole: a regular file only).

    Raises:
        ImportFormatError: not UTF-8, malformed JSON or GML (JSON nested too deep included).
        StoreError: ``file`` is missing, a directory, a FIFO or a device.
    """
    regular_input(file, fmt)
    try:
        with open(file, encoding="utf-8") as stream:
            text = stream.read()
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start}): is this a {fmt} "
                                "file?") from None
    if fmt == "gml":
        return rows_of_gml(text, file)
    try:
        data = loads(text)
    except ValueError as exc:
        raise ImportFormatError(f"{file}: not JSON ({exc})") from None
    return rows_of_node_link(data, file)
