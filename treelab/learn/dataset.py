"""Training examples from a stored tree: one per well-visited position, multiplied by the game's symmetries.

For a node with at least ``min_visits`` visits (and, with ``min_selections``, whose children were selected at
least that often: the positions a search was made from) that is not the end of a game:

- **input**: the position's :meth:`~treelab.games.State.features`, seen by the player to move;
- **policy target**: the children's selection counts (``nb_select``, the edge counts that moves
  are chosen from), normalised; where the children hold fewer than ``min_visits`` selections (a
  node only passed through by searches started deeper), their visits instead. A proof overrides
  both: the proven winning moves share it evenly; proven losing moves get nothing while another
  move is not proven lost;
- **value target**: the node's proof when known, else its mean reward (:func:`treelab.nodes.mean_reward`, value sums
  included), for the player to move,
  in [0, 1] (the model learns it as ``2 v - 1``). With ``root_value`` above 0, at a position where a logged game's
  search was made, the value that search found (``games.root_values``, averaged over the games that searched
  there) takes that share of the mean. The mean of a searched position also holds the searches made later in the
  same game, deeper on the line it went on to play; measured, that hindsight makes it the better target (its
  sign right in 80% of decided searched positions, the logged values' in 71%: ``docs/notes/learning-loop.md``),
  so ``root_value`` is 0 unless given. With ``outcome`` above 0, at a position the logged
  games passed through, the mean outcome of those games (1 won, 1/2 drawn, 0 lost, for the player to move)
  takes that share of the target: ``outcome`` 0.5 is the average of the two, the "z + q" target that
  small AlphaZero replications found better than either alone (AlphaZero itself learns the outcome ``z``;
  a node's mean ``q`` is a search's estimate, pulled towards the model's own values once it guides the search).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import DamagedDatabaseError, NoEncodingError, NotationError
from ..games import Game, State
from ..nodes import mean_reward
from ..store.rows import FitRows
from .bulk import bulk_arrays

__all__ = ["Dataset", "augment", "build_dataset", "bulk_dataset", "candidates", "game_outcomes", "logged_values",
           "reference_dataset", "selections"]

Paths = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]
"""Every logged game's path down the rows read: ``(nodes, games, depths)`` (see :func:`_game_paths`)."""


@dataclass(frozen=True, eq=False)
class Dataset:
    """Training examples as arrays, one row per position (before augmentation)."""

    features: npt.NDArray[np.float32]
    """``(n, features)``: each position's flat features."""
    policy: npt.NDArray[np.float32]
    """``(n, num_moves)``: the policy target (sums to 1 over legal moves)."""
    value: npt.NDArray[np.float32]
    """``(n,)``: the value target for the player to move, in [0, 1]."""
    legal: npt.NDArray[np.bool_]
    """``(n, num_moves)``: which moves are legal."""
    groups: npt.NDArray[np.int64]
    """``(n,)``: a number per distinct position (transpositions share one), for splitting without leaks."""
    visits: npt.NDArray[np.int64]
    """``(n,)``: each node's visits."""
    nodes: npt.NDArray[np.int64]
    """``(n,)``: each example's node id in the database."""
    proven: int
    """Examples whose value target is a proof."""
    from_selections: int
    """Examples whose policy target is the selection counts (the others: visits, or a proof)."""

    def __len__(self) -> int:
        return len(self.value)

    def take(self, index: npt.NDArray[np.int64]) -> Dataset:
        """The examples at ``index``."""
        return Dataset(self.features[index], self.policy[index], self.value[index], self.legal[index],
                       self.groups[index], self.visits[index], self.nodes[index], self.proven, self.from_selections)


def selections(fit_rows: FitRows) -> dict[int, int]:
    """Each node of ``fit_rows`` that has children: its children's selections summed, the simulations that chose a
    move there. A search made from a position gives it about the search's budget; a position only passed through
    (by a search made higher up that reached it a few times, or by searches made deeper in the same game, which
    visit it without choosing there) gets few."""
    chosen: dict[int, int] = {}
    for r in fit_rows.rows:
        if r[1] is not None:
            chosen[r[1]] = chosen.get(r[1], 0) + r[8]
    return chosen


def candidates(fit_rows: FitRows, *, min_visits: int, max_depth: int | None,
               min_selections: int = 0) -> list[tuple[int, int | None]]:
    """``(node id, created_game)`` of the nodes in ``fit_rows`` that may give an example: at least
    ``min_visits`` visits, at most ``max_depth`` deep, with children selected at least ``min_selections``
    times in all (the end of a game is only found when the example is built)."""
    deepest = max_depth if max_depth is not None else 1 << 62
    chosen = selections(fit_rows)
    return [(r[0], r[9]) for r in fit_rows.rows
            if r[4] >= min_visits and r[3] <= deepest and chosen.get(r[0], -1) >= min_selections]


