"""Types of the env layer's compiled module (mulle_env/csrc/; mulle_env/native.py loads it).

Functions written with ``METH_VARARGS`` take positional arguments only (hence the ``/``).
:mod:`mulle_env.stepper` (the stepper contract, PyStepper) and :mod:`mulle_env.extras` hold
the Python reference of each. tests/test_types.py checks this file against the built module
with mypy's stubtest.
"""

from collections.abc import Callable, Sequence
from typing import Any, Final, final

import numpy as np
from numpy.typing import NDArray
from typing_extensions import Buffer, CapsuleType

from .engine.cstate import GameState
from .engine.state import GameStateBase

# numpy arrays are buffers (their stubs say so from Python 3.12 on).
_Buffer = Buffer | NDArray[Any]
#: An integer vector: a 1-D buffer (a numpy array) or any sequence of ints.
_Ints = Sequence[int] | _Buffer

ABI: Final[int]

def configure_extras(
    hand_value: Sequence[int],
    table_value: Sequence[int],
    mulle: Sequence[float],
    mulle13: Sequence[float],
    intake: Sequence[float],
    obs_size: int,
    hand: int,
    loose: int,
    unseen: int,
    builds: int,
    build_stride: int,
    build_cards: int,
    build_mine: int,
    build_opponents: int,
    opponent_hand: int,
    hand_size: int,
    p_miss: _Buffer,
    fields: dict[str, tuple[int, int]],
    sizes: tuple[int, int, int, int],
    /,
) -> None: ...
def write_extras(obs: _Buffer, out: _Buffer, level: int, stride: int, offset: int, /) -> None: ...
def extras_exp_mulle(obs: _Buffer, out: _Buffer, stride: int, offset: int, /) -> None: ...
def draw_deals(
    generators: Sequence[np.random.Generator], bound: int, random_seat: bool, /
) -> tuple[list[int], list[int], list[int] | None]: ...
def random_playout(state: GameStateBase, seed: int, n: int, /) -> int: ...
def write_afterstates(state: GameStateBase, player: int, ids: Sequence[int], obs: _Buffer, banked: _Buffer, /
                      ) -> None: ...
def sample_csr(ids: _Buffer, offsets: _Buffer, u: _Buffer, out: _Buffer, /) -> None: ...
def sample_mask(masks: _Buffer, u: _Buffer, out: _Buffer, /) -> None: ...

@final
class Stepper:
    """K games stepped in C on a thread pool (the stepper contract: :mod:`mulle_env.stepper`)."""

    # game_ops and new_game: a game core's table (its cstate's GAME_OPS capsule) and new_game, together; neither
    # is Mulle's.
    def __init__(
        self, num_envs: int, ruleset: Any, internal_random: bool, over: _Buffer | None = None,
        to_move: _Buffer | None = None, num_threads: int = 1, game_ops: CapsuleType | None = None,
        new_game: Callable[[int, Any], Any] | None = None,
    ) -> None: ...
    # The buffers given to __init__ (mulle_env.stepper.make_stepper gives numpy arrays), else bytearrays.
    @property
    def over(self) -> Any: ...
    @property
    def to_move(self) -> Any: ...
    @property
    def num_envs(self) -> int: ...
    @property
    def num_threads(self) -> int: ...
    def start(self, i: int, game_seed: int, seat: int, opp_seed: int, /) -> None: ...
    def check(self, actions: _Ints, active: _Ints, ok: _Buffer, /) -> int: ...
    def is_legal(self, i: int, action: int, /) -> bool: ...
    def step(self, actions: _Ints, active: _Ints, /) -> None: ...
    def play(self, i: int, action: int, /) -> None: ...
    def play_batch(self, idx: _Ints, actions: _Ints, /) -> None: ...
    def write(self, idx: _Ints, seats: _Ints, obs: _Buffer, mask: _Buffer | None, /) -> None: ...
    def step_write(
        self, actions: _Ints, active: _Ints, seats: _Ints, obs: _Buffer, mask: _Buffer | None,
        ids: _Buffer | None = ..., offsets: _Buffer | None = ..., /
    ) -> tuple[int, int]: ...
    def step_write_send(
        self, actions: _Ints, active: _Ints, seats: _Ints, obs: _Buffer, mask: _Buffer | None,
        ids: _Buffer | None = ..., offsets: _Buffer | None = ..., /
    ) -> None: ...
    def step_write_recv(self) -> tuple[int, int]: ...
    def restart_write(
        self, idx: Sequence[int], game_seeds: Sequence[int], seats: Sequence[int], opp_seeds: Sequence[int],
        obs: _Buffer, mask: _Buffer | None, /
    ) -> None: ...
    def legal_csr(self, idx: _Ints, seats: _Ints, ids: _Buffer, offsets: _Buffer, /) -> int: ...
    def scores(self, i: int, /) -> tuple[int, int]: ...
    def state(self, i: int, /) -> GameState: ...
