"""The uniform random player: the floor every rating is anchored on."""

from __future__ import annotations

from .base import Agent


class RandomAgent(Agent):
    """Plays a legal move chosen uniformly at random."""

    name = spec = "random"

    def act(self, view, legal_moves, rng):
        """A uniformly random legal move."""
        return legal_moves[rng.randrange(len(legal_moves))]
