"""Bring your own game: Nim (written against the protocol only) through every command, and the registry.

``register_game`` and the ``treelab.games`` entry point group are tested for
real: a game class in a module on ``sys.path`` and a ``.dist-info`` directory
declaring it, found by ``importlib.metadata`` as an installed package would be.
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
from functools import reduce
from operator import xor
from pathlib import Path

import pytest
from cli_helpers import assert_clean_error, run

from treelab import Limit, Tree, load, search
from treelab.errors import IllegalMoveError, NotationError, UnsupportedGameError
from treelab.games import GAMES, Game, Nim, State, find_game, register_game, registry


def _nim_sum(piles: tuple[int, ...]) -> int:
    return reduce(xor, piles, 0)


def test_nim_rules_against_bouton() -> None:
    game = find_game("nim")
    assert isinstance(game, Nim) and game.alternating
    state = game.replay("d7,c5")
    assert state.piles == (1, 3, 0, 0) and state.to_move == 1
    assert game.notation(game.parse("d7 c5")) == "d7,c5" and game.parse("/root/d7/c5") == game.parse("d7,c5")
    with pytest.raises(IllegalMoveError):
        game.replay("d7,d1")
    with pytest.raises(NotationError, match="'e1'"):
        game.parse("e1")
    rng = random.Random(1)
    for _ in range(300):  # the last to take wins: random games end with the last mover winning
        state = game.initial()
        while not state.is_terminal:
            last = state.to_move
            state = state.play(rng.choice(state.legal_moves()))
        assert state.winner == last


def test_uct_finds_boutons_winning_moves() -> None:
    game = find_game("nim")
    state = game.replay("d7")  # piles 1,3,5,0: nim-sum 7, the player to move wins by making it 0
    tree = Tree("nim")
    search(tree, "d7", limit=Limit(iterations=6000), solver=True, rng=2)
    node = tree.find("d7")
    assert node.proven == -1  # the mover into "d7" loses: the position is won for the player to move
    winners = {kid.name for kid in node.children_view if kid.proven == 1}
    good = {game.label(m) for m in state.legal_moves() if _nim_sum(state.play(m).piles) == 0}
    assert winners and winners <= good


def test_nim_through_every_command(tmp_path: Path) -> None:
    db = str(tmp_path / "nim.db")
    trained = run("train", "nim", "--db", db, "--games", "3", "--iterations", "60", "--seed", "1")
    assert trained.exit_code == 0, trained.output
    assert run("train", "nim", "--db", db, "--games", "1", "--iterations", "60", "--seed", "2").exit_code == 0
    assert "nim" in run("info", db).output
    analysed = run("analyse", "nim", "--moves", "d7", "--iterations", "400", "--seed", "1", "--json")
    data = json.loads(analysed.output)
    legal = {find_game("nim").label(m) for m in find_game("nim").replay("d7").legal_moves()}
    assert {ch["move"] for ch in data["children"]} == legal and data["moves"] == "d7"
    stats = json.loads(run("stats", db, "--json").output)
    assert stats["nodes"] == len(load(db))
    find_game("nim").replay(",".join(stats["principal_variation"]))
    out = tmp_path / "nim.svg"
    assert run("render", db, "--path", stats["principal_variation"][0], "--depth", "2", "-o", str(out)).exit_code == 0
    assert out.read_bytes().startswith(b"<?xml")
    match = json.loads(run("arena", "nim", "--a", "uct:iterations=200", "--b", "random", "--games", "4",
                           "--seed", "3", "--json", "--quiet").output)
    assert match["games"] == 4 and match["a_score"] >= 0.5
    growth = tmp_path / "growth.png"
    assert run("growth", db, "-o", str(growth)).exit_code == 0 and growth.read_bytes().startswith(b"\x89PNG")
    # a human game in the terminal: one object at a time, pile by pile (a line for every object, so
    # a legal line is always left); bad input and moves on emptied piles are explained and asked again
    typed = "zz\n" + "".join(f"{pile}1\n" * n for pile, n in zip("abcd", (1, 3, 5, 7), strict=True))
    played = run("play", "nim", "--iterations", "50", "--seed", "1", input=typed)
    assert played.exit_code == 0, played.output
    assert "not a nim move" in played.output and ("you win" in played.output or "the AI wins" in played.output)
    assert_clean_error(run("analyse", "nim", "--moves", "d8"), "'d8'")


class Heap(State):
    """A heap of pebbles; test-only, written against the protocol alone."""

    __slots__ = ("left", "ply")
    game: Subtraction

    def __init__(self, left: int = 10, ply: int = 0) -> None:
        self.left, self.ply = left, ply

    @property
    def to_move(self) -> int:
        return 1 + self.ply % 2

    @property
    def is_terminal(self) -> bool:
        return self.left == 0

    @property
    def winner(self) -> int | None:
        return (2 - self.ply % 2) if self.left == 0 else None

    def legal_moves(self) -> list[int]:
        return list(range(1, min(3, self.left) + 1))

    def play(self, move: int) -> Heap:
        if move not in self.legal_moves():
            raise IllegalMoveError(f"take {move!r} is not legal: take 1-{min(3, self.left)}")
        return Heap(self.left - move, self.ply + 1)

    def key(self) -> tuple[int, int]:
        return (self.left, self.ply % 2)

    def board(self) -> str:
        return "o" * self.left

    def winning_moves(self) -> list[int]:
        return [self.left] if self.left <= 3 else []

    def threats(self) -> list[int]:
        return self.winning_moves()


class Subtraction(Game):
    """The subtraction game: take 1-3 from a heap of 10; whoever takes the last wins."""

    name = "subtraction"
    num_moves = 3
    example = "31"

    def initial(self) -> Heap:
        return Heap()

    def python_playout(self, state: State, rng: random.Random) -> int | None:
        while not state.is_terminal:
            state = state.play(rng.choice(state.legal_moves()))
        return state.winner


Heap.game = Subtraction()  # type: ignore[assignment]


def test_register_game_makes_a_game_usable_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "GAMES", dict(GAMES))
    game = register_game(Heap.game)
    assert find_game("subtraction") is game
    db = str(tmp_path / "sub.db")
    assert run("train", "subtraction", "--db", db, "--games", "2", "--iterations", "50", "--seed", "1").exit_code == 0
    assert load(db).game is game
    result = json.loads(run("analyse", "subtraction", "--moves", "3", "--iterations", "300", "--seed", "1",
                            "--json").output)
    assert result["best_move"] == "3"  # 7 left: take 3, leaving a multiple of 4
    with pytest.raises(UnsupportedGameError, match="taken"):
        register_game(Subtraction())
    with pytest.raises(UnsupportedGameError, match="cannot be registered"):
        register_game(Heap.game, name="openspiel:x")
    with pytest.raises(UnsupportedGameError, match="not a treelab Game"):
        register_game(lambda: 42)  # type: ignore[arg-type,return-value]


def test_entry_points_add_games(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plugin_games.py").write_text(textwrap.dedent("""
        from treelab.games.nim import Nim, NimState

        class Pebbles(Nim):
            name = "pebbles"

        def make():
            return Pebbles()

        def broken():
            raise RuntimeError("boom")
    """))
    info = tmp_path / "plugin_games-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-games\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[treelab.games]\npebbles = plugin_games:make\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "GAMES", dict(GAMES))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    assert "pebbles" not in registry.GAMES  # entry points load when an unknown name is asked for
    game = find_game("pebbles")
    assert type(game).__name__ == "Pebbles" and game.name == "pebbles"
    result = json.loads(run("analyse", "pebbles", "--moves", "d7", "--iterations", "100", "--json").output)
    assert result["game"] == "pebbles"
    (info / "entry_points.txt").write_text("[treelab.games]\nbad = plugin_games:broken\n")
    monkeypatch.setattr(registry, "GAMES", dict(GAMES))
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    assert_clean_error(run("analyse", "bad"), "'bad'", "plugin_games:broken")
    sys.modules.pop("plugin_games", None)
