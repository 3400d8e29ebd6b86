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
"""The keys every record has at least (DESIGN.md, ``analyse --trace``)."""


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
    if game is not None and first["game"] != game:
        raise TraceError(f"the trace is of the game {first['game']!r}, not {game!r}: trace this game's search")
    if position is not None and first["position"] != position:
        raise TraceError(f"the trace searched the position {first['position']!r}, not {position!r}: "
                         "open the trace at its own position")


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
