"""A search's trace: exact (replayed onto the starting tree it gives the searched tree, node for
node), what it says per simulation, free when off, and its file read back with clear errors."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_clean_error, run

import treelab
from treelab.analysis.convergence import converge_records
from treelab.errors import TraceError
from treelab.mcts.config import C_PUCT, SearchConfig
from treelab.mcts.dispatch import puct_search, traced_search
from treelab.mcts.loop import Limit
from treelab.mcts.tracer import TRACE_KEYS, Tracer, apply_record
from treelab.mcts.uct import search

Snapshot = dict[tuple[str, ...], tuple[Any, ...]]


def snapshot(tree: treelab.Tree) -> Snapshot:
    return {n.moves: (n.nb_visit, n.nb_win, n.nb_draw, n.nb_select, n.proven, round(n.value_sum, 9)) for n in tree}


def replayed(start: treelab.Tree, records: list[dict[str, Any]]) -> Snapshot:
    for record in records:
        apply_record(start, record)
    return snapshot(start)


CASES = [
    ("connect4", "4453", SearchConfig()),
    ("connect4", "44536", SearchConfig(solver=True)),
    ("tictactoe", "15", SearchConfig(algorithm="puct")),
    ("connect4", "44", SearchConfig(algorithm="puct", evaluator="heuristic")),
    ("tictactoe", "", SearchConfig(playout="decisive")),
]


@pytest.mark.parametrize(("game", "moves", "config"), CASES, ids=lambda v: str(v).split("(")[0][:30])
def test_replaying_the_trace_gives_the_searched_tree(game: str, moves: str, config: SearchConfig) -> None:
    tree, start = treelab.Tree(game), treelab.Tree(game)
    tree.path(moves)
    start.path(moves)
    tracer = Tracer()
    done = traced_search(tree, moves, limit=Limit(iterations=400), search=config, rng=random.Random(7), tracer=tracer)
    assert done == len(tracer.records) > 0
    assert replayed(start, tracer.records) == snapshot(tree)
    if config.solver:  # the solver proved something, and the trace says where
        assert any(r["proofs"] for r in tracer.records)



def test_a_model_guided_trace_carries_the_value_sums_exactly(tmp_path: Path) -> None:
    db, model = tmp_path / "ttt.db", tmp_path / "ttt.npz"
    treelab.train("tictactoe", db, games=20, iterations=100, seed=1, progress=False)
    treelab.fit(db, model, min_visits=5, hidden=(8,), epochs=5, seed=1)
    tree, tracer = treelab.Tree("tictactoe"), Tracer()
    config = SearchConfig(algorithm="puct", model=str(model))
    traced_search(tree, "", limit=Limit(iterations=200), search=config, rng=random.Random(2), tracer=tracer)
    valued = [r for r in tracer.records if "values" in r]  # a finished game's result is whole: no values
    assert tree.root.value_sum != 0 and valued and all(len(r["values"]) == len(r["backup"]) for r in valued)
    assert replayed(treelab.Tree("tictactoe"), tracer.records) == snapshot(tree)
    curves = converge_records(tracer.records)
    for kid in tree.root.children_view:  # the fresh tree's root moves: the curve ends at the node's one mean
        assert curves.means[kid.name][-1] == pytest.approx(kid.mean)


def test_a_traced_search_grows_the_tree_the_untraced_one_grows() -> None:
    for game, moves in (("connect4", "4453"), ("tictactoe", "")):
        traced, plain = treelab.Tree(game), treelab.Tree(game)
        traced_search(traced, moves, limit=Limit(iterations=300), search=SearchConfig(), rng=random.Random(3),
                      tracer=Tracer())
        search(plain, moves, limit=Limit(iterations=300), rng=random.Random(3))  # the compiled batch when built
        assert snapshot(traced) == snapshot(plain)
    traced, plain = treelab.Tree("tictactoe"), treelab.Tree("tictactoe")
    traced_search(traced, "1", limit=Limit(iterations=300), search=SearchConfig(algorithm="puct"),
                  rng=random.Random(3), tracer=Tracer())
    puct_search(plain, "1", limit=Limit(iterations=300), rng=random.Random(3))
    assert snapshot(traced) == snapshot(plain)


def test_a_stored_tree_is_only_read_unless_asked(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    treelab.train("tictactoe", db, games=6, iterations=60, seed=2, progress=False)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    before = treelab.load(db)
    visits = before.root.nb_visit
    t = treelab.trace("tictactoe", "5", iterations=150, seed=4, db=db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest  # read only
    t_saved = treelab.trace("tictactoe", "5", iterations=150, seed=4, db=db, save=True)
    after = treelab.load(db)
    assert t_saved.records == t.records  # the same search
    assert replayed(before, list(t.records)) == snapshot(after)  # exact on a stored tree, above the start too
    assert after.root.nb_visit == visits + 150


@pytest.mark.openspiel
def test_an_openspiel_game_is_traced_exactly() -> None:
    game = "openspiel:tic_tac_toe"
    tree, start = treelab.Tree(game), treelab.Tree(game)
    tracer = Tracer()
    traced_search(tree, "4", limit=Limit(iterations=200), search=SearchConfig(solver=True), rng=random.Random(1),
                  tracer=tracer)
    start.path("4")
    assert replayed(start, tracer.records) == snapshot(tree)
    first = tracer.records[0]
    assert first["position"] == "4" and first["playout"] and all(m.isdigit() for m in first["playout"])


def test_each_record_says_what_the_simulation_did() -> None:
    t = treelab.trace("connect4", "4453", iterations=120, seed=5)
    game = treelab.find_game("connect4")
    root_moves = {m.move for m in t.summary.children} if t.summary else set()
    for i, r in enumerate(t.records, 1):
        assert set(TRACE_KEYS) <= set(r) and r["simulation"] == i and r["position"] == "4453"
        assert len(r["levels"]) == len(r["path"]) >= 1 and r["path"][0] in root_moves
        for level, move in zip(r["levels"], r["path"], strict=True):
            assert level["picked"] == move
            if level["why"] == "best":  # the picked move has the highest score at that moment
                scores = [c["score"] for c in level["candidates"] if c["score"] is not None]
                picked = next(c for c in level["candidates"] if c["move"] == move)
                assert picked["score"] == max(scores)
                assert picked["score"] == pytest.approx(picked["mean"] + picked["explore"], abs=2e-6)
        # the playout starts where the path ends and plays to the end, with that winner
        end = game.replay("4453" + "".join(r["path"]) + "".join(r["playout"]))
        assert end.is_terminal and end.winner == r["winner"]
        assert r["expanded"] in (None, r["path"][-1])
        assert len(r["backup"]) == 4 + len(r["path"]) + 1
        assert all(g[0] == 1 for g in r["backup"])
    # the first simulation from a fresh start can only try a move: untried, drawn among all legal ones
    first = t.records[0]["levels"][0]
    assert first["why"] == "untried" and first["candidates"] == [] and len(first["untried"]) == 7
    # later, every move tried once, the unvisited-first rule is over and UCB1 picks the best
    assert any(level["why"] == "best" for r in t.records for level in r["levels"])


def test_puct_levels_carry_priors_and_first_play_urgency() -> None:
    t = treelab.trace("tictactoe", "", iterations=40, seed=1, algorithm="puct")
    # the first simulation evaluates the start (its moves wait, each made when first selected); the next makes one
    assert t.records[0]["path"] == [] and t.records[0]["expanded"] is None and t.records[0]["created"] == []
    assert len(t.records[1]["path"]) == 1 and t.records[1]["expanded"] == t.records[1]["path"][0]
    assert len(t.records[1]["created"]) == 1
    level = t.records[1]["levels"][0]
    assert [c["prior"] for c in level["candidates"]] == [pytest.approx(1 / 9, abs=1e-6)] * 9
    assert all(c["mean"] is not None for c in level["candidates"])  # an unvisited child's Q: the parent's value
    checked = 0
    for record in t.records[1:]:  # explore = c * P * sqrt(N) / (1 + n) with edge counts, from the row alone
        for level in record["levels"]:
            rows = [c for c in level["candidates"] if not c.get("skipped")]
            big_n = 1 + sum(c["nb_select"] for c in level["candidates"])
            for c in rows:
                assert c["explore"] == pytest.approx(
                    C_PUCT * c["prior"] * big_n ** 0.5 / (1 + c["nb_select"]), abs=2e-6)
                checked += 1
    assert checked > 100


def test_analyse_writes_the_trace_file_and_read_trace_reads_it(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    result = run("analyse", "tictactoe", "--moves", "15", "--iterations", "80", "--seed", "2", "--trace", str(out))
    assert result.exit_code == 0 and "80 simulations" in result.output
    lines = out.read_text().splitlines()
    assert len(lines) == 80 and json.loads(lines[0])["simulation"] == 1
    t = treelab.read_trace(out, game="tictactoe", moves="1,5")
    assert t.records == treelab.trace("tictactoe", "15", iterations=80, seed=2).records  # the same search replays
    gz = tmp_path / "trace.jsonl.gz"
    assert run("analyse", "tictactoe", "--moves", "15", "--iterations", "80", "--seed", "2", "--trace",
               str(gz)).exit_code == 0
    assert gzip.decompress(gz.read_bytes()).decode() == out.read_text()


def test_a_bad_trace_gets_one_clear_line(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    treelab.trace("tictactoe", "15", iterations=20, seed=2).write(out)
    text = out.read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) - 40])
    with pytest.raises(TraceError, match=r"line 20 .*cut off"):
        treelab.read_trace(cut)
    with pytest.raises(TraceError, match="game 'tictactoe', not 'connect4'"):
        treelab.read_trace(out, game="connect4")
    with pytest.raises(TraceError, match="position '15', not '19'"):
        treelab.read_trace(out, game="tictactoe", moves="19")
    lines = text.splitlines()
    (tmp_path / "gap.jsonl").write_text("\n".join(lines[:3] + lines[4:]) + "\n")
    with pytest.raises(TraceError, match="record 4 is simulation 5"):
        treelab.read_trace(tmp_path / "gap.jsonl")
    (tmp_path / "other.jsonl").write_text(json.dumps({"a": 1}) + "\n")
    with pytest.raises(TraceError, match="lacks 'simulation'"):
        treelab.read_trace(tmp_path / "other.jsonl")
    with pytest.raises(TraceError, match="step 21 is outside this trace: use 1 to 20"):
        treelab.read_trace(out).step(21)
    with pytest.raises(TraceError, match="no trace file"):
        treelab.read_trace(tmp_path / "missing.jsonl")


def test_analyse_trace_bad_input_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    assert_clean_error(run("analyse", "tictactoe", "--moves", "1x", "--trace", str(out)), "1x")
    assert_clean_error(run("analyse", "tictactoe", "--moves", "55", "--trace", str(out)), "55")
    assert not out.exists() and not list(tmp_path.iterdir())


def test_converge_compares_uct_puct_and_the_solver(tmp_path: Path) -> None:
    png = tmp_path / "conv.png"
    result = run("converge", "connect4", "--moves", "44536", "--iterations", "300", "--seed", "1", "--json",
                 "-o", str(png))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [r["label"] for r in data["runs"]] == ["uct", "puct", "solver"]
    # 4453 6: player 2 must block at 7 (else 4567 wins): the solver proves every other move lost
    solver = data["runs"][2]
    assert solver["best_move"] == "7" and solver["found_at"] <= 300
    assert {m for m, w in solver["proven"].items() if w == "loss"} >= {"1", "2", "3", "5"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    runs = treelab.converge("connect4", "44536", iterations=300, searches=("uct",), seed=1)
    shares = runs[0].shares()
    assert sum(v[-1] for v in shares.values()) == pytest.approx(1.0)
    assert_clean_error(run("converge", "connect4", "--searches", "uct,mcts"), "mcts")
    assert_clean_error(run("converge", "tictactoe", "--moves", "1425369"), "1425369")


def test_converge_draws_recorded_traces_of_its_position_only(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    assert run("analyse", "tictactoe", "--moves", "15", "--iterations", "60", "--seed", "3", "--trace",
               str(out)).exit_code == 0
    result = run("converge", "tictactoe", "--moves", "15", "--trace", str(out), "--json")
    assert result.exit_code == 0, result.output
    recorded = json.loads(result.output)["runs"][0]
    assert recorded["simulations"] == 60 and sum(m["nb_visit"] for m in recorded["moves"]) == 60
    assert_clean_error(run("converge", "tictactoe", "--moves", "19", "--trace", str(out)), "'15'", "'19'")
    assert_clean_error(run("converge", "connect4", "--moves", "15", "--trace", str(out)), "tictactoe")
    cut = tmp_path / "cut.jsonl"
    cut.write_text(out.read_text()[:-25])
    assert_clean_error(run("converge", "tictactoe", "--moves", "15", "--trace", str(cut)), "cut off")
    png = tmp_path / "c.png"
    assert_clean_error(run("converge", "tictactoe", "--moves", "15", "--trace", str(cut), "-o", str(png)), "cut off")
    assert not png.exists()


def test_a_trace_stays_under_its_stated_size(tmp_path: Path) -> None:
    """docs/guide/tracing.md: about 3.7 KB a UCT simulation at Connect Four's start (37 MB for 10,000)."""
    t = treelab.trace("connect4", "", iterations=1000, seed=1)
    plain, packed = t.write(tmp_path / "t.jsonl"), t.write(tmp_path / "t.jsonl.gz")
    assert plain.stat().st_size < 4_000 * 1000
    assert packed.stat().st_size < plain.stat().st_size / 5


@pytest.mark.openspiel
def test_a_game_whose_players_need_not_alternate_is_traced_exactly() -> None:
    game = "openspiel:dots_and_boxes(num_rows=1,num_cols=2)"
    tree, start = treelab.Tree(game), treelab.Tree(game)
    tracer = Tracer()
    traced_search(tree, "", limit=Limit(iterations=300), search=SearchConfig(solver=True), rng=random.Random(2),
                  tracer=tracer)
    assert replayed(start, tracer.records) == snapshot(tree)
    assert {n.moves: n.mover for n in start} == {n.moves: n.mover for n in tree}
    movers = treelab.stepper(tracer.records, max_steps=300).data["frames"]
    assert any(f["movers"][i] == f["movers"][i + 1] for f in movers for i in range(1, len(f["movers"]) - 1))
