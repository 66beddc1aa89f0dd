"""One game between agents: the loop the agents' own tools share, on the engine's :class:`Match`.

Tournaments belong to the arena; this is for code inside ``agents`` (training data,
quick evaluations) that must not depend on it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from mulle_env.engine import GameLoop, GameState, Match, Move, Ruleset

from .base import Agent

__all__ = ["play_agents", "play_game"]


def play_agents(
    bots: Sequence[Agent],
    seed: int,
    rngs: Sequence[random.Random],
    ruleset: Ruleset | None = None,
    on_move: Callable[[GameState, int, list[Move], Move], None] | None = None,
    specs: Sequence[str | None] | None = None,
) -> Match:
    """Play deal ``seed`` with ``bots[p]`` in seat ``p``; return the finished :class:`Match`.

    The engine's game loop (:class:`~mulle_env.engine.GameLoop`): each agent is reset
    first (once, even if it sits in both seats), chooses from its seat's view with
    ``rngs[p]``, and hears every move through ``observe``. ``on_move(state, player, legal,
    move)`` is called with each chosen move before it is applied; an error it raises is
    the caller's own and propagates unchanged. Moves are checked: an agent's illegal move
    raises :class:`~mulle_env.engine.IllegalMoveError`. ``specs`` names the seats in the
    match's record (default: the agents' ``spec``).
    """
    if specs is None:
        specs = [getattr(b, "spec", None) for b in bots]
    match = Match(seed, ruleset, specs)
    if on_move is None:
        match.play_out(bots, rngs)
        return match
    loop = GameLoop(match, bots, rngs)
    loop.start()
    while not match.over:
        seat, move, legal = loop.choose()
        on_move(match.state, seat, legal, move)  # still the position before the move
        loop.commit(seat, move, legal)
    return match


def play_game(
    bots: Sequence[Agent],
    seed: int,
    rngs: Sequence[random.Random],
    ruleset: Ruleset | None = None,
    on_move: Callable[[GameState, int, list[Move], Move], None] | None = None,
) -> GameState:
    """Like :func:`play_agents`, but return the finished state.

    A kept compatibility name (CHANGELOG, 0.2.0): the name the training tools used; new code
    calls :func:`play_agents`, which returns the :class:`~mulle_env.Match` (record included).
    """
    return play_agents(bots, seed, rngs, ruleset, on_move).state
