"""The game state on the compiled rules core: the C backend of the engine.

:class:`GameState` keeps the position in a C struct (``csrc/core.h``) and runs legal move
generation, moves, the forced-capture search, deals and scoring in C
(:mod:`mulle_env.engine._core`). Everything else (checked play, parsing, validation of
outside input, errors and their messages, the canonical form) is the shared
:class:`~mulle_env.engine.state.GameStateBase`, the same code the Python reference runs.

When this module is imported it configures the core with the Python definitions (cards,
the move table, the rule sizes, the observation layout): the C code holds no copy of
them. A core built from other sources (a stale build) is refused here with a message
that says to rebuild, never run.

Public here, besides :class:`GameState`, :func:`new_game` and :func:`replay`:
:data:`CORE_API` (the PyCapsule the env layer's and the agents' compiled modules build
on: ``mulle_env._native`` holds the batched stepper, the extra-input blocks, the
afterstates and the random playout, ``agents._native`` the rollouts).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import _core, rules
from . import observation_layout as layout
from .cards import CARDS, HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, MULLE_VALUE_HAND, TABLE_VALUE
from .errors import GameOverError, InvalidPositionError
from .moves import KINDS, MAX_BUILD_VALUE, MIN_BUILD_VALUE, MOVES, Move
from .ruleset import Ruleset
from .state import (
    ENGINE_VERSION,
    Build,
    GameResult,
    GameStateBase,
    PlayerView,
    replay_game,
    start_game,
)

__all__ = ["CORE_API", "ENGINE_VERSION", "GAME_OPS", "Build", "GameResult", "GameState", "PlayerView", "new_game",
           "replay"]

#: The ABI this module speaks; the compiled core must speak the same.
ABI = 6


def _configure() -> None:
    """Give the core the Python tables; refuse a core built for others."""
    if getattr(_core, "ABI", None) != ABI:
        raise ImportError(f"the compiled core mulle_env.engine._core speaks ABI {getattr(_core, 'ABI', None)}, "
                          f"this code ABI {ABI}: it is a stale build; rebuild it with pip install -e .")
    known = {"FACE_BLOCKS": layout.FACE_BLOCKS, "BUILD_FEATURES": layout.BUILD_FEATURES,
             "SHEETS": layout.SHEETS, "SCALARS": layout.SCALAR_FEATURES}
    for name, ours in known.items():
        if tuple(getattr(_core, name)) != tuple(ours):
            raise ImportError(f"the compiled core writes the observation's {name.lower()} "
                              f"{tuple(getattr(_core, name))}, the layout has {tuple(ours)}: it is a stale build; "
                              "rebuild it with pip install -e .")
    s = layout.OBS_SLICES
    b0 = s["builds"].start
    nf = len(layout.BUILD_FEATURES)
    layout_args = (
        (layout.OBS_SIZE,),
        tuple(s[name].start for name in layout.FACE_BLOCKS),
        (b0,),
        (nf,),
        tuple(range(nf)),
        tuple(s[name].start for name in layout.SHEETS),
        tuple(s["scalars"].start + i for i in range(len(layout.SCALAR_FEATURES))),
        tuple(layout.SCALES[k] for k in ("score", "build_cards", "deck", "hand", "deals_per_set")),
        (layout.OBS_VERSION,),
    )
    moves = tuple(
        (KINDS.index(m.kind), int(m.card), -1 if m.on is None else int(m.on), -1 if m.on_build is None else m.on_build,
         -1 if m.to is None else m.to)
        for m in MOVES
    )
    _core.configure(
        ABI,
        (TABLE_VALUE, HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, MULLE_VALUE_HAND),
        moves,
        (rules.HAND_SIZE, rules.TABLE_DEAL, rules.DEALS_PER_SET, MIN_BUILD_VALUE, MAX_BUILD_VALUE,
         rules.MAX_MULLE_HAND_VALUE, rules.INTAKE_BONUS_FROM, rules.COUNT_LIMIT),
        layout_args,
        (MOVES, CARDS, Build, InvalidPositionError, Ruleset, GameOverError),
    )
    if _core.MAX_CARDS != rules.MAX_STATE_CARDS:
        raise ImportError("the compiled core holds another number of cards than rules.MAX_STATE_CARDS: a stale "
                          "build; rebuild it with pip install -e .")


_configure()

#: The core's C API, a PyCapsule named ``mulle_env.engine._core.API`` (csrc/core.h ``MulleCoreAPI``).
CORE_API = _core.API
#: Mulle's game table for the env layer's stepper, a PyCapsule named ``mulle_env.engine._core.GAME_OPS``
#: (csrc/game_ops.h ``GameOps``): the stepper is written once against it and handed each game's.
GAME_OPS = _core.GAME_OPS

_new_tuple = tuple.__new__


class GameState(_core.Core, GameStateBase):
    """A position of a game of Mulle on the compiled core; the API of :class:`.state.GameState`.

    Create one with :func:`new_game` or :meth:`from_dict`; play with :meth:`play`.
    ``play`` mutates the state (and returns it); :meth:`copy` gives an independent one.
    Attributes are read-only and every read is a fresh value, as on the Python reference.
    """

    __slots__ = ()

    def view(self, player: int) -> PlayerView:
        """What ``player`` may know: own hand, the table, public piles and counts."""
        if player.__class__ is not int or player not in (0, 1):
            from .state import _seat

            player = _seat(player)  # the reference engine's check (numpy ints pass, 1.0 and True do not)
        return _new_tuple(PlayerView, self._view_tuple(player, self._public_part()))


def new_game(seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """A new game: first deal of the first set done, seat 0 to move."""
    return start_game(GameState, seed, ruleset)


def replay(seed: int, moves: Iterable[Move | str], ruleset: Ruleset | dict[str, Any] | None = None) -> GameState:
    """The state reached by playing ``moves`` from ``new_game(seed, ruleset)``.

    Each move is checked; an illegal one raises :class:`IllegalMoveError` naming its
    position in the list.
    """
    return replay_game(GameState, seed, moves, ruleset)
