"""Mistake rates on treelab's own judged positions (Pons' test protocol): the classes, the file, the runner.

The classes are checked against the exact solver and against Pons' own published scores
(``data/connect4/Test_L3_R1``); the stored per-move classes against the solver on a random sample;
the runner with a perfect player (no mistakes), a player that always picks the worst move (a mistake
exactly where one is possible) and real ``uct`` / stored-tree specs.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from paths import ROOT

from treelab.analysis.mistakes import (
    DEFAULT_POSITIONS,
    PONS_CLASSES,
    JudgedPosition,
    class_of,
    difficulty_of,
    format_position,
    judge_position,
    moves_left,
    parse_position,
    read_positions,
    split_of,
    stage_of,
)
from treelab.cli import cli
from treelab.errors import ImportFormatError, SpecError
from treelab.games import Game, State, find_game
from treelab.oracle import solve
from treelab.play.mistakes import mistake_rates, sample_per_class

GAME = find_game("connect4")


def perfect_length(state: State) -> tuple[int, int]:
    """(value for the player to move, moves to the end) under perfect play, by brute force: the winner wins
    as soon as it can, the loser lasts as long as it can (a few empty cells only)."""
    outcomes = []
    for move in state.legal_moves():
        child = state.play(move)
        if child.winner is not None:
            outcomes.append((1, 1))
        elif child.is_terminal:
            outcomes.append((0, 1))
        else:
            value, length = perfect_length(child)
            outcomes.append((-value, length + 1))
    return max(outcomes, key=lambda o: (o[0], -o[1] if o[0] > 0 else o[1]))


# -- the classes ------------------------------------------------------------------------------------------------


def test_stage_and_difficulty_boundaries_are_pons() -> None:
    assert [stage_of(n) for n in (0, 14, 15, 28, 29, 41)] == ["beginning", "beginning", "middle", "middle",
                                                              "end", "end"]
    assert [difficulty_of(n) for n in (1, 13, 14, 28, 29, 42)] == ["easy", "easy", "medium", "medium", "hard",
                                                                   "hard"]
    for bad in (-1, 42):
        with pytest.raises(ValueError, match="moves played"):
            stage_of(bad)
    with pytest.raises(ValueError, match="moves left"):
        difficulty_of(0)


@pytest.mark.parametrize(("moves", "score", "left", "name"), [
    ("445566", 18, 1, "beginning-easy"),   # the first player wins with their 4th disc, now
    ("1212127", 18, 1, "beginning-easy"),  # the second player wins at once in column 2
    ("44556", -18, 2, "beginning-easy"),   # two open threes below: the second player loses next move
])
def test_hand_checked_positions_against_the_solver(moves: str, score: int, left: int, name: str) -> None:
    position = judge_position(moves)
    assert position.score == score == max(solve("connect4", moves, score=True).values())
    assert (position.left, position.name) == (left, name)
    assert position.values == solve("connect4", moves)


def test_a_drawn_position_lasts_until_the_board_is_full(c4_positions: list[tuple[str, int]]) -> None:
    drawn = [moves for moves, score in c4_positions if score == 0][:3]
    assert drawn
    for moves in drawn:
        position = judge_position(moves)
        assert position.score == 0 and position.left == 42 - len(moves) == moves_left(0, len(moves))


def test_moves_left_is_the_length_of_perfect_play(c4_positions: list[tuple[str, int]]) -> None:
    """Pons' scores, turned into moves left, match a brute-force search that wins fast and loses slow."""
    late = [(moves, score) for moves, score in c4_positions if len(moves) >= 36][:25]
    assert len(late) >= 10 and {s > 0 for _, s in late} == {True, False}
    for moves, score in late:
        value, length = perfect_length(GAME.replay(moves))
        assert (score > 0) - (score < 0) == value, moves
        assert moves_left(score, len(moves)) == length, moves


def test_pons_published_end_easy_set_is_end_easy_here(c4_positions: list[tuple[str, int]]) -> None:
    """Test_L3_R1 is Pons' end-easy set: every one of its scores gives an end position with < 14 moves left."""
    assert Counter(class_of(len(m), moves_left(s, len(m))) for m, s in c4_positions) == {"end-easy": 1000}
    for moves, score in random.Random(3).sample(c4_positions, 8):
        assert judge_position(moves).score == score


