"""The perfect-play oracle (treelab.oracle): Connect Four's compiled solver and tic-tac-toe's minimax.

Checked against the 1,000 gamesolver.org scores of Test_L3_R1 (exact scores
and their signs), against the independent alpha-beta solver of
``tests/helpers/exact_solver.py`` on random late positions, against the facts of
tic-tac-toe, and by symmetry (a position and its mirror image have mirrored
values). The Connect Four tests need the compiled solver (built by ``make
setup``); without it they are skipped and the refusal is checked instead.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from exact_solver import ExactSolver
from hypothesis import given, settings
from hypothesis import strategies as st
from solver_helpers import c4solver, needs_solver

from treelab.errors import BudgetError, GameOverError, NotATreelabDatabaseError, UnsupportedGameError
from treelab.games import find_game
from treelab.oracle import OracleCache, oracle_for, solve, solve_state

C4 = find_game("connect4")
FILLED = "67766776" "6776"  # columns 6 and 7 filled (6 discs each), no four anywhere
POSITION = "2252576253462244111563365343671351441"  # a Test_L3_R1 position
TTT = find_game("tictactoe")


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def random_moves(game, rng: random.Random, length: int) -> list[int] | None:
    """``length`` random legal moves from the start, or None if the game ended on the way."""
    state, moves = game.initial(), []
    for _ in range(length):
        if state.is_terminal:
            return None
        move = rng.choice(state.legal_moves())
        moves.append(move)
        state = state.play(move)
    return None if state.is_terminal else moves


@needs_solver
def test_connect4_scores_match_gamesolver_org(c4_positions) -> None:
    """Every score of Test_L3_R1 exactly (strong solving), and each position's best move keeps it."""
    oracle = oracle_for("connect4", score=True)
    wrong = []
    for moves, score in c4_positions:
        state = C4.replay(moves)
        if oracle.value(state) != score or max(oracle(state).values()) != score:
            wrong.append((moves, score))
    assert wrong == []
    assert len(c4_positions) == 1000


@needs_solver
def test_connect4_weak_values_are_the_signs(c4_positions) -> None:
    """Win/draw/loss (weak solving): the best move's value is the sign of the published score."""
    oracle = oracle_for("connect4")
    wrong = [(m, s) for m, s in c4_positions if max(oracle(C4.replay(m)).values()) != sign(s)]
    assert wrong == []


@needs_solver
@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(26, 34))
def test_connect4_agrees_with_the_exact_python_solver(seed: int, length: int) -> None:
    """Every move of a random late position, by treelab's oracle and by tests/helpers/exact_solver.py."""
    moves = random_moves(C4, random.Random(seed), length)
    if moves is None:
        return
    state = C4.replay(moves)
    exact = ExactSolver()
    expected = {m: (1 if state.play(m).winner else -exact.value(state.play(m)) if not state.play(m).is_terminal
                    else 0) for m in state.legal_moves()}
    assert solve("connect4", moves) == expected


@needs_solver
@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(14, 30))
def test_connect4_mirror_image_has_mirrored_values(seed: int, length: int) -> None:
    moves = random_moves(C4, random.Random(seed), length)
    if moves is None:
        return
    oracle = oracle_for("connect4", max_nodes=3_000_000)
    try:
        values = oracle(C4.replay(moves))
        mirrored = oracle(C4.replay([8 - m for m in moves]))
    except BudgetError:
        return  # an early position beyond this test's budget
    assert {8 - m: v for m, v in values.items()} == mirrored


@needs_solver
def test_connect4_wins_and_blocks() -> None:
    """Four stacked discs: completing the column wins; otherwise the opponent's column must be blocked."""
    values = solve("connect4", FILLED + "121212")  # X has three in column 1, O three in column 2
    assert values[1] == 1
    assert all(v == -1 for m, v in values.items() if m not in (1, 2))  # O then wins in column 2
    values = solve("connect4", FILLED + "1212123")  # O to move: 2 wins at once; all but 1 and 2 let X win in 1
    assert values[2] == 1
    assert all(v == -1 for m, v in values.items() if m not in (1, 2))


