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
    """A well-formed move that is not legal in the current position."""


class GameOverError(IllegalMoveError):
    """A move was played, or asked for, after the game ended."""


class GameNotOverError(MulleError):
    """A finished game's result was asked for while the game is still being played."""


class InvalidPositionError(MulleError):
    """A position (dict or JSON) that no game of Mulle can contain."""


class InvalidRulesetError(MulleError):
    """A ruleset flag that does not exist or has a wrong value."""
