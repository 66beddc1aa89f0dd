"""Casino, the project's second game: its rules engine (standard library only) and its faces.

The rules are ``shared/CASINO.md``'s reading of two-player Casino, with the seed app's house
rules as :class:`Ruleset` flags (:meth:`Ruleset.app`); docs/casino.md says how each rule is
read. The engine has the same shape as Mulle's: ``new_game(seed=, ruleset=)``, a
:class:`GameState` with ``legal_moves()``, ``play()``, ``view()``, ``result()``, a canonical
form and a stable hash, and a :class:`Move` that prints and parses.

>>> from mulle_env import casino
>>> st = casino.new_game(seed=7)
>>> st.play(st.legal_moves()[0]).to_move
1

Two backends behind one API, as Mulle's engine has: the compiled core (``csrc/``, wrapped by
:mod:`.cstate`) and the pure-Python reference (:mod:`.state`). :data:`BACKEND` says which one
``GameState``, ``new_game`` and ``replay`` come from, by the project's one switch: ``"c"`` when the
extension is built, unless ``MULLE_ENGINE=python`` forces the reference; ``MULLE_ENGINE=c`` insists
on the compiled one (an ImportError if it is missing). :func:`backends` gives both, side by side,
for tests and benchmarks.

The PettingZoo AEC env is :func:`env` (loaded when asked for: the engine imports nothing
outside the standard library); the Gymnasium env is ``gymnasium.make("Casino-v0")``.
"""

from __future__ import annotations

import typing as _typing
from collections.abc import Iterable as _Iterable
from types import ModuleType as _ModuleType
from typing import Any

from ..engine.backend import choose as _choose_backend
from . import state as _pystate
from .cards import DECK, POINTS, VALUE
from .moves import MOVES, NUM_MOVE_IDS, Move
from .record import check_result
from .render import render_state
from .ruleset import Ruleset
from .state import ENGINE_VERSION, Build, GameResult, GameStateBase, PlayerView

#: The short name the arena, the agents and the envs know this game by.
GAME_NAME = "casino"


def _load_cstate() -> _ModuleType:
    from . import cstate  # configures the compiled core (built by setup.py when a C compiler was there)

    return cstate


_cstate: _ModuleType | None
#: Why the C backend is not available (None when it is).
C_IMPORT_ERROR: str | None
#: The backend in use: ``"c"`` (compiled core) or ``"python"`` (pure-Python reference); MULLE_ENGINE decides.
BACKEND: str
# AttributeError: the core counts its allocations on Mulle's core's failpoint, reached through that core's
# capsule; without Mulle's core the capsule import fails with an AttributeError (mulle_env.engine has no _core).
_cstate, C_IMPORT_ERROR, BACKEND = _choose_backend(f"{__name__}._core", _load_cstate, also=(AttributeError,))
if _typing.TYPE_CHECKING:
    # To a type checker GameState is what both backends' classes are, a GameStateBase (which declares the
    # whole API); at run time it is the class of BACKEND.
    GameState = GameStateBase

    def new_game(seed: int = 0, ruleset: Ruleset | dict[str, Any] | None = None) -> GameStateBase: ...
    def replay(seed: int, moves: _Iterable[Move | str],
               ruleset: Ruleset | dict[str, Any] | None = None) -> GameStateBase: ...
else:
    _active = _cstate if BACKEND == "c" else _pystate
    GameState = _active.GameState
    new_game = _active.new_game
    replay = _active.replay


def backends() -> dict[str, _ModuleType]:
    """Every available backend by name: the module with its ``GameState``, ``new_game``, ``replay``.

    ``"python"`` is always there; ``"c"`` when the extension is built (even if ``MULLE_ENGINE=python``
    chose the Python one as :data:`BACKEND`).
    """
    out = {"python": _pystate}
    if _cstate is not None:
        out["c"] = _cstate
    return out

__all__ = [
    "BACKEND", "Build", "C_IMPORT_ERROR", "DECK", "ENGINE_VERSION", "GAME_NAME", "GameResult", "GameState",
    "GameStateBase", "MOVES", "Move", "NUM_MOVE_IDS", "POINTS", "PlayerView", "Ruleset", "VALUE", "backends",
    "check_result", "env", "new_game", "raw_env", "render", "replay",
]


def render(state: GameState, seat: int | None = None) -> str:
    """The position as text; with ``seat`` only what that seat may see."""
    return render_state(state, seat)


def env(**kwargs: Any) -> Any:
    """The PettingZoo AEC env of Casino, wrapped as PettingZoo's classic games are (needs the pettingzoo extra)."""
    from mulle_env import pettingzoo

    make: Any = pettingzoo.env
    return make(game="casino", **kwargs)


def raw_env(**kwargs: Any) -> Any:
    """The PettingZoo AEC env of Casino without PettingZoo's wrappers."""
    from mulle_env import pettingzoo

    make: Any = pettingzoo.raw_env
    return make(game="casino", **kwargs)
