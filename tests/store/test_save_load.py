"""The SQLite store on real files: round trips, incremental saves, partial loads, errors, atomicity."""

from __future__ import annotations

import random
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treelab import speedups
from treelab.errors import (
    GameMismatchError,
    NotATreelabDatabaseError,
    PathNotFoundError,
    SchemaVersionError,
    StoreError,
)
from treelab.store import persistence as store
from treelab.store import schema
from treelab.store.binding import cut_of, last_game
from treelab.store.deltas import stamp
from treelab.store.persistence import load, open_tree, save
from treelab.store.records import info, read_games, read_history
from treelab.tree import Tree, TreeNode

# -- helpers ----------------------------------------------------------------


def random_game(tree: Tree, rng: random.Random, start: str = "") -> tuple[list[int], int | None]:
    """A uniformly random game to the end from the moves ``start``: (moves, winner)."""
    state = tree.game.replay(start)
    moves = list(tree.game.parse(start))
    while not state.is_terminal:
        move = rng.choice(state.legal_moves())
        moves.append(move)
        state = state.play(move)
    return moves, state.winner


def grow(tree: Tree, rng: random.Random, games: int, *, cut: bool = True) -> list[dict[str, Any]]:
    """Record ``games`` random games (some cut short, as after a playout); return their game rows."""
    rows = []
    for _ in range(games):
        moves, winner = random_game(tree, rng)
        if cut and rng.random() < 0.4:  # a path that stops before the end; the result from a "playout"
            moves = moves[: rng.randrange(len(moves))]
            winner = rng.choice([1, 2, None])
        tree.record(moves, winner)
        rows.append({"moves": moves, "winner": winner})
    return rows


def tree_rows(tree: Tree) -> dict[int, tuple[Any, ...]]:
    """Every node of an in-memory tree as its database row, by id."""
    return {
        n.node_id: (n.parent.node_id if n.parent else None, n.name, n.depth, n.nb_visit, n.nb_win,
                    n.nb_draw, n.proven, n.created_game)
        for n in tree
    }


def db_rows(db: Path) -> dict[int, tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT id, parent_id, move, depth, nb_visit, nb_win, nb_draw, proven, created_game FROM nodes"
        )
        return {row[0]: row[1:] for row in rows}


def db_paths(db: Path) -> dict[str, tuple[Any, ...]]:
    """Every row of a database file by its move path (ids aside: files numbered differently compare equal)."""
    rows = db_rows(db)
    paths: dict[int, str] = {}
    for nid in sorted(rows):  # parents first: a parent's id is smaller
        parent = rows[nid][0]
        paths[nid] = "root" if parent is None else f"{paths[parent]}/{rows[nid][1]}"
    return {paths[nid]: row[1:] for nid, row in rows.items()}


