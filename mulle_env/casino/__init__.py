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

The PettingZoo AEC env is :func:`env` (loaded when asked for: the engine imports nothing
outside the standard library); the Gymnasium env is ``gymnasium.make("Casino-v0")``.
"""

from __future__ import annotations

from typing import Any

from .cards import DECK, POINTS, VALUE
from .moves import MOVES, NUM_MOVE_IDS, Move
from .record import check_result
from .render import render_state
from .ruleset import Ruleset
from .state import ENGINE_VERSION, Build, GameResult, GameState, PlayerView, new_game, replay

#: The short name the arena, the agents and the envs know this game by.
GAME_NAME = "casino"
#: Casino has one backend so far, the pure-Python reference.
BACKEND = "python"

__all__ = [
    "BACKEND", "Build", "DECK", "ENGINE_VERSION", "GAME_NAME", "GameResult", "GameState", "MOVES", "Move",
    "NUM_MOVE_IDS", "POINTS", "PlayerView", "Ruleset", "VALUE", "check_result", "env", "new_game", "raw_env",
    "render", "replay",
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
