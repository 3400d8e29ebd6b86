"""Policy/value models: fitted from a real self-play tree, saved, loaded, refused, and searched with."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import assert_clean_error, run

import treelab
from tests.games.test_bring_your_own_game import Heap
from treelab.errors import (
    FitError,
    GameMismatchError,
    ModelFileError,
    ModelMismatchError,
    NoEncodingError,
    NotATreelabDatabaseError,
)
from treelab.games import GAMES, find_game, registry
from treelab.learn.dataset import augment, build_dataset, candidates
from treelab.learn.model import load_model
from treelab.mcts.dispatch import puct_search
from treelab.mcts.evaluators import Evaluation, ModelEvaluator, uniform_priors
from treelab.mcts.uct import Limit
from treelab.nodes import Proof, mean_reward
from treelab.store.rows import read_fit_rows


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tic-tac-toe tree grown by 120 self-play games, and a model fitted from it."""
    base = tmp_path_factory.mktemp("model")
    db, out = base / "ttt.db", base / "ttt.npz"
    treelab.train("tictactoe", db, games=120, iterations=300, seed=7, progress=False)
    treelab.fit(db, out, min_visits=40, hidden=(64, 32), epochs=80, seed=1)
    return db, out


def test_fitted_policy_plays_the_right_moves(trained: tuple[Path, Path]) -> None:
    _, out = trained
    model = load_model(out, "tictactoe")
    game = find_game("tictactoe")

    def top(moves: str) -> int:
        priors, _ = model.predict(game.replay(moves))
        return max(priors, key=lambda m: priors[m])

    assert top("1425") == 3  # X completes the top row
    assert top("152") == 3  # O blocks X's top row
    assert top("") == 5  # the centre: the most selected first move of a self-play tree
    _, won = model.predict(game.replay("1425"))
    _, lost = model.predict(game.replay("14253"[:-1] + "7"))  # X played 7 instead of 3, O to move wins at 6
    assert won > 0.6 and lost > 0.6  # each for the player to move, who can win at once


def test_model_file_records_its_training(trained: tuple[Path, Path]) -> None:
    db, out = trained
    model = load_model(out)
    info = model.info
    assert model.game == "tictactoe" and model.encoding == "tictactoe-planes-v1" and model.feature_shape == (2, 3, 3)
    assert info["source_db"] == str(db.resolve()) and info["source_nodes"] == treelab.info(db)["nodes"]
    assert info["examples"] == 8 * (info["positions"] - info["heldout_positions"])  # the square's 8 symmetries
    assert info["treelab_version"] == treelab.__version__ and info["library"].startswith("scikit-learn")
    held = info["metrics"]["heldout"]
    assert held["examples"] == info["heldout_positions"] > 0
    assert held["value_sign_accuracy"] >= 0.7 and held["policy_top1"] >= 0.6


