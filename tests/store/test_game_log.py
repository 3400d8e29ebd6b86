"""``nodes.created_game`` names the game that made each node, and ``games`` logs every game, whoever saves.

The stamp is the store's (:func:`treelab.store.deltas.stamp`, called by whoever hands a game's changes to a
writer) and the games counter is the binding's (:func:`treelab.store.binding.last_game`): the tree holds
neither. The expectation here is read off the tree itself: the nodes new at each game's save.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import treelab
from treelab.mcts.dispatch import puct_search
from treelab.mcts.uct import Limit
from treelab.play import training
from treelab.store import writer as background
from treelab.store.binding import cut_of, last_game
from treelab.store.merging import SOURCES


def stamps(db: Path) -> dict[str, int | None]:
    """Every stored node's move path -> its ``created_game``."""
    return {node.sequence: node.created_game for node in treelab.load(db)}


def logged(db: Path) -> list[tuple[int, str, int | None]]:
    """The ``games`` table: ``(id, moves, winner)`` in id order."""
    conn = sqlite3.connect(db)
    try:
        return list(conn.execute("SELECT id, moves, winner FROM games ORDER BY id"))
    finally:
        conn.close()


def finished_game(game: treelab.Game, start: str, rng: random.Random) -> tuple[str, int | None]:
    """A random game played to the end from the moves ``start``: its notation and winner."""
    state = game.replay(start)
    moves = list(game.parse(start))
    while not state.is_terminal:
        move = rng.choice(state.legal_moves())
        state, moves = state.play(move), [*moves, move]
    return game.notation(moves), state.winner


@pytest.mark.parametrize("writer", [False, True], ids=["in-process", "writer-process"])
def test_stamps_and_games_through_training_a_partial_load_and_training_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: bool
) -> None:
    db, game = tmp_path / "t.db", treelab.find_game("tictactoe")
    made: dict[str, int | None] = {"root": None}  # move path -> the game whose save first wrote it
    rows: list[tuple[int, str, int | None]] = []

    class Saver(background.BackgroundSaver):
        """Notes the nodes each game made (new in the tree at its save), before the save stamps them."""

        def save(self, row: dict[str, Any] | None) -> list[dict[str, Any]]:
            assert row is not None and self.tree is not None
            new = {n.sequence for n in self.tree.new_nodes} - {"root"}
            assert new and not new & made.keys()  # every game makes nodes, each node once
            made.update(dict.fromkeys(new, row["id"]))
            rows.append((row["id"], row["moves"], row["winner"]))
            return super().save(row)

    monkeypatch.setattr(background, "BackgroundSaver", Saver)
    monkeypatch.setattr(training, "_cores", lambda: 2 if writer else 1)  # who saves: decided once per run
    summary = treelab.train("tictactoe", db, games=4, iterations=40, seed=1, progress=False)
    assert summary.total_games == 4 and [r[0] for r in rows] == [1, 2, 3, 4]
    assert stamps(db) == made and logged(db) == rows

    first = rows[0][1][0]  # the first game's first move: stored, with children below it
    part = treelab.load(db, path=first, depth=2)
    cut = cut_of(part)
    assert last_game(part) == 4 and cut and part.root in cut  # the root's other children were not loaded
    assert any(n.depth == 3 for n in cut)  # two levels below the path: their children stay in the file
    with Saver(db, "tictactoe", background=writer) as saver:
        saver.track(part)
        assert saver.by_writer == writer
        puct_search(part, first, limit=Limit(iterations=150), rng=2)  # evaluates the cut nodes, grows none
        moves, winner = finished_game(game, first, random.Random(5))
        saver.save({"id": last_game(part) + 1, "moves": moves, "winner": winner})
        saver.finish()
    assert last_game(part) == 5 and rows[-1] == (5, moves, winner)
    assert stamps(db) == made and logged(db) == rows

    summary = treelab.train("tictactoe", db, games=2, iterations=40, seed=3, progress=False)
    assert summary.total_games == 7 and [r[0] for r in rows][-2:] == [6, 7]
    assert stamps(db) == made and logged(db) == rows
    assert {v for v in made.values()} == {None, 1, 2, 3, 4, 5, 6, 7}


def test_worker_processes_stamp_the_games_they_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker stamps its game's new nodes before it hands them on; the writer logs every game once."""
    from treelab.play.training import parallel

    monkeypatch.setattr(parallel, "advice", lambda workers, **_: (workers, ""))  # workers even where they do not pay
    db = tmp_path / "t.db"
    summary = treelab.train("tictactoe", db, games=6, iterations=40, seed=2, workers=2, progress=False)
    games = logged(db)
    assert summary.total_games == 6 and [g[0] for g in games] == [1, 2, 3, 4, 5, 6]
    conn = sqlite3.connect(db)
    try:
        sources = {source for (source,) in conn.execute(f"SELECT source FROM {SOURCES}")}
    finally:
        conn.close()
    assert sources == {"worker 1", "worker 2"}  # both workers played
    made = stamps(db)
    assert made.pop("root") is None and None not in made.values()  # every other node was made by a game
    assert set(made.values()) == {1, 2, 3, 4, 5, 6}  # ... a logged one, and every game made nodes
