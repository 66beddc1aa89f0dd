"""Types of Casino's compiled rules core (csrc/; module.c, rules.c).

The public face of this module is :mod:`mulle_env.casino.cstate`; everything here is what that
module and its tests call. Functions written with ``METH_VARARGS`` take positional arguments
only (hence the ``/``).
"""

from collections.abc import Sequence
from typing import Any, Final

from numpy.typing import NDArray
from typing_extensions import Buffer, CapsuleType, disjoint_base

from .moves import Move
from .rules import StoredBuild
from .ruleset import Ruleset
from .state import Sheet

_Buffer = Buffer | NDArray[Any]

ABI: Final[int]
MAX_IDS: Final[int]
MAX_ROUNDS: Final[int]
OBS_MAX: Final[int]
GAME_OPS_ABI: Final[int]
FACE_BLOCKS: Final[tuple[str, ...]]
BUILD_FEATURES: Final[tuple[str, ...]]
RACE_FEATURES: Final[tuple[str, ...]]
SCALAR_FEATURES: Final[tuple[str, ...]]
RULE_FEATURES: Final[tuple[str, ...]]
SHEET_KEYS: Final[tuple[str, ...]]

def configure(
    abi: int,
    cards: tuple[Sequence[int], ...],
    moves: tuple[tuple[int, int, int, int], ...],
    constants: tuple[int, ...],
    layout: tuple[int, ...],
    scales: tuple[float, ...],
    objects: tuple[tuple[Move, ...], tuple[str, ...]],
    /,
) -> None: ...
def derive_seed(seed: int, a: int, b: int, /) -> int: ...
def shuffled(seed: int, /) -> list[int]: ...
def _game_ops() -> CapsuleType: ...

#: A plan as the core hands it over: (id or -1, kind index, card, loose faces, build indices, base index or -1,
#: value or -1).
_RawPlan = tuple[int, int, int, tuple[int, ...], tuple[int, ...], int, int]

@disjoint_base
class Core:
    """A Casino position on the compiled core; :class:`mulle_env.casino.cstate.GameState` is the public class."""

    def _init(self, ruleset: Ruleset, flags: tuple[int, ...], seed: int | None, /) -> None: ...
    def _load_raw(
        self,
        hands: Sequence[Sequence[int]],
        loose: Sequence[int],
        builds: Sequence[StoredBuild],
        captured: Sequence[Sequence[int]],
        sweeps: Sequence[int],
        last_capturer: int | None,
        stock: Sequence[int],
        round_: int,
        scores: Sequence[int],
        sheets: Sequence[tuple[tuple[int, ...], ...]],
        to_move: int,
        /,
    ) -> None: ...
    def _start_game(self) -> None: ...
    def scores(self) -> tuple[int, int]: ...
    def _stored_builds(self) -> list[StoredBuild]: ...
    def _set_last_move(self, last_move: tuple[int, Move] | None, /) -> None: ...
    def legal_ids(self) -> tuple[int, ...]: ...
    def _raw_plans(self) -> list[_RawPlan]: ...
    def _play_plan(self, i: int, n: int, /) -> None: ...
    def _play_id(self, move_id: int, /) -> bool: ...
    def copy(self) -> Any: ...
    def _write_obs(self, seat: int, out: _Buffer, /) -> None: ...
    def _write_mask(self, out: _Buffer, /) -> int: ...
    @property
    def to_move(self) -> int: ...
    @property
    def round(self) -> int: ...
    @property
    def over(self) -> bool: ...
    @property
    def dealer(self) -> int: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def ruleset(self) -> Ruleset: ...
    @property
    def hands(self) -> list[list[int]]: ...
    @property
    def loose(self) -> list[int]: ...
    @property
    def captured(self) -> list[list[int]]: ...
    @property
    def sweeps(self) -> list[int]: ...
    @property
    def last_capturer(self) -> int | None: ...
    @property
    def stock(self) -> list[int]: ...
    @property
    def sheets(self) -> list[tuple[Sheet, Sheet]]: ...
    @property
    def last_move(self) -> tuple[int, Move] | None: ...
    _plans_cache: Any
