"""Slots of many nodes as one int64 array (a row per node), read in C when the extension is built."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from ..speedups import compiled
from ..tree import TreeNode

__all__ = ["columns"]


def columns(nodes: list[TreeNode], fields: tuple[str, ...], *, none: int | None = None) -> np.ndarray:
    """The int slots ``fields`` of ``nodes`` (``"parent.node_id"``: the parent's id) as an int64 array, a row each.

    ``none``: what a None value becomes (without it, None is a ``TypeError``).
    """
    if compiled is not None:
        raw = compiled.columns(nodes, fields) if none is None else compiled.columns(nodes, fields, none)
        flat = np.frombuffer(raw, dtype=np.int64)
    else:
        values: Iterable[Any]
        if "parent.node_id" in fields:
            gets = [_parent_id if name == "parent.node_id" else attrgetter(name) for name in fields]
            values = (get(node) for node in nodes for get in gets)
        else:
            get = attrgetter(*fields)
            values = chain.from_iterable(map(get, nodes)) if len(fields) > 1 else map(get, nodes)
        if none is not None:
            values = (none if v is None else v for v in values)
        flat = np.fromiter(values, dtype=np.int64, count=len(nodes) * len(fields))
    return flat.reshape(len(nodes), len(fields))


def _parent_id(node: TreeNode) -> int:
    parent = node.parent
    return -1 if parent is None else int(parent.node_id)
