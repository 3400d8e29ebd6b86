"""OpenSpiel games through treelab: the adapter, movers from the game, and every command end to end.

Real pyspiel games, real SQLite files, the real ``dot``; the built-in twins
(``tictactoe``/``tic_tac_toe``, ``connect4``/``connect_four``) are the
cross-check of the adapter's rules.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_clean_error, run

pyspiel = pytest.importorskip("pyspiel")  # the dev group installs it: CI always runs these
pytestmark = pytest.mark.openspiel

from treelab import Limit, Tree, load, search  # noqa: E402
from treelab.errors import (  # noqa: E402
    NotATreelabDatabaseError,
    UnknownGameError,
    UnsupportedGameError,
)
from treelab.games import find_game, registry  # noqa: E402
from treelab.games.openspiel import OpenSpielGame  # noqa: E402
from treelab.mcts.choice import best_child  # noqa: E402
from treelab.tree import MoverNode, TreeNode  # noqa: E402

DOTS = "openspiel:dots_and_boxes"
SMALL_DOTS = "openspiel:dots_and_boxes(num_rows=1,num_cols=2)"


@pytest.mark.parametrize(("ours", "theirs"), [("tictactoe", "openspiel:tic_tac_toe"),
                                              ("connect4", "openspiel:connect_four")])
def test_builtin_and_openspiel_twins_agree_along_1000_random_games(ours: str, theirs: str) -> None:
    mine, spiel = find_game(ours), find_game(theirs)
    rng = random.Random(2024)
    results = {1: 0, 2: 0, None: 0}
    for _ in range(1000):
        a, b = mine.initial(), spiel.initial()
        while True:
            assert [m - 1 for m in a.legal_moves()] == b.legal_moves()
            assert (a.is_terminal, a.to_move) == (b.is_terminal, b.to_move)
            if a.is_terminal:
                break
            move = rng.choice(a.legal_moves())
            a, b = a.play(move), b.play(move - 1)
        assert a.winner == b.winner
        results[a.winner] += 1
    assert all(results.values())  # wins for both sides and draws were all met


def _double_move_line(game: OpenSpielGame) -> list[int]:
    """A seeded random line of dots and boxes in which some player moves twice in a row."""
    rng = random.Random(3)
    while True:
        state, line = game.initial(), []
        while not state.is_terminal:
            mover = state.to_move
            move = rng.choice(state.legal_moves())
            state = state.play(move)
            line.append(move)
            if not state.is_terminal and state.to_move == mover:
                return [*line, rng.choice(state.legal_moves())]


def test_dots_and_boxes_double_moves_keep_their_movers(tmp_path: Path) -> None:
    game = find_game(DOTS)
    assert isinstance(game, OpenSpielGame) and not game.alternating
    line = _double_move_line(game)
    spiel = game.spiel_game.new_initial_state()
    movers = []
    for action in line:
        movers.append(spiel.current_player() + 1)
        spiel.apply_action(action)
    assert any(a == b for a, b in itertools.pairwise(movers))  # a real double move
    tree = Tree(DOTS)
    node = tree.record(game.notation(line), winner=1)
    path = [node]
    while path[-1].parent is not None:
        path.append(path[-1].parent)
    path = path[::-1][1:]
    assert [n.mover for n in path] == movers  # not the depth's parity
    assert [n.mover for n in path] != [2 - n.depth % 2 for n in path]
    assert [n.nb_win for n in path] == [int(m == 1) for m in movers]
    assert isinstance(tree.root, MoverNode) and tree.root.mover == 2
    db = tmp_path / "dots.db"
    tree.save(db)
    search(tree, line[:3], limit=Limit(iterations=200), rng=5)
    tree.save(db)
    back = load(db)
    for a, b in zip(tree, back, strict=True):
        assert (a.sequence, a.mover, a.nb_visit, a.nb_win, a.nb_draw) == (b.sequence, b.mover, b.nb_visit,
                                                                          b.nb_win, b.nb_draw)
    # every stored node's mover is the player OpenSpiel says moved into it
    for n in back:
        if n.depth:
            parent_state = game.replay(n.moves[:-1])
            assert n.mover == parent_state.to_move
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM movers").fetchone()[0] == len(back)


def _exact(state: object, cache: dict[str, int]) -> int:
    """Minimax value for player 1 (+1, 0, -1) of a pyspiel state."""
    key = str(state) + str(state.current_player())  # type: ignore[attr-defined]
    if key not in cache:
        if state.is_terminal():  # type: ignore[attr-defined]
            cache[key] = int(state.returns()[0])  # type: ignore[attr-defined]
        else:
            values = [_exact(state.child(a), cache) for a in state.legal_actions()]  # type: ignore[attr-defined]
            cache[key] = max(values) if state.current_player() == 0 else min(values)  # type: ignore[attr-defined]
    return cache[key]


def test_solver_proofs_are_exact_through_double_moves() -> None:
    game = find_game(SMALL_DOTS)
    tree = Tree(game)
    search(tree, limit=Limit(iterations=20_000), solver=True, rng=1)
    assert tree.root.proven is not None
    cache: dict[str, int] = {}
    checked = 0
    for node in tree:
        if node.proven is None:
            continue
        state = game.replay(node.moves)
        value_p1 = _exact(state.spiel_state, cache)
        assert node.proven == (value_p1 if node.mover == 1 else -value_p1), node
        checked += 1
    assert checked > 20


def test_hex_analyses_to_the_json_contract_with_exactly_the_legal_actions() -> None:
    result = run("analyse", "openspiel:hex(board_size=5)", "--moves", "12,7", "--iterations", "300",
                 "--seed", "1", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"game", "moves", "to_move", "iterations", "best_move", "value", "proven", "children"} <= set(data)
    assert data["game"] == "openspiel:hex(board_size=5)" and data["moves"] == "12,7"
    assert data["to_move"] == 1 and data["iterations"] == 300
    legal = find_game("openspiel:hex(board_size=5)").replay("12,7").legal_moves()
    assert sorted(int(ch["move"]) for ch in data["children"]) == legal and len(legal) == 23
    for ch in data["children"]:
        assert {"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven"} <= set(ch)
    visits = sum(ch["nb_visit"] for ch in data["children"])
    wins = sum(ch["nb_win"] + ch["nb_draw"] / 2 for ch in data["children"])
    assert visits == 300 and data["value"] == pytest.approx(wins / visits)


def test_breakthrough_trains_resumes_and_renders(tmp_path: Path) -> None:
    db = str(tmp_path / "bt.db")
    first = run("train", "openspiel:breakthrough", "--db", db, "--games", "1", "--iterations", "20", "--seed", "1")
    assert first.exit_code == 0, first.output
    size = len(load(db))
    again = run("train", "openspiel:breakthrough", "--db", db, "--games", "1", "--iterations", "20", "--seed", "2")
    assert again.exit_code == 0, again.output
    tree = load(db)
    assert len(tree) > size and tree.game.name == "openspiel:breakthrough"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT moves, winner FROM games ORDER BY id").fetchall()
    assert len(rows) == 2
    for moves, winner in rows:  # comma-separated action ids, replayed to the logged end
        end = tree.game.replay(moves)
        assert end.is_terminal and end.winner == winner
    out = tmp_path / "bt.dot"
    drawn = run("render", db, "--depth", "1", "--top", "3", "-o", str(out))
    assert drawn.exit_code == 0, drawn.output
    text = out.read_text()
    best = best_child(tree.root)
    assert best is not None and f'"{best.name}"' in text
    shown = tree.game.action_text(tree.game.initial(), int(best.name))
    assert shown in text  # the action string beside the id (e.g. a2a3)
    svg = tmp_path / "bt.svg"
    assert run("render", db, "--path", best.name, "--depth", "1", "-o", str(svg)).exit_code == 0
    assert svg.read_bytes().startswith(b"<?xml")


END_TO_END = [
    "openspiel:tic_tac_toe",
    "openspiel:connect_four",
    "openspiel:hex(board_size=3)",
    DOTS,
    "openspiel:breakthrough(rows=5,columns=5)",
    "openspiel:clobber(rows=4,columns=4)",
]


@pytest.mark.parametrize("game", END_TO_END)
def test_every_command_plays_openspiel_games(game: str, tmp_path: Path) -> None:
    db = str(tmp_path / "g.db")
    trained = run("train", game, "--db", db, "--games", "2", "--iterations", "25", "--seed", "3")
    assert trained.exit_code == 0, trained.output
    info = run("info", db)
    assert info.exit_code == 0 and game in info.output
    analysed = run("analyse", game, "--db", db, "--iterations", "40", "--seed", "4", "--json")
    assert analysed.exit_code == 0, analysed.output
    data = json.loads(analysed.output)
    legal = {str(m) for m in find_game(game).initial().legal_moves()}
    assert {ch["move"] for ch in data["children"]} <= legal
    stats = run("stats", db, "--json")
    assert stats.exit_code == 0, stats.output
    numbers = json.loads(stats.output)
    assert numbers["nodes"] == len(load(db)) and numbers["depth_histogram"][0] == 1
    assert find_game(game).replay(numbers["principal_variation"]) is not None  # ids that replay
    out = tmp_path / "g.dot"
    assert run("render", db, "--depth", "2", "--top", "2", "-o", str(out)).exit_code == 0
    assert out.read_text().startswith("digraph")
    match = run("arena", game, "--a", "uct:iterations=30", "--b", "openspiel:simulations=30", "--games", "2",
                "--seed", "5", "--json", "--quiet")
    assert match.exit_code == 0, match.output
    result = json.loads(match.output)
    assert result["games"] == 2 and result["a_wins"] + result["b_wins"] + result["draws"] == 2
    for record in result["records"]:  # every game played to its real end
        end = find_game(game).replay(record["moves"])
        assert end.is_terminal and end.winner == record["winner"]


@pytest.mark.parametrize(("name", "needle"), [
    ("openspiel:kuhn_poker", "imperfect information"),
    ("openspiel:goofspiel", "simultaneous"),
    ("openspiel:backgammon", "chance nodes"),
    ("openspiel:chinese_checkers(players=3)", "3 players"),
    ("openspiel:no_such_game", "unknown openspiel game 'no_such_game'"),
    ("openspiel:hex(bogus=1)", "unknown parameter 'bogus'"),
    ("openspiel:hex(board_size=5", "openspiel:NAME(param=value"),
])
def test_games_treelab_cannot_play_are_refused_in_one_line(name: str, needle: str, tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    result = run("train", name, "--db", str(db), "--games", "1")
    assert_clean_error(result, needle)
    assert not db.exists()


def test_missing_openspiel_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now fails
    monkeypatch.setattr(registry, "_OPENSPIEL", {})
    with pytest.raises(UnsupportedGameError, match=r"pip install 'treelab\[openspiel\]'"):
        find_game("openspiel:breakthrough")
    assert_clean_error(run("analyse", "openspiel:breakthrough"), "treelab[openspiel]")


def test_names_are_canonical_and_loaded_once() -> None:
    a = find_game("openspiel:hex(board_size=5)")
    assert find_game(" OpenSpiel: hex( board_size = 5 ) ") is a
    assert a.name == "openspiel:hex(board_size=5)" and a.num_moves == 25
    with pytest.raises(UnknownGameError):
        find_game("openspiel:")


def test_notation_is_comma_separated_action_ids() -> None:
    game = find_game("openspiel:breakthrough")
    legal = game.initial().legal_moves()
    assert game.parse(f"{legal[0]},{legal[1]}") == (legal[0], legal[1])  # notation only: the rules come later
    assert game.parse("98") == (98,) and game.parse("/root/98/600") == (98, 600)
    assert game.notation([98, 600]) == "98,600"
    tree = Tree(game)
    node = tree.record([legal[0]], winner=None)
    assert node.sequence == str(legal[0]) and type(node) is TreeNode  # breakthrough alternates: the parity path
    with pytest.raises(ValueError, match=r"'x' is not a openspiel:breakthrough action id"):
        game.parse("98,x")


def test_builtin_games_stay_on_the_parity_path(tmp_path: Path) -> None:
    tree = Tree("connect4")
    assert tree.game.alternating and type(tree.root) is TreeNode
    search(tree, limit=Limit(iterations=50), rng=1)
    assert all(type(n) is TreeNode for n in tree)
    tree.save(tmp_path / "c4.db")
    with sqlite3.connect(tmp_path / "c4.db") as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'movers'").fetchone()[0] == 0


def test_a_double_move_position_reports_the_player_to_move_everywhere(tmp_path: Path) -> None:
    from treelab.view.explorer.data import TreeFile

    game = find_game(DOTS)
    position = [2, 10, 1, 6, 3, 7, 8]  # player 1 closes a box with 8 and moves again; a proven win, not a draw
    state = game.replay(position)
    assert not state.is_terminal and game.turn(position) == (state.to_move, state.to_move)
    value_p1 = _exact(state.spiel_state, {})
    assert value_p1 != 0  # so a proof read with the wrong sign cannot pass
    word = {1: "win", 0: "draw", -1: "loss"}[value_p1 if state.to_move == 1 else -value_p1]
    db = str(tmp_path / "dots.db")
    notation = game.notation(position)
    analysed = run("analyse", DOTS, "--moves", notation, "--db", db, "--solver", "--iterations", "20000",
                   "--seed", "1", "--json")
    assert analysed.exit_code == 0, analysed.output
    result = json.loads(analysed.output)
    assert (result["to_move"], result["proven"], result["moves"]) == (state.to_move, word, notation)
    stats = json.loads(run("stats", db, "--path", notation, "--json").output)
    assert (stats["to_move"], stats["proven"], stats["path"]) == (state.to_move, word, notation)
    page = TreeFile.open(db).node(notation)
    assert (page["to_move"], page["proven"], page["path"]) == (state.to_move, word, notation)
    for child in page["children"]:  # OpenSpiel's action strings beside the ids, links joined by commas
        assert child["action"] == game.action_text(state, int(child["move"]))
        assert child["path"] == f"{notation},{child['move']}"


def test_a_human_plays_an_openspiel_game_by_action_string_or_id() -> None:
    typed = "x(0,0)\n" + "".join(f"{a}\n" for a in range(9))  # an action string, then ids until one is legal
    played = run("play", "openspiel:tic_tac_toe", "--iterations", "30", "--seed", "1", input=typed)
    assert played.exit_code == 0, played.output
    assert "legal: 0 x(0,0), 1 x(0,1)" in played.output  # the legal actions listed with their strings
    assert "x.." in played.output.split("AI plays")[0]  # "x(0,0)" was played: the top-left cell is x
    assert any(end in played.output for end in ("you win", "the AI wins", "draw"))


def test_analyse_json_gives_each_child_its_openspiel_action_string() -> None:
    game = find_game("openspiel:breakthrough")
    result = run("analyse", "openspiel:breakthrough", "--iterations", "200", "--seed", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    start = game.initial()
    spiel = game.spiel_game.new_initial_state()
    assert sorted(int(ch["move"]) for ch in data["children"]) == start.legal_moves()
    for ch in data["children"]:  # the contract's keys stay, and OpenSpiel's own string is beside the id
        assert {"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven", "action"} <= set(ch)
        assert ch["action"] == spiel.action_to_string(spiel.current_player(), int(ch["move"]))
    assert data["best_action"] == spiel.action_to_string(0, int(data["best_move"]))
    assert len({ch["action"] for ch in data["children"]}) == len(data["children"])
    assert any(ch["action"] == "a7a6" for ch in data["children"])  # the notation docs/design.md names
    text = run("analyse", "openspiel:breakthrough", "--iterations", "200", "--seed", "3").output
    assert f"best move {data['best_move']} ({data['best_action']})" in text


def test_builtin_analyse_json_gains_no_action_keys() -> None:
    data = json.loads(run("analyse", "tictactoe", "--moves", "5", "--iterations", "200", "--seed", "1",
                          "--json").output)
    assert "best_action" not in data and data["best_move"] is not None
    assert all(set(ch) == {"move", "nb_visit", "nb_win", "nb_draw", "mean", "ucb1", "proven", "nb_select"}
               for ch in data["children"])


def test_shape_colours_the_node_after_a_double_move_from_its_real_mover(tmp_path: Path) -> None:
    from treelab.analysis.arrays import TreeArrays
    from treelab.analysis.shape import p1_mean, plot_shape

    game = find_game(DOTS)
    position = [2, 10, 1, 6, 3, 7, 8]  # player 1 closes a box with 8 and moves again
    assert game.turn(position) == (1, 1)
    tree = Tree(DOTS)
    for seed, winner in enumerate((1, 1, 1, 2)):  # three wins for player 1, one for player 2
        tree.record(game.notation([*position, game.replay(position).legal_moves()[seed]]), winner=winner)
    db = tmp_path / "dots.db"
    tree.save(db)
    after = game.notation(position)
    for arrays in (TreeArrays.from_tree(tree), TreeArrays.from_db(db), TreeArrays.from_db(db, after[:-2])):
        assert arrays.mover is not None
        paths: list[list[str]] = []
        for i, move in enumerate(arrays.moves):  # parents come before their children
            paths.append([] if i == 0 else [*paths[arrays.parent[i]], str(move)])
        prefix = game.parse(after[:-2]) if arrays.root_depth else ()
        assert arrays.mover.tolist() == [game.turn([*prefix, *map(int, p)])[0] for p in paths]  # the game's movers
        values = p1_mean(arrays)
        seven = int(np.flatnonzero(arrays.depth + arrays.root_depth == 7)[0])
        assert values[seven] == pytest.approx(0.75)  # player 1 won 3 of 4
        # the moves after the double move (depth 8) are player 1's too: their colour is player 1's result
        kids = np.flatnonzero(arrays.depth + arrays.root_depth == 8)
        assert set(arrays.mover[kids].tolist()) == {1}
        assert sorted(values[kids].tolist()) == [0.0, 1.0, 1.0, 1.0]  # depth parity would say [0, 0, 0, 1]
        parity = TreeArrays(**{**{f: getattr(arrays, f) for f in arrays.__dataclass_fields__}, "mover": None})
        assert sorted(p1_mean(parity)[kids].tolist()) == [0.0, 0.0, 0.0, 1.0]
    plot_shape(TreeArrays.from_db(db), tmp_path / "dots.png")
    assert (tmp_path / "dots.png").stat().st_size > 1000
    c4 = Tree("connect4")
    c4.record("4453", winner=1)
    assert TreeArrays.from_tree(c4).mover is None  # the built-in path stays on the parity


def test_partial_loads_read_only_their_own_movers(tmp_path: Path) -> None:
    """A partial load of more nodes than one statement asks for gets every mover a whole load gives."""
    tree = Tree(SMALL_DOTS)
    search(tree, "", limit=Limit(iterations=3000), rng=11)
    db = tmp_path / "dots.db"
    tree.save(db)
    whole = {n.sequence: n.mover for n in load(db)}
    deep = load(db, path="", depth=50)  # a subtree load (by id) of every node
    assert len(deep) == len(whole) > 1000  # more than two statements of ids
    assert {n.sequence: n.mover for n in deep} == whole
    first = max(deep.root.children, key=lambda n: n.nb_visit)
    part = load(db, path=first.sequence, depth=2)
    assert all(n.mover == whole[n.sequence] for n in part)
    inside = max(part, key=lambda n: n.depth).node_id
    with sqlite3.connect(db) as conn:  # a mover missing inside the subtree is still a one-line error
        conn.execute("DELETE FROM movers WHERE node_id = ?", (inside,))
    with pytest.raises(NotATreelabDatabaseError, match="has no mover"):
        load(db, path=first.sequence, depth=2)
