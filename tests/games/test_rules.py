"""The rules: treelab's games against the simple reference implementations in reference_games.py."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_games import REFERENCES, RefTicTacToe, random_game, replay, result_distribution

import treelab
from treelab.errors import GameOverError, IllegalMoveError, NotationError, UnknownGameError
from treelab.games import find_game

GAME_NAMES = ["connect4", "tictactoe"]
RANDOM_GAMES = {"connect4": 1500, "tictactoe": 3000}
SYMBOLS = {"X", "O", "."}


def board_cells(text: str) -> list[list[str]]:
    """The cell symbols of a board drawing, one list per line that shows cells (top row first)."""
    rows = []
    for line in text.splitlines():
        tokens = [t for t in line.split() if t in SYMBOLS]
        if tokens:
            rows.append(tokens)
    return rows


def assert_agrees(state, ref) -> None:
    """Every observable of the treelab ``state`` matches the reference position ``ref``."""
    moves = "".join(map(str, ref.moves))
    assert state.ply == len(ref.moves), moves
    assert state.legal_moves() == ref.legal_moves(), moves
    assert state.to_move == ref.to_move, moves
    assert state.winner == ref.winner, moves
    assert state.is_terminal == ref.is_terminal, moves
    assert state.winning_moves() == ref.winning_moves(), moves
    assert state.threats() == ref.threats(), moves
    assert board_cells(state.board()) == ref.cells_top_down(), moves
    assert str(state) == state.board()


def assert_one_line_message(exc: BaseException, *values: str) -> None:
    message = str(exc)
    assert message, "empty error message"
    assert "\n" not in message, message
    assert message[0] == message[0].lower(), f"message should start lowercase: {message}"
    assert "Traceback" not in message
    for value in values:
        assert value in message, f"{value!r} not named in {message!r}"


# -- every ply of thousands of random games ---------------------------------------------------


@pytest.mark.parametrize("name", GAME_NAMES)
def test_random_games_agree_with_reference_at_every_ply(name):
    game = find_game(name)
    rng = random.Random(f"agree-{name}")
    ref_to_key: dict = {}  # reference position -> treelab key
    key_to_ref: dict = {}  # treelab key -> reference position
    state_to_ref: dict = {}  # treelab state (its __eq__/__hash__) -> reference position
    first_moves: dict = {}  # reference position -> the first move sequence that reached it
    transpositions = 0
    results: Counter = Counter()
    for _ in range(RANDOM_GAMES[name]):
        ref = REFERENCES[name]()
        state = game.initial()
        while True:
            assert_agrees(state, ref)
            rk, k = ref.key(), state.key()
            hash(k)
            assert ref_to_key.setdefault(rk, k) == k, f"equal positions, different keys: {ref.moves}"
            assert key_to_ref.setdefault(k, rk) == rk, f"different positions, equal keys: {ref.moves}"
            assert state_to_ref.setdefault(state, rk) == rk, f"different positions, equal states: {ref.moves}"
            earlier = first_moves.setdefault(rk, tuple(ref.moves))
            if earlier != tuple(ref.moves):
                transpositions += 1
            # every move that is not legal is refused
            for move in range(1, game.num_moves + 1):
                if move not in ref.legal_moves():
                    with pytest.raises(IllegalMoveError):
                        state.play(move)
            if ref.is_terminal:
                break
            move = rng.choice(ref.legal_moves())
            ref.play(move)
            state = state.play(move)
        results[ref.winner] += 1
        # the end is the end: no move is accepted, and the game replays from its notation
        with pytest.raises(GameOverError):
            state.play(ref.moves[0])
        notation = "".join(map(str, ref.moves))
        assert game.replay(notation).key() == state.key()
        assert game.replay(notation) == state
    # the games really went everywhere: wins for both sides, draws (tic-tac-toe), transpositions
    assert results[1] > 0 and results[2] > 0
    if name == "tictactoe":
        assert results[None] > 0
    assert transpositions > 1000
    assert len(ref_to_key) == len(key_to_ref) == len(state_to_ref)


@pytest.mark.parametrize(
    ("name", "a", "b", "same"),
    [
        ("connect4", "1324", "2413", True),  # X in 1 and 2, O in 3 and 4
        ("connect4", "4455", "5544", True),
        ("connect4", "12", "21", False),
        ("connect4", "4", "44", False),
        ("connect4", "1122", "1221", False),  # same cells, swapped owners
        ("connect4", "", "4", False),
        ("tictactoe", "159", "951", True),
        ("tictactoe", "159", "195", False),
        ("tictactoe", "12", "21", False),
        ("tictactoe", "1234", "3214", True),
    ],
)
def test_transposition_keys(name, a, b, same):
    game = find_game(name)
    sa, sb = game.replay(a), game.replay(b)
    assert (sa.key() == sb.key()) is same
    assert (sa == sb) is same
    if same:
        assert hash(sa) == hash(sb)
    # and the reference agrees that these are (not) the same position
    ra, rb = replay(name, [int(m) for m in a]), replay(name, [int(m) for m in b])
    assert (ra.key() == rb.key()) is same


def test_connect4_and_tictactoe_states_never_equal():
    c4, ttt = find_game("connect4"), find_game("tictactoe")
    assert c4.initial() != ttt.initial()
    assert c4.replay("1") != ttt.replay("1")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(GAME_NAMES), data=st.data())
def test_any_move_sequence_agrees_with_reference(name, data):
    """Hypothesis drives the moves; illegal ones must be refused, legal ones must agree."""
    game = find_game(name)
    tries = data.draw(st.lists(st.integers(0, game.num_moves + 1), max_size=60))
    ref = REFERENCES[name]()
    state = game.initial()
    for move in tries:
        assert_agrees(state, ref)
        if move in ref.legal_moves():
            ref.play(move)
            state = state.play(move)
        else:
            expected = GameOverError if ref.is_terminal else IllegalMoveError
            with pytest.raises(expected):
                state.play(move)
            labels = "".join(map(str, [*ref.moves, move]))
            error = NotationError if not 1 <= move <= game.num_moves else expected
            with pytest.raises(error) as info:
                game.replay(labels)
            assert_one_line_message(info.value)
    assert_agrees(state, ref)


# -- the gamesolver.org positions -------------------------------------------------------------


def test_gamesolver_positions_replay(c4_positions):
    game = find_game("connect4")
    assert len(c4_positions) == 1000
    for moves, score in c4_positions:
        state = game.replay(moves)
        assert not state.is_terminal, moves
        assert state.winner is None
        assert state.ply == len(moves)
        cells = board_cells(state.board())
        assert sum(row.count("X") + row.count("O") for row in cells) == len(moves), moves
        ref = replay("connect4", [int(m) for m in moves])
        assert board_cells(state.board()) == ref.cells_top_down()
        assert state.winning_moves() == ref.winning_moves()
        # Pons' scoring: a win with the next disc scores (43 - moves) // 2, the most possible
        assert (score == (43 - len(moves)) // 2) == bool(state.winning_moves()), moves
        assert abs(score) <= (43 - len(moves)) // 2


# -- playouts ---------------------------------------------------------------------------------


def test_connect4_random_games_first_player_wins_about_56_percent():
    game = find_game("connect4")
    rng = random.Random(2024)
    start = game.initial()
    n = 5000
    results = Counter(game.playout(start, rng) for _ in range(n))
    assert set(results) <= {1, 2, None}
    # literature and the reference: about 55.6% / 44.2% / 0.2%; bands are about 4 sigma
    assert 0.528 < results[1] / n < 0.585, results
    assert 0.413 < results[2] / n < 0.470, results
    assert results[None] / n < 0.01, results
    assert start.key() == game.initial().key(), "playout changed the state"


def test_tictactoe_playouts_match_exact_distribution():
    game = find_game("tictactoe")
    exact = result_distribution(RefTicTacToe())
    assert math.isclose(exact[1], 0.5849, abs_tol=1e-3)
    assert math.isclose(exact[2], 0.2881, abs_tol=1e-3)
    assert math.isclose(exact[None], 0.1270, abs_tol=1e-3)
    rng = random.Random(99)
    n = 20000
    start = game.initial()
    results = Counter(game.playout(start, rng) for _ in range(n))
    assert set(results) <= {1, 2, None}
    for result, p in exact.items():
        sigma = math.sqrt(float(p) * (1 - float(p)) / n)
        assert abs(results[result] / n - float(p)) < 4.5 * sigma, (result, results)


def _check_playouts(game, state, ref, rng, n) -> None:
    exact = result_distribution(ref)
    results = Counter(game.playout(state, rng) for _ in range(n))
    impossible = set(results) - set(exact)
    assert not impossible, f"playout from {ref.moves} returned {impossible}, reachable: {set(exact)}"
    for result, p in exact.items():
        p = float(p)
        sigma = math.sqrt(p * (1 - p) / n)
        assert abs(results[result] / n - p) <= 4.5 * sigma + 1e-9, (ref.moves, result, results, exact)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_playouts_from_midgame_positions_match_exact_distribution(name):
    """Playouts from positions whose result distribution the reference can enumerate exactly."""
    game = find_game(name)
    rng = random.Random(f"midgame-{name}")
    checked = 0
    while checked < 25:
        if name == "connect4":
            ref = random_game(name, rng, max_moves=33)  # at most 9 empty cells left
            if ref.is_terminal or len(ref.moves) < 33:
                continue
        else:
            ref = random_game(name, rng, max_moves=rng.randrange(0, 8))
            if ref.is_terminal:
                continue
        state = game.replay(ref.moves)
        _check_playouts(game, state, ref, rng, 400)
        checked += 1


@pytest.mark.parametrize("name", GAME_NAMES)
def test_playout_from_finished_games(name):
    game = find_game(name)
    rng = random.Random(5)
    seen: set = set()
    while seen != {1, 2, None}:
        ref = random_game(name, rng)
        state = game.replay(ref.moves)
        assert state.is_terminal
        for _ in range(3):
            assert game.playout(state, rng) == ref.winner
        seen.add(ref.winner)


def test_playout_from_a_full_connect4_board_is_a_draw():
    rng = random.Random(0)
    while True:  # a drawn game, found by the reference
        ref = random_game("connect4", rng)
        if ref.winner is None:
            break
    game = find_game("connect4")
    state = game.replay(ref.moves)
    assert state.ply == 42 and state.is_terminal and state.winner is None
    assert state.legal_moves() == [] and state.winning_moves() == []
    assert game.playout(state, rng) is None
    with pytest.raises(GameOverError):
        state.play(4)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_playouts_are_reproducible_and_accept_numpy_generators(name):
    game = find_game(name)
    start = game.replay("45" if name == "connect4" else "5")
    first, second = random.Random(8), random.Random(8)
    a = [game.playout(start, first) for _ in range(200)]
    assert [game.playout(start, second) for _ in range(200)] == a
    assert len(set(a)) >= 2
    gen = np.random.default_rng(3)
    results = [game.playout(start, gen) for _ in range(200)]
    assert set(results) <= {1, 2, None}
    assert len(set(results)) >= 2
    again = np.random.default_rng(3)
    assert [game.playout(start, again) for _ in range(200)] == results


# -- notation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GAME_NAMES)
def test_notation_forms_parse_the_same(name):
    game = find_game(name)
    moves = (4, 4, 5, 3) if name == "connect4" else (5, 1, 9, 3)
    text = "".join(map(str, moves))
    forms = [
        text,
        ",".join(text),
        " ".join(text),
        ", ".join(text),
        f"  {text}  ",
        "/root/" + "/".join(text),
        "/root/" + "/".join(text) + "/",
        list(moves),
        [str(m) for m in moves],
        tuple(moves),
    ]
    for form in forms:
        assert game.parse(form) == moves, form
        assert game.replay(form) == game.replay(text), form
    # iterators are read once
    assert game.parse(iter(moves)) == moves
    assert game.replay(iter(moves)) == game.replay(text)
    assert game.replay(m for m in moves) == game.replay(text)
    assert game.notation(moves) == text
    for empty in ("", "root", "/root", "/", [], None):
        assert game.parse(empty) == ()
        assert game.replay(empty) == game.initial()


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(GAME_NAMES), seed=st.integers(0, 2**32), length=st.integers(0, 42))
def test_notation_round_trip_on_random_games(name, seed, length):
    game = find_game(name)
    ref = random_game(name, random.Random(seed), max_moves=length)
    moves = tuple(ref.moves)
    text = game.notation(moves)
    assert text == "".join(map(str, moves))
    for form in (text, ",".join(text), " ".join(text), "/root/" + "/".join(text), list(moves)):
        assert game.parse(form) == moves
    state = game.replay(text)
    assert_agrees(state, ref)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(GAME_NAMES),
    moves=st.one_of(
        st.text(max_size=12),
        st.lists(st.one_of(st.integers(-3, 12), st.text(max_size=3)), max_size=6),
    ),
)
def test_parse_accepts_moves_or_raises_notation_error(name, moves):
    """Whatever the input, parse returns valid moves or raises NotationError (never another error)."""
    game = find_game(name)
    try:
        parsed = game.parse(moves)
    except NotationError as exc:
        assert_one_line_message(exc)
        return
    assert all(isinstance(m, int) and 1 <= m <= game.num_moves for m in parsed)


@pytest.mark.parametrize(
    ("name", "moves", "error", "named"),
    [
        ("connect4", "8", NotationError, "8"),
        ("connect4", "0", NotationError, "0"),
        ("connect4", "x", NotationError, "x"),
        ("connect4", "44a", NotationError, "44a"),
        ("connect4", "4,4,9", NotationError, "9"),
        ("connect4", "/root/4/0", NotationError, "0"),
        ("connect4", [4, 8], NotationError, "8"),
        ("connect4", ["4", "x"], NotationError, "x"),
        ("connect4", "4²", NotationError, "²"),
        ("tictactoe", "0", NotationError, "0"),
        ("tictactoe", "10", NotationError, "10"),  # read as cells 1 and 0
        ("tictactoe", [10], NotationError, "10"),
        ("connect4", "4444444", IllegalMoveError, "4444444"),
        ("connect4", "1111111", IllegalMoveError, "1111111"),
        ("tictactoe", "55", IllegalMoveError, "55"),
        ("tictactoe", "1231", IllegalMoveError, "1231"),
        ("connect4", "12121213", GameOverError, "12121213"),  # X wins in column 1, then O moves
        ("connect4", "71212121" + "3", GameOverError, "712121213"),  # O wins in column 1, then X moves
        ("tictactoe", "1425367", GameOverError, "1425367"),  # X's top row, then more moves
    ],
)
def test_bad_sequences_raise_one_line_errors(name, moves, error, named):
    game = find_game(name)
    with pytest.raises(error) as info:
        game.replay(moves)
    assert_one_line_message(info.value, named)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, treelab.TreelabError)
    if error is not GameOverError:
        assert type(info.value) is error


def test_game_over_is_an_illegal_move():
    assert issubclass(GameOverError, IllegalMoveError)
    state = find_game("tictactoe").replay("14253")
    assert state.winner == 1
    with pytest.raises(GameOverError) as info:
        state.play(9)
    assert_one_line_message(info.value, "9")


@pytest.mark.parametrize("bad", ["chess", "connect5", "", "tic tac toe"])
def test_unknown_game(bad):
    with pytest.raises(UnknownGameError) as info:
        find_game(bad)
    assert_one_line_message(info.value, repr(bad))
    assert "connect4" in str(info.value)  # says what to use instead
    assert isinstance(info.value, KeyError)
    with pytest.raises(UnknownGameError):
        treelab.Tree(bad)


def test_find_game_names_and_aliases():
    c4, ttt = find_game("connect4"), find_game("tictactoe")
    assert c4.name == "connect4" and ttt.name == "tictactoe"
    assert find_game(" Connect4 ") is c4
    assert find_game(c4) is c4
    assert find_game("ttt") is ttt
    assert c4.num_moves == 7 and ttt.num_moves == 9


def test_illegal_state_play_messages():
    state = find_game("connect4").replay("444444")
    with pytest.raises(IllegalMoveError) as info:
        state.play(4)
    assert_one_line_message(info.value, "4")
    with pytest.raises(IllegalMoveError) as info:
        state.play(8)
    assert_one_line_message(info.value, "8")
    with pytest.raises(IllegalMoveError) as info:
        find_game("tictactoe").replay("5").play(5)
    assert_one_line_message(info.value, "5")


def test_reference_sanity():
    """The reference itself: known wins in every direction, in both games."""
    cases = {
        "4455667": 1,  # horizontal, bottom row
        "1212121": 1,  # vertical
        "71212121": 2,  # vertical, for O
        "12234334544": 1,  # diagonal /
        "76654554344": 1,  # the other diagonal (the mirror image)
        "1234567": None,  # alternating bottom row
        "1223343444": None,  # three on a diagonal
    }
    for moves, winner in cases.items():
        ref = replay("connect4", [int(m) for m in moves])
        assert ref.winner == winner, moves
        assert find_game("connect4").replay(moves).winner == winner, moves
    assert replay("tictactoe", [1, 4, 2, 5, 3]).winner == 1
    assert replay("tictactoe", [1, 3, 2, 5, 4, 7]).winner == 2  # O on the anti-diagonal
    assert replay("tictactoe", [5, 1, 9, 3, 2, 8, 4, 6, 7]).winner is None
    assert RefTicTacToe().legal_moves() == list(range(1, 10))
