"""The uniform random player: the floor every rating is anchored on."""

from __future__ import annotations

from .base import Agent


class RandomAgent(Agent):
    """Plays a legal move chosen uniformly at random."""

    name = spec = "random"

    @property
    def needs_view(self) -> bool:
        """``False``: :meth:`act` reads only ``legal_moves`` and ``rng`` (a subclass that overrides it gets views)."""
        return type(self).act is not RandomAgent.act

    def act(self, view, legal_moves, rng):
        """A uniformly random legal move."""
        return legal_moves[rng.randrange(len(legal_moves))]
