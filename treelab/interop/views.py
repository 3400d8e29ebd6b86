"""One position's moves as other viewers read them: the lichess opening explorer's and KataGo's analysis JSON.

**Explorer** (the shape of lichess's opening explorer API, ``explorer.lichess.ovh``): the position's
``white``/``draws``/``black`` and a ``moves`` list, each with its own ``white``/``draws``/``black``
(simulations won by player 1, drawn, won by player 2), the same from its mover's side as
``win``/``draw``/``loss``, and treelab's ``visits``, ``selected``, ``score`` (the mover's mean,
:func:`treelab.nodes.mean_reward`), ``value_sum``, ``prior`` and ``proven``. ``uci`` is the move
label and ``san`` what people read (OpenSpiel's action string). Simulations that ended in a value
(imported searches, PUCT with an evaluator) count as draws there, their values in ``score``. Moves
come in the order of the move-choice rule (:mod:`treelab.mcts.choice`).

**KataGo** (its analysis engine's response): ``moveInfos`` with ``move``, ``visits``, ``winrate``
(the mover's mean, the side to move's view, as KataGo's ``reportAnalysisWinratesAs SIDETOMOVE``),
``utility`` (the same in [-1, 1]), ``prior``, ``order`` (0: the move the choice rule plays) and
``pv`` (the principal variation from that move); ``rootInfo`` with the position's ``visits``,
``winrate`` and ``currentPlayer`` (``"B"`` for player 1, ``"W"`` for player 2).
"""

from __future__ import annotations

from typing import Any

from ..mcts.choice import principal_variation
from ..nodes import mean_reward, preference
from ..tree import Tree, TreeNode

__all__ = ["explorer_view", "katago_view", "position_value"]


def _ordered(node: TreeNode) -> list[TreeNode]:
    """The children in the move-choice rule's order (the move played first; ties keep creation order)."""
    kids = list(node.children_view)
    return sorted(kids, key=lambda k: preference(None if k.proven is None else int(k.proven), k.nb_select,
                                                 k.nb_visit), reverse=True)


def position_value(node: TreeNode) -> float | None:
    """The value of ``node``'s position for the player to move there: its children's rewards over their visits
    (as ``analyse --json``'s ``value``), None when no child was visited."""
    visits = sum(k.nb_visit for k in node.children_view)
    if not visits:
        return None
    return sum(k.mean * k.nb_visit for k in node.children_view) / visits


def _results(node: TreeNode) -> dict[str, int]:
    wins, draws = node.nb_win, node.nb_draw
    losses = node.nb_visit - wins - draws
    first, second = (wins, losses) if node.mover == 1 else (losses, wins)
    return {"white": first, "draws": draws, "black": second, "win": wins, "draw": draws,
            "loss": losses}


def explorer_view(tree: Tree, node: TreeNode) -> dict[str, Any]:
    """The lichess-explorer-shaped object of ``node``'s position (the module doc)."""
    game = tree.game
    state = game.replay(node.moves)
    moves = []
    for kid in _ordered(node):
        move = game.parse_move(kid.name)
        moves.append({"uci": kid.name, "san": game.action_text(state, move), **_results(kid),
                      "visits": kid.nb_visit, "selected": kid.nb_select, "score": kid.mean,
                      "value_sum": kid.value_sum, "prior": tree.priors.get(kid),
                      "proven": None if kid.proven is None else kid.proven.word})
    own = _results(node)
    return {"game": game.name, "path": ",".join(node.moves), "to_move": None if state.is_terminal else state.to_move,
            "white": own["white"], "draws": own["draws"], "black": own["black"], "visits": node.nb_visit,
            "moves": moves, "topGames": [], "recentGames": [], "opening": None}


def katago_view(tree: Tree, node: TreeNode) -> dict[str, Any]:
    """The KataGo-analysis-shaped object of ``node``'s position (the module doc)."""
    game = tree.game
    state = game.replay(node.moves)
    infos = []
    for order, kid in enumerate(_ordered(node)):
        mean = mean_reward(kid.nb_win, kid.nb_draw, kid.nb_visit, kid.value_sum)
        infos.append({"move": kid.name, "visits": kid.nb_visit, "winrate": mean, "utility": 2.0 * mean - 1.0,
                      "prior": tree.priors.get(kid), "order": order,
                      "pv": [kid.name, *(n.name for n in principal_variation(kid))]})
    value = position_value(node)
    player = None if state.is_terminal else state.to_move
    return {"id": f"{game.name}:{','.join(node.moves)}", "turnNumber": node.depth, "moveInfos": infos,
            "rootInfo": {"visits": node.nb_visit, "winrate": value,
                         "utility": None if value is None else 2.0 * value - 1.0,
                         "currentPlayer": None if player is None else "B" if player == 1 else "W"}}
