"""A second game for the env layer's tests, written against :class:`mulle_env.games.EnvGame` alone.

Take-away: a pile of 10 to 29 counters (by seed); the player to move takes 1 to ``take_max``
(action ``a`` takes ``a + 1``); whoever takes the last counter wins (game totals 1 and 0). It
proves that the env core and its faces play a game they know nothing of, on the generic
Python stepper, with every opponent mode.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from mulle_env.engine.errors import IllegalMoveError
from mulle_env.games import EnvGame


@dataclass(frozen=True)
class ToyRuleset:
    """The toy's one flag: the most counters a move takes (the action space is fixed at 3)."""

    take_max: int = 3

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToyRuleset:
        if set(data) - {"take_max"} or data.get("take_max", 3) not in (1, 2, 3):
            raise ValueError(f"the toy ruleset takes take_max in 1..3, not {data!r}")
        return cls(**data)


@dataclass(frozen=True)
class ToyMove:
    """Take ``id + 1`` counters."""

    id: int

    def __str__(self) -> str:
        return f"take {self.id + 1}"


class ToyState:
    """A take-away game (the :class:`mulle_env.games.EnvState` protocol)."""

    def __init__(self, pile: int, ruleset: ToyRuleset) -> None:
        self.pile = pile
        self.ruleset = ruleset
        self.to_move = 0
        self.over = False
        self.winner: int | None = None

    def legal_ids(self) -> tuple[int, ...]:
        return () if self.over else tuple(range(min(self.ruleset.take_max, self.pile)))

    def play_id(self, action: int) -> None:
        self.pile -= action + 1
        if self.pile == 0:
            self.over, self.winner = True, self.to_move
        else:
            self.to_move ^= 1

    def is_over(self) -> bool:
        return self.over

    def scores(self) -> tuple[int, int]:
        return (0, 0) if self.winner is None else (int(self.winner == 0), int(self.winner == 1))

    def view(self, seat: int) -> Any:
        return types.SimpleNamespace(player=seat, pile=self.pile, to_move=self.to_move)

    def legal_moves(self) -> list[ToyMove]:
        return [ToyMove(a) for a in self.legal_ids()]

    def check(self, move: Any) -> ToyMove:
        if isinstance(move, str) and move.startswith("take "):
            move = ToyMove(int(move[5:]) - 1)
        if not isinstance(move, ToyMove) or move.id not in self.legal_ids():
            raise IllegalMoveError(f"{move!r} is not legal with {self.pile} counters left")
        return move


class ToyGame(EnvGame):
    """Take-away's game object: only the members :class:`mulle_env.games.EnvGame` leaves to each game."""

    name = "toy"
    env_id = "Toy-v0"
    aec_name = "toy_v0"
    Ruleset = ToyRuleset
    num_actions = 3
    obs_size = 3
    obs_dtype = np.float32

    def new_game(self, seed: int, ruleset: Any, /) -> ToyState:
        return ToyState(10 + seed % 20, ruleset)

    def move_of(self, action: int, /) -> ToyMove:
        return ToyMove(action)

    def encode(self, state: Any, seat: int, out: Any, /) -> None:
        out[0] = state.pile / 30
        out[1] = state.to_move == seat and not state.over
        out[2] = seat

    def observation_bounds(self, ruleset: Any, /) -> tuple[Any, Any]:
        return np.zeros(3, np.float32), np.ones(3, np.float32)

    def score_bound(self, ruleset: Any, /) -> float:
        return 1.0

    def max_decisions(self, ruleset: Any, /) -> int:
        return 15


TOY = ToyGame()


class TakeOne:
    """An agent object for any game: the first legal move (it reads no view)."""

    needs_view = False

    def act(self, view: Any, legal_moves: Any, rng: Any) -> Any:
        return legal_moves[0]
