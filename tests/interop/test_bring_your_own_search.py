"""Bring your own search: real trees of OpenSpiel's bots, mctx and an alpha-zero-general style search imported,
the recorder, and every exported format read back."""

from __future__ import annotations

import io
import json
import math
import random
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_clean_error, run
from hypothesis import given, settings
from hypothesis import strategies as st
from recorded import valued_tree

import treelab
from treelab.interop.rows import tree_rows, write_rows
from treelab.interop.transfer import export, import_file, import_tree

pyspiel = pytest.importorskip("pyspiel")


def _rows(tree: treelab.Tree) -> list[dict[str, Any]]:
    return sorted(tree_rows(tree), key=lambda r: r["path"])


def _same_as_searchnode(spiel: Any, node: treelab.TreeNode) -> int:
    """Check every node below ``node`` against OpenSpiel's ``SearchNode``: visits, mean, prior; return nodes seen."""
    seen = 0
    for kid in spiel.children:
        child = node.child(str(kid.action))
        assert child is not None and child.nb_visit == kid.explore_count and child.mover == kid.player + 1
        if kid.explore_count:
            assert 2 * child.mean - 1 == pytest.approx(kid.total_reward / kid.explore_count, abs=1e-12)
        seen += 1 + _same_as_searchnode(kid, child)
    return seen


def _position() -> Any:
    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    for action in (4, 0):
        state.apply_action(action)
    return game, state


@pytest.mark.openspiel
def test_openspiel_python_bot_tree_is_imported_node_for_node(tmp_path: Path) -> None:
    from open_spiel.python.algorithms import mcts

    game, state = _position()
    rng = np.random.RandomState(3)
    bot = mcts.MCTSBot(game, 2.0, 300, mcts.RandomRolloutEvaluator(1, rng), random_state=rng, solve=True)
    root = bot.mcts_search(state)
    tree = treelab.from_openspiel(root, state)
    assert tree.game.name == "openspiel:tic_tac_toe"
    top = tree.find("4,0")
    assert tree.root.nb_visit == top.nb_visit == root.explore_count == 300
    assert top.nb_select == 0 and tree.find("4").nb_select == 0  # passed through, not selected
    assert 2 * top.mean - 1 == pytest.approx(-root.total_reward / root.explore_count)  # the root's mover's view
    assert _same_as_searchnode(root, top) == len(tree) - 3
    priors = {tree.find(f"4,0,{k.action}"): k.prior for k in root.children}
    assert all(tree.priors[n] == p for n, p in priors.items())
    solved = [k for k in root.children if k.outcome]
    for kid in solved:  # the solver's outcomes become proofs of the mover
        assert int(tree.find(f"4,0,{kid.action}").proven) == int(np.sign(kid.outcome[kid.player]))
    db = tmp_path / "os.db"
    tree.save(db)
    back = treelab.load(db)
    assert _rows(back) == _rows(tree)  # values and priors survive the file
    stats = json.loads(run(*["stats", str(db), "--path", "4,0", "--json"]).output)
    best = max(root.children, key=lambda k: k.explore_count)
    kid = next(k for k in stats["children"] if k["move"] == str(best.action))
    assert kid["prior"] == best.prior and kid["value_sum"] == best.total_reward
    assert 2 * kid["mean"] - 1 == pytest.approx(best.total_reward / best.explore_count)


@pytest.mark.openspiel
def test_openspiel_cpp_bot_tree_is_imported_node_for_node() -> None:
    game, state = _position()
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 5), 2.0, 250, 10**6, True, 7, False)
    root = bot.mcts_search(state)  # pyspiel.SearchNode: the C++ tree, read through its binding
    assert type(root).__name__ == "SearchNode"
    tree = treelab.from_openspiel(root, state)
    top = tree.find("4,0")
    assert top.nb_visit == root.explore_count == 250
    assert _same_as_searchnode(root, top) == len(tree) - 3


@pytest.mark.openspiel
def test_an_openspiel_tree_of_another_game_is_refused_naming_the_node() -> None:
    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 5), 2.0, 30, 10**6, True, 7, False)
    root = bot.mcts_search(state)
    refused = r"under 'root'\): move '[78]' is not legal .* openspiel:connect_four"
    with pytest.raises(treelab.ImportFormatError, match=refused):
        treelab.from_openspiel(root, pyspiel.load_game("connect_four").new_initial_state(), "openspiel:connect_four")


