"""``treelab serve --model M --oracle``: the model's prior and value and perfect play beside each move, through
the real server; the keys are optional (absent without the flags) and nothing is renamed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from explorer_helpers import SAMPLE_C4, SAMPLE_TTT, copy_db, serving

import treelab
from treelab.cli import cli
from treelab.learn.fitting import FitConfig
from treelab.oracle import solve


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tic-tac-toe model fitted from the sample tree."""
    out = tmp_path_factory.mktemp("extras") / "ttt.npz"
    treelab.fit(SAMPLE_TTT, out, fitting=FitConfig(min_visits=5, hidden=(16,), epochs=5))
    return out


def test_the_model_and_the_oracle_beside_each_move(tmp_path: Path, model: Path) -> None:
    db = copy_db(SAMPLE_TTT, tmp_path / "t.db")
    game, fitted = treelab.find_game("tictactoe"), treelab.load_model(model)
    with serving(str(db), "--model", str(model), "--oracle") as server:
        for path in ("", "1", "15"):
            status, data = server.json(f"/api/node?path={path}")
            assert status == 200 and data["children"], data
            priors, value = fitted.predict(game.replay(path))
            assert data["model_value"] == pytest.approx(value, abs=1e-6)
            perfect = solve("tictactoe", path)
            for row in data["children"]:
                move = game.parse_move(row["move"])
                assert row["model_prior"] == pytest.approx(priors[move], abs=1e-6)
                assert row["oracle"] == perfect[move]
            assert {"nb_visit", "ucb1", "mean", "proven"} <= set(data["children"][0])  # nothing renamed
        status, _, page = server.get("/static/explorer.js")
        assert status == 200 and b"model_prior" in page and b"oracle" in page


def test_without_the_flags_the_answer_has_no_such_keys(tmp_path: Path) -> None:
    db = copy_db(SAMPLE_TTT, tmp_path / "t.db")
    with serving(str(db)) as server:
        status, data = server.json("/api/node?path=1")
    assert status == 200 and "model_value" not in data
    assert not any({"model_prior", "oracle"} & set(row) for row in data["children"])


def test_an_early_connect_four_position_beyond_the_budget_answers_null(tmp_path: Path) -> None:
    db = copy_db(SAMPLE_C4, tmp_path / "c4.db")
    with serving(str(db), "--oracle") as server:
        status, start = server.json("/api/node?path=")  # the empty board: far beyond a few seconds of solving
        assert status == 200 and start["children"] and all(row["oracle"] is None for row in start["children"])


@pytest.mark.parametrize("extra,needle", [(["--model", "MODEL"], "tictactoe"), (["--oracle"], "no perfect-play")])
def test_a_model_of_another_game_or_a_game_without_oracle_is_one_line(tmp_path: Path, model: Path,
                                                                        extra: list[str], needle: str) -> None:
    db = tmp_path / "nim.db"
    if "--oracle" in extra:
        treelab.train("nim", db, 2, iterations=20, seed=1, progress=False)
    else:
        db = copy_db(SAMPLE_C4, db)
    args = ["serve", str(db), *[str(model) if a == "MODEL" else a for a in extra], "--no-browser"]
    out = CliRunner().invoke(cli, args)
    lines = out.output.strip().splitlines()
    assert out.exit_code != 0 and len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0], out.output
