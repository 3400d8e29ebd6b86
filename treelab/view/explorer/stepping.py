"""The explorer's step mode: a traced search of the position in view, for the page's stepper.

``GET /api/trace?path=SEQ&search=uct|puct|solver&iterations=N&seed=S&tree=fresh|stored`` runs a
search of the position with a :class:`~treelab.mcts.tracer.Tracer` and answers
:func:`treelab.view.step_widget.stepper_data`'s object, which ``static/stepper.js`` draws (the
notebook widget's very module). ``tree=stored`` searches a copy of the stored subtree in memory:
the database is only read, never written. The page keeps the step in its URL (``step=K``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import QueryError
from ...mcts.config import SearchConfig
from ...mcts.policies import make_rng
from ...mcts.tracer import Tracer, traced_search
from ...mcts.uct import Limit
from ...tree import Tree
from ..step_widget import stepper_data
from .data import TreeFile

__all__ = ["MAX_TRACE", "SEARCHES", "TraceQuery", "trace_answer"]

MAX_TRACE = 2000
"""The most simulations the page may ask a search for."""

SEARCHES = {"uct": SearchConfig(), "puct": SearchConfig(algorithm="puct"), "solver": SearchConfig(solver=True)}
"""The searches the page offers by name."""


@dataclass(frozen=True)
class TraceQuery:
    """What the page asks of a traced search."""

    search: str = "uct"
    """A name of :data:`SEARCHES`."""
    iterations: int = 200
    """Simulations (at most :data:`MAX_TRACE`)."""
    seed: int = 1
    """The search's seed: the same query replays the same search."""
    stored: bool = False
    """Search the stored subtree (a copy in memory) instead of a fresh tree."""

    def __post_init__(self) -> None:
        if self.search not in SEARCHES:
            raise QueryError(f"search {self.search[:40]!r} is not offered: use one of {', '.join(SEARCHES)}")


def trace_answer(source: TreeFile, path: str, query: TraceQuery) -> dict[str, Any]:
    """The stepper's data for a traced search of ``path`` (see the module doc)."""
    game = source.game
    moves = game.parse(path)
    state = game.replay(moves)
    if state.is_terminal:
        raise QueryError(f"the game is over at {game.notation(moves)!r}: step through a search of an earlier position")
    if query.stored:
        from ...store.persistence import load

        tree = load(source.path, path=moves)
        tree.forget_changes()  # a copy to search, never saved
    else:
        tree = Tree(game)
    tracer = Tracer()
    config = SEARCHES[query.search]
    traced_search(tree, moves, limit=Limit(iterations=query.iterations), search=config, rng=make_rng(query.seed),
                  tracer=tracer)
    data = stepper_data(tracer.records, max_steps=MAX_TRACE)
    data["search"], data["tree"] = query.search, "stored" if query.stored else "fresh"
    return data
