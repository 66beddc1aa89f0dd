"""Types of the agents' compiled module (agents/csrc/; agents/native.py loads it).

Both functions take positional arguments only. ``agents.rollout`` and
``agents.learned.afterstate`` hold the Python reference of each. tests/test_types.py checks
this file against the built module with mypy's stubtest.
"""

from collections.abc import Sequence
from typing import Any, Final

from numpy.typing import NDArray
from typing_extensions import Buffer

from mulle_env.engine.state import GameStateBase

# numpy arrays are buffers (their stubs say so from Python 3.12 on).
_Buffer = Buffer | NDArray[Any]

ABI: Final[int]

def rollout_values(
    root: GameStateBase,  # a state of the compiled core (others: TypeError)
    candidates: Sequence[int | tuple[int, Sequence[int]] | None],
    player: int,
    policy: int,
    plies: int,
    stop: int,
    root_set: int,
    root_deal: int,
    seed: int,
    /,
) -> list[float]: ...
