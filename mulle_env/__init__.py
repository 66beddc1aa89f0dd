"""mulle-env: the Mulle rules engine, Gymnasium and PettingZoo environments.

>>> import mulle_env as me
>>> state = me.new_game(seed=7)
>>> state.play(state.legal_moves()[0]).to_move
1
"""

from .engine import *  # noqa: F403
from .engine import __all__ as _engine_all

__version__ = "0.1.0"
__all__ = [*_engine_all, "__version__"]
