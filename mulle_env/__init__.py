"""mulle-env: the Mulle rules engine, Gymnasium and PettingZoo environments.

>>> import mulle_env as me
>>> state = me.new_game(seed=7)
>>> state.play(state.legal_moves()[0]).to_move
1
"""

from .engine import *  # noqa: F403
from .engine import __all__ as _engine_all

__version__ = "0.1.0"
__all__ = [*_engine_all, "__version__", "MulleEnv"]


def _register_envs() -> None:
    # The entry point is a string so that importing mulle_env does not import the env module.
    from gymnasium.envs.registration import register, registry

    if "Mulle-v0" not in registry:
        register(id="Mulle-v0", entry_point="mulle_env.gym_env:MulleEnv",
                 vector_entry_point="mulle_env.vector_env:MulleVectorEnv")


_register_envs()


def __getattr__(name: str):
    # Lazy export: the Gymnasium env and its numpy code load only when asked for.
    if name == "MulleEnv":
        from .gym_env import MulleEnv

        return MulleEnv
    raise AttributeError(f"module 'mulle_env' has no attribute {name!r}")
