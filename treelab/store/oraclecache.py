"""The oracle's persistent cache of solved positions: one small SQLite file, keyed by game and position key.

Solving an early Connect Four position takes seconds to minutes; benchmarks
that meet the same positions run after run keep the answers here. The file is
its own database (not a tree database): ``values(game, kind, position, value)``,
``kind`` being ``"weak"`` (win/draw/loss) or ``"score"`` (Pons' score), and
``position`` the state's ``key()`` as text. Every answer is committed at once,
so an interrupted benchmark keeps what it solved.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType

from ..errors import NotATreelabDatabaseError

__all__ = ["OracleCache"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS oracle_values (
    game TEXT NOT NULL, kind TEXT NOT NULL, position TEXT NOT NULL, value INTEGER NOT NULL,
    PRIMARY KEY (game, kind, position))"""


class OracleCache:
    """Solved positions kept in a SQLite file (created when missing).

    Args:
        path: the cache file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise NotATreelabDatabaseError(
                f"{str(path)!r} is not an oracle cache ({exc}): name a new file or an earlier cache"
            ) from None

    def get(self, game: str, kind: str, position: object) -> int | None:
        """The stored value of ``position`` (a state's ``key()``), or None."""
        row = self._db.execute(
            "SELECT value FROM oracle_values WHERE game = ? AND kind = ? AND position = ?",
            (game, kind, str(position)),
        ).fetchone()
        return None if row is None else int(row[0])

    def put(self, game: str, kind: str, position: object, value: int) -> None:
        """Store (and commit) the value of ``position``."""
        self._db.execute(
            "INSERT OR REPLACE INTO oracle_values (game, kind, position, value) VALUES (?, ?, ?, ?)",
            (game, kind, str(position), int(value)),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM oracle_values").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    def __enter__(self) -> OracleCache:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