def test_round_trip_keeps_weights_and_predictions(trained: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = trained
    model = load_model(out)
    copy = model.save(tmp_path / "copy.npz")
    again = load_model(tmp_path / "copy.npz")
    assert again.meta() == model.meta() and copy.path == str(tmp_path / "copy.npz")
    for a, b in zip(model.weights + model.biases, again.weights + again.biases, strict=True):
        assert np.array_equal(a, b)
    state = find_game("tictactoe").replay("51")
    assert again.predict(state) == model.predict(state)
    batch = model.predict_many([state, state.play(9)])
    assert batch[0][0] == pytest.approx(model.predict(state)[0]) and len(batch) == 2


def test_bad_model_files_are_one_clear_error(trained: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = trained
    with pytest.raises(ModelMismatchError, match="fitted for 'tictactoe', not 'connect4'"):
        load_model(out, "connect4")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a model at all")
    with pytest.raises(ModelFileError, match="is not a treelab model file"):
        load_model(garbage)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    with pytest.raises(ModelFileError, match="is not a treelab model file"):
        load_model(cut)
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, W0=np.zeros((18, 10)))
    with pytest.raises(ModelFileError, match="no readable meta"):
        load_model(foreign)
    with pytest.raises(ModelFileError, match="no such model file"):
        load_model(tmp_path / "missing.npz")
    for args in (["--moves", "4", "--model", str(out)], ["--model", str(garbage)]):
        result = run("analyse", "connect4", "--algorithm", "puct", "--iterations", "10", *args)
        assert_clean_error(result, "model" if "--moves" in args else "not a treelab model file")
    assert_clean_error(run("analyse", "tictactoe", "--model", str(out)), "guides PUCT only")
    assert_clean_error(run("arena", "connect4", "--a", f"puct:iterations=10,model={out}", "--b", "random",
                           "--games", "2"), "fitted for 'tictactoe'")
    assert_clean_error(run("arena", "tictactoe", "--a", f"puct:model={out},evaluator=rollout", "--b", "random",
                           "--games", "2"), "model=")


def test_fit_refuses_and_writes_nothing(trained: tuple[Path, Path], tmp_path: Path) -> None:
    db, out = trained
    target = tmp_path / "new.npz"
    with pytest.raises(GameMismatchError):
        treelab.fit(db, target, game="connect4")
    with pytest.raises(FitError, match="lower --min-visits"):
        treelab.fit(db, target, min_visits=10**9)
    assert not target.exists() and list(tmp_path.iterdir()) == []
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"precious data, not a model")
    assert_clean_error(run("fit", str(db), "-o", str(junk), "--epochs", "1"), "not a treelab model file")
    assert junk.read_bytes() == b"precious data, not a model"
    c4 = tmp_path / "c4.db"
    treelab.train("connect4", c4, games=2, iterations=30, seed=1, progress=False)
    mine = tmp_path / "mine.npz"
    shutil.copy(out, mine)
    before = mine.read_bytes()
    assert_clean_error(run("fit", str(c4), "-o", str(mine), "--min-visits", "1"), "fitted for 'tictactoe'")
    assert mine.read_bytes() == before
    assert_clean_error(run("fit", str(out), "-o", str(tmp_path / "x.npz")), "not a treelab database")
    with pytest.raises(NotATreelabDatabaseError):
        treelab.fit(out, tmp_path / "x.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c4.db", "junk.npz", "mine.npz"]


def test_a_game_without_encoding_cannot_be_fitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "GAMES", dict(GAMES))
    treelab.register_game(Heap.game)
    db = tmp_path / "sub.db"
    treelab.train("subtraction", db, games=5, iterations=50, seed=1, progress=False)
    with pytest.raises(NoEncodingError, match="'subtraction' has no input encoding"):
        treelab.fit(db, tmp_path / "m.npz", min_visits=1)
    assert_clean_error(run("fit", str(db), "-o", str(tmp_path / "m.npz"), "--min-visits", "1"), "no input encoding")
    assert not (tmp_path / "m.npz").exists()


def test_model_guides_a_real_puct_search_and_game(trained: tuple[Path, Path]) -> None:
    _, out = trained
    result = run("analyse", "tictactoe", "--moves", "152", "--algorithm", "puct", "--model", str(out),
                 "--iterations", "60", "--seed", "1", "--json")
    data = json.loads(result.output)
    assert data["best_move"] == "3" and 0.0 <= data["model_value"] <= 1.0
    priors = {ch["move"]: ch["model_prior"] for ch in data["children"]}
    assert sum(priors.values()) == pytest.approx(1.0, abs=1e-4) and max(priors, key=priors.__getitem__) == "3"
    plain = json.loads(run("analyse", "tictactoe", "--moves", "152", "--iterations", "60", "--json").output)
    assert "model_value" not in plain and all("model_prior" not in ch for ch in plain["children"])
    match = treelab.play_match("tictactoe", f"puct:iterations=40,model={out}", "random", games=10, seed=3)
    assert match.b_wins == 0 and match.a_wins >= 7
    evaluator = treelab.find_evaluator(f"model:{out}")
    assert isinstance(evaluator, ModelEvaluator) and evaluator.refresh() is False
    priors_now = evaluator(find_game("tictactoe").replay("1"), random.Random(0)).priors
    assert set(priors_now) == set(range(2, 10))


