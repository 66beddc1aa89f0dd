"""One game between agents: the loop the agents' own tools share.

Tournaments belong to the arena; this is for code inside ``agents`` (training data,
quick evaluations) that must not depend on it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from mulle_env.engine import GameState, Move, Ruleset, new_game

from .base import Agent


def play_game(
    bots: Sequence[Agent],
    seed: int,
    rngs: Sequence[random.Random],
    ruleset: Ruleset | None = None,
    on_move: Callable[[GameState, int, list[Move], Move], None] | None = None,
) -> GameState:
    """Play deal ``seed`` with ``bots[p]`` in seat ``p``; return the finished state.

    Each agent is reset first, chooses from its seat's view with ``rngs[p]``, and hears
    every move through ``observe``. ``on_move(state, player, legal, move)`` is called
    before each move is applied. Moves are checked: an agent's illegal move raises.
    """
    agents = list({id(b): b for b in bots}.values())  # one agent may sit in both seats
    for bot in agents:
        bot.reset()
    st = new_game(seed, ruleset)
    while not st.over:
        p = st.to_move
        legal = st.legal_moves()
        move = bots[p].act(st.view(p), legal, rngs[p])
        if on_move is not None:
            on_move(st, p, legal, move)
        st.play(move)
        for bot in agents:
            bot.observe((p, move))
    return st