# -- DeepMind mctx: a real gumbel_muzero_policy search on tic-tac-toe, on CPU ------------------------------


MCTX_SEARCH = r"""
import json, sys
import jax, jax.numpy as jnp, mctx, numpy as np
import treelab
from treelab.interop.rows import tree_rows

LINES = jnp.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])


def recurrent_fn(params, rng, action, embedding):
    board, over = embedding  # +1 the player to move's stones, -1 the other's
    board = board.at[jnp.arange(board.shape[0]), action].set(1)
    win = jnp.any(jnp.all(board[:, LINES] == 1, axis=-1), axis=-1) & ~over
    ended = over | win | jnp.all(board != 0, axis=-1)
    # mctx's two-player convention: the reward is the mover's, the discount -1 while the game goes on
    out = mctx.RecurrentFnOutput(reward=jnp.where(win, 1.0, 0.0), discount=jnp.where(ended, 0.0, -1.0),
                                 prior_logits=jnp.where(-board == 0, 0.0, -1e9), value=jnp.zeros(board.shape[0]))
    return out, (-board, ended)


moves, sims, out = [int(c) for c in sys.argv[1]], int(sys.argv[2]), sys.argv[3]
board = np.zeros((1, 9), np.int32)
for i, cell in enumerate(moves):
    board[0, cell - 1] = 1 if i % 2 == 0 else -1
board = jnp.asarray(board if len(moves) % 2 == 0 else -board)
root = mctx.RootFnOutput(prior_logits=jnp.where(board == 0, 0.0, -1e9), value=jnp.zeros(1),
                         embedding=(board, jnp.zeros(1, bool)))
search = mctx.gumbel_muzero_policy(params=(), rng_key=jax.random.PRNGKey(0), root=root, recurrent_fn=recurrent_fn,
                                   num_simulations=sims, invalid_actions=(board != 0).astype(jnp.float32),
                                   max_num_considered_actions=9).search_tree
names = ["node_visits", "node_values", "children_index", "children_prior_logits", "children_rewards",
         "children_discounts"]
qvalues = np.stack([np.asarray(search.qvalues(jnp.array([i])))[0] for i in range(sims + 1)])
np.savez(out + ".npz", qvalues=qvalues, **{name: np.asarray(getattr(search, name)) for name in names})
tree = treelab.from_mctx(search, "tictactoe", moves=sys.argv[1])  # the mctx.Tree itself
with open(out + ".json", "w") as f:
    json.dump(list(tree_rows(tree)), f)
"""