def files(folder: Path) -> dict[str, bytes]:
    """Every file in ``folder`` with its bytes (to prove that nothing changed)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def check_invariants(tree: Tree, simulations: int | None = None) -> None:
    for node in tree:
        kids = node.children_view
        assert node.nb_visit >= sum(k.nb_visit for k in kids)
        assert node.nb_win + node.nb_draw <= node.nb_visit
        for kid in kids:
            assert kid.parent is node and kid.depth == node.depth + 1
    if simulations is not None:
        assert tree.root.nb_visit == simulations


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Tree, Path]:
    """A Connect Four tree of 60 random games, saved to a file."""
    tree = Tree("connect4")
    rows = grow(tree, random.Random(7), 60)
    db = tmp_path / "c4.db"
    save(tree, db, games=rows)
    return tree, db


# -- round trips ------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    game=st.sampled_from(["tictactoe", "connect4"]),
    seed=st.integers(0, 2**32 - 1),
    batches=st.lists(st.integers(0, 12), min_size=1, max_size=4),
)
def test_round_trip_with_incremental_saves(game: str, seed: int, batches: list[int]) -> None:
    rng = random.Random(seed)
    tree = Tree(game)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "t.db"
        simulations = 0
        for i, batch in enumerate(batches):
            grow(tree, rng, batch)
            simulations += batch
            changed = tree.unsaved
            assert save(tree, db) == changed  # only what changed is written
            assert tree.unsaved == 0
            # the incrementally saved file equals a full save of the same tree to a new file
            full = Path(folder) / f"full{i}.db"
            assert save(load(db), full) == tree.size
            assert db_rows(db) == tree_rows(tree)
            assert db_paths(db) == db_paths(full)
        back = load(db)
        assert tree_rows(back) == tree_rows(tree)
        assert back.size == tree.size and back.depth_counts == tree.depth_counts
        assert back.next_id == tree.next_id and back.unsaved == 0 and not cut_of(back)
        check_invariants(back, simulations)
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()
        # "save as": the same tree to a new file writes everything and moves the binding there
        other = Path(folder) / "other.db"
        assert save(tree, other) == tree.size and db_paths(other) == db_paths(db)
        assert db_rows(other) == tree_rows(tree)  # the tree took the new file's breadth-first ids
        grow(tree, rng, 1)
        with pytest.raises(StoreError, match="already holds another"):
            save(tree, db)
        save(tree, other)


def test_loaded_tree_grows_and_saves_only_changes(saved: tuple[Tree, Path]) -> None:
    tree, db = saved
    back = load(db)
    grow(back, random.Random(8), 5)
    grow(tree, random.Random(8), 5)
    changed = back.unsaved
    assert 0 < changed < back.size
    assert save(back, db) == changed
    assert db_rows(db) == tree_rows(tree)
    assert save(back, db) == 0  # nothing changed
    check_invariants(load(db), 65)


def test_proven_values_round_trip(tmp_path: Path) -> None:
    tree = Tree("tictactoe")
    leaf = tree.record("142576", winner=2)
    leaf.proven = 1
    save(tree, tmp_path / "t.db")
    leaf.parent.proven = -1
    tree.mark_dirty(leaf.parent)
    assert save(tree, tmp_path / "t.db") == 1
    back = load(tmp_path / "t.db")
    assert back.find("142576").proven == 1 and back.find("14257").proven == -1
    assert back.root.proven is None


# -- schema -----------------------------------------------------------------


def test_schema(saved: tuple[Tree, Path]) -> None:
    tree, db = saved
    conn = sqlite3.connect(db)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    assert meta["schema_version"] == str(schema.SCHEMA_VERSION) and meta["game"] == "connect4"
    assert float(meta["c"]) == tree.c and meta["treelab_version"]
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    columns = {row[1]: (row[2], row[3], row[5]) for row in conn.execute("PRAGMA table_info(nodes)")}
    assert columns == {
        "id": ("INTEGER", 0, 1), "parent_id": ("INTEGER", 0, 0), "move": ("TEXT", 1, 0),
        "depth": ("INTEGER", 1, 0), "nb_visit": ("INTEGER", 1, 0), "nb_win": ("INTEGER", 1, 0),
        "nb_draw": ("INTEGER", 1, 0), "proven": ("INTEGER", 0, 0), "created_game": ("INTEGER", 0, 0),
        "nb_select": ("INTEGER", 1, 0), "value_sum": ("REAL", 1, 0), "prior": ("REAL", 0, 0),
    }
    assert [(row[2], row[3], row[4]) for row in conn.execute("PRAGMA foreign_key_list(nodes)")] == [
        ("nodes", "parent_id", "id")
    ]
    indexes = {row[1]: row[2] for row in conn.execute("PRAGMA index_list(nodes)")}
    by_columns = {
        tuple(r[2] for r in conn.execute(f"PRAGMA index_info({name!r})")): unique for name, unique in indexes.items()
    }
    assert by_columns == {("parent_id", "move"): 1}  # it serves lookups by parent_id too (docs/design.md)
    plan = conn.execute("EXPLAIN QUERY PLAN SELECT id FROM nodes WHERE parent_id = 1").fetchall()
    assert "nodes_parent_move" in plan[0][3]
    assert conn.execute("SELECT id, parent_id, move, depth FROM nodes WHERE parent_id IS NULL").fetchall() == [
        (1, None, "root", 0)
    ]
    games = {row[1] for row in conn.execute("PRAGMA table_info(games)")}
    assert {"id", "moves", "winner", "opponent", "tree_player", "iterations", "started_at"} <= games
    with pytest.raises(sqlite3.IntegrityError):  # unique (parent_id, move)
        conn.execute("INSERT INTO nodes (parent_id, move, depth, nb_visit, nb_win, nb_draw) "
                     "SELECT parent_id, move, depth, 0, 0, 0 FROM nodes WHERE id = 2")
    conn.close()


def test_games_and_history(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    tree = open_tree(db, "tictactoe")
    tree.record("14253", winner=1)
    save(tree, db, games=[{"moves": "1,4,2,5,3", "winner": 1, "opponent": "random", "tree_player": 1,
                           "iterations": 50, "started_at": "2024-01-01T00:00:00", "finished_at": "x"}])
    tree.record("5", winner=None)
    tree.record("9", winner=2)
    save(tree, db, games=[{"moves": "5", "winner": None}, {"id": 10, "moves": [9], "winner": 2}])
    assert last_game(tree) == 10
    games = read_games(db)
    assert [(g["id"], g["moves"], g["winner"]) for g in games] == [(1, "14253", 1), (2, "5", None), (10, "9", 2)]
    assert games[0]["opponent"] == "random" and games[0]["iterations"] == 50
    history = read_history(db)
    assert [h["game_id"] for h in history] == [1, 2, 10]
    assert history[0]["nodes"] == 6 and history[0]["root_visits"] == 1 and history[0]["max_depth"] == 5
    assert history[0]["depth_counts"] == [1] * 6 and history[0]["root_children"] == {"1": [1, 1, 0]}
    assert history[2]["root_children"] == {"1": [1, 1, 0], "5": [1, 0, 1], "9": [1, 0, 0]}
    assert history[2]["nodes"] == 8 and history[2]["depth_counts"] == [1, 3, 1, 1, 1, 1]
    assert last_game(load(db)) == 10
    with pytest.raises(ValueError, match="bad game row"):
        save(tree, db, games=[{"moves": "5", "score": 3}])
    with pytest.raises(ValueError, match="winner 3"):
        save(tree, db, games=[{"moves": "5", "winner": 3}])
    with pytest.raises(ValueError, match="game id '7' is not a whole number"):
        save(tree, db, games=[{"id": "7", "moves": "5"}])
    with pytest.raises(ValueError, match="not a tictactoe move sequence"):
        save(tree, db, games=[{"moves": "0"}])


def test_info(saved: tuple[Tree, Path]) -> None:
    tree, db = saved
    facts = info(db)
    assert facts["game"] == "connect4" and facts["nodes"] == tree.size and facts["games"] == 60
    assert facts["simulations"] == tree.root.nb_visit == 60 and facts["max_depth"] == tree.max_depth
    assert facts["schema_version"] == schema.SCHEMA_VERSION and facts["c"] == pytest.approx(tree.c)
    assert facts["size_bytes"] >= db.stat().st_size > 0 and facts["treelab_version"]


def test_reading_changes_nothing(saved: tuple[Tree, Path]) -> None:
    _, db = saved
    before = files(db.parent)
    assert set(before) == {"c4.db"}  # the writer tidied its -wal and -shm
    load(db)
    load(db, path="4", depth=1)
    info(db)
    read_history(db)
    open_tree(db, "connect4")
    assert files(db.parent) == before


# -- partial loads ----------------------------------------------------------


def test_partial_load(saved: tuple[Tree, Path]) -> None:
    tree, db = saved
    target = max(tree.root.children_view, key=lambda n: n.nb_visit)
    path = target.name + max(target.children_view, key=lambda n: len(n.children_view)).name
    top = tree.find(path)
    part = load(db, path=path, depth=2)
    # the chain from the root, then the subtree down to 2 levels below the path
    expected = {tree.root.node_id, target.node_id}
    cut = set()
    for node in tree:
        if top.depth <= node.depth <= top.depth + 2 and top in (node, *node.ancestors):
            expected.add(node.node_id)
            if node.depth == top.depth + 2 and node.children_view:
                cut.add(node.node_id)
    assert set(tree_rows(part)) == expected
    assert {i: r for i, r in tree_rows(tree).items() if i in expected} == tree_rows(part)
    assert {n.node_id for n in cut_of(part)} == cut | {tree.root.node_id} | (
        {target.node_id} if len(target.children_view) > 1 else set())
    assert part.find(path).nb_visit == top.nb_visit and part.root.nb_visit == 60
    assert part.size == len(expected) and sum(part.depth_counts) == part.size
    assert part.next_id == tree.next_id
    assert tree_rows(load(db, path="/root/" + "/".join(path), depth=2)) == tree_rows(part)
    assert tree_rows(load(db, path=",".join(path))) == tree_rows(load(db, path=path, depth=99))
    assert tree_rows(load(db, depth=1)) == {i: r for i, r in tree_rows(tree).items() if r[2] <= 1}


def test_partial_tree_refuses_growth_under_a_cut(saved: tuple[Tree, Path]) -> None:
    _, db = saved
    before = files(db.parent)
    part = load(db, depth=2)
    deep = next(n for n in cut_of(part) if n.depth == 2)
    part.record([*deep.moves, part.game.replay(deep.moves).legal_moves()[0]], winner=1)
    with pytest.raises(StoreError, match=r"loaded with path='', depth=2, .*: load without depth to grow it"):
        save(part, db)
    assert files(db.parent) == before and part.unsaved > 0
    # the root's other children were not loaded either: a new first move is refused
    other = load(db, path="4", depth=1)
    assert other.root in cut_of(other)
    other.record("1", winner=1)
    with pytest.raises(StoreError, match=r"loaded with path='4', depth=1, .* load without path to grow"):
        save(other, db)
    assert files(db.parent) == before


def test_partial_tree_grows_inside_what_it_loaded(saved: tuple[Tree, Path]) -> None:
    tree, db = saved
    part = load(db, path="4")
    rng = random.Random(3)
    for _ in range(10):
        moves, winner = random_game(tree, rng, start="4")
        tree.record(moves, winner)
        part.record(moves, winner)
    changed = part.unsaved
    assert save(part, db) == changed < part.size
    assert db_rows(db) == tree_rows(tree)
    check_invariants(load(db), tree.root.nb_visit)


def test_saving_a_partial_tree_to_a_new_file(saved: tuple[Tree, Path], tmp_path: Path) -> None:
    _, db = saved
    part = load(db, path="4", depth=1)
    copy = tmp_path / "part.db"
    assert save(part, copy) == part.size
    assert not cut_of(part) and load(copy).size == part.size
    part.record("1", winner=1)  # the new file holds exactly this tree, so it may grow anywhere
    save(part, copy)
    with pytest.raises(StoreError, match="already holds another connect4 tree"):
        save(part, db)


def test_bad_paths_and_depths(saved: tuple[Tree, Path]) -> None:
    _, db = saved
    with pytest.raises(PathNotFoundError, match=r"path '4444444' is not in '.*c4.db' \(no node '4444'\)"):
        load(db, path="4444444")
    with pytest.raises(ValueError, match="not a connect4 move sequence"):
        load(db, path="48")
    with pytest.raises(ValueError, match="depth -1"):
        load(db, depth=-1)


# -- refusals that leave every file as it was --------------------------------


def test_missing_file(tmp_path: Path) -> None:
    for call in (lambda: load(tmp_path / "x.db"), lambda: info(tmp_path / "x.db")):
        with pytest.raises(StoreError, match=r"no such database '.*x\.db'"):
            call()
    assert files(tmp_path) == {}
    with pytest.raises(StoreError, match="no such directory"):
        save(Tree("connect4"), tmp_path / "nope" / "x.db")
    with pytest.raises(StoreError, match="is a directory"):
        load(tmp_path)


@pytest.mark.parametrize("kind", ["text", "foreign-sqlite", "foreign-wal", "empty-file", "empty-sqlite"])
def test_not_a_treelab_database(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "x.db"
    if kind == "text":
        db.write_text("hello, I am not a database\n" * 100)
    elif kind == "empty-file":
        db.write_bytes(b"")
    else:
        conn = sqlite3.connect(db)
        if kind == "foreign-wal":
            conn.execute("PRAGMA journal_mode=WAL")
        if kind != "empty-sqlite":
            conn.execute("CREATE TABLE nodes (x)")
            conn.execute("INSERT INTO nodes VALUES (1)")
            conn.commit()
        else:
            conn.execute("PRAGMA user_version = 3")
        conn.close()
    before = files(tmp_path)
    calls: list[Callable[[Path], object]] = [load, info]
    if not kind.startswith("empty"):
        calls.append(lambda path: open_tree(path, "connect4"))
    for call in calls:
        with pytest.raises(NotATreelabDatabaseError, match=r"'.*x\.db' is .*not a treelab"):
            call(db)
        assert files(tmp_path) == before
    if kind.startswith("empty"):  # an empty database may be filled by a first save
        tree = open_tree(db, "connect4")
        tree.record("44", winner=None)
        assert save(tree, db) == 3 and load(db).find("44").nb_draw == 1
    else:
        with pytest.raises(NotATreelabDatabaseError):
            save(Tree("connect4"), db)
        assert files(tmp_path) == before


def test_wrong_game(saved: tuple[Tree, Path]) -> None:
    _, db = saved
    before = files(db.parent)
    with pytest.raises(GameMismatchError, match=r"'.*c4\.db' holds a connect4 tree, not tictactoe"):
        open_tree(db, "tictactoe")
    with pytest.raises(GameMismatchError):
        save(Tree("tictactoe"), db)
    assert files(db.parent) == before


def test_newer_schema(saved: tuple[Tree, Path]) -> None:
    _, db = saved
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    loaded_before = files(db.parent)
    for call in (lambda: load(db), lambda: info(db)):
        with pytest.raises(SchemaVersionError, match=f"schema version 99, newer than {schema.SCHEMA_VERSION}"):
            call()
    with pytest.raises(SchemaVersionError):
        save(Tree("connect4"), db)
    assert files(db.parent) == loaded_before


def test_another_tree_is_refused_and_a_stale_copy_merges(saved: tuple[Tree, Path]) -> None:
    _, db = saved
    before = files(db.parent)
    stranger = Tree("connect4")
    stranger.record("4", winner=1)
    with pytest.raises(StoreError, match=r"'.*c4\.db' already holds another connect4 tree: save to a new path"):
        save(stranger, db)
    assert files(db.parent) == before
    first, second = load(db), load(db)
    first.record("44", winner=1)
    second.record("45", winner=2)
    root_before = load(db).root.nb_visit
    save(first, db)
    save(second, db)  # saved by someone else since it was loaded: its increments are added, not refused
    both = load(db)
    assert both.root.nb_visit == root_before + 2 and second.unsaved == 0
    assert both.find("44").nb_visit == first.find("44").nb_visit
    assert both.find("45").nb_visit == second.find("45").nb_visit
    assert both.find("4").nb_visit == first.find("4").nb_visit + 1  # both passed through "4"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_migrations_run_in_order(saved: tuple[Tree, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    _, db = saved

    def add_note(database: Any) -> None:
        database.table("nodes").add_column("note", str)

    newer = schema.SCHEMA_VERSION + 1
    monkeypatch.setattr(schema, "SCHEMA_VERSION", newer)
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, (newer, add_note)])
    fresh = Tree("connect4")
    save(fresh, db.parent / "fresh.db")  # a new file gets every step
    assert "note" in {row[1] for row in sqlite3.connect(db.parent / "fresh.db").execute("PRAGMA table_info(nodes)")}
    tree = load(db)
    tree.record("1", winner=1)
    save(tree, db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(newer),)
        assert "note" in {row[1] for row in conn.execute("PRAGMA table_info(nodes)")}
    conn.close()
    assert load(db).root.nb_visit == 61


# -- atomicity ----------------------------------------------------------------


@pytest.mark.parametrize("where", ["_log_games", "_version"])  # after the node writes; after the games
def test_failed_save_rolls_back_and_a_retry_writes_everything(
    saved: tuple[Tree, Path], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    tree, db = saved
    before_rows, before_games, before_history = db_rows(db), read_games(db), read_history(db)
    rows = grow(tree, random.Random(9), 5)
    unsaved, new, changed = tree.unsaved, list(tree.new_nodes), tree.changed_nodes()
    real = getattr(store, where)

    def crash(*args: Any) -> Any:
        if where == "_log_games":
            real(*args)  # the games and history rows are written, then the save fails
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, where, crash)
    with pytest.raises(RuntimeError, match="disk on fire"):
        save(tree, db, games=rows)
    assert db_rows(db) == before_rows and read_games(db) == before_games and read_history(db) == before_history
    assert tree.new_nodes == new and tree.changed_nodes() == changed and last_game(tree) == 60
    monkeypatch.undo()
    assert save(tree, db, games=rows) == unsaved
    assert db_rows(db) == tree_rows(tree) and len(read_games(db)) == len(read_history(db)) == 65
    assert last_game(load(db)) == 65
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_failed_first_save_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = Tree("tictactoe")
    tree.record("5", winner=None)

    def crash(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "_log_games", crash)
    with pytest.raises(KeyboardInterrupt):
        save(tree, tmp_path / "t.db", games=[{"moves": "5"}])
    assert files(tmp_path) == {} and tree.unsaved == 2
    monkeypatch.undo()
    assert save(tree, tmp_path / "t.db") == 2


def test_open_tree(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    tree = open_tree(db, "ttt", c=0.5)
    assert not db.exists() and tree.c == 0.5 and tree.size == 1
    tree.record("5", winner=1)
    save(tree, db)
    again = open_tree(db, "tictactoe")
    assert again.c == 0.5 and again.find("5").nb_win == 1
    assert open_tree(db, "tictactoe", c=2.0).c == 2.0


def test_node_slots_survive_a_round_trip(tmp_path: Path) -> None:
    """Every stored slot of TreeNode is written and read back (guards against new slots)."""
    tree = Tree("tictactoe")
    leaf = tree.record("12", winner=2)
    stamp(tree, 3)  # the nodes name game 3, as training stamps them
    leaf.proven = -1
    tree.add_value(leaf, -0.25)
    tree.priors[leaf] = 0.375
    save(tree, tmp_path / "t.db")
    back = load(tmp_path / "t.db").find("12")
    assert back.prior == 0.375 and back.value_sum == -0.25
    for slot in TreeNode.__slots__:  # a new slot fails here until the store keeps it (``_x``: read as ``x``)
        assert getattr(back, slot.lstrip("_")) == getattr(leaf, slot.lstrip("_")), slot
    assert isinstance(back, TreeNode) and back.children_view == () and back.name == "2"


def _snapshot(tree: Tree) -> list[tuple[Any, ...]]:
    """Every node's slots, its children in order, and the tree's counts and cuts."""
    cut = sorted(n.node_id for n in cut_of(tree))
    out: list[tuple[Any, ...]] = [(tree.size, tuple(tree.depth_counts), cut)]
    for n in tree:
        out.append((n.node_id, n.name, n.depth, n.nb_visit, n.nb_win, n.nb_draw, n.proven, n.created_game,
                    n.parent.node_id if n.parent else None, [k.node_id for k in n.children_view]))
    return out


@pytest.mark.skipif(speedups.compiled is None, reason="the compiled loader is not built")
@pytest.mark.parametrize("how", [{}, {"path": "44", "depth": 2}, {"path": "4"}, {"depth": 1}])
def test_compiled_and_python_loads_build_the_same_tree(
    saved: tuple[Tree, Path], monkeypatch: pytest.MonkeyPatch, how: dict[str, Any]
) -> None:
    _, db = saved
    compiled = load(db, **how)
    monkeypatch.setattr(speedups, "compiled", None)
    python = load(db, **how)
    assert _snapshot(compiled) == _snapshot(python)
    assert type(compiled.root) is TreeNode and not hasattr(compiled.root, "__dict__")
    check_invariants(compiled)


@pytest.mark.skipif(speedups.compiled is None, reason="the compiled loader is not built")
def test_compiled_loader_refuses_bad_rows() -> None:
    build = speedups.compiled.build  # type: ignore[union-attr]
    with pytest.raises(KeyError):  # a parent that was not built first
        build(TreeNode, [(2, 1, "4", 1, 0, 0, None, None, 1, 0)], [None] * 3, [], {}, set())
    with pytest.raises(TypeError, match="10-tuple"):
        build(TreeNode, [(1, None, "root")], [None] * 2, [], {}, set())
    nodes: list[Any] = [None] * 4
    counts: list[int] = []
    build(TreeNode, [(1, None, "root", 3, 1, 1, None, None, 0, 0), (2, 1, "4", 2, 1, 0, 1, 7, 2, 1),
                     (3, 1, "3", 1, 0, 1, None, 7, 1, 0)], nodes, counts, {}, cut := set())
    root = nodes[1]
    assert counts == [1, 2] and [k.name for k in root.children_view] == ["4", "3"] and cut == {nodes[2]}
    assert nodes[2].depth == 1 and nodes[2].proven == 1 and nodes[2].created_game is nodes[3].created_game
    assert [nodes[i].nb_select for i in (1, 2, 3)] == [0, 2, 1]
