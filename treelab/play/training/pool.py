"""The opponent pool of training: each game's opponent drawn from ``self``, ``heuristic``, ``random`` or old trees.

``train(..., pool=["self", "heuristic", "db=old.db"])`` plays every game
against a member drawn with the run's injected rng (``seed`` replays the
draws). ``db=PATH`` is an earlier saved tree of the same game: it searches on
its stored tree with the trained tree's per-move simulations, read-only (its
tree goes back to the stored one before every game, :mod:`treelab.play.stored`,
and the file is never written). The pool is checked whole before anything is
opened for writing, so a bad member leaves no file behind.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import SpecError, StoreError
from ...games import Game
from ..players import HeuristicPlayer, MCTSPlayer, Player, RandomPlayer
from ..stored import StoredTreePlayer, stored_tree

__all__ = ["MEMBERS", "OpponentScore", "Pool", "describe_scores", "open_pool", "parse_pool"]

MEMBERS = ("self", "heuristic", "random")
"""Pool members besides ``db=PATH`` (an earlier saved tree of the same game)."""


def parse_pool(specs: str | Sequence[str] | None, *, opponent: str = "self",
               parallel: bool = False) -> tuple[str, ...] | None:
    """The members of ``specs`` (``"self,heuristic"`` or several such strings), each checked by name.

    Args:
        specs: the pool (None: no pool, returns None).
        opponent: training's other opponent option, which a pool replaces (it must stay ``"self"``).
        parallel: whether training was asked to play in several processes (a pool plays in one).

    Raises:
        SpecError: an empty pool, a member that is neither of :data:`MEMBERS` nor ``db=PATH``, or a pool
            given with another opponent or with parallel training.
    """
    if specs is None:
        return None
    if opponent != "self" or parallel:
        raise SpecError("a pool plays in this process and replaces --opponent: drop --opponent, --workers, --ray")
    texts = [specs] if isinstance(specs, str) else list(specs)
    members: list[str] = []
    for text in texts:
        for part in text.split(","):
            member = part.strip()
            if member in MEMBERS or (member.startswith("db=") and len(member) > 3):
                members.append(member)
            else:
                raise SpecError(f"pool member {member!r} is not one of {', '.join(MEMBERS)} or db=PATH "
                                "(an earlier tree of the same game)")
    if not members:
        raise SpecError("the pool is empty: name members among self, heuristic, random, db=PATH")
    return tuple(members)


class Pool:
    """The opponents of a pool, one player per distinct member, and the draw of each game's opponent.

    Args:
        members: checked members (:func:`parse_pool`); repeating one weighs its draws.
        players: the player of each distinct member (None for ``self``: the tree plays both sides).
        rng: draws the opponents.
    """

    def __init__(self, members: tuple[str, ...], players: dict[str, Player | None], rng: random.Random) -> None:
        self.members = members
        self.players = players
        self.rng = rng

    def draw(self, game: Game) -> tuple[str, Player | None]:
        """The next game's opponent: its member name and player (made ready for a new game)."""
        member = self.rng.choice(self.members)
        player = self.players[member]
        if player is not None:
            player.new_game(game)  # a stored tree goes back to the database's state
        return member, player


def open_pool(members: tuple[str, ...], game: Game, db: str | os.PathLike[str], *, iterations: int,
              rng: random.Random) -> Pool:
    """The :class:`Pool` of ``members`` for training ``db``, every stored tree loaded (read-only).

    Raises:
        StoreError: a member's database is missing or is not a treelab database.
        SpecError: a member's database holds another game's tree, or is the trained database itself.
    """
    players: dict[str, Player | None] = {}
    for member in dict.fromkeys(members):
        seed = random.Random(rng.getrandbits(64))
        if member == "self":
            players[member] = None
        elif member == "random":
            players[member] = RandomPlayer(rng=seed)
        elif member == "heuristic":
            players[member] = HeuristicPlayer(rng=seed)
        else:
            path = member[3:]
            if not os.path.isfile(path):
                raise StoreError(f"pool member {member!r}: no such database; give an earlier saved tree's file")
            if os.path.exists(db) and os.path.samefile(path, db):
                raise SpecError(f"pool member {member!r} is the database being trained: copy it and name the copy")
            tree = stored_tree(path, f"--pool {member}", game)
            assert tree is not None
            searcher = MCTSPlayer(tree=tree, iterations=iterations, c=tree.c, rng=seed, name=member)
            players[member] = StoredTreePlayer(searcher, path, learn=False)
    return Pool(members, players, random.Random(rng.getrandbits(64)))


@dataclass(frozen=True)
class OpponentScore:
    """How the tree did against one pool member."""

    opponent: str
    """The member (``self``, ``heuristic``, ``random`` or ``db=PATH``)."""
    games: int
    """Games played against it."""
    wins: int
    """Games the tree won (against ``self``: wins of player 1)."""
    draws: int
    """Drawn games."""
    losses: int
    """Games the tree lost (against ``self``: wins of player 2)."""


def describe_scores(scores: Sequence[OpponentScore]) -> str:
    """One line per pool member, for the training summary."""
    lines = []
    for s in scores:
        if s.opponent == "self":
            lines.append(f"  self-play: {s.games} games, player 1 won {s.wins}, player 2 won {s.losses}, "
                         f"{s.draws} drawn")
        else:
            lines.append(f"  against {s.opponent}: {s.games} games, tree won {s.wins}, drew {s.draws}, "
                         f"lost {s.losses}")
    return "\n".join(lines)
