"""The Mulle rules engine: pure Python, no Gymnasium, agents or arena.

Public names are re-exported by :mod:`mulle_env`.
"""

from .cards import CARDS, Card, parse_card
from .errors import (
    GameNotOverError,
    GameOverError,
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    InvalidPositionError,
    InvalidRulesetError,
    MulleError,
)
from .match import Match, MoveEvent, NotYourTurnError, move_event
from .moves import MOVES, NUM_MOVE_IDS, Move
from .record import GameRecord, InvalidRecordError
from .ruleset import Ruleset
from .knowledge import (
    SetPoints,
    build_at,
    build_cards,
    build_owner,
    capture_takes,
    intake_bonus,
    is_mulle_capture,
    set_points,
)
from .state import ENGINE_VERSION, Build, GameResult, GameState, PlayerView, new_game, replay

__all__ = [
    "CARDS", "Card", "parse_card", "GameNotOverError", "GameOverError", "IllegalMoveError", "InvalidCardError",
    "InvalidMoveError", "InvalidPositionError", "InvalidRulesetError", "MulleError", "MOVES",
    "NUM_MOVE_IDS", "Move", "Ruleset", "ENGINE_VERSION", "Build", "GameResult", "GameState",
    "PlayerView", "new_game", "replay", "SetPoints", "build_at", "build_cards", "build_owner", "capture_takes",
    "intake_bonus", "is_mulle_capture", "set_points",
    "Match", "MoveEvent", "NotYourTurnError", "move_event", "GameRecord", "InvalidRecordError",
]