@pytest.mark.jax
def test_a_real_mctx_search_is_imported_with_its_visits_values_and_priors(tmp_path: Path) -> None:
    """A real ``mctx.gumbel_muzero_policy`` search (JAX on CPU) in a process of its own: JAX's threads stay out of
    the test process, which forks workers in other tests."""
    import subprocess
    import sys

    pytest.importorskip("mctx")
    done = subprocess.run([sys.executable, "-c", MCTX_SEARCH, "51", "48", str(tmp_path / "search")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    search = dict(np.load(tmp_path / "search.npz"))
    tree = treelab.from_mctx(search, "tictactoe", treelab.MctxOptions(moves="51"))  # the arrays, as numpy
    from_tree = json.loads((tmp_path / "search.json").read_text())
    assert sorted(from_tree, key=lambda r: r["path"]) == _rows(tree)  # the same as from the mctx.Tree itself
    visits, values = search["node_visits"][0], search["node_values"][0]
    kids, logits = search["children_index"][0], search["children_prior_logits"][0]
    top = tree.find("51")
    assert top.nb_visit == tree.root.nb_visit == visits[0] == 49  # mctx counts the root's first evaluation
    assert 2 * top.mean - 1 == pytest.approx(-values[0], abs=1e-6)  # the root's mover is the other player
    checked = 0
    stack = [(0, top)]
    while stack:
        index, node = stack.pop()
        q = search["qvalues"][index]  # mctx's own tree.qvalues: reward + discount * value, the mover's
        state = tree.game.replay(node.moves)
        for action in np.flatnonzero(kids[index] >= 0).tolist():
            if state.is_terminal:
                continue  # mctx grows past the end of a game: those nodes are not moves of it
            child = node.child(str(action + 1))
            assert child is not None and child.nb_visit == visits[kids[index, action]]
            assert 2 * child.mean - 1 == pytest.approx(q[action], abs=1e-6)
            legal = [m - 1 for m in state.legal_moves()]
            prior = np.exp(logits[index, legal] - logits[index, legal].max())
            assert tree.priors[child] == pytest.approx(prior[legal.index(action)] / prior.sum())
            stack.append((int(kids[index, action]), child))
            checked += 1
    assert checked == len(tree) - 3
    db = tmp_path / "mctx.db"
    tree.save(db)
    assert _rows(treelab.load(db)) == _rows(tree)


# -- alpha-zero-general style statistics, from a search written here against treelab's tic-tac-toe -------------


class AZGStyleMCTS:
    """alpha-zero-general's MCTS.search, on treelab's tic-tac-toe: uniform priors, a random playout as the value."""

    def __init__(self, game: treelab.Game, rng: random.Random) -> None:
        self.game, self.rng = game, rng
        self.Qsa: dict[tuple[Any, int], float] = {}
        self.Nsa: dict[tuple[Any, int], int] = {}
        self.Ns: dict[Any, int] = {}
        self.Ps: dict[Any, list[float]] = {}

    def search(self, state: treelab.State) -> float:
        """The value of ``state`` for the player who just moved (alpha-zero-general returns -v)."""
        s = state.key()
        if state.is_terminal:
            return 0.0 if state.winner is None else 1.0  # the player who just moved won
        if s not in self.Ps:
            legal = state.legal_moves()
            self.Ps[s] = [1.0 / len(legal) if m + 1 in legal else 0.0 for m in range(9)]
            self.Ns[s] = 0
            winner = self.game.playout(state, self.rng)
            v = 0.0 if winner is None else 1.0 if winner == state.to_move else -1.0
            return -v
        best, best_u = None, -math.inf
        for move in state.legal_moves():
            a = move - 1
            n = self.Nsa.get((s, a), 0)
            u = (self.Qsa[(s, a)] if n else 0.0) + self.Ps[s][a] * math.sqrt(self.Ns[s] + 1e-8) / (1 + n)
            if u > best_u:
                best, best_u = a, u
        assert best is not None
        v = self.search(state.play(best + 1))
        n = self.Nsa.get((s, best), 0)
        self.Qsa[(s, best)] = (n * self.Qsa.get((s, best), 0.0) + v) / (n + 1)
        self.Nsa[(s, best)] = n + 1
        self.Ns[s] += 1
        return -v


def test_alphazero_general_statistics_replayed_into_paths() -> None:
    game = treelab.find_game("tictactoe")
    start = game.replay("5")
    azg = AZGStyleMCTS(game, random.Random(2))
    for _ in range(400):
        azg.search(start)
    stats = treelab.AlphaZeroStats(nsa=azg.Nsa, qsa=azg.Qsa, ns=azg.Ns, ps=azg.Ps)
    tree = treelab.from_alphazero(stats, game, lambda state: state.key(), moves="5")
    top = tree.find("5")
    assert top.nb_visit == azg.Ns[start.key()] == sum(k.nb_visit for k in top.children_view)
    seen = 0
    for node in tree:
        if node.depth < 2:
            continue
        parent_state = game.replay(node.moves[:-1])
        key = (parent_state.key(), int(node.name) - 1)
        assert node.nb_visit == azg.Nsa[key]  # a transposed position gets its statistics on every path
        assert 2 * node.mean - 1 == pytest.approx(azg.Qsa[key], abs=1e-12)
        assert tree.priors[node] == azg.Ps[parent_state.key()][key[1]]
        seen += 1
    assert seen == len(tree) - 2 and seen > 100


def test_alphazero_statistics_without_the_searched_position_are_one_clear_error() -> None:
    stats = treelab.AlphaZeroStats(nsa={}, qsa={}, ns={})
    with pytest.raises(treelab.ImportFormatError, match="not in Ns"):
        treelab.from_alphazero(stats, "tictactoe", lambda state: state.key())


# -- the recorder and the plain rows format ------------------------------------------------------------------


def _hand_written_mcts(recorder: treelab.Recorder, simulations: int, rng: random.Random) -> None:
    """A bare UCT of the kind people write themselves, calling the recorder once per simulation."""
    game, stats = treelab.find_game("tictactoe"), {}
    for _ in range(simulations):
        state, path = game.initial(), []
        while not state.is_terminal and tuple(path) in stats:
            path.append(rng.choice(state.legal_moves()))
            state = state.play(path[-1])
        stats[tuple(path)] = True
        winner = game.playout(state, rng)
        value = 0.0 if winner is None else 1.0 if winner == 1 else -1.0
        recorder.simulation([game.label(m) for m in path], value=value, player=1)


def test_the_recorder_turns_a_hand_written_search_into_a_tree(tmp_path: Path) -> None:
    recorder = treelab.Recorder("tictactoe")
    _hand_written_mcts(recorder, 300, random.Random(5))
    tree = recorder.tree
    assert recorder.simulations == tree.root.nb_visit == 300
    for node in tree:
        assert node.nb_visit >= sum(k.nb_visit for k in node.children_view)
        assert node.nb_draw == node.nb_visit and abs(node.value_sum) <= node.nb_visit
    out = tmp_path / "rec.jsonl"
    assert recorder.write(out) == len(tree)
    again = treelab.from_rows(out, "tictactoe")
    assert _rows(again) == _rows(tree)


def _random_tree(seed: int, simulations: int, game: str) -> treelab.Tree:
    return valued_tree(game, seed, simulations)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), simulations=st.integers(1, 60), fmt=st.sampled_from(["rows", "csv", "node-link",
                                                                                           "gml"]))
