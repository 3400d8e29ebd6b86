"""The row id each node of one tree got in another file, by its id in its source: a merge's and an import's map."""

from __future__ import annotations

import numpy as np

from ..errors import StoreError

__all__ = ["IdMap"]


class IdMap:
    """Row ids in the file written, by the source's ids (added in increasing order): 16 bytes a node.

    Args:
        size: the nodes to come (0: unknown, the arrays grow as needed; else more is an error).
        source: the source, as errors name it.
    """

    def __init__(self, size: int, source: str) -> None:
        self.fixed = size > 0
        self.keys = np.zeros(size, dtype=np.int64)
        self.values = np.zeros(size, dtype=np.int64)
        self.size = 0
        self.source = source

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Map ``keys`` (larger than every key so far, increasing) to ``values``."""
        end = self.size + len(keys)
        if end > len(self.keys) and not self.fixed:
            grown = max(end, 2 * len(self.keys), 1024)
            self.keys, self.values = np.resize(self.keys, grown), np.resize(self.values, grown)
        if end > len(self.keys) or (self.size and len(keys) and keys[0] <= self.keys[self.size - 1]):
            raise StoreError(f"{self.source!r} changed while it was read: merge again")
        self.keys[self.size:end], self.values[self.size:end] = keys, values
        self.size = end

    def get(self, keys: np.ndarray) -> np.ndarray:
        """The values of ``keys``, each added before.

        Raises:
            StoreError: a key was not added (a parent named before it was stored: a damaged source).
        """
        known = self.keys[:self.size]
        at = np.minimum(np.searchsorted(known, keys), max(self.size - 1, 0))
        bad = np.flatnonzero(known[at] != keys) if self.size else np.arange(len(keys))
        if len(bad):
            raise StoreError(f"{self.source!r}: a node names parent id {int(keys[bad[0]])}, not stored before it: "
                             "the file is damaged")
        return self.values[at]