def test_impossible_scores_are_refused() -> None:
    with pytest.raises(ValueError, match="impossible"):
        moves_left(21, 10)  # a win with the first disc, after ten are down
    with pytest.raises(ValueError, match="impossible"):
        moves_left(-20, 3)


# -- the file -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def positions() -> list[JudgedPosition]:
    return read_positions()


def test_the_file_holds_both_halves_of_every_class(positions: list[JudgedPosition]) -> None:
    counts = Counter((p.name, p.split) for p in positions)
    assert {p.name for p in positions} == set(PONS_CLASSES)
    for name in PONS_CLASSES:
        assert counts[name, "dev"] >= 40 and counts[name, "test"] >= 40, name
    assert all(p.split == split_of(p.moves) for p in positions)
    assert {split_of(m) for m in ("1", "2", "3", "4", "5", "6", "7")} == {"dev", "test"}
    keys = [GAME.position_key(GAME.replay(p.moves)) for p in positions]
    assert len(set(keys)) == len(keys), "a position (or its mirror image) is in the file twice"
    assert len({p.moves[:6] for p in positions if p.played >= 6}) > 300, "the positions come from varied games"


def test_the_stored_classes_agree_with_the_solver(positions: list[JudgedPosition]) -> None:
    """A random sample of the cheaper lines (16+ discs) judged again from scratch."""
    sample = random.Random(7).sample([p for p in positions if p.played >= 16], 12)
    for stored in sample:
        again = judge_position(stored.moves)
        assert (again.score, dict(again.values), again.name) == (stored.score, dict(stored.values), stored.name)


def test_lines_round_trip_and_bad_lines_are_named(tmp_path: Path) -> None:
    position = judge_position("445566")
    line = format_position(position)
    assert line == "445566 18 1 beginning-easy dev WWWWWWW"
    assert parse_position(line) == position
    for bad, why in [("445566 18 1 beginning-easy dev", "is not"), ("445566 18 2 beginning-easy dev WWWWWWW", "LEFT"),
                     ("445566 18 1 middle-easy dev WWWWWWW", "CLASS"), ("4455667 18 1 beginning-easy dev WWWWWWW",
                                                                       "over"),
                     ("445566 18 1 beginning-easy dev LLLLLLL", "SCORE"), ("445566 18 1 beginning-easy x WWWWWWW",
                                                                            "SPLIT")]:
        path = tmp_path / "bad.txt"
        path.write_text("# a comment\n" + bad + "\n")
        with pytest.raises(ImportFormatError, match=rf"bad.txt:2: .*{why}"):
            read_positions(path)
    with pytest.raises(ImportFormatError, match="split 'train'"):
        read_positions(split="train")


# -- the runner ---------------------------------------------------------------------------------------------------


class OraclePlayer:
    """Plays the solver's best move (``worst=False``) or its worst one."""

    def __init__(self, worst: bool = False) -> None:
        self.worst = worst
        self.name = "worst" if worst else "perfect"

    def new_game(self, game: Game) -> None:
        return None

    def choose(self, state: State, moves: object) -> int:
        values = solve("connect4", GAME.notation(list(moves)))  # type: ignore[call-overload]
        pick = min if self.worst else max
        return pick(values, key=lambda m: values[m])


@pytest.fixture(scope="module")
def cheap(positions: list[JudgedPosition]) -> list[JudgedPosition]:
    """Positions the solver settles at once (16+ discs: the middle and end classes)."""
    return sample_per_class([p for p in positions if p.played >= 16], 6)


def test_a_perfect_player_makes_no_mistake_and_the_worst_one_errs_wherever_it_can(cheap: list[JudgedPosition]) -> None:
    assert len(cheap) == 18
    perfect = mistake_rates(OraclePlayer(), cheap)
    assert perfect.player == "perfect" and sum(r.positions for r in perfect.classes) == len(cheap)
    assert [r.mistakes for r in perfect.classes] == [0] * len(perfect.classes)
    worst = mistake_rates(OraclePlayer(worst=True), cheap)
    for row in worst.classes:
        mine = [p for p in cheap if p.name == row.name]
        assert row.mistakes == row.decisive == sum(p.decisive for p in mine), row.name
        assert row.decisive_rate == (1.0 if row.decisive else 0.0)
        low, high = row.ci95
        assert low <= row.rate <= high
    assert any(r.mistakes for r in worst.classes) and any(r.decisive < r.positions for r in worst.classes)


