"""OpenSpiel games that strictly alternate take the parity path; ``stats --json`` shows action strings.

Real pyspiel games, real SQLite files and the real ``dot``: alternation is
found from seeded random games (never a name list) and checked on every move
played; old files that stored movers for such games stay readable; a subtree's
movers are read alone.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import run

pyspiel = pytest.importorskip("pyspiel")  # the dev group installs it: CI always runs these
pytestmark = pytest.mark.openspiel

from treelab import Limit, Tree, load, search  # noqa: E402
from treelab.analysis.arrays import TreeArrays, stats  # noqa: E402
from treelab.errors import NotATreelabDatabaseError, UnsupportedGameError  # noqa: E402
from treelab.games import find_game  # noqa: E402
from treelab.games.openspiel import OpenSpielGame, strictly_alternating  # noqa: E402
from treelab.tree import MoverNode, TreeNode  # noqa: E402

DOTS = "openspiel:dots_and_boxes"


def _movers_rows(db: Path | str) -> int | None:
    """Rows of the ``movers`` table (None: no such table)."""
    with sqlite3.connect(db) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'movers'").fetchone():
            return None
        return int(conn.execute("SELECT count(*) FROM movers").fetchone()[0])


@pytest.mark.parametrize(("name", "alternates"), [
    ("tic_tac_toe", True), ("connect_four", True), ("breakthrough", True), ("hex(board_size=3)", True),
    ("dots_and_boxes", False),  # closing a box gives the next move too
    ("checkers", False),  # multiple jumps
    ("amazons", False),  # a turn is three actions of one player
    ("chess", False),  # alternates, but OpenSpiel's player 1 (white) moves first: the parity would be wrong
])
def test_alternation_is_found_from_the_game_itself(name: str, alternates: bool) -> None:
    spiel_game = pyspiel.load_game(name)
    assert strictly_alternating(spiel_game) is alternates
    assert find_game(f"openspiel:{name}").alternating is alternates


def test_a_double_move_on_the_parity_path_is_refused_in_one_line() -> None:
    game = OpenSpielGame(DOTS, pyspiel.load_game("dots_and_boxes"))
    game.alternating = True  # as if random games had never shown a double move
    position = [2, 10, 1, 6, 3, 7]  # player 1 closes a box with 8 next
    state = game.replay(position)
    with pytest.raises(UnsupportedGameError, match=r"gave player 1 a second move in a row after action 8"):
        state.play(8)


@pytest.mark.parametrize("game", ["openspiel:tic_tac_toe", "openspiel:connect_four", DOTS])
def test_train_analyse_render_stats_on_either_path(game: str, tmp_path: Path) -> None:
    alternates = find_game(game).alternating
    db = str(tmp_path / "g.db")
    trained = run("train", game, "--db", db, "--games", "3", "--iterations", "30", "--seed", "2")
    assert trained.exit_code == 0, trained.output
    tree = load(db)
    assert all(type(n) is (TreeNode if alternates else MoverNode) for n in tree)
    assert _movers_rows(db) == (None if alternates else len(tree))  # the parity path stores no movers
    with sqlite3.connect(db) as conn:
        for moves, winner in conn.execute("SELECT moves, winner FROM games"):  # real games to their end
            end = tree.game.replay(moves)
            assert end.is_terminal and end.winner == winner
    analysed = json.loads(run("analyse", game, "--db", db, "--iterations", "40", "--seed", "3", "--json").output)
    numbers = json.loads(run("stats", db, "--json").output)
    assert numbers["nodes"] == len(load(db)) and numbers["to_move"] == analysed["to_move"] == 1
    state = tree.game.initial()
    for ch in numbers["children"]:
        assert ch["action"] == tree.game.action_text(state, int(ch["move"]))
    out = tmp_path / "g.svg"
    assert run("render", db, "--depth", "2", "--top", "2", "-o", str(out)).exit_code == 0
    assert out.read_bytes().startswith(b"<?xml")


def test_stats_json_children_carry_openspiel_action_strings(tmp_path: Path) -> None:
    game = find_game("openspiel:breakthrough")
    tree = Tree(game)
    search(tree, limit=Limit(iterations=300), rng=1)
    line = game.parse(tree.root.children_view[0].name)
    search(tree, line, limit=Limit(iterations=200), rng=2)
    db = tmp_path / "bt.db"
    tree.save(db)
    spiel = game.spiel_game.new_initial_state()
    spiel.apply_action(line[0])
    for data in (json.loads(run("stats", str(db), "--path", game.notation(line), "--json").output),
                 stats(tree, line)):
        assert data["children"] and all(set(ch) >= {"move", "nb_visit", "ucb1", "proven", "action"}
                                        for ch in data["children"])
        for ch in data["children"]:  # OpenSpiel's own string for the player to move there
            assert ch["action"] == spiel.action_to_string(spiel.current_player(), int(ch["move"]))
    assert any(ch["action"] == "a7a6" for ch in stats(tree)["children"])  # the notation docs/design.md names
    text = run("stats", str(db)).output.splitlines()
    table = text[text.index(next(line for line in text if line.startswith("moves (UCB1"))) + 1:]
    assert table[0].split()[:3] == ["move", "action", "selected"]  # the column the move choice reads comes first
    assert any(row.split()[:2] == [ch["move"], ch["action"]] for row in table[1:] for ch in stats(tree)["children"])
    c4 = Tree("connect4")
    search(c4, limit=Limit(iterations=100), rng=1)
    c4.save(tmp_path / "c4.db")
    plain = json.loads(run("stats", str(tmp_path / "c4.db"), "--json").output)
    assert all("action" not in ch for ch in plain["children"])  # built-in games: the label says it all


def test_an_old_file_with_movers_for_an_alternating_game_stays_readable(tmp_path: Path) -> None:
    name = "openspiel:connect_four"
    old_rules = OpenSpielGame(name, pyspiel.load_game("connect_four"))
    old_rules.alternating = False  # how every OpenSpiel game was saved before alternation was detected
    old = Tree(old_rules)
    search(old, limit=Limit(iterations=300), rng=4)
    db = tmp_path / "old.db"
    old.save(db)
    assert _movers_rows(db) == len(old) and all(isinstance(n, MoverNode) for n in old)
    back = load(db)  # now on the parity path: the stored movers are the parity's, and not needed
    assert find_game(name).alternating and all(type(n) is TreeNode for n in back)
    assert [(n.sequence, n.nb_visit, n.nb_win, n.nb_draw) for n in back] == [
        (n.sequence, n.nb_visit, n.nb_win, n.nb_draw) for n in old]
    assert all(n.mover == 2 - n.depth % 2 for n in old)  # what the parity path assumes, true of the old file
    numbers = json.loads(run("stats", str(db), "--json").output)
    assert numbers["nodes"] == len(old) and numbers["children"][0]["action"]
    assert run("render", str(db), "--depth", "1", "-o", str(tmp_path / "old.dot")).exit_code == 0
    more = run("train", name, "--db", str(db), "--games", "1", "--iterations", "30", "--seed", "5")
    assert more.exit_code == 0, more.output
    assert len(load(db)) > len(old) and _movers_rows(db) == len(old)  # new nodes: no mover rows
    assert TreeArrays.from_db(db).mover is None


def test_a_subtree_reads_only_its_own_movers(tmp_path: Path) -> None:
    tree = Tree(DOTS)
    search(tree, limit=Limit(iterations=400), rng=6)
    db = tmp_path / "dots.db"
    tree.save(db)
    first, second = sorted(tree.root.children_view, key=lambda k: -k.nb_visit)[:2]
    whole = TreeArrays.from_db(db, first.name)
    with sqlite3.connect(db) as conn:  # damage a mover outside the first child's subtree
        conn.execute("DELETE FROM movers WHERE node_id = ?", (second.node_id,))
    sub = TreeArrays.from_db(db, first.name)  # never reads the damaged row
    assert sub.mover is not None and sub.mover.tolist() == whole.mover.tolist()  # type: ignore[union-attr]
    with pytest.raises(NotATreelabDatabaseError, match=r"has no mover for node id"):
        TreeArrays.from_db(db)
    with pytest.raises(NotATreelabDatabaseError, match=r"has no mover for node id"):
        TreeArrays.from_db(db, second.name)
