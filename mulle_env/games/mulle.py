"""Mulle's game object for the environments: the engine, codec, observation, extras and stepper it already has.

:data:`MULLE` is what ``game=None`` or ``game="mulle"`` means to every env (``Mulle-v0``, the vector
env, the AEC env). It adds no knowledge of its own: each member points at the module that has owned
that knowledge all along (:mod:`mulle_env.codec`, :mod:`mulle_env.observation`,
:mod:`mulle_env.extras`, :mod:`mulle_env.stepper`, the engine), so those modules stay the one
place each thing is written and the env core reads Mulle only through this object.

>>> from mulle_env.games import get_game
>>> game = get_game("mulle")
>>> game.env_id, game.num_actions, game.obs_size
('Mulle-v0', 2812, 524)
>>> state = game.new_game(7, game.check_ruleset(None))
>>> game.decode(state, state.legal_ids()[0]) == state.legal_moves()[0]
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import codec, stepper
from ..engine import new_game as _new_game
from ..engine import ruleset as rulesets
from ..engine.moves import MOVES, Move
from ..engine.render import render_view
from ..observation import OBS_DTYPE, OBS_SIZE, SHEET_BOUND_PER_SET, encode_state, observation_bounds
from . import EnvGame, get_game

__all__ = ["EXTRAS_BOUND", "MULLE", "MulleGame"]

#: Every entry of Mulle's extra-input blocks lies in ``[0, EXTRAS_BOUND]`` (the observation space's bound).
EXTRAS_BOUND = 64.0


class MulleGame(EnvGame):
    """Mulle for the env layer (:class:`mulle_env.games.EnvGame`); its one instance is :data:`MULLE`."""

    name = "mulle"
    env_id = "Mulle-v0"
    aec_name = "mulle_v0"
    Ruleset = rulesets.Ruleset
    num_actions = codec.NUM_ACTIONS
    obs_size = OBS_SIZE
    obs_dtype = OBS_DTYPE
    # Plain functions (static): the Python stepper calls them once per game and row, and a bound method
    # would cost a frame more each time.
    new_game = staticmethod(_new_game)
    encode = staticmethod(encode_state)
    observation_bounds = staticmethod(observation_bounds)
    decode = staticmethod(codec.decode)  # the message says why, by the rules (rules.explain)

    def check_ruleset(self, ruleset: rulesets.Ruleset | dict[str, Any] | None, /
                      ) -> rulesets.Ruleset:
        """The checked :class:`~mulle_env.Ruleset`; one the fixed action space cannot express is refused
        (:class:`mulle_env.codec.UnsupportedRulesetError`: only ``forced_capture=True`` fits)."""
        checked: rulesets.Ruleset = super().check_ruleset(ruleset)
        return codec.check_ruleset(checked)

    def move_of(self, action: int, /) -> Move:
        """``MOVES[action]``: an action is the engine's dense move id."""
        return MOVES[action]

    def score_bound(self, ruleset: rulesets.Ruleset, /) -> float:
        """``sets * 600``: no sheet of a set exceeds :data:`~mulle_env.observation.SHEET_BOUND_PER_SET`."""
        return float(ruleset.sets * SHEET_BOUND_PER_SET)

    def max_decisions(self, ruleset: rulesets.Ruleset, /) -> int:
        """Half the moves of a game (exact: every card play is a decision, 48 per seat and set)."""
        return codec.max_game_length(ruleset) // 2

    def make_stepper(self, num_envs: int, ruleset: rulesets.Ruleset, internal_random: bool,
                     num_threads: int | str = 1, /) -> stepper.Stepper:
        """The stepper of the engine's backend (:func:`mulle_env.stepper.make_stepper`): compiled or Python."""
        return stepper.make_stepper(num_envs, ruleset, internal_random, num_threads)

    def render(self, view: Any, /) -> str:
        """The table, the hand, the piles and the scores as text (:func:`mulle_env.engine.render.render_view`)."""
        return render_view(view)

    @property
    def extra_blocks(self) -> tuple[str, ...]:
        """The blocks of :mod:`mulle_env.extras` (``"capture-v1"`` to ``"capture-v4"``)."""
        from .. import extras  # its tables load on first use: an env without extra inputs never pays for them

        return extras.EXTRAS

    def extras_bounds(self, name: str, /) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Every entry of block ``name`` lies in ``[0, EXTRAS_BOUND]``."""
        from .. import extras

        n = extras.extras_size(name)
        return np.zeros(n, OBS_DTYPE), np.full(n, EXTRAS_BOUND, OBS_DTYPE)

    def add_extras(self, base: NDArray[np.float32], out: NDArray[np.float32], name: str, /) -> None:
        """Block ``name`` of each encoding row of ``base`` into ``out`` (the code the learned agent uses)."""
        from .. import extras

        extras.afterstate_extras(base, out, name)

    afterstate_size = OBS_SIZE

    def write_afterstates(self, state: Any, player: int, actions: Sequence[int], obs: NDArray[np.float32],
                          banked: NDArray[np.float64], /) -> None:
        """:func:`mulle_env.afterstates.write_afterstates`: each move's position left, and the score difference."""
        from ..afterstates import write_afterstates

        write_afterstates(state, player, actions, obs, banked)

    def __reduce__(self) -> tuple[Any, ...]:
        # A copied or pickled env keeps the one game object: it is looked up by name again.
        return get_game, (self.name,)

    def __repr__(self) -> str:
        return "mulle_env.games.mulle.MULLE"


#: Mulle's game object: what ``game=None`` and ``game="mulle"`` give every env.
MULLE = MulleGame()
