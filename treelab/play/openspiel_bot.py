"""OpenSpiel's Python ``MCTSBot`` as a treelab player: a real outside opponent for the arena.

It plays every ``openspiel:NAME`` game (on that very OpenSpiel game, action ids
as they are) and the built-in ``connect4`` and ``tictactoe`` (on their OpenSpiel
twins ``connect_four`` and ``tic_tac_toe``, whose action ``k`` is move ``k + 1``).

Needs the optional ``open-spiel`` package (``pip install 'treelab[openspiel]'``).
The bot runs ``RandomRolloutEvaluator(n_rollouts=1)`` (one uniformly random
playout per simulation), as ``benchmarks/search.py`` and ``benchmarks/vs_openspiel.py`` do.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..errors import SpecError
from ..games import Game, State, find_game
from ..mcts.config import resolve_aliases
from ..tree import SQRT2

__all__ = ["OPENSPIEL_GAMES", "OpenSpielPlayer"]

OPENSPIEL_GAMES = {"connect4": "connect_four", "tictactoe": "tic_tac_toe"}
"""treelab game name -> OpenSpiel game name (both number moves alike: action ``k`` is move ``k + 1``)."""


class OpenSpielPlayer:
    """OpenSpiel's Python ``MCTSBot`` (UCT with random rollouts), a real outside opponent.

    ``c`` (OpenSpiel's ``uct_c``) is on OpenSpiel's [-1, 1] return scale: ``sqrt(2)`` there explores
    like ``c = 1/sqrt(2)`` on treelab's [0, 1] means. The old keyword ``uct_c`` is read with a
    :class:`DeprecationWarning`.

    Raises:
        SpecError: ``open_spiel`` is not installed, or the game has no OpenSpiel twin.
    """

    def __init__(self, game: str | Game, *, simulations: int = 1000, c: float | None = None, solve: bool = True,
                 rng: random.Random | int | None = None, name: str | None = None, **old: float) -> None:
        named = resolve_aliases({"c": c, **old}, {"uct_c": "c"})
        if set(named) != {"c"}:
            raise TypeError(f"OpenSpielPlayer got unexpected keywords {sorted(set(named) - {'c'})}")
        c = SQRT2 if named["c"] is None else named["c"]
        try:
            import numpy as np
            import pyspiel
            from open_spiel.python.algorithms import mcts
        except ImportError:
            raise SpecError("openspiel players need OpenSpiel: pip install 'treelab[openspiel]'") from None
        from ..games.openspiel import OpenSpielGame

        the_game = find_game(game)
        self._shift = 0 if isinstance(the_game, OpenSpielGame) else 1  # treelab move = action + shift
        if isinstance(the_game, OpenSpielGame):
            self._game = the_game.spiel_game
        elif the_game.name in OPENSPIEL_GAMES:
            self._game = pyspiel.load_game(OPENSPIEL_GAMES[the_game.name])
        else:
            raise SpecError(
                f"OpenSpiel has no {the_game.name!r}: its MCTSBot plays openspiel:NAME games, "
                f"{', '.join(OPENSPIEL_GAMES)}"
            )
        seed = rng.getrandbits(31) if isinstance(rng, random.Random) else (rng if rng is not None else
                                                                          random.getrandbits(31))
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(seed % 2**31))
        self._bot = mcts.MCTSBot(self._game, c, simulations, evaluator,  # OpenSpiel's uct_c, max_simulations
                                 solve=solve, random_state=np.random.RandomState((seed + 1) % 2**31))
        self.name = name or f"openspiel:simulations={simulations}"

    def new_game(self, game: Game) -> None:
        """Nothing to reset: ``MCTSBot`` builds a fresh tree every move."""

    def choose(self, state: State, moves: Sequence[int]) -> int:
        """OpenSpiel's move (action ``k`` is treelab's move ``k + 1`` in the built-in twins, ``k`` otherwise)."""
        spiel = getattr(state, "spiel_state", None)
        if spiel is not None:
            os_state = spiel.clone()
        else:
            os_state = self._game.new_initial_state()
            for move in moves:
                os_state.apply_action(move - self._shift)
        return int(self._bot.step(os_state)) + self._shift