def test_export_then_import_gives_back_exactly_the_same_numbers(seed: int, simulations: int, fmt: str) -> None:
    import tempfile

    tree = _random_tree(seed, simulations, "connect4")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "a.db"
        tree.save(db)
        out = Path(tmp) / ("t.csv" if fmt == "csv" else "t.out")
        with out.open("w", encoding="utf-8", newline="") as stream:
            export(db, "rows" if fmt == "csv" else fmt, stream, csv=fmt == "csv")
        back = import_file(out, "rows" if fmt == "csv" else fmt, "connect4", Path(tmp) / "b.db")
        assert back.nodes == len(tree)
        assert _rows(treelab.load(Path(tmp) / "b.db")) == _rows(tree)


def test_networkx_reads_the_node_link_and_gml_exports(tmp_path: Path) -> None:
    nx = pytest.importorskip("networkx")
    tree = _random_tree(1, 80, "tictactoe")
    db = tmp_path / "t.db"
    tree.save(db)
    assert run(*["export", "node-link", str(db), "-o", str(tmp_path / "t.json")]).exit_code == 0
    graph = nx.node_link_graph(json.loads((tmp_path / "t.json").read_text()))
    assert graph.number_of_nodes() == len(tree) and nx.is_arborescence(graph)
    assert graph.nodes["root"]["visits"] == tree.root.nb_visit
    kid = tree.root.children_view[0]
    assert graph.nodes[kid.name]["mean"] == kid.mean and graph.has_edge("root", kid.name)
    assert run(*["export", "gml", str(db), "-o", str(tmp_path / "t.gml")]).exit_code == 0
    gml = nx.read_gml(tmp_path / "t.gml")
    assert gml.number_of_nodes() == len(tree) and gml.nodes["root"]["visits"] == tree.root.nb_visit


def test_explorer_and_katago_exports_describe_a_position(tmp_path: Path) -> None:
    tree = _random_tree(4, 120, "tictactoe")
    db = tmp_path / "t.db"
    tree.save(db)
    run(*["export", "explorer", str(db), "-o", str(tmp_path / "e.json")])
    view = json.loads((tmp_path / "e.json").read_text())
    assert view["visits"] == tree.root.nb_visit and len(view["moves"]) == len(tree.root.children_view)
    for move in view["moves"]:
        node = tree.find(move["uci"])
        assert move["white"] + move["draws"] + move["black"] == node.nb_visit == move["visits"]
        assert move["win"] == move["white"] and move["score"] == node.mean  # player 1 moves first
    run(*["export", "katago", str(db), "--depth", "1", "-o", str(tmp_path / "k.jsonl")])
    lines = [json.loads(line) for line in (tmp_path / "k.jsonl").read_text().splitlines()]
    first = lines[0]
    assert first["rootInfo"]["visits"] == tree.root.nb_visit and first["rootInfo"]["currentPlayer"] == "B"
    assert [m["order"] for m in first["moveInfos"]] == list(range(len(tree.root.children_view)))
    assert first["moveInfos"][0]["pv"][0] == first["moveInfos"][0]["move"]
    assert len(lines) == 1 + sum(1 for k in tree.root.children_view if k.nb_visit)


