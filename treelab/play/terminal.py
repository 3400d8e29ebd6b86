"""A human against the AI in the terminal (``treelab play``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

import click

from ..errors import TreelabError
from ..games import Game
from ..tree import SQRT2, Tree
from .players import MCTSPlayer

__all__ = ["play_in_terminal"]


def play_in_terminal(
    game: Game,
    *,
    db: str | None = None,
    iterations: int = 2000,
    human: int = 1,
    solver: bool = False,
    c: float = SQRT2,
    seed: int | None = None,
    ask: Callable[[str], str] | None = None,
    say: Callable[[str], None] = click.echo,
) -> int | None:
    """Play one game, the human as player ``human``; returns the winner (None: draw or quit).

    Bad input (not a move, an illegal move) is explained and asked again; ``q``, the end of
    the input or Ctrl-C at the prompt quits, saying that nothing was saved. With ``db`` the AI
    searches in that stored tree and the grown tree (and the game) are saved at the end.
    """
    ask = ask or (lambda prompt: click.prompt(prompt, prompt_suffix=" ", default="", show_default=False))
    if db is not None:
        from ..store.binding import last_game
        from ..store.deltas import stamp
        from ..store.persistence import open_tree, save

        tree = open_tree(db, game, c=c)
        game_id = last_game(tree) + 1
    else:
        tree = Tree(game, c=c)
    ai = MCTSPlayer(tree=tree, iterations=iterations, c=c, solver=solver, rng=seed)
    marks = {1: "X", 2: "O"}
    state, moves = game.initial(), list[int]()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    say(f"You are {marks[human]} (player {human}). Moves: {game.move_hint}; q quits.")
    while not state.is_terminal:
        say("\n" + state.board())
        if state.to_move == human:
            actions = {game.action_text(state, m).lower(): m for m in state.legal_moves()} if game.shows_actions else {}
            if actions:
                say("legal: " + ", ".join(f"{m} {text}" for text, m in actions.items()))
            try:
                answer = ask(f"your move ({marks[human]}):").strip().lower()
            except (click.Abort, EOFError, KeyboardInterrupt):  # end of input, or Ctrl-C at the prompt
                answer = "end of input"
            if answer in ("q", "quit", "exit", "end of input"):
                kept = (f"{db} was not changed (a game is saved when it ends)" if db is not None
                        else "the tree was in memory only (--db PATH keeps one)")
                say(f"\n{'quit' if answer != 'end of input' else 'end of input: quit'} before the game ended: {kept}")
                return None
            try:
                move = actions[answer] if answer in actions else game.parse_move(answer)
                state = state.play(move)
            except TreelabError as exc:
                say(f"{exc} - try again")
                continue
        else:
            move = ai.choose(state, moves)
            node = tree.find([*moves, move])
            say(f"AI plays {game.label(move)} ({node.nb_visit:,} visits, mean {node.mean:.2f})")
            state = state.play(move)
        moves.append(move)
    say("\n" + state.board())
    winner = state.winner
    if winner is None:
        say("draw")
    else:
        say("you win!" if winner == human else "the AI wins")
    if db is not None:
        row = {"id": game_id, "moves": game.notation(moves), "winner": winner, "opponent": "human",
               "tree_player": 3 - human, "iterations": iterations, "started_at": started,
               "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        stamp(tree, game_id)  # the nodes this game made name it
        save(tree, db, games=[row])
        say(f"saved the tree ({tree.size:,} nodes) to {db}")
    return winner
