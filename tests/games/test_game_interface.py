"""The game interface is all that search, evaluators and diagrams need: a new game touches only games/."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

import treelab
from treelab.games import BoardLook, Game, State
from treelab.mcts.evaluators import HeuristicEvaluator, generic_weights
from treelab.view.dot import to_dot
from treelab.view.style import board_label

PACKAGE = Path(treelab.__file__).parent
PILE = 7


class TakeState(State):
    """A pile of counters; each move takes 1 or 2; whoever takes the last one wins."""

    __slots__ = ("pile", "ply")
    game: Take

    def __init__(self, pile: int = PILE, ply: int = 0) -> None:
        self.pile, self.ply = pile, ply

    @property
    def to_move(self) -> int:
        return 1 + (self.ply & 1)

    @property
    def winner(self) -> int | None:
        return (2 - (self.ply & 1)) if self.pile == 0 else None

    @property
    def is_terminal(self) -> bool:
        return self.pile == 0

    def legal_moves(self) -> list[int]:
        return [m for m in (1, 2) if m <= self.pile]

    def play(self, move: int) -> TakeState:
        if move not in self.legal_moves():
            raise treelab.errors.IllegalMoveError(f"take {move!r} is not possible here")
        return TakeState(self.pile - move, self.ply + 1)

    def key(self) -> tuple[int, int]:
        return (self.pile, self.ply)

    def board(self) -> str:
        return f"pile <{self.pile}>\n" + "o" * self.pile

    def winning_moves(self) -> list[int]:
        return [m for m in self.legal_moves() if m == self.pile]

    def threats(self) -> list[int]:
        return self.winning_moves()  # the same pile wins for whoever moves


class Take(Game):
    """The protocol-only test game: nothing but the abstract interface and its required attributes."""

    name = "take"
    num_moves = 2
    example = "12"

    def initial(self) -> TakeState:
        return TakeState()

    def python_playout(self, state: State, rng: random.Random) -> int | None:
        while not state.is_terminal:
            state = state.play(rng.choice(state.legal_moves()))
        return state.winner


TakeState.game = Take()


class GridTakeState(TakeState):
    """The same game drawn as a row of cells (who took each counter), with the default look."""

    __slots__ = ()

    def grid(self) -> tuple[tuple[int, ...], ...]:
        return (tuple([1] * (PILE - self.pile) + [0] * self.pile),)


def test_a_game_with_only_the_required_interface_is_searched_drawn_and_evaluated() -> None:
    game = TakeState.game
    tree = treelab.Tree(game)
    rng = random.Random(5)
    for _ in range(60):
        state, moves = game.initial(), []
        while not state.is_terminal:
            move = rng.choice(state.legal_moves())
            moves.append(move)
            state = state.play(move)
        tree.record(moves, winner=state.winner)
    assert tree.root.nb_visit == 60
    text = to_dot(tree, depth=1)
    root = next(line for line in text.splitlines() if line.startswith('  "root" ['))
    assert "pile &lt;7&gt;<BR/>ooooooo" in root  # the text board, escaped
    assert "FIXEDSIZE" not in root
    priors = HeuristicEvaluator().priors(game.initial())
    assert priors == {1: 0.5, 2: 0.5}  # centrality defaults to 1.0 for every move
    assert HeuristicEvaluator().priors(TakeState(2)) == {2: 1.0}  # take the last two and win


def test_a_grid_without_a_look_is_drawn_with_the_default_marks() -> None:
    state = GridTakeState(4, 1)
    label = board_label(TakeState.game, state, "after 3")
    assert label.count('FIXEDSIZE="TRUE"') == PILE
    assert label.count("<B>X</B>") == 3 and label.count("&#160;") == 4
    assert f'BGCOLOR="{BoardLook().background}"' in label and 'COLSPAN="7"' in label


@pytest.mark.parametrize("name", ["connect4", "tictactoe"])
def test_grids_show_the_same_cells_as_the_text_boards(name: str) -> None:
    game = treelab.find_game(name)
    state = game.replay(game.example)
    symbols = ".XO"
    drawn = [[symbols[who] for who in row] for row in state.grid()]
    text = [line.split() for line in state.board().splitlines() if set(line.split()) <= set(symbols)]
    assert drawn == text


@pytest.mark.parametrize("name", ["connect4", "tictactoe"])
def test_fast_prior_weights_equal_the_generic_rule(name: str) -> None:
    game = treelab.find_game(name)
    rng = random.Random(3)
    checked = 0
    for _ in range(60):
        state = game.initial()
        while not state.is_terminal:
            fast = state.prior_weights(2.0, 0.02)
            if fast is not None:
                assert fast == pytest.approx(generic_weights(state, 2.0, 0.02)), state.board()
                checked += 1
            state = state.play(rng.choice(state.legal_moves()))
    assert checked > 0 if name == "connect4" else checked == 0


def test_no_module_outside_games_names_a_concrete_game() -> None:
    """Search, evaluators and diagrams use the interface: adding a game touches only games/."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "games":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and any(
                part in ("connect4", "tictactoe") for part in node.module.split(".")
            ):
                offenders.append(f"{path.relative_to(PACKAGE)}: from {node.module}")
            if isinstance(node, ast.Name) and node.id.startswith(("ConnectFour", "TicTacToe")):
                offenders.append(f"{path.relative_to(PACKAGE)}: {node.id}")
    assert offenders == []
