"""Training against an opponent pool: real games against self, heuristic, random and an earlier stored tree."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab import StoreError, train
from treelab.errors import SpecError
from treelab.play.training.pool import parse_pool

MEMBERS = ("self", "heuristic", "random")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def earlier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An earlier tic-tac-toe tree: 6 self-play games at 40 simulations a move."""
    db = tmp_path_factory.mktemp("pool") / "old.db"
    train("tictactoe", db, games=6, iterations=40, seed=11, progress=False)
    return db


def logged(db: Path) -> list[tuple[str, int | None, str, int | None, str]]:
    conn = sqlite3.connect(db)
    try:
        query = "SELECT moves, winner, opponent, tree_player, exploration FROM games ORDER BY id"
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def test_training_with_a_pool_logs_each_games_opponent_and_keeps_counts(tmp_path: Path, earlier: Path) -> None:
    before = digest(earlier)
    pool = [*MEMBERS, f"db={earlier}"]
    db = tmp_path / "new.db"
    summary = train("tictactoe", db, games=16, iterations=30, pool=",".join(pool), seed=4, progress=False)
    rows = logged(db)
    assert summary.games == len(rows) == 16 and summary.opponent == "pool"
    game = treelab.find_game("tictactoe")
    tree_moves = 0
    for moves, winner, opponent, tree_player, exploration in rows:
        assert opponent in pool
        assert (tree_player is None) == (opponent == "self")
        assert json.loads(exploration)["pool"] == pool
        state = game.replay(moves)  # a real game, played to its end
        assert state.is_terminal and state.winner == winner
        n = len(game.parse(moves))
        # self-play: the tree searched every move; otherwise the moves of its colour (player 1 moves first)
        tree_moves += n if tree_player is None else (n + 1) // 2 if tree_player == 1 else n // 2
    assert len({r[2] for r in rows}) >= 3  # the draws reach several members
    by = {s.opponent: s for s in summary.by_opponent}
    assert set(by) == {r[2] for r in rows}
    for member, score in by.items():
        assert score.games == sum(r[2] == member for r in rows) == score.wins + score.draws + score.losses
    # the pool's stored tree searched on its own tree: the trained tree holds only its own simulations
    root = treelab.load(db).root
    assert root.nb_visit == summary.simulations == 30 * tree_moves
    assert digest(earlier) == before  # the earlier tree is read, never written
    assert treelab.load(earlier).root.nb_visit == 40 * sum(len(game.parse(r[0])) for r in logged(earlier))


def test_the_same_seed_replays_the_same_games_and_opponents(tmp_path: Path, earlier: Path) -> None:
    pool = f"self,heuristic,random,db={earlier}"
    runs = []
    for name in ("a.db", "b.db"):
        train("tictactoe", tmp_path / name, games=8, iterations=25, pool=pool, seed=9, progress=False)
        runs.append([r[:4] for r in logged(tmp_path / name)])
    assert runs[0] == runs[1]
    train("tictactoe", tmp_path / "c.db", games=8, iterations=25, pool=pool, seed=10, progress=False)
    assert [r[:4] for r in logged(tmp_path / "c.db")] != runs[0]


def test_the_cli_trains_with_a_repeated_pool_option_and_prints_each_opponent(tmp_path: Path, earlier: Path) -> None:
    db = tmp_path / "cli.db"
    result = run("train", "tictactoe", "--db", str(db), "--games", "10", "--iterations", "20", "--quiet",
                 "--seed", "3", "--pool", "self,heuristic", "--pool", f"db={earlier}")
    assert result.exit_code == 0, result.output
    opponents = {r[2] for r in logged(db)}
    assert opponents <= {"self", "heuristic", f"db={earlier}"} and len(opponents) >= 2
    for member in opponents:
        label = "self-play:" if member == "self" else f"against {member}:"
        assert label in result.output
    assert "10 games logged" in result.output


def test_pool_members_are_parsed_and_checked() -> None:
    assert parse_pool(["self, heuristic", "db=x.db"]) == ("self", "heuristic", "db=x.db")
    assert parse_pool(None) is None
    with pytest.raises(SpecError, match="'minimax'"):
        parse_pool("self,minimax")


@pytest.mark.parametrize("case", ["unknown", "empty", "missing", "junk", "other-game", "itself", "with-opponent"])
def test_each_bad_pool_is_refused_in_one_line_with_nothing_written(tmp_path: Path, earlier: Path, case: str) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not a database\n")
    c4 = tmp_path / "c4.db"
    if case == "other-game":
        train("connect4", c4, games=1, iterations=10, seed=1, progress=False)
    db = tmp_path / "t.db"
    pool, game, extra, needle = {
        "unknown": ("self,minimax", "tictactoe", [], "'minimax'"),
        "empty": ("self,", "tictactoe", [], "''"),
        "missing": (f"db={tmp_path / 'gone.db'}", "tictactoe", [], "gone.db"),
        "junk": (f"db={junk}", "tictactoe", [], "junk.db"),
        "other-game": (f"db={c4}", "tictactoe", [], "connect4"),
        "itself": (f"db={earlier}", "tictactoe", [], "being trained"),
        "with-opponent": ("self", "tictactoe", ["--opponent", "random"], "--opponent"),
    }[case]
    target = earlier if case == "itself" else db
    files = {p: digest(p) for p in [earlier, junk, *([c4] if c4.exists() else [])]}
    result = run("train", game, "--db", str(target), "--games", "2", "--iterations", "10",
                 "--quiet", "--pool", pool, *extra)
    assert_clean_error(result, needle)
    assert result.exit_code != 0
    assert not db.exists() and not (tmp_path / "gone.db").exists()
    assert {p: digest(p) for p in files} == files  # no file changed
    with pytest.raises((SpecError, StoreError)):
        train(game, target, games=2, iterations=10, pool=pool, opponent="random" if extra else "self",
              progress=False)
    assert not db.exists() and {p: digest(p) for p in files} == files
