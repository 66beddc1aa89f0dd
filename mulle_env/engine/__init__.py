"""The Mulle rules engine: no Gymnasium, agents or arena.

Two backends behind one API: the compiled core (``csrc/``, wrapped by :mod:`.cstate`)
and the pure-Python reference (:mod:`.state`). :data:`BACKEND` says which one
``GameState``, ``new_game`` and ``replay`` come from: ``"c"`` when the extension was
built, else ``"python"``. The environment variable ``MULLE_ENGINE=python`` forces the
Python engine, ``MULLE_ENGINE=c`` insists on the C one (an ImportError if it is
missing). :func:`backends` gives both, side by side, for tests and benchmarks.
:data:`BACKEND` is the one switch: every
compiled part of the project (the engine, the environments' stepper, the agents' rollouts
and afterstates, the extra-input blocks) follows it.

Public names are re-exported by :mod:`mulle_env`.
"""

import typing as _typing
from collections.abc import Iterable as _Iterable
from types import ModuleType as _ModuleType

from . import backend as _backend
from . import state as _pystate
from .cards import CARDS, Card, parse_card
from .errors import (
    AgentError,
    GameNotOverError,
    GameOverError,
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    InvalidPositionError,
    InvalidRulesetError,
    MulleError,
)
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
from .loop import GameLoop
from .match import Match, MoveEvent, NotYourTurnError, move_event
from .moves import MOVES, NUM_MOVE_IDS, Move
from .record import GameRecord, InvalidRecordError
from .rng import SEED_MAX, seed_problem
from .ruleset import Ruleset
from .state import ENGINE_VERSION, Build, GameResult, GameStateBase, PlayerView

_choice = _backend.requested()


def _load_cstate() -> _ModuleType:
    from . import cstate  # configures the compiled core (built by setup.py when a C compiler was there)

    return cstate


_cstate: _ModuleType | None
#: Why the C backend is not available (None when it is).
C_IMPORT_ERROR: str | None
#: The backend in use: ``"c"`` (compiled core) or ``"python"`` (pure-Python reference).
BACKEND: str
_cstate, C_IMPORT_ERROR, BACKEND = _backend.choose(f"{__name__}._core", _load_cstate)
if _typing.TYPE_CHECKING:
    # To a type checker GameState is what both backends' classes are, a GameStateBase (which
    # declares the whole API); at run time it is the class of BACKEND.
    GameState = GameStateBase

    def new_game(seed: int = 0, ruleset: Ruleset | dict[str, _typing.Any] | None = None) -> GameStateBase: ...
    def replay(seed: int, moves: _Iterable[Move | str],
               ruleset: Ruleset | dict[str, _typing.Any] | None = None) -> GameStateBase: ...
else:
    _active = _cstate if BACKEND == "c" else _pystate
    GameState = _active.GameState
    new_game = _active.new_game
    replay = _active.replay


def fallback_notice() -> str | None:
    """A one-line warning when the Python engine runs only because the compiled core is missing, else ``None``.

    Commands print it at their start (``MULLE_ENGINE=python``, a deliberate choice, gives none):
    a user whose install could not compile the core should learn that their runs are about
    ten times slower, and why.
    """
    if BACKEND == "python" and _choice != "python" and C_IMPORT_ERROR is not None:
        return (f"warning: running on the pure-Python engine (about 10x slower) because {C_IMPORT_ERROR}; "
                "install a C compiler and run pip install -e . again, or set MULLE_ENGINE=python to silence this")
    return None


def backends() -> dict[str, _ModuleType]:
    """Every available backend by name: the module with its ``GameState``, ``new_game``, ``replay``.

    ``"python"`` is always there; ``"c"`` when the extension is built (even if
    ``MULLE_ENGINE=python`` chose the Python one as :data:`BACKEND`).
    """
    out = {"python": _pystate}
    if _cstate is not None:
        out["c"] = _cstate
    return out


__all__ = [
    "AgentError",
    "BACKEND",
    "CARDS",
    "ENGINE_VERSION",
    "MOVES",
    "NUM_MOVE_IDS",
    "Build",
    "Card",
    "GameLoop",
    "GameNotOverError",
    "GameOverError",
    "GameRecord",
    "GameResult",
    "GameState",
    "GameStateBase",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidMoveError",
    "InvalidPositionError",
    "InvalidRecordError",
    "InvalidRulesetError",
    "Match",
    "Move",
    "MoveEvent",
    "MulleError",
    "NotYourTurnError",
    "PlayerView",
    "Ruleset",
    "SEED_MAX",
    "SetPoints",
    "backends",
    "fallback_notice",
    "build_at",
    "build_cards",
    "build_owner",
    "capture_takes",
    "intake_bonus",
    "is_mulle_capture",
    "move_event",
    "new_game",
    "parse_card",
    "replay",
    "seed_problem",
    "set_points",
]
