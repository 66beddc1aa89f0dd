"""The one small interface every player implements, and how it says which games it plays."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing agents stays cheap
    from mulle_env.engine import Move, PlayerView, Ruleset

#: The games an agent plays when it declares none: Mulle, the project's first game, which
#: every agent written before games were declared was written for.
DEFAULT_GAMES: tuple[str, ...] = ("mulle",)
#: In :attr:`Agent.games`: the agent plays every game (it reads nothing but the legal moves).
ANY_GAME = "*"


def declares(games: object, game: str) -> bool:
    """True if the declaration ``games`` (:attr:`Agent.games`: short names, or :data:`ANY_GAME`) names ``game``.

    A bare string counts as one name (``games = ("casino")`` without its comma), not as
    the letters of one; anything that is not a collection of names declares nothing.
    """
    if isinstance(games, str):
        games = (games,)
    return isinstance(games, (tuple, list, set, frozenset)) and (game in games or ANY_GAME in games)


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
        games: The short names of the games this agent plays (``"mulle"``, ``"casino"``;
            docs/agents.md), or :data:`ANY_GAME` for an agent that reads only the legal
            moves. The arena refuses a tournament that seats an agent at a game not in it.
            Defaults to :data:`DEFAULT_GAMES` (Mulle); a subclass inherits its parent's, and
            an agent may set it per instance (a policy file knows the game it learnt).
    """

    name: str = "agent"
    spec: str = "agent"
    needs_view: bool = True
    version: str = "1"
    games: tuple[str, ...] = DEFAULT_GAMES

    def plays(self, game: str) -> bool:
        """True if this agent plays the game whose short name is ``game`` (see :attr:`games`)."""
        return declares(self.games, game)

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