def game_outcomes(game: Game, fit_rows: FitRows, paths: Paths | None = None) -> dict[int, tuple[int, float]]:
    """For each node of ``fit_rows`` that logged games passed through: ``(games, player one's score summed)``
    (a game scores 1 won, 1/2 drawn, 0 lost). A game is followed while its nodes are among the rows read
    (``paths``: the games' paths already followed, as :func:`logged_values` may share them)."""
    nodes, games, _ = _game_paths(game, fit_rows) if paths is None else paths
    scores = np.array([0.5 if winner not in (1, 2) else float(winner == 1) for _, winner, _ in fit_rows.games])
    return _summed(nodes, scores[games])


def logged_values(game: Game, fit_rows: FitRows, paths: Paths | None = None) -> dict[int, tuple[int, float]]:
    """For each node of ``fit_rows`` where a logged game's search left its value (``games.root_values``:
    :func:`treelab.mcts.summary.search_value`, for the player to move): ``(searches, their values summed)``
    (``paths``: as :func:`game_outcomes`)."""
    values: list[float] = []  # every game's values one after the other (NaN: none), from ``start[game]``
    start, length = np.zeros(len(fit_rows.games), np.int64), np.zeros(len(fit_rows.games), np.int64)
    for index, (_, _, text) in enumerate(fit_rows.games):
        if text:
            found = _values(text)
            start[index], length[index] = len(values), len(found)
            values += [np.nan if v is None else float(v) for v in found]
    nodes, games, depths = _game_paths(game, fit_rows) if paths is None else paths
    at = depths < length[games]  # the value searched at the node ``depths`` moves into the game, if logged
    value = np.asarray(values, np.float64)[start[games[at]] + depths[at]] if values else np.zeros(0)
    kept = ~np.isnan(value)
    return _summed(nodes[at][kept], value[kept])


def _summed(nodes: npt.NDArray[np.int64], figures: npt.NDArray[np.float64]) -> dict[int, tuple[int, float]]:
    """``{node: (how often it comes in nodes, its figures summed)}``, summed in the order given."""
    if not len(nodes):
        return {}
    unique, which = np.unique(nodes, return_inverse=True)
    counts, sums = np.bincount(which), np.bincount(which, weights=figures)
    return dict(zip(unique.tolist(), zip(counts.tolist(), sums.tolist(), strict=True), strict=True))


def _values(text: str) -> list[float | None]:
    """One game's ``root_values`` (a JSON list of numbers in [0, 1] or nulls)."""
    try:
        values = json.loads(text)
        if isinstance(values, list) and all(v is None or (not isinstance(v, bool) and isinstance(v, (int, float))
                                                          and 0.0 <= v <= 1.0) for v in values):
            return values
    except ValueError:
        pass
    raise DamagedDatabaseError(f"games.root_values {text[:60]!r} is not a JSON list of values in [0, 1] or nulls: "
                               "the file is damaged; fit with --root-value 0 to leave them out")


class _Labels(dict[str, int]):
    """A game's moves by label, each parsed (:meth:`~treelab.games.Game.parse_move`) when first asked for."""

    def __init__(self, game: Game) -> None:
        super().__init__()
        self.game = game

    def __missing__(self, label: str) -> int:
        found = self[label] = self.game.parse_move(label)
        return found


