"""The position table (transpositions and mirror images merged) and graph-search statistics."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_games import random_game

import treelab
from treelab import Tree, speedups
from treelab.errors import UnknownOptionError
from treelab.mcts.config import SearchConfig
from treelab.mcts.graph import select_graph
from treelab.mcts.selection import select_ucb1
from treelab.mcts.uct import Limit, search
from treelab.nodes import walk
from treelab.positions import PositionTable, counts_of_nodes, node_keys
from treelab.store import positiontable
from treelab.store.schema import SCHEMA_VERSION


def stored(db: Path) -> dict[str, list[float]] | None:
    """The file's ``positions`` table: ``key -> [nb_visit, player 1's wins, nb_draw, nb_path, value_sum]``; None:
    the file does not keep one."""
    with sqlite3.connect(db) as conn:
        if not positiontable.exists(conn):
            rows = None
        else:
            rows = {k: [v, w, d, p, s] for k, v, w, d, p, s in conn.execute(
                "SELECT key, nb_visit, nb_win, nb_draw, nb_path, value_sum FROM positions")}
    conn.close()
    return rows


def in_memory(table: dict[str, list[float]]) -> dict[str, list[float]]:
    """A table of :func:`counts_of_nodes` as :attr:`PositionTable.rows` holds it (no paths)."""
    return {k: [*v[:3], v[4]] for k, v in table.items()}


def grown(tree: Tree, rng: random.Random, games: int, searches: int, statistics: str = "classic") -> Tree:
    """``tree`` with ``games`` random recorded games (some cut short) and ``searches`` UCT searches mid-game."""
    for _ in range(games):
        moves, winner = random_game(tree.game, rng)
        if rng.random() < 0.3:
            moves = moves[: rng.randrange(len(moves))]
            winner = rng.choice([1, 2, None])
        tree.record(moves, winner)
    for _ in range(searches):
        moves, _ = random_game(tree.game, rng)
        search(tree, moves[: rng.randrange(len(moves))], limit=Limit(iterations=rng.randrange(5, 60)), rng=rng,
               select=statistics)
    return tree


def test_transpositions_merge(tmp_path: Path) -> None:
    tree = Tree("tictactoe")
    tree.record("123", winner=None)  # X 1, O 2, X 3 ...
    tree.record("321", winner=1)  # ... and X 3, O 2, X 1: the same position by another move order
    tree.record("721", winner=2)  # X 7, O 2, X 1: a mirror image (flip) of neither, another position
    table = counts_of_nodes(tree)
    key = tree.game.position_key(tree.game.replay("123"))
    assert key == tree.game.position_key(tree.game.replay("321"))
    assert table[key] == [2, 1, 1, 2, 0.0]  # 2 visits, player 1 won 1, 1 draw, 2 paths
    db = tmp_path / "t.db"
    tree.save(db)
    assert stored(db) is None  # a classic tree's file pays nothing for a table only graph statistics read
    tree.statistics = "graph"
    graph = tmp_path / "g.db"
    tree.save(graph)
    assert stored(graph)[key] == [2, 1, 1, 2, 0.0]  # type: ignore[index]
    assert stored(graph) == counts_of_nodes(treelab.load(graph))


def test_connect_four_mirror_merges() -> None:
    game = treelab.find_game("connect4")
    key = game.position_key
    assert key(game.replay("1")) == key(game.replay("7")) != key(game.replay("2"))
    assert key(game.replay("4453")) == key(game.replay("5344")) == key(game.replay("4435"))  # order and mirror
    tree = Tree(game)
    tree.record("12", winner=1)
    tree.record("76", winner=2)
    assert counts_of_nodes(tree)[key(game.replay("12"))] == [2, 1, 0, 2, 0.0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 7), max_size=30), st.lists(st.integers(1, 7), max_size=30))
def test_connect_fours_key_walk_gives_the_keys_its_states_give(first: list[int], second: list[int]) -> None:
    tree = Tree("connect4")
    for moves in (first, second):
        state = tree.game.initial()
        labels = []
        for move in moves:  # the legal prefix (stop where the game ends or the column is full)
            if state.is_terminal or move not in state.legal_moves():
                break
            state = state.play(move)
            labels.append(str(move))
        tree.path("".join(labels))
    keys = node_keys(tree, list(tree))  # compiled, or the walk of light tokens
    assert keys == {node: tree.game.position_key(tree.game.replay(node.moves)) for node in tree}
    assert counts_of_nodes(tree) == {k: [0, 0, 0, sum(1 for v in keys.values() if v == k), 0.0]
                                     for k in set(keys.values())}


def test_tictactoe_has_eight_images() -> None:
    game = treelab.find_game("tictactoe")
    corners = {game.position_key(game.replay(m)) for m in "1379"}
    edges = {game.position_key(game.replay(m)) for m in "2468"}
    assert len(corners) == len(edges) == 1 and corners != edges
    assert len({game.position_key(game.replay(str(m))) for m in range(1, 10)}) == 3


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(seed=st.integers(0, 10_000), steps=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 3)), min_size=1,
                                                    max_size=4), graph=st.booleans())
def test_saved_table_is_the_table_of_the_nodes(tmp_path_factory: pytest.TempPathFactory, seed: int,
                                               steps: list[tuple[int, int]], graph: bool) -> None:
    db = tmp_path_factory.mktemp("pos") / "t.db"
    rng, tree = random.Random(seed), Tree("tictactoe")
    for games, searches in steps:  # saved after each step: the first save writes all, later ones add
        grown(tree, rng, games, searches, "graph" if graph else "classic")
        tree.save(db)  # a graph tree's first save into a file without the table builds it from the nodes
        if tree.statistics == "graph":  # kept in step from then on: the same as a rebuild from the nodes
            assert stored(db) == counts_of_nodes(treelab.load(db))
        else:
            assert stored(db) is None
    loaded = treelab.load(db)
    assert stored(db) in (None, counts_of_nodes(loaded)) and counts_of_nodes(loaded) == counts_of_nodes(tree)


@settings(max_examples=10, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(seeds=st.lists(st.integers(0, 10_000), min_size=2, max_size=3))
def test_merge_sums_the_tables(tmp_path_factory: pytest.TempPathFactory, seeds: list[int]) -> None:
    folder = tmp_path_factory.mktemp("merge")
    dbs = []
    for i, seed in enumerate(seeds):
        rng = random.Random(seed)
        dbs.append(folder / f"{i}.db")
        tree = grown(Tree("tictactoe"), rng, rng.randrange(1, 15), rng.randrange(3))
        tree.statistics = "graph"  # files that keep the table
        tree.save(dbs[-1])
    out = folder / "out.db"
    shutil.copyfile(dbs[0], out)  # a graph file as the first summand: the merge keeps its table
    tables = [stored(db) for db in dbs]
    treelab.merge(out, *dbs[1:])
    merged = stored(out)
    assert merged == counts_of_nodes(treelab.load(out))
    plain = folder / "plain.db"
    treelab.merge(plain, *dbs)  # a new file's rule is classic: no table
    assert stored(plain) is None and counts_of_nodes(treelab.load(plain)) == merged
    total: dict[str, list[int]] = {}
    for table in tables:
        for key, row in table.items():  # type: ignore[union-attr]
            into = total.setdefault(key, [0, 0, 0])
            for i in range(3):
                into[i] += row[i]
    assert {k: v[:3] for k, v in merged.items()} == total  # the counts add; paths are counted once


def test_two_writers_add_exactly(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    rng = random.Random(3)
    grown(Tree("tictactoe"), rng, 5, 1).save(db)
    first, second = treelab.load(db), treelab.load(db)
    grown(first, rng, 6, 2)
    grown(second, rng, 6, 2, "graph")
    first.save(db)
    second.save(db)  # merges into what the first wrote; a graph tree: the table built from the nodes
    assert stored(db) == counts_of_nodes(treelab.load(db))
    third = treelab.load(db)
    grown(third, rng, 4, 1, "graph")
    grown(first, rng, 4, 1, "graph")
    third.save(db)
    first.save(db)  # two writers adding to the kept table
    assert stored(db) == counts_of_nodes(treelab.load(db))
    grown(third, rng, 3, 1, "classic")
    third.save(db)  # a classic save would leave it behind: dropped, built again when needed
    assert stored(db) is None


def test_a_schema_2_file_reads_and_migrates(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    grown(Tree("connect4"), random.Random(5), 10, 2).save(db)
    with sqlite3.connect(db) as conn:  # what schema 2 was: the same file without the positions table (3), values (4)
        conn.execute("DROP TABLE IF EXISTS positions")
        conn.execute("ALTER TABLE nodes DROP COLUMN value_sum")
        conn.execute("ALTER TABLE nodes DROP COLUMN prior")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.close()
    before = db.read_bytes()
    tree = treelab.load(db)  # read only: the file is not changed
    assert db.read_bytes() == before
    with sqlite3.connect(db) as conn:
        assert positiontable.read(conn) is None
    conn.close()
    graph = PositionTable.of(tree)  # no stored table: made from the nodes held
    assert graph.rows == in_memory(counts_of_nodes(tree))
    tree.record("4444", winner=None)
    tree.statistics = "graph"  # a tree that keeps the table
    tree.save(db)  # the first save migrates: the table rebuilt from the nodes, then this save added
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    conn.close()
    assert stored(db) == counts_of_nodes(treelab.load(db))


def test_graph_search_keeps_the_table_in_step(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    tree = Tree("connect4")
    search(tree, "", limit=Limit(iterations=300), rng=1)  # classic first: the table is made when graph starts
    search(tree, "44", limit=Limit(iterations=300), rng=2, select="graph")
    table = tree.position_table
    assert table.rows == in_memory(counts_of_nodes(tree))
    tree.save(db)
    search(tree, "4", limit=Limit(iterations=200), rng=3, select="graph")
    assert tree.position_table is table and table.rows == in_memory(counts_of_nodes(tree))
    tree.save(db)
    again = treelab.load(db)
    assert again.statistics == "graph"
    assert PositionTable.of(again).rows == table.rows  # the stored table, read back


def _node(tree: Tree, label: str, *, visits: int, wins: int, selects: int) -> None:
    kid = tree.add_child(tree.root, label)
    kid.nb_visit, kid.nb_win, kid.nb_select = visits, wins, selects


def test_selection_reads_edge_counts_not_pass_through_visits() -> None:
    tree = Tree("tictactoe")
    # "5" lies on a game's line: 1,000 visits passed through from searches rooted deeper, 5 chose it here
    _node(tree, "5", visits=1000, wins=600, selects=5)
    _node(tree, "1", visits=50, wins=30, selects=50)  # chosen 50 times here, same mean
    tree.root.nb_visit = 1050
    assert select_ucb1(tree.root, 1.4, False).name == "1"  # classic: "5" looks explored
    table = PositionTable.of(tree)
    assert select_graph(table)(tree.root, 1.4, False).name == "5"  # graph: "5" was taken 5 times of 55


def test_graph_statistics_options() -> None:
    assert SearchConfig(statistics="graph").statistics == "graph"
    with pytest.raises(UnknownOptionError, match="statistics 'graph' are UCT's"):
        SearchConfig(algorithm="puct", statistics="graph")
    with pytest.raises(UnknownOptionError, match="unknown statistics 'kata'"):
        SearchConfig(statistics="kata")  # type: ignore[arg-type]
    result = treelab.analyse("tictactoe", "5", iterations=200, seed=1, statistics="graph").to_dict()
    assert result["statistics"] == "graph"
    kid = result["children"][0]
    assert kid["ucb1"] == pytest.approx(kid["value"] + kid["exploration"])
    assert kid["position"]["nb_visit"] >= kid["nb_visit"]  # every path to the position, mirror images too


def test_a_graph_file_keeps_its_rule_unless_asked(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    treelab.train("tictactoe", db, 3, iterations=50, seed=1, statistics="graph", progress=False)

    def rule() -> str:
        with sqlite3.connect(db) as conn:
            return str(conn.execute("SELECT value FROM meta WHERE key = 'statistics'").fetchone()[0])

    treelab.train("tictactoe", db, 2, iterations=50, seed=2, progress=False)  # no statistics named: the file's
    assert rule() == "graph" and treelab.load(db).statistics == "graph"
    shown = treelab.analyse("tictactoe", "5", iterations=50, seed=1, db=db).to_dict()
    assert shown["statistics"] == "graph" and "position" in shown["children"][0]
    treelab.train("tictactoe", db, 1, iterations=50, seed=3, statistics="classic", progress=False)  # asked
    assert rule() == "classic"


@pytest.mark.parametrize("how", [{"workers": 2}, pytest.param({"ray": True}, marks=pytest.mark.ray)])
def test_parallel_training_keeps_the_table(tmp_path: Path, how: dict[str, object]) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 8, iterations=30, seed=1, statistics="graph", progress=False, **how)
    assert stored(db) == counts_of_nodes(treelab.load(db))


def test_a_stored_players_revert_takes_the_table_back(tmp_path: Path) -> None:
    from treelab.play.stored import revert

    db = tmp_path / "t.db"
    grown(Tree("connect4"), random.Random(2), 8, 2).save(db)
    tree = treelab.load(db)
    before = {k: list(v) for k, v in PositionTable.of(tree).rows.items()}
    search(tree, "4", limit=Limit(iterations=150), rng=1, select="graph")
    search(tree, "44", limit=Limit(iterations=150), rng=2, select="graph")
    table = tree.position_table
    revert(tree)
    assert PositionTable.of(tree) is table  # kept, in step again
    assert {k: v for k, v in table.rows.items() if any(v)} == before


def test_diagrams_and_the_explorer_show_the_graph_score(tmp_path: Path) -> None:
    from treelab.view.explorer.data import TreeFile

    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, 6, iterations=60, seed=3, statistics="graph", progress=False)
    node = TreeFile.open(db).node("5")
    assert node["statistics"] == "graph" and node["position"]["paths"] == 1
    corner = next(k for k in node["children"] if k["move"] == "1")
    assert corner["position"]["paths"] >= 1 and corner["position"]["nb_visit"] >= corner["nb_visit"]
    assert corner["ucb1"] == pytest.approx(corner["exploitation"] + corner["exploration"])
    assert corner["exploitation"] == pytest.approx(corner["position"]["mean"])  # the value is the position's
    dot = treelab.to_dot(treelab.load(db), path="5", depth=1)
    assert "graph score" in dot and "UCB1 " not in dot


def test_random_connect_four_positions_and_their_mirrors_share_a_key() -> None:
    game, rng = treelab.find_game("connect4"), random.Random(3)
    for _ in range(300):
        moves, _ = random_game(game, rng)
        cut = moves[: rng.randrange(len(moves))]
        mirror = [8 - m for m in cut]
        assert game.position_key(game.replay(cut)) == game.position_key(game.replay(mirror))
        if cut and cut != mirror:  # a position and one disc more are never merged
            assert game.position_key(game.replay(cut)) != game.position_key(game.replay(cut[:-1]))


@pytest.mark.skipif(speedups.compiled is None, reason=speedups.describe())
def test_compiled_connect_four_keys_match_the_python_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys a delta carries, replayed on bitboards in C, are ``position_key``'s, node for node."""
    tree = grown(Tree("connect4"), random.Random(5), games=40, searches=0)
    search(tree, "4453", limit=Limit(iterations=300), rng=4)  # transpositions and mirror images among them
    nodes = list(walk(tree.root))
    fast = node_keys(tree, nodes)
    assert tree.game.compiled_keys is not None  # type: ignore[attr-defined]
    monkeypatch.setattr(type(tree.game), "compiled_keys", None)
    assert fast == node_keys(tree, nodes) and len(set(fast.values())) < len(nodes)
    with pytest.raises(ValueError, match="not below the root"):  # a node of another tree is refused, not guessed
        speedups.compiled.connect4_keys(nodes[1:], Tree("connect4").root, {str(m): m for m in range(1, 8)})