def test_refresh_reads_a_refitted_model(trained: tuple[Path, Path], tmp_path: Path) -> None:
    db, out = trained
    path = tmp_path / "live.npz"
    shutil.copy(out, path)
    evaluator = ModelEvaluator(path, game="tictactoe")
    first = evaluator.model
    treelab.fit(db, path, min_visits=200, hidden=(16,), epochs=3, seed=5)
    assert evaluator.refresh() is True and evaluator.model is not first
    assert evaluator.model.info["min_visits"] == 200 and evaluator.refresh() is False


def test_fit_takes_its_config_as_fitting_and_the_old_name_with_a_warning(trained: tuple[Path, Path]) -> None:
    db, _ = trained
    settings = treelab.FitConfig(min_visits=200, hidden=(8,), epochs=2, seed=3)
    new = treelab.fit(db, None, fitting=settings)
    with pytest.warns(DeprecationWarning, match=r"fit\(config=...\) is now fit\(fitting=...\)"):
        old = treelab.fit(db, None, config=settings)
    assert new.info["min_visits"] == old.info["min_visits"] == 200
    assert all((a == b).all() for a, b in zip(new.weights, old.weights, strict=True))  # the same fit
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="give fitting= only"):
        treelab.fit(db, None, fitting=settings, config=treelab.FitConfig(min_visits=5))