def _game_paths(game: Game, fit_rows: FitRows) -> Paths:
    """The nodes of every logged game's path from the root, as far as its nodes are among the rows read:
    ``(nodes, games, depths)``, each node with the index of its game in ``fit_rows.games`` and its depth, a
    depth at a time (the root's first), games in order within a depth. Every game goes down together, a move a
    step: its child is found by a sorted search of ``parent * width + move`` over the rows (the last row of a
    repeated key, as a dictionary of them would keep)."""
    code = _Labels(game).__getitem__  # each label parsed once (a tree holds a few labels many times)
    rows, logged = fit_rows.rows, fit_rows.games
    empty = np.zeros(0, np.int64)
    root = next((r[0] for r in rows if r[1] is None), None)
    if root is None or not logged:
        return empty, empty, empty
    kids = [r for r in rows if r[1] is not None]
    ids, parents = (np.fromiter(map(itemgetter(at), kids), np.int64, len(kids)) for at in (0, 1))
    moves = np.fromiter(map(code, map(itemgetter(2), kids)), np.int64, len(kids))
    width = int(moves.max()) + 1 if len(kids) else 1
    order = np.argsort(parents * width + moves, kind="stable")
    keys, children = (parents * width + moves)[order], ids[order]
    played: list[int] = []  # every game's moves one after the other, from ``start[game]``
    start, length = np.zeros(len(logged), np.int64), np.zeros(len(logged), np.int64)
    for index, (text, _, _) in enumerate(logged):
        try:
            line = list(map(code, game.notation_parts(text)))
        except NotationError:
            line = list(game.parse(text))  # raises the sequence's own message
        start[index], length[index] = len(played), len(line)
        played += line
    every = np.asarray(played, np.int64)
    games = np.arange(len(logged))
    at = np.full(len(logged), root, np.int64)
    found_nodes, found_games, found_depths = [at], [games], [np.zeros(len(logged), np.int64)]
    depth = 0
    while len(games):
        on = length[games] > depth  # the games with a move at this depth
        games, at = games[on], at[on]
        move = every[start[games] + depth]
        key = at * width + move
        place = np.searchsorted(keys, key, side="right") - 1
        hit = (move >= 0) & (move < width) & (place >= 0)
        hit[hit] = keys[place[hit]] == key[hit]
        games, at, depth = games[hit], children[place[hit]], depth + 1
        found_nodes.append(at)
        found_games.append(games)
        found_depths.append(np.full(len(games), depth, np.int64))
    return np.concatenate(found_nodes), np.concatenate(found_games), np.concatenate(found_depths)


def build_dataset(game: Game, fit_rows: FitRows, *, min_visits: int, max_depth: int | None,
                  only: Collection[int] | None = None, outcome: float = 0.0, root_value: float = 0.0) -> Dataset:
    """The examples of the nodes in ``fit_rows`` (see the module doc); with ``only``, of those nodes alone
    (:func:`candidates` picks them, ``min_selections`` included); ``outcome``: the logged games' outcomes'
    share of the value target where they passed; ``root_value``: the logged searches' values' share of the
    mean where they searched.

    Connect Four's examples are built over all rows at once with numpy (:mod:`treelab.learn.bulk`); other
    games', and rows that path does not expect (a damaged file), by :func:`reference_dataset`, one node at a
    time. Both give the very same arrays.

    Raises:
        NoEncodingError: ``game`` has no input encoding.
    """
    data = bulk_dataset(game, fit_rows, min_visits=min_visits, max_depth=max_depth, only=only, outcome=outcome,
                        root_value=root_value)
    if data is not None:
        return data
    return reference_dataset(game, fit_rows, min_visits=min_visits, max_depth=max_depth, only=only, outcome=outcome,
                             root_value=root_value)


def bulk_dataset(game: Game, fit_rows: FitRows, *, min_visits: int, max_depth: int | None,
                 only: Collection[int] | None = None, outcome: float = 0.0,
                 root_value: float = 0.0) -> Dataset | None:
    """:func:`build_dataset` over all rows at once (:mod:`treelab.learn.bulk`); None for a game it does not
    know or rows it does not expect (then :func:`reference_dataset` gives the answer)."""
    if game.encoding is None:
        return None
    paths = cache(lambda: _game_paths(game, fit_rows))  # one walk of the games for the outcomes and the values
    fields = bulk_arrays(game, fit_rows, min_visits=min_visits, max_depth=max_depth, only=only, outcome=outcome,
                         outcomes=lambda: game_outcomes(game, fit_rows, paths()), root_value=root_value,
                         searched=lambda: logged_values(game, fit_rows, paths()))
    return None if fields is None else Dataset(*fields)