# -- the command line: adds like merge, one clear line for bad input, nothing written ------------------------------


def _node_counts(db: Path) -> dict[str, tuple[int, int, int, float, Any]]:
    conn = sqlite3.connect(db)
    try:
        return {str(i): (v, w, d, s, p) for i, v, w, d, s, p in conn.execute(
            "SELECT id, nb_visit, nb_win, nb_draw, value_sum, prior FROM nodes ORDER BY id")}
    finally:
        conn.close()


def test_importing_twice_adds_exactly_and_imported_trees_work_in_every_command(tmp_path: Path) -> None:
    tree = _random_tree(9, 150, "tictactoe")
    rows = tmp_path / "t.jsonl"
    with rows.open("w") as out:
        write_rows(tree_rows(tree), out, "tictactoe")
    db = tmp_path / "imp.db"
    first = run(*["import", "rows", str(rows), "--game", "tictactoe", "--db", str(db)])
    assert first.exit_code == 0 and "imported" in first.output
    once = treelab.load(db)
    assert run(*["import", "rows", str(rows), "--game", "tictactoe", "--db", str(db)]).exit_code == 0
    twice = treelab.load(db)
    for a in once:
        b = twice.find(a.moves)
        assert (b.nb_visit, b.nb_win, b.nb_draw, b.nb_select) == (2 * a.nb_visit, 2 * a.nb_win, 2 * a.nb_draw,
                                                                    2 * a.nb_select)
        assert b.value_sum == 2 * a.value_sum and twice.priors.get(b) == once.priors.get(a)
    assert len(twice) == len(once)
    svg = tmp_path / "t.svg"
    assert run(*["render", str(db), "--depth", "2", "-o", str(svg)]).exit_code == 0 and "<svg" in svg.read_text()
    merged = tmp_path / "m.db"
    assert run(*["merge", str(merged), str(db)]).exit_code == 0
    diff = json.loads(run(*["diff", str(db), str(merged), "--json"]).output)
    assert diff["root_visit_delta"] == 0 and all(k["mean_a"] == k["mean_b"] for k in diff["children"])
    kid = max(twice.root.children_view, key=lambda k: k.nb_visit)
    assert next(k for k in diff["children"] if k["move"] == kid.name)["mean_a"] == kid.mean
    info = json.loads(run(*["info", str(db), "--json"]).output)
    assert info["nodes"] == len(tree)


def test_the_explorer_api_shows_values_and_priors(tmp_path: Path) -> None:
    from treelab.view.explorer.data import TreeFile

    tree = _random_tree(3, 100, "tictactoe")
    for kid in tree.root.children_view:
        tree.priors[kid] = 1 / len(tree.root.children_view)
    db = tmp_path / "t.db"
    tree.save(db)
    data = TreeFile.open(db).node("")
    valued = [k for k in tree.root.children_view if k.value_sum]
    assert valued
    for kid in valued:
        shown = next(k for k in data["children"] if k["move"] == kid.name)
        assert shown["value_sum"] == kid.value_sum and shown["mean"] == kid.mean
        assert shown["prior"] == 1 / len(tree.root.children_view)


@pytest.mark.parametrize(("lines", "message"), [
    (['{"treelab_rows": 1, "game": "connect4"}', '{"path": "", "visits": 1}'], "row 1: the rows are of connect4"),
    (['{"path": "", "visits": 2}', '{"path": "5", "visits": "x"}'], "row 2 (path '5'): visits 'x'"),
    (['{"path": "", "visits": 2}', '{"path": "5,5", "visits": 1}'], "row 2 (path '5,5'): no row for its parent"),
    (['{"path": "", "visits": 2}', '{"path": "5", "visits": 1}', '{"path": "5,5", "visits": 1}'],
     "row 3 (path '5,5'): move '5' is not legal"),
    (['{"path": "", "visits": 2}', '{"path": "5", "visits": 1, "value_sum": 3.0}'], "value_sum 3.0"),
    (['{"path": "", "visits": 2}', "not json"], "row 2: not a JSON object"),
])
def test_bad_rows_are_one_line_naming_the_row_and_nothing_is_written(tmp_path: Path, lines: list[str],
                                                                     message: str) -> None:
    rows = tmp_path / "bad.jsonl"
    rows.write_text("\n".join(lines) + "\n")
    db = tmp_path / "out.db"
    result = run(*["import", "rows", str(rows), "--game", "tictactoe", "--db", str(db)])
    assert_clean_error(result, message)
    assert not db.exists()


