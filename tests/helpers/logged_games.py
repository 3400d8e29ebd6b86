"""What a training run logged per game: each ``games.exploration`` row read back (the settings, the model
version that played)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def explorations(db: Path) -> list[dict[str, object]]:
    """Each logged game's ``exploration`` JSON, in game order."""
    conn = sqlite3.connect(db)
    try:
        return [json.loads(row[0]) for row in conn.execute("SELECT exploration FROM games ORDER BY id")]
    finally:
        conn.close()
