"""The uniform random player: the floor every rating is anchored on."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .base import ANY_GAME, Agent

if TYPE_CHECKING:
    from mulle_env.engine import Move, PlayerView


class RandomAgent(Agent):
    """Plays a legal move chosen uniformly at random."""

    name = spec = "random"
    games = (ANY_GAME,)  # it reads only the legal moves, which every game has

    @property
    def needs_view(self) -> bool:  # type: ignore[override]  # read-only here: it follows act
        """``False``: :meth:`act` reads only ``legal_moves`` and ``rng`` (a subclass that overrides it gets views)."""
        return type(self).act is not RandomAgent.act

    def act(self, view: PlayerView | None, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """A uniformly random legal move."""
        return legal_moves[rng.randrange(len(legal_moves))]
