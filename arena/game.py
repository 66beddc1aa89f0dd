"""The arena's game protocol: what a game module must offer to be played by ``mulle-arena``.

The arena plays any game, not only Mulle: ``--game MODULE`` names a module (or
``module:object``) that satisfies :class:`Game`, whose states satisfy :class:`GameState`
and whose results satisfy :class:`GameResult`. :func:`check_game` checks a game when the
arena loads it, so a module that is not a game is refused with a message naming what it
lacks, before any game is scheduled.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

__all__ = ["Game", "GameProtocolError", "GameResult", "GameState", "check_game"]


@runtime_checkable
class GameResult(Protocol):
    """How a finished game ended: the two scores by seat and the winning seat (``None``: a draw)."""

    scores: Sequence[float]
    winner: int | None

    def to_dict(self) -> dict:
        """Plain JSON form; its ``"sheets"`` entry, if any, is recorded in the result line."""


@runtime_checkable
class GameState(Protocol):
    """A game in progress between seats 0 and 1, as the arena drives it."""

    to_move: int

    def legal_moves(self) -> Sequence[Any]:
        """The legal moves of the seat to move (moves print as text with ``str``)."""

    def play(self, move: Any) -> Any:
        """Play ``move`` for the seat to move, checking it (an illegal move raises ``ValueError``)."""

    def view(self, player: int) -> Any:
        """What seat ``player`` may know: the argument agents' ``act`` receives."""

    def is_over(self) -> bool:
        """True once the game has ended."""

    def result(self) -> GameResult:
        """How the finished game ended."""


@runtime_checkable
class Game(Protocol):
    """A game module: ``new_game(seed=..., ruleset=...)`` makes a :class:`GameState`.

    Optional: ``Ruleset`` with ``from_dict``/``to_dict`` (and ``from_strings`` for
    ``--rule``), and ``ENGINE_VERSION``, recorded in every result line.
    """

    def new_game(self, seed: int, ruleset: Any = None) -> GameState:
        """A new game from a deal seed and the game's ruleset object."""


class GameProtocolError(TypeError):
    """A game module that does not satisfy the arena's game protocol."""


_STATE_MEMBERS = ("to_move", "legal_moves", "play", "view", "is_over", "result")


def check_game(game: Any, name: str = "the game") -> None:
    """Raise :class:`GameProtocolError` unless ``game`` satisfies :class:`Game` and makes :class:`GameState`\\ s.

    A new game (seed 0, the game's default ruleset) is made to check its state.
    """
    if not isinstance(game, Game):
        raise GameProtocolError(f"{name} is not a game for the arena: it has no new_game(seed, ruleset) function")
    cls = getattr(game, "Ruleset", None)
    ruleset = cls.from_dict({}) if cls is not None and hasattr(cls, "from_dict") else None
    state = game.new_game(seed=0, ruleset=ruleset)
    if not isinstance(state, GameState):
        missing = [m for m in _STATE_MEMBERS if not hasattr(state, m)]
        raise GameProtocolError(
            f"{name}: new_game() returns a {type(state).__name__}, which lacks {', '.join(missing)}; "
            f"a game state needs {', '.join(_STATE_MEMBERS)} (see arena.game.GameState)"
        )
