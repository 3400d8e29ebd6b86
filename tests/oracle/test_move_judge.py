"""Judging one move (treelab.oracle.move_judge) agrees with valuing every move.

The cheap judge solves the chosen move's child and then proves, by one
null-window search of the position, that no other move is better; once a
position's value is known, another move costs one null-window search of its
child. Checked on every tic-tac-toe position (by plain alpha-beta against the
memoised minimax values) and on Connect Four positions (gamesolver.org's late
positions and random middle-game ones) against the oracle's value of every move.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from solver_helpers import c4solver, needs_solver

from treelab.errors import BudgetError
from treelab.games import find_game
from treelab.oracle import OracleCache, move_judge, oracle_for
from treelab.oracle.minimax import is_optimal, move_values

C4 = find_game("connect4")
TTT = find_game("tictactoe")


def best_moves(values: dict[int, int]) -> set[int]:
    return {m for m, v in values.items() if v == max(values.values())}


def test_tictactoe_judge_agrees_on_every_position_and_move() -> None:
    judge = move_judge(oracle_for("tictactoe"))
    assert judge is is_optimal  # alpha-beta, not a comparison of the memoised values
    seen, level, wrong, judged = set(), [TTT.initial()], [], 0
    while level:
        nxt = []
        for state in level:
            if state.key() in seen or state.is_terminal:
                continue
            seen.add(state.key())
            best = best_moves(move_values(state))
            for move in state.legal_moves():
                judged += 1
                if judge(state, move) != (move in best):
                    wrong.append((state.key(), move))
                nxt.append(state.play(move))
        level = nxt
    assert wrong == []
    assert len(seen) == 4520  # every non-terminal position of tic-tac-toe (5,478 in all, 958 finished)
    assert judged > 16000


@needs_solver
def test_connect4_exceeds_is_the_weak_value(c4_positions) -> None:
    for moves, score in c4_positions[::25]:
        state = C4.replay(moves)
        weak = (score > 0) - (score < 0)
        for bound in (-1, 0):
            assert c4solver.exceeds(state.cur, state.mask, state.ply, bound) == (weak > bound), (moves, bound)
    with pytest.raises(ValueError, match="value 1 must be -1"):
        c4solver.exceeds(state.cur, state.mask, state.ply, 1)


def judge_every_move(moves: str | list[int], max_nodes: int | None = None) -> tuple[int, int]:
    """Each move of the position judged three ways; returns (optimal moves, other moves)."""
    state = C4.replay(moves)
    values = oracle_for("connect4", max_nodes=max_nodes)(state)
    best = best_moves(values)
    shared = oracle_for("connect4", max_nodes=max_nodes)  # the position's value learned by the first move judged
    for move in values:
        alone = oracle_for("connect4", max_nodes=max_nodes)  # knows nothing: the chosen child first
        assert alone.is_optimal(state, move) == (move in best), (moves, move, values)
        assert shared.is_optimal(state, move) == (move in best), (moves, move, values)
    return len(best), len(values) - len(best)


@needs_solver
def test_connect4_judge_agrees_on_late_positions(c4_positions) -> None:
    right = other = 0
    for moves, _ in c4_positions[::10]:
        r, o = judge_every_move(moves)
        right, other = right + r, other + o
    assert right > 100 and other > 100  # both verdicts were reached


@needs_solver
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(16, 24))
def test_connect4_judge_agrees_in_the_middle_game(seed: int, length: int) -> None:
    rng, state, moves = random.Random(seed), C4.initial(), []
    for _ in range(length):
        if state.is_terminal:
            return
        moves.append(rng.choice(state.legal_moves()))
        state = state.play(moves[-1])
    if state.is_terminal:
        return
    try:
        judge_every_move(moves, max_nodes=3_000_000)
    except BudgetError:
        return  # beyond this test's budget


@needs_solver
def test_connect4_judgements_are_kept_in_the_cache(tmp_path: Path, c4_positions) -> None:
    path = tmp_path / "oracle.sqlite"
    positions = [C4.replay(m) for m, _ in c4_positions[3::50]]
    with OracleCache(path) as cache:
        oracle = oracle_for("connect4", cache=cache)
        first = [oracle.is_optimal(s, m) for s in positions for m in s.legal_moves()]
        kept = len(cache)
    with OracleCache(path) as cache:
        again = oracle_for("connect4", cache=cache)
        again.solver = None  # any search would fail: only the file can answer
        assert [again.is_optimal(s, m) for s in positions for m in s.legal_moves()] == first
        assert len(cache) == kept
