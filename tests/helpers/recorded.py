"""Trees grown only with ``Tree.record`` or the ``Recorder`` from seeded random games (independent of the search
code)."""

from __future__ import annotations

import random

import treelab


def grow(game: str, games: int, seed: int, *, max_len: int) -> treelab.Tree:
    """Record ``games`` random games, each cut at a random length of at most ``max_len`` moves."""
    rng = random.Random(seed)
    tree = treelab.Tree(game)
    g = tree.game
    for _ in range(games):
        state, moves = g.initial(), []
        while not state.is_terminal:
            moves.append(rng.choice(state.legal_moves()))
            state = state.play(moves[-1])
        cut = rng.randint(1, min(len(moves), max_len))
        tree.record(moves if cut == len(moves) else moves[:cut], state.winner)
    return tree


def valued_tree(game: str, seed: int, simulations: int) -> treelab.Tree:
    """A hand-written search's tree through :class:`treelab.Recorder`: each simulation a random path of at most 5
    moves ending in a whole result or in a real value (for a random player), priors on every third node, proofs
    where a path reaches the end of the game."""
    rng = random.Random(seed)
    recorder = treelab.Recorder(game)
    the_game = recorder.tree.game
    for _ in range(simulations):
        state, path = the_game.initial(), []
        for _ in range(rng.randint(0, 5)):
            if state.is_terminal:
                break
            move = rng.choice(state.legal_moves())
            path.append(the_game.label(move))
            state = state.play(move)
        if state.is_terminal or rng.random() < 0.5:
            recorder.simulation(path, winner=state.winner if state.is_terminal else rng.choice([1, 2, None]))
        else:
            recorder.simulation(path, value=rng.uniform(-1, 1), player=rng.choice([1, 2]))
    for node in list(recorder.tree)[::3]:
        recorder.tree.priors[node] = rng.random()
    return recorder.tree
