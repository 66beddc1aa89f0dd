"""Exceptions of the rules engine.

Every error is a :class:`ValueError` subclass whose message names the bad input and
what would have been allowed, in the style of python-chess.
"""

from __future__ import annotations


class MulleError(ValueError):
    """Base class of every error the engine raises on bad input."""


class InvalidCardError(MulleError):
    """A card text that does not name one of the 52 faces."""


class InvalidMoveError(MulleError):
    """A move text that is not well formed (syntax, not legality)."""


class IllegalMoveError(MulleError):
    """A well-formed move that is not legal in the current position.

    When an agent chose it (:class:`~mulle_env.engine.loop.GameLoop`), :attr:`agent`,
    :attr:`seat` and :attr:`reason` say who and why; they are ``None`` for a move from outside.
    """

    def __init__(self, message: str = "", *, agent: str | None = None, seat: int | None = None,
                 reason: str | None = None) -> None:
        super().__init__(message)
        #: The name (spec) of the agent that chose the move, or ``None``.
        self.agent = agent
        #: The seat of that agent, or ``None``.
        self.seat = seat
        #: Why the move was refused (the engine's message), or ``None``.
        self.reason = reason


class GameOverError(IllegalMoveError):
    """A move was played, or asked for, after the game ended."""


class GameNotOverError(MulleError):
    """A finished game's result was asked for while the game is still being played."""


class InvalidPositionError(MulleError):
    """A position (dict or JSON) that no game of Mulle can contain."""


class InvalidRulesetError(MulleError):
    """A ruleset flag that does not exist or has a wrong value."""


class AgentError(RuntimeError):
    """An agent failed while the game loop called it: it raised in ``reset``, ``act`` or ``observe``.

    Not a :class:`MulleError`: the input was not bad, the agent's code was. :attr:`agent`,
    :attr:`seat` and :attr:`stage` (``"reset"``, ``"act"`` or ``"observe"``) say who and
    where; the agent's own exception is the ``__cause__``. The arena counts it as a
    forfeit, the live server replaces the agent, the environments let it propagate.
    """

    def __init__(self, message: str, *, agent: str, seat: int, stage: str) -> None:
        super().__init__(message)
        self.agent = agent
        self.seat = seat
        self.stage = stage