def reference_dataset(game: Game, fit_rows: FitRows, *, min_visits: int, max_depth: int | None,
                      only: Collection[int] | None = None, outcome: float = 0.0,
                      root_value: float = 0.0) -> Dataset:
    """:func:`build_dataset` one node at a time with the game's states: the reference any faster path equals.

    Raises:
        NoEncodingError: ``game`` has no input encoding.
    """
    if game.encoding is None:
        State.features(game.initial())  # the protocol's default: one clear NoEncodingError
        raise NoEncodingError(f"game {game.name!r} has no input encoding")  # pragma: no cover
    rows = fit_rows.rows
    parent = {r[0]: r[1] for r in rows}
    label = {r[0]: r[2] for r in rows}
    kids: dict[int, list[tuple[int, str, int, int, int | None]]] = {}
    for nid, pid, move, _, visits, _, _, proven, select, _, _ in rows:
        if pid is not None:
            kids.setdefault(pid, []).append((nid, move, visits, select, proven))
    states: dict[int, State] = {}

    def state_of(nid: int) -> State:
        found = states.get(nid)
        if found is None:
            pid = parent[nid]
            found = game.initial() if pid is None else state_of(pid).play(game.parse_move(label[nid]))
            states[nid] = found
        return found

    first, size = game.first_move, game.num_moves
    deepest = max_depth if max_depth is not None else 1 << 62
    features: list[npt.NDArray[np.float32]] = []
    policies: list[npt.NDArray[np.float32]] = []
    legals: list[npt.NDArray[np.bool_]] = []
    values: list[float] = []
    keys: list[int] = []
    visit_counts: list[int] = []
    node_ids: list[int] = []
    proven_count = selected_count = 0
    group_of: dict[object, int] = {}
    paths = _game_paths(game, fit_rows) if outcome > 0 or root_value > 0 else None
    outcomes = game_outcomes(game, fit_rows, paths) if outcome > 0 else {}
    searched = logged_values(game, fit_rows, paths) if root_value > 0 else {}
    for nid, pid, _, depth, visits, wins, draws, proven, _, _, value_sum in rows:
        children = kids.get(nid)
        if visits < min_visits or depth > deepest or not children or (only is not None and nid not in only):
            continue
        state = state_of(nid)
        if state.is_terminal:
            continue
        target, used_selections = _policy_target(children, min_visits, game.parse_move)
        if target is None:
            continue
        mover = 3 - state.to_move if pid is None else state_of(pid).to_move
        if proven is not None:
            value = (float(proven) + 1.0) / 2.0
            proven_count += 1
        else:
            value = mean_reward(wins, draws, visits, value_sum)
        if mover != state.to_move:
            value = 1.0 - value
        if proven is None and nid in searched:
            count, total = searched[nid]
            value = (1.0 - root_value) * value + root_value * total / count
        if proven is None and nid in outcomes:
            passed, score = outcomes[nid]
            z = score / passed if state.to_move == 1 else 1.0 - score / passed
            value = (1.0 - outcome) * value + outcome * z
        row = np.zeros(size, dtype=np.float32)
        for played, share in target.items():
            row[played - first] = share
        legal = np.zeros(size, dtype=bool)
        legal[[m - first for m in state.legal_moves()]] = True
        features.append(state.features().reshape(-1))
        policies.append(row)
        values.append(value)
        legals.append(legal)
        keys.append(group_of.setdefault(state.key(), len(group_of)))
        visit_counts.append(visits)
        node_ids.append(nid)
        selected_count += used_selections
    width = int(np.prod(game.feature_shape))
    return Dataset(
        np.array(features, dtype=np.float32).reshape(-1, width), np.array(policies, dtype=np.float32).reshape(-1, size),
        np.array(values, dtype=np.float32), np.array(legals, dtype=bool).reshape(-1, size),
        np.array(keys, dtype=np.int64), np.array(visit_counts, dtype=np.int64), np.array(node_ids, dtype=np.int64),
        proven_count, selected_count,
    )


def _policy_target(
    children: list[tuple[int, str, int, int, int | None]], min_visits: int, parse: Callable[[str], int]
) -> tuple[dict[int, float] | None, bool]:
    """The policy target over the stored children, and whether it came from the selection counts."""
    winners = [parse(move) for _, move, _, _, proven in children if proven == 1]
    if winners:
        return dict.fromkeys(winners, 1.0 / len(winners)), False
    alive = [k for k in children if k[4] != -1] or children
    selections = sum(k[3] for k in alive)
    use_selections = selections >= min_visits
    counts = {parse(k[1]): float(k[3] if use_selections else k[2]) for k in alive}
    total = sum(counts.values())
    if total <= 0:
        return None, False
    return {m: c / total for m, c in counts.items()}, use_selections


def augment(data: Dataset, game: Game) -> Dataset:
    """``data`` followed by its image under each of the game's symmetries (the groups kept)."""
    if not game.symmetries:
        return data
    parts = [data]
    for sym in game.symmetries:
        moves = np.array(sym.moves)
        parts.append(Dataset(data.features[:, np.array(sym.features)], data.policy[:, moves], data.value,
                             data.legal[:, moves], data.groups, data.visits, data.nodes, data.proven,
                             data.from_selections))
    def joined(name: str) -> Any:
        return np.concatenate([getattr(p, name) for p in parts])

    return Dataset(joined("features"), joined("policy"), joined("value"), joined("legal"), joined("groups"),
                   joined("visits"), joined("nodes"), data.proven * len(parts), data.from_selections * len(parts))