def test_importing_into_a_database_of_another_game_leaves_it_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "c4.db"
    _random_tree(2, 20, "connect4").save(db)
    before = _node_counts(db)
    tree = _random_tree(2, 20, "tictactoe")
    with pytest.raises(treelab.GameMismatchError):
        import_tree(tree, db)
    assert _node_counts(db) == before and sorted(p.name for p in tmp_path.iterdir()) == ["c4.db"]


def test_csv_rows_from_outside_with_only_visits_and_returns() -> None:
    text = "path,visits,value_sum,prior\n,10,-2.0,\n5,6,3.0,0.5\n1,4,-1.0,0.5\n5,1,2,0.2\n"
    tree = treelab.from_rows(io.StringIO(text.replace("5,1,2,0.2\n", "")), "tictactoe")
    assert tree.find("5").mean == pytest.approx((1 + 3.0 / 6) / 2) and tree.priors[tree.find("1")] == 0.5
    assert tree.root.nb_visit == 10 and tree.find("5").nb_select == 6 and tree.root.nb_select == 0


def test_a_schema_2_file_reads_as_no_values_and_migrates_on_its_first_save(tmp_path: Path) -> None:
    from treelab.store.schema import SCHEMA_VERSION

    db = tmp_path / "old.db"
    tree = treelab.Tree("tictactoe")
    tree.record("159", winner=1)
    tree.save(db)
    with sqlite3.connect(db) as conn:  # the file as treelab wrote it before schema 4
        conn.execute("ALTER TABLE nodes DROP COLUMN value_sum")
        conn.execute("ALTER TABLE nodes DROP COLUMN prior")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.close()
    assert json.loads(run(*["stats", str(db), "--json"]).output)["children"][0]["mean"] == 1.0  # read as it is
    old = treelab.load(db)
    assert not old.valued and old.find("1").value_sum == 0.0
    old.add_value(old.find("1"), 0.5)
    old.save(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert conn.execute("SELECT value_sum FROM nodes WHERE move = '1'").fetchone() == (0.5,)
    conn.close()


def test_puct_keeps_an_evaluators_values_instead_of_rounding_them(tmp_path: Path) -> None:
    from treelab.mcts.evaluators import Evaluation, uniform_priors

    seen: list[tuple[tuple[str, ...], float]] = []

    def evaluate(state: treelab.State, rng: random.Random) -> Evaluation:
        value = 0.3 + 0.05 * len(state.legal_moves()) / 9  # never 0, 1/2 or 1
        return Evaluation(uniform_priors(state), value)

    tree = treelab.Tree("tictactoe")
    treelab.puct_search(tree, "5", limit=treelab.Limit(iterations=200), evaluator=evaluate, solver=False, rng=3)
    top = tree.find("5")
    exact = 0
    for node in tree:  # a node evaluated once holds exactly its evaluation, not a sampled result
        position = tree.game.replay(node.moves)
        if node.depth >= 2 and node.nb_visit == 1 and not position.is_terminal:
            value = evaluate(position, random.Random(0)).value  # the player to move's
            assert (node.nb_win, node.nb_draw) == (0, 1) and node.mean == pytest.approx(1.0 - value, abs=1e-12)
            exact += 1
    for kid in top.children_view:
        if kid.nb_visit:
            seen.append((kid.moves, kid.mean))
            assert kid.value_sum != 0.0 and 0.0 < kid.mean < 1.0
    assert tree.valued and len(seen) >= 3 and exact >= 10
    db = tmp_path / "puct.db"
    tree.save(db)
    back = treelab.load(db)
    assert [(m, back.find(m).mean) for m, _ in seen] == seen


def test_analyse_json_carries_the_priors_of_a_puct_search() -> None:
    out = json.loads(run(*["analyse", "tictactoe", "--moves", "5", "--algorithm", "puct", "--iterations", "60",
                           "--seed", "1", "--json"]).output)
    kids = out["children"]  # the rollout evaluator's values are whole results: no value sums here
    assert all(0.0 <= k["prior"] <= 1.0 and "value_sum" not in k for k in kids)
    assert sum(k["prior"] for k in kids) == pytest.approx(1.0)