def test_cli_fit_reports_and_writes_json(trained: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = trained
    out = tmp_path / "cli.npz"
    result = run("fit", str(db), "-o", str(out), "--min-visits", "100", "--hidden", "16", "--epochs", "3", "--json")
    assert result.exit_code == 0, result.output
    meta = json.loads(result.output.strip().splitlines()[-1])
    assert meta["game"] == "tictactoe" and meta["layers"] == [16, 10] and meta["min_visits"] == 100
    assert load_model(out).meta() == meta
    text = run("fit", "--db", str(db), "-o", str(out), "--min-visits", "100", "--hidden", "8", "--epochs", "2")
    assert "held-out" in text.output and "policy top-1" in text.output
    assert_clean_error(run("fit", str(db), "-o", str(out), "--hidden", "8,x"), "'8,x'")
    blended = run("fit", str(db), "-o", str(out), "--min-visits", "100", "--hidden", "8", "--epochs", "2",
                  "--outcome", "0.5", "--json")
    assert blended.exit_code == 0 and json.loads(blended.output.strip().splitlines()[-1])["outcome"] == 0.5
    assert_clean_error(run("fit", str(db), "-o", str(out), "--outcome", "2"), "2")


@pytest.mark.parametrize("name", ["connect4", "tictactoe"])
def test_symmetries_map_positions_onto_their_images(name: str) -> None:
    game = find_game(name)
    rng = random.Random(4)
    for _ in range(20):
        state, moves = game.initial(), []
        for _ in range(rng.randrange(1, 8)):
            if state.is_terminal:
                break
            moves.append(rng.choice(state.legal_moves()))
            state = state.play(moves[-1])
        for sym in game.symmetries:
            image_of = {sym.moves[j] + game.first_move: j + game.first_move for j in range(game.num_moves)}
            image = game.replay([image_of[m] for m in moves])
            assert np.array_equal(image.features().ravel(), state.features().ravel()[list(sym.features)]), sym.name
    assert len(game.symmetries) == {"connect4": 1, "tictactoe": 7}[name]


@pytest.mark.openspiel
def test_features_are_seen_by_the_player_to_move() -> None:
    c4 = find_game("connect4")
    after = c4.replay("4")
    assert after.features().shape == c4.feature_shape == (4, 6, 7)
    assert after.features()[1, 5, 3] == 1 and after.features()[0].sum() == 0  # the opponent's disc, bottom centre
    assert c4.replay("44").features()[0, 5, 3] == 1
    threat = c4.replay("11223").features()  # X holds the bottom of columns 1-3; O to move
    assert threat[3].tolist() == [[0] * 7] * 5 + [[0, 0, 0, 1, 0, 0, 0]]  # X's threat: the bottom of column 4
    assert threat[2].sum() == 0 and threat[1].sum() == 3 and threat[0].sum() == 2
    assert c4.replay("112233").features()[2, 5, 3] == 1  # X to move: now its own threat
    nim = find_game("nim")
    assert nim.replay("d7").features().tolist()[3] == [1.0] + [0.0] * 7
    pytest.importorskip("pyspiel")
    spiel = find_game("openspiel:tic_tac_toe")
    state = spiel.replay("4")
    assert spiel.first_move == 0 and spiel.encoding == "openspiel-observation:openspiel:tic_tac_toe"
    assert state.features().shape == spiel.feature_shape
    expected = state.spiel_state.observation_tensor(state.spiel_state.current_player())
    assert state.features().ravel().tolist() == expected


def test_examples_take_selections_means_and_proofs(tmp_path: Path) -> None:
    tree = treelab.Tree("tictactoe")
    for _ in range(6):
        tree.record("14253", winner=1)  # X completes the top row
    for _ in range(2):
        tree.record("14257", winner=2)
    for _ in range(4):
        tree.record("14", winner=None)
    tree.find("14253").proven = Proof.WIN
    db = tmp_path / "hand.db"
    tree.save(db)
    game = find_game("tictactoe")
    data = build_dataset(game, read_fit_rows(db, min_visits=1, max_depth=None), min_visits=1, max_depth=None)
    assert len(data) == 5 and data.from_selections == 4  # root, 1, 14, 142 (1425 takes its proven win)

    def example(moves: str) -> int:
        found = np.flatnonzero((data.features == game.replay(moves).features().reshape(-1)).all(axis=1))
        assert len(found) == 1
        return int(found[0])

    i = example("1425")
    assert data.policy[i].tolist() == [0, 0, 1, 0, 0, 0, 0, 0, 0]  # the proven win takes it all
    assert data.value[i] == pytest.approx(0.75)  # O (who moved in) won 2 of 8: X to move expects 6 of 8
    j = example("14")
    assert data.policy[j][1] == 1.0 and data.value[j] == pytest.approx((6 + 2) / 12)  # X's wins and half the draws
    assert data.legal[j].sum() == 7 and not data.legal[j][0] and not data.legal[j][3]
    deep = build_dataset(game, read_fit_rows(db, min_visits=1, max_depth=2), min_visits=1, max_depth=2)
    assert len(deep) == 3  # the root, 1 and 14
    augmented = augment(deep, game)
    assert len(augmented) == 8 * 3 and augmented.policy.sum(axis=1).tolist() == [1.0] * 24


def test_value_targets_count_the_value_sums_a_model_guided_search_stored(tmp_path: Path) -> None:
    # PUCT keeps an evaluator's real values as value sums (each visit a draw plus v/2): the value target is the
    # node's one mean (treelab.nodes.mean_reward), not its whole wins and draws alone (those are all 0.5 here).
    def leaning(state: object, rng: object) -> Evaluation:
        return Evaluation(uniform_priors(state), 0.8)  # the player to move expects 0.8 everywhere

    tree = treelab.Tree("tictactoe")
    puct_search(tree, limit=Limit(iterations=300), evaluator=leaning, rng=3, solver=False)
    db = tmp_path / "valued.db"
    tree.save(db)
    loaded = treelab.load(db)
    game = find_game("tictactoe")
    data = build_dataset(game, read_fit_rows(db, min_visits=5, max_depth=None), min_visits=5, max_depth=None)
    by_id = {node.node_id: node for node in loaded}
    checked = 0
    for i, node_id in enumerate(data.nodes.tolist()):
        node = by_id[node_id]
        if node.proven is not None:
            continue
        mover_mean = mean_reward(node.nb_win, node.nb_draw, node.nb_visit, node.value_sum)
        assert data.value[i] == pytest.approx(1.0 - mover_mean, abs=1e-6)  # for the player to move
        checked += 1
    assert checked >= 5 and loaded.root.value_sum != 0
    assert any(abs(v - 0.5) > 0.05 for v in data.value.tolist())  # the draws alone would say 0.5


def test_mix_blends_a_playout_into_the_value(trained: tuple[Path, Path]) -> None:
    _, out = trained
    state = find_game("tictactoe").replay("15")
    alone = ModelEvaluator(out)(state, random.Random(1)).value
    assert alone == load_model(out).predict(state)[1]
    results = {ModelEvaluator(out, mix=1.0)(state, random.Random(seed)).value for seed in range(30)}
    assert results <= {0.0, 0.5, 1.0} and len(results) >= 2  # a real playout's result each time
    half = ModelEvaluator(out, mix=0.5)(state, random.Random(2)).value
    assert min(abs(half - (alone + r) / 2) for r in (0.0, 0.5, 1.0)) < 1e-12
    assert_clean_error(run("arena", "tictactoe", "--a", f"puct:model={out},mix=2", "--b", "random", "--games", "2"),
                       "mix 2.0 must be in [0, 1]")
    no_model = run("arena", "tictactoe", "--a", "puct:mix=0.5", "--b", "random", "--games", "2")
    assert_clean_error(no_model, "needs model=")
    match = treelab.play_match("tictactoe", f"puct:iterations=40,model={out},mix=0.5", "random", games=4, seed=5)
    assert match.b_wins == 0


def test_outcome_share_averages_the_games_results_into_the_value_targets_they_passed(tmp_path: Path) -> None:
    # FitConfig.outcome: at a position the logged games passed through, their mean result (for the player to move)
    # takes that share of the value target ("z + q" at 0.5); a position no game reached keeps the node's mean.
    db = tmp_path / "played.db"
    treelab.train("tictactoe", db, games=30, iterations=60, seed=5, progress=False)
    game, tree = find_game("tictactoe"), treelab.load(db)
    results: dict[int, list[float]] = {}
    for row in treelab.read_games(db):
        moves = game.parse(row["moves"])
        for ply in range(len(moves) + 1):
            state = game.replay(moves[:ply])
            won = 0.5 if row["winner"] is None else float(row["winner"] == state.to_move)
            results.setdefault(tree.find(moves[:ply]).node_id, []).append(won)
    rows = read_fit_rows(db, min_visits=3, max_depth=None)
    alone = build_dataset(game, rows, min_visits=3, max_depth=None)
    half = build_dataset(game, rows, min_visits=3, max_depth=None, outcome=0.5)
    whole = build_dataset(game, rows, min_visits=3, max_depth=None, outcome=1.0)
    assert alone.nodes.tolist() == half.nodes.tolist() == whole.nodes.tolist()
    passed = untouched = 0
    for i, node_id in enumerate(alone.nodes.tolist()):
        node = next(n for n in tree if n.node_id == node_id)
        if node_id in results and node.proven is None:
            z = sum(results[node_id]) / len(results[node_id])
            assert whole.value[i] == pytest.approx(z, abs=1e-6)
            assert half.value[i] == pytest.approx((alone.value[i] + z) / 2, abs=1e-6)
            passed += 1
        else:
            assert half.value[i] == whole.value[i] == alone.value[i]
            untouched += 1
    assert passed >= 10 and untouched >= 10
    assert whole.value[0] != alone.value[0]  # the root: every game passed it, and its mean is not their mean
    with pytest.raises(treelab.BudgetError, match=r"outcome 1\.5"):
        treelab.FitConfig(outcome=1.5)


def test_min_selections_keeps_only_the_positions_a_search_chose_from(trained: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    # FitConfig.min_selections: a position passed through by searches aimed elsewhere has visits but few
    # selections among its moves; only positions whose children were selected that often in all are learned from.
    db, _ = trained
    game, tree = find_game("tictactoe"), treelab.load(db)
    rows = read_fit_rows(db, min_visits=20, max_depth=None)
    every = build_dataset(game, rows, min_visits=20, max_depth=None)
    picked = {i for i, _ in candidates(rows, min_visits=20, max_depth=None, min_selections=250)}
    searched = build_dataset(game, rows, min_visits=20, max_depth=None, only=picked)
    chosen = {n.node_id: sum(k.nb_select for k in n.children_view) for n in tree}
    assert set(searched.nodes.tolist()) == {i for i in every.nodes.tolist() if chosen[i] >= 250}
    assert 0 < len(searched) < len(every)
    model = treelab.fit(db, None, min_visits=20, min_selections=250, hidden=(8,), epochs=2)
    assert model.info["min_selections"] == 250 and model.info["positions"] == len(searched)
    assert treelab.fit(db, None, min_visits=20, hidden=(8,), epochs=2).info["min_selections"] == 0
    with pytest.raises(FitError, match="--min-selections"):
        treelab.fit(db, None, min_visits=20, min_selections=10**9, hidden=(8,), epochs=2)
    with pytest.raises(treelab.BudgetError, match=r"min_selections -1"):
        treelab.FitConfig(min_selections=-1)
    out = tmp_path / "searched.npz"
    result = run("fit", str(db), "-o", str(out), "--min-selections", "250", "--hidden", "8", "--epochs", "2", "--json")
    assert result.exit_code == 0 and json.loads(result.output.strip().splitlines()[-1])["min_selections"] == 250
    assert_clean_error(run("fit", str(db), "-o", str(tmp_path / "none.npz"), "--min-selections", "1000000000"),
                       "1000000000 selections")
    assert not (tmp_path / "none.npz").exists()


def test_the_learning_rate_is_adams_step_recorded_in_the_model_and_checked(trained: tuple[Path, Path],
                                                                          tmp_path: Path) -> None:
    db, _ = trained
    default = treelab.fit(db, None, min_visits=20, hidden=(8,), epochs=2)
    assert default.info["learning_rate"] == treelab.FitConfig().learning_rate == 2e-3
    slow = treelab.fit(db, None, min_visits=20, hidden=(8,), epochs=2, learning_rate=1e-5)
    assert slow.info["learning_rate"] == 1e-5
    start = treelab.fit(db, None, min_visits=20, hidden=(8,), epochs=1, learning_rate=1e-9)  # barely moves
    moved = [float(np.abs(a - b).max()) for a, b in zip(default.weights, start.weights, strict=True)]
    crept = [float(np.abs(a - b).max()) for a, b in zip(slow.weights, start.weights, strict=True)]
    assert max(crept) < max(moved)  # the same seed's start: a smaller step goes less far from it
    for bad in (0, -0.1, 1.5, True):
        with pytest.raises(treelab.BudgetError, match=rf"learning_rate {bad!r}"):
            treelab.FitConfig(learning_rate=bad)
    out = tmp_path / "rate.npz"
    result = run("fit", str(db), "-o", str(out), "--learning-rate", "0.01", "--hidden", "8", "--epochs", "2", "--json")
    assert result.exit_code == 0 and load_model(out).info["learning_rate"] == 0.01
    assert_clean_error(run("fit", str(db), "-o", str(tmp_path / "none.npz"), "--learning-rate", "0"), "learning_rate 0")
    assert not (tmp_path / "none.npz").exists()
