"""MCTS-Solver proofs (UCT in search.py and PUCT in puct.py) checked against exact values.

References nobody here wrote: the gamesolver.org scores of Test_L3_R1. Positions
of our own making (endgames of heuristic and UCT games, all of tic-tac-toe) are
checked with the small alpha-beta solver in ``exact_solver.py``, itself checked
against gamesolver.org first. Every proven node of every tree is checked, not
only the searched position: a proof is never wrong.
"""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner
from exact_solver import ExactSolver

import treelab
from treelab.mcts.dispatch import puct_search
from treelab.mcts.summary import choose_move, summarize
from treelab.mcts.uct import Limit, search
from treelab.play.arena import play_game
from treelab.play.players import HeuristicPlayer, MCTSPlayer

C4 = treelab.find_game("connect4")
TTT = treelab.find_game("tictactoe")
SOLVERS = ["uct", "puct"]


def sign(score: int) -> int:
    return (score > 0) - (score < 0)


def solve(tree: treelab.Tree, moves: str, kind: str, iterations: int, seed: int = 1, **kw) -> int:
    """Search with proofs on; returns the simulations run."""
    if kind == "uct":
        return search(tree, moves, limit=Limit(iterations=iterations), solver=True, rng=seed, **kw)
    return puct_search(tree, moves, limit=Limit(iterations=iterations), rng=seed, **kw)


def check_every_proof(tree: treelab.Tree, exact: ExactSolver, min_depth: int = 0) -> int:
    """Assert every proven node at ``min_depth`` or deeper against the exact solver; returns how many."""
    checked = 0
    stack = [(tree.root, tree.game.initial())]
    while stack:
        node, state = stack.pop()
        if node.proven is not None and node.depth >= min_depth:
            truth = -exact.value(state)  # the exact value is for the player to move; proven for the mover
            assert node.proven == truth, f"wrong proof at {node.sequence}: {node.proven} != {truth}"
            checked += 1
        for kid in node.children_view:
            stack.append((kid, state.play(tree.game.parse_move(kid.name))))
    return checked


@pytest.fixture(scope="module")
def exact() -> ExactSolver:
    return ExactSolver(max_nodes=3_000_000)


def test_exact_solver_agrees_with_gamesolver(c4_positions, exact):
    for moves, score in c4_positions[::4]:
        assert exact.value(C4.replay(moves)) == sign(score), moves


def test_exact_solver_on_tictactoe(exact):
    assert exact.value(TTT.initial()) == 0
    assert exact.value(TTT.replay("1")) == 0  # O must answer a corner in the centre ...
    assert exact.value(TTT.replay("12")) == 1  # ... and an adjacent edge loses for O
    assert exact.best_moves(TTT.replay("1")) == [5]


# -- gamesolver.org positions -----------------------------------------------------
@pytest.mark.parametrize("kind", SOLVERS)
def test_proofs_on_a_gamesolver_sample(c4_positions, exact, kind):
    sample = c4_positions[::10]  # 100 of the 1,000; benchmarks/solver.py runs them all
    proven = 0
    for moves, score in sample:
        tree = treelab.Tree("connect4")
        done = solve(tree, moves, kind, 2000)
        node = tree.find(moves)
        if node.proven is not None:
            proven += 1
            assert -node.proven == sign(score), moves
            assert done < 2000  # the search stops once the position is proven
        check_every_proof(tree, exact, min_depth=len(moves))
    assert proven >= 0.85 * len(sample)


def test_summary_reports_proven_win_draw_and_loss(c4_positions):
    seen = set()
    for moves, score in c4_positions[:60]:
        result = treelab.analyse("connect4", moves, iterations=3000, solver=True, seed=1)
        if result.proven is not None:
            assert result.proven == {1: "win", 0: "draw", -1: "loss"}[sign(score)], moves
            seen.add(result.proven)
            if result.proven == "win":
                wins = [ch for ch in result.children if ch.proven == "win"]
                assert wins and result.best_move in {ch.move for ch in wins}
    assert seen == {"win", "draw", "loss"}


# -- positions of our own making --------------------------------------------------------
def endgames(count: int, seed: int) -> list[str]:
    """Positions 3-10 plies before the end of heuristic-vs-heuristic and UCT self-play games."""
    rng = random.Random(seed)
    positions: list[str] = []
    players = [
        (HeuristicPlayer(rng=rng.getrandbits(32)), HeuristicPlayer(rng=rng.getrandbits(32))),
        (MCTSPlayer(iterations=60, rng=rng.getrandbits(32)), MCTSPlayer(iterations=60, rng=rng.getrandbits(32))),
    ]
    while len(positions) < count:
        first, second = players[len(positions) % 2]
        moves, _ = play_game(C4, first, second)
        back = rng.randint(3, 10)
        if len(moves) - back >= 14:
            positions.append(C4.notation(moves[: len(moves) - back]))
    return positions