def test_a_real_uct_spec_end_to_end_replays_with_its_seed(positions: list[JudgedPosition]) -> None:
    few = sample_per_class([p for p in positions if p.split == "test"], 2)
    seen = []
    report = mistake_rates("uct:iterations=50", few, seed=5, on_verdict=seen.append)
    assert report.player == "uct:iterations=50" and len(report.verdicts) == len(few) == 12
    assert seen == list(report.verdicts)
    assert [r.name for r in report.classes] == list(PONS_CLASSES) and {r.positions for r in report.classes} == {2}
    for position, verdict in zip(few, report.verdicts, strict=True):
        assert verdict.move in position.values and verdict.mistake == position.is_mistake(verdict.move)
    assert mistake_rates("uct:iterations=50", few, seed=5).verdicts == report.verdicts
    data = json.loads(json.dumps(report.to_dict()))
    assert data["classes"][0]["positions"] == 2 and len(data["verdicts"]) == 12
    with pytest.raises(SpecError, match="split"):
        mistake_rates("uct:iterations=50", few, split="train")
    with pytest.raises(SpecError, match="unknown player"):
        mistake_rates("nobody", few)


def test_a_stored_tree_is_searched_read_only(tmp_path: Path, positions: list[JudgedPosition]) -> None:
    db = tmp_path / "tree.db"
    result = CliRunner().invoke(cli, ["train", "connect4", "--db", str(db), "--games", "2", "--iterations", "30",
                                      "--seed", "1", "-q"])
    assert result.exit_code == 0, result.output
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    few = sample_per_class(positions, 1)
    report = mistake_rates(f"uct:iterations=40,db={db}", few, seed=2)
    assert len(report.verdicts) == 6 and all(v.move in p.values for p, v in zip(few, report.verdicts, strict=True))
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_the_benchmark_prints_a_table_and_json(tmp_path: Path, positions: list[JudgedPosition]) -> None:
    small = tmp_path / "small.txt"
    small.write_text("\n".join(format_position(p) for p in sample_per_class(positions, 2)) + "\n")
    out = tmp_path / "out.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "mistakes.py"), "--player", "uct:iterations=30",
                           "--player", "random", "--positions", str(small), "--split", "dev", "--json", str(out)],
                          capture_output=True, text=True, timeout=120, check=True)
    lines = done.stdout.splitlines()
    assert lines[1].startswith("| player | begin-easy |") and lines[3].startswith("| uct:iterations=30 |")
    assert lines[4].startswith("| random |") and "published, Pons' positions" in lines[5]
    data = json.loads(out.read_text())
    assert [r["player"] for r in data["reports"]] == ["uct:iterations=30", "random"]
    assert sum(c["positions"] for c in data["reports"][0]["classes"]) == sum(p.split == "dev" for p in
                                                                             sample_per_class(positions, 2))


def test_the_default_file_is_the_shipped_one() -> None:
    assert DEFAULT_POSITIONS == ROOT / "data" / "connect4" / "mistakes" / "positions.txt"


def test_the_generator_judges_one_half_only_and_the_merge_keeps_each_runs_counts(tmp_path: Path) -> None:
    script = str(ROOT / "benchmarks" / "mistake_positions.py")
    part = tmp_path / "part.txt"
    subprocess.run([sys.executable, script, "--seed", "5", "--max-games", "4", "--per-stage", "0", "2", "2",
                    "--kinds", "random", "heuristic", "--half", "dev", "--out", str(part)],
                   capture_output=True, text=True, timeout=300, check=True)
    header = [line for line in part.read_text().splitlines() if line.startswith("#")]
    assert header[1].startswith("# made by:") and header[1].endswith("--half dev")
    counts = dict(item.rsplit(" ", 1) for item in header[2][2:].split(", "))
    kept = read_positions(part)
    assert kept and all(p.split == "dev" for p in kept)  # the test half's positions were not judged...
    assert int(counts["other_half"]) > 0 and int(counts["judged"]) == len(kept)  # ...but counted
    merged = tmp_path / "merged.txt"
    subprocess.run([sys.executable, script, "--per-class", "100", "--merge", str(part), str(part), "--out",
                    str(merged)], capture_output=True, text=True, timeout=120, check=True)
    assert read_positions(merged) == kept  # the same positions once (repeats dropped), in the rule's halves
    assert [line for line in merged.read_text().splitlines() if line.startswith("#")][1:5] == header[1:3] * 2