@needs_solver
def test_score_gives_how_soon() -> None:
    values = solve("connect4", FILLED + "121212", score=True)
    assert values[1] == (43 - 6 - len(FILLED)) // 2  # Pons' score: (43 - discs before the winning one) / 2
    assert values[1] > values[2] > 0  # blocking in 2 also wins, later
    assert all(v < 0 for m, v in values.items() if m not in (1, 2))


@needs_solver
def test_budget_refuses_in_one_line() -> None:
    with pytest.raises(BudgetError, match="gave up after 1000 positions"):
        solve("connect4", "44", max_nodes=1000)
    with pytest.raises(BudgetError, match="max_nodes 0"):
        oracle_for("connect4", max_nodes=0)


@needs_solver
def test_compiled_solver_refuses_bad_positions() -> None:
    with pytest.raises(ValueError, match="not a Connect Four position"):
        c4solver.solve(2, 1, 1)  # a disc of the player to move that is not on the board
    with pytest.raises(ValueError, match="not a Connect Four position"):
        c4solver.solve(0, 2, 1)  # a disc floating above an empty cell
    won = C4.replay("1212121")
    with pytest.raises(ValueError, match="game is over"):
        c4solver.solve(won.cur, won.mask, won.ply)


@needs_solver
def test_cache_keeps_answers(tmp_path: Path) -> None:
    path = tmp_path / "oracle.sqlite"
    with OracleCache(path) as cache:
        first = solve("connect4", POSITION, cache=cache)
        state = C4.replay(POSITION)
        assert len(cache) == sum(not state.play(m).is_terminal for m in first)  # a win at once needs no solving
    with OracleCache(path) as cache:
        oracle = oracle_for("connect4", cache=cache, max_nodes=1)  # a budget of 1: only the cache can answer
        assert oracle(C4.replay(POSITION)) == first
    rows = sqlite3.connect(path).execute("SELECT DISTINCT game, kind FROM oracle_values").fetchall()
    assert rows == [("connect4", "weak")]


def test_cache_refuses_a_file_that_is_not_one(tmp_path: Path) -> None:
    bad = tmp_path / "not.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(NotATreelabDatabaseError, match=repr(str(bad))):
        OracleCache(bad)
    assert bad.read_bytes() == b"this is not a database" * 100


def test_tictactoe_empty_board_every_move_draws() -> None:
    assert solve("tictactoe") == {m: 0 for m in range(1, 10)}


def test_tictactoe_corner_answered_by_an_edge_loses() -> None:
    """X in a corner: the centre is O's only reply that does not lose."""
    assert max(solve("tictactoe", "12").values()) == 1
    assert solve("tictactoe", "1") == {m: 0 if m == 5 else -1 for m in range(2, 10)}


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(0, 8))
def test_tictactoe_agrees_with_the_exact_python_solver(seed: int, length: int) -> None:
    moves = random_moves(TTT, random.Random(seed), length)
    if moves is None:
        return
    state = TTT.replay(moves)
    exact = ExactSolver()
    for move, value in solve_state("tictactoe", state).items():
        child = state.play(move)
        expected = 1 if child.winner else 0 if child.is_terminal else -exact.value(child)
        assert value == expected, (moves, move)


def test_games_without_an_oracle_are_refused() -> None:
    assert oracle_for("nim") is None
    with pytest.raises(UnsupportedGameError, match="'nim' has no perfect-play oracle"):
        solve("nim")


def test_finished_games_are_refused() -> None:
    with pytest.raises(GameOverError):
        solve("tictactoe", "14253")


def test_missing_compiled_solver_is_one_clear_error() -> None:
    """Without the compiled module (blocked here as if never built) the Connect Four oracle refuses in one line."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['treelab._speedups'] = None\n"
            "from treelab.oracle import solve\n"
            "try:\n    solve('connect4', '44')\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
            "print(solve('tictactoe', '')[5])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    first, second = out.strip().splitlines()
    assert first.startswith("UnsupportedGameError the Connect Four oracle needs treelab's compiled solver")
    assert "reinstall" in first
    assert second == "0"  # tic-tac-toe needs no compiled part
