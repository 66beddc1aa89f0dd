"""The one small interface every Mulle player implements."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing agents stays cheap
    from mulle_env.engine import Move, PlayerView, Ruleset


class Agent:
    """A player: chooses a move from what its seat may know.

    Subclasses implement :meth:`act`; :meth:`reset` and :meth:`observe` are hooks for
    agents that remember. An agent never sees hidden information: the arena and the
    environments hand it ``state.view(player)`` only. Given the same ``rng`` state an
    agent makes the same choices, and every agent pickles (arena workers build agents
    from their specs).

    Attributes:
        name: Registry name (``"random"``, ``"pimc"``, ...).
        spec: The spec string that rebuilds this agent with :func:`agents.make`.
        needs_view: ``False`` for an agent whose :meth:`act` never reads ``view``: drivers
            that know it (the environments) may then pass ``None`` and skip building the
            view. Defaults to ``True``; an agent without the attribute gets its view.
        version: A short string naming how this agent plays, bumped whenever a change
            makes the same spec play differently (a new default, a new search). The arena
            records it with every game and, when it resumes a results file, plays again
            the games an agent of another version played (docs/arena.md). Defaults to
            ``"1"``; results lines written before versions were recorded count as ``"1"``.
            An agent may set it per instance (``learned`` derives it from its policy file).
    """

    name: str = "agent"
    spec: str = "agent"
    needs_view: bool = True
    version: str = "1"

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """Return one of ``legal_moves`` for the position ``view``."""
        raise NotImplementedError

    def check_ruleset(self, ruleset: Ruleset) -> None:
        """Raise ``ValueError`` saying why if this agent cannot play under ``ruleset``.

        The arena asks before a tournament, so an agent that cannot play the rules is
        refused up front instead of forfeiting every game. Most agents play any ruleset.
        """

    def reset(self) -> None:
        """Forget everything: a new game starts."""

    def observe(self, event: tuple[int, Move]) -> None:
        """Hear that ``event = (player, move)`` was just played (by either seat)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec!r}>"
