"""The Mulle rules engine: pure Python, no Gymnasium, agents or arena.

Public names are re-exported by :mod:`mulle_env`.
"""

from .cards import CARDS, Card, parse_card
from .errors import (
    GameOverError,
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    InvalidPositionError,
    InvalidRulesetError,
    MulleError,
)
from .match import Match, MoveEvent, NotYourTurnError
from .moves import MOVES, NUM_MOVE_IDS, Move
from .record import GameRecord, InvalidRecordError
from .ruleset import Ruleset
from .state import ENGINE_VERSION, Build, GameResult, GameState, PlayerView, new_game, replay

__all__ = [
    "CARDS", "Card", "parse_card", "GameOverError", "IllegalMoveError", "InvalidCardError",
    "InvalidMoveError", "InvalidPositionError", "InvalidRulesetError", "MulleError", "MOVES",
    "NUM_MOVE_IDS", "Move", "Ruleset", "ENGINE_VERSION", "Build", "GameResult", "GameState",
    "PlayerView", "new_game", "replay", "Match", "MoveEvent", "NotYourTurnError", "GameRecord", "InvalidRecordError",
]
