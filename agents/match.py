"""One game between agents: the loop the agents' own tools share, on the engine's :class:`Match`.

Tournaments belong to the arena; this is for code inside ``agents`` (training data,
quick evaluations) that must not depend on it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from mulle_env.engine import GameState, Match, Move, Ruleset

from .base import Agent

__all__ = ["play_agents", "play_game"]


class _Watched:
    """An agent that reports each chosen move to ``on_move`` before the match plays it."""

    def __init__(self, agent: Agent, match: Match, on_move: Callable[[GameState, int, list[Move], Move], None]):
        self.agent, self.match, self.on_move = agent, match, on_move
        self.spec = getattr(agent, "spec", agent)

    def reset(self) -> None:
        self.agent.reset()

    def observe(self, event) -> None:
        self.agent.observe(event)

    def act(self, view, legal_moves, rng):
        move = self.agent.act(view, legal_moves, rng)
        self.on_move(self.match.state, view.player, legal_moves, move)  # still the position before the move
        return move


def play_agents(
    bots: Sequence[Agent],
    seed: int,
    rngs: Sequence[random.Random],
    ruleset: Ruleset | None = None,
    on_move: Callable[[GameState, int, list[Move], Move], None] | None = None,
    specs: Sequence[str | None] | None = None,
) -> Match:
    """Play deal ``seed`` with ``bots[p]`` in seat ``p``; return the finished :class:`Match`.

    Each agent is reset first (once, even if it sits in both seats), chooses from its
    seat's view with ``rngs[p]``, and hears every move through ``observe``.
    ``on_move(state, player, legal, move)`` is called before each move is applied.
    Moves are checked: an agent's illegal move raises. ``specs`` names the seats in the
    match's record (default: the agents' ``spec``).
    """
    if specs is None:
        specs = [getattr(b, "spec", None) for b in bots]
    match = Match(seed, ruleset, specs)
    if on_move is not None:
        watched = {id(b): _Watched(b, match, on_move) for b in bots}  # one wrapper per agent, as play_out dedups
        bots = [watched[id(b)] for b in bots]
    match.play_out(bots, rngs)
    return match


def play_game(
    bots: Sequence[Agent],
    seed: int,
    rngs: Sequence[random.Random],
    ruleset: Ruleset | None = None,
    on_move: Callable[[GameState, int, list[Move], Move], None] | None = None,
) -> GameState:
    """Like :func:`play_agents`, but return the finished state (the name the training tools have used)."""
    return play_agents(bots, seed, rngs, ruleset, on_move).state