@pytest.mark.parametrize("kind", SOLVERS)
def test_proofs_on_endgames_of_real_games(exact, kind):
    checked = proven = 0
    positions = endgames(32, seed={"uct": 11, "puct": 12}[kind])
    for i, moves in enumerate(positions):
        tree = treelab.Tree("connect4")
        solve(tree, moves, kind, 1000, seed=i, **({"playout": "decisive"} if kind == "uct" and i % 2 else {}))
        proven += tree.find(moves).proven is not None
        checked += check_every_proof(tree, exact, min_depth=len(moves))
    assert proven >= len(positions) // 3
    assert checked > 100


@pytest.mark.parametrize("kind", SOLVERS)
def test_tictactoe_empty_board_is_proven_a_draw_and_every_proof_is_right(exact, kind):
    tree = treelab.Tree("tictactoe")
    done = solve(tree, "", kind, 200_000)
    assert tree.root.proven == 0
    assert done < 200_000
    assert check_every_proof(tree, exact) > 1000
    summary = summarize(tree, "", iterations=done)
    assert summary.proven == "draw"


# -- no waste below proofs, persistence ---------------------------------------------------------
@pytest.mark.parametrize("kind", SOLVERS)
def test_selection_never_enters_proven_nodes(c4_positions, kind):
    moves = next(m for m, s in c4_positions if len(m) <= 31)
    tree = treelab.Tree("connect4")
    solve(tree, moves, kind, 150)
    start = tree.find(moves)
    if start.proven is not None:
        pytest.skip("proven at once")
    frozen = {n: n.nb_visit for n in tree if n.proven is not None and n.depth > start.depth}
    assert frozen
    solve(tree, moves, kind, 300, seed=2)
    assert all(n.nb_visit == v for n, v in frozen.items())


@pytest.mark.parametrize("kind", SOLVERS)
def test_proofs_survive_save_and_load(tmp_path, c4_positions, kind):
    from treelab.store.persistence import load

    moves, score = c4_positions[3]
    tree = treelab.Tree("connect4")
    solve(tree, moves, kind, 5000)
    assert -tree.find(moves).proven == sign(score)
    tree.save(tmp_path / "c4.db")
    back = load(tmp_path / "c4.db")
    assert {n.sequence: n.proven for n in back} == {n.sequence: n.proven for n in tree}


def test_analyse_solver_reports_the_proof_in_json(tmp_path, c4_positions):
    from treelab.cli import cli

    moves, score = c4_positions[3]
    result = CliRunner().invoke(cli, ["analyse", "connect4", "--moves", moves, "--iterations", "5000", "--solver",
                                      "--seed", "1", "--json", "--db", str(tmp_path / "a.db")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["proven"] == {1: "win", 0: "draw", -1: "loss"}[sign(score)]
    assert data["iterations"] < 5000


def test_proofs_stop_the_search_and_mid_game_proofs_reach_the_root_path(c4_positions):
    # the player to move loses: the move into the position wins, so its parent is lost
    moves = next(m for m, score in c4_positions if score < 0)
    tree = treelab.Tree("connect4")
    first = search(tree, moves, limit=Limit(iterations=20000), solver=True, rng=1)
    assert tree.find(moves).proven == 1
    assert tree.find(moves[:-1]).proven == -1
    assert search(tree, moves, limit=Limit(iterations=100), solver=True, rng=2) == 0
    assert puct_search(tree, moves, limit=Limit(iterations=100), rng=2) == 0
    assert tree.root.nb_visit == first


def test_choose_move_plays_an_unvisited_proven_win():
    tree = treelab.Tree("connect4")
    puct_search(tree, "414141", limit=Limit(iterations=1), rng=1)
    node = tree.find("414141")
    for kid in node.children_view:  # the search stopped at once: give the other moves some visits
        if kid.name != "4":
            tree.backup([kid], None)
    assert choose_move(node).name == "4"


def test_rendering_marks_proven_nodes(c4_positions):
    from treelab.view.dot import to_dot

    moves = next(m for m, score in c4_positions if score > 0)  # the player to move wins
    tree = treelab.Tree("connect4")
    search(tree, moves, limit=Limit(iterations=5000), solver=True, rng=1)
    assert tree.find(moves).proven == -1
    dot = to_dot(tree, path=moves, depth=1, board=False, legend=False)
    winning = [k for k in tree.find(moves).children_view if k.proven == 1]
    assert winning and "proven win" in dot and "peripheries=2" in dot
