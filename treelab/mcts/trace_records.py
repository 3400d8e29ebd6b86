"""A trace's records read back: :func:`check_records` (one search's, in order), :func:`apply_record` (replay).

The records are those of :class:`treelab.mcts.tracer.Tracer` (the file of ``analyse --trace``,
``docs/guide/tracing.md``). Replaying every record of a trace onto the tree its search started from
gives the tree the search ended with, node for node: the trace is exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import TraceError
from ..nodes import Proof
from ..tree import Tree

__all__ = ["TRACE_KEYS", "apply_record", "check_records"]

TRACE_KEYS = ("simulation", "path", "expanded", "playout", "winner", "levels")
"""The keys every record has at least (docs/design.md, ``analyse --trace``)."""


def check_records(records: Sequence[Mapping[str, Any]], *, game: str | None = None,
                  position: str | None = None) -> None:
    """Raise :class:`~treelab.errors.TraceError` unless ``records`` is one search's trace (of ``game`` at ``position``).

    Checks the keys every record has, that simulations count 1, 2, 3, ... and name one game and position.
    """
    if not records:
        raise TraceError("the trace holds no simulation: record one with treelab analyse ... --trace FILE")
    first = records[0]
    for i, record in enumerate(records, 1):
        if not isinstance(record, Mapping):
            raise TraceError(f"record {i} is {type(record).__name__}, not a JSON object: is this a treelab trace?")
        missing = [k for k in (*TRACE_KEYS, "game", "position", "backup") if k not in record]
        if missing:
            raise TraceError(f"record {i} lacks {missing[0]!r}: is this a treelab trace (analyse --trace)?")
        if record["simulation"] != i:
            raise TraceError(f"record {i} is simulation {record['simulation']!r}: the trace is out of order or cut")
        if record["game"] != first["game"] or record["position"] != first["position"]:
            raise TraceError(f"record {i} is of {record['game']!r} at {record['position']!r}, not of "
                             f"{first['game']!r} at {first['position']!r}: one trace is one search")
    _check_shapes(records)
    if game is not None and first["game"] != game:
        raise TraceError(f"the trace is of the game {first['game']!r}, not {game!r}: trace this game's search")
    if position is not None and first["position"] != position:
        raise TraceError(f"the trace searched the position {first['position']!r}, not {position!r}: "
                         "open the trace at its own position")


def _check_shapes(records: Sequence[Mapping[str, Any]]) -> None:
    """Each record's path, backup steps and values fit together: one step per node from the root (the position's
    moves, then the path), four whole counts a step (a damaged file fails here, never mid-replay)."""
    from ..games import find_game

    first = records[0]
    try:
        depth = len(find_game(first["game"]).parse(first["position"]))
    except (TypeError, ValueError, KeyError) as exc:  # NotationError, UnknownGameError: the message says which
        raise TraceError(f"record 1 names game {first['game']!r} at {first['position']!r}: {exc}") from None
    for i, record in enumerate(records, 1):
        path, gains, values = record["path"], record["backup"], record.get("values")
        if not isinstance(path, list) or not all(isinstance(label, str) for label in path):
            raise TraceError(f"record {i}: path {path!r} is not a list of moves: the record is damaged")
        steps = depth + len(path) + 1
        if not isinstance(gains, list) or len(gains) != steps or not all(
                isinstance(g, list) and len(g) == 4 and all(type(n) is int for n in g) for g in gains):
            raise TraceError(f"record {i}: backup {str(gains)[:60]!r} is not {steps} steps of four counts (one per "
                             f"node from the root along a path of {len(path)} moves): the record is damaged")
        if values is not None and (not isinstance(values, list) or len(values) != steps or not all(
                type(v) in (int, float) for v in values)):
            raise TraceError(f"record {i}: values {str(values)[:60]!r} are not {steps} numbers: the record is damaged")
        if not isinstance(record.get("proofs", {}), Mapping):
            raise TraceError(f"record {i}: proofs {record['proofs']!r} are not an object: the record is damaged")


def apply_record(tree: Tree, record: Mapping[str, Any]) -> None:
    """Replay one simulation's record onto ``tree``: its new nodes, the counts gained, its proofs.

    Replaying every record of a trace onto the tree the search started from gives the tree the search
    ended with, node for node (the nodes above the search's root gain their counts per simulation here,
    where the search adds them once as it ends: the sums agree).
    """
    game = tree.game
    for moves in record["created"]:
        labels = [game.label(m) for m in game.parse(moves)]
        parent = tree.find(labels[:-1])
        if parent.child(labels[-1]) is None:
            tree.add_child(parent, labels[-1], _mover_of(tree, labels))
    nodes = [tree.root]
    position = [game.label(m) for m in game.parse(record["position"])]
    for label in [*position, *record["path"]]:
        child = nodes[-1].child(label)
        if child is None:
            raise TraceError(f"simulation {record['simulation']}: no node {label!r} below "
                             f"{'/'.join(n.name for n in nodes)!r}: this trace was recorded on another tree")
        nodes.append(child)
    gains = record["backup"]
    if len(gains) != len(nodes):
        raise TraceError(f"simulation {record['simulation']}: {len(gains)} backup steps for a path of "
                         f"{len(nodes)} nodes: the record is damaged")
    for node, (visit, win, draw, select) in zip(nodes, gains, strict=True):
        tree.mark_dirty(node)
        node.nb_visit += visit
        node.nb_win += win
        node.nb_draw += draw
        node.nb_select += select
    values = record.get("values")
    if values is not None and len(values) != len(nodes):
        raise TraceError(f"simulation {record['simulation']}: {len(values)} value steps for a path of "
                         f"{len(nodes)} nodes: the record is damaged")
    for node, value in zip(nodes, values or (), strict=False):
        if value:
            tree.add_value(node, value)
    for moves, word in record["proofs"].items():
        node = tree.find(moves)
        tree.mark_dirty(node)
        node.proven = _proof(word, record["simulation"])


def _mover_of(tree: Tree, labels: Sequence[str]) -> int | None:
    if tree.game.alternating:
        return None
    state = tree.game.replay(labels[:-1])
    return state.to_move


def _proof(word: str, simulation: int) -> Proof:
    for proof in Proof:
        if proof.word == word:
            return proof
    raise TraceError(f"simulation {simulation}: proof {word!r} is not win, draw or loss: the record is damaged")
