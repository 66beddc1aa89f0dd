"""mulle-env: the Mulle rules engine, Gymnasium and PettingZoo environments.

>>> import mulle_env as me
>>> state = me.new_game(seed=7)
>>> state.play(state.legal_moves()[0]).to_move
1
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .engine import *  # noqa: F403
from .engine import __all__ as _engine_all
from .engine.record import check_result

if TYPE_CHECKING:
    from .gym_env import MulleEnv

__version__ = "0.4.1"  # the one place the version is written (pyproject.toml reads it; CHANGELOG.md)
__all__ = [*_engine_all, "__version__", "MulleEnv", "check_result"]  # noqa: F405 - MulleEnv comes lazily from __getattr__


from ._registration import register_envs as _register_envs

# Gymnasium learns of Mulle-v0 without being imported here (see mulle_env._registration).
_register_envs()


if not TYPE_CHECKING:  # to a type checker MulleEnv is the import above, and other names stay errors

    def __getattr__(name: str) -> type[MulleEnv]:
        # Lazy export: the Gymnasium env and its numpy code load only when asked for.
        if name == "MulleEnv":
            from .gym_env import MulleEnv

            return MulleEnv
        raise AttributeError(f"module 'mulle_env' has no attribute {name!r}")
