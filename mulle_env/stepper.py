"""Steppers: K games of Mulle stepped together, the seam between the environments and the rules.

The environments' core (:mod:`mulle_env.envcore`) keeps the Gymnasium side (seeding,
autoreset, rewards, checks, Python agents); a *stepper* owns the K games and their
rules. There are two, one per engine backend, and :func:`make_stepper` picks the one of
:data:`mulle_env.engine.BACKEND` (the project's one switch, ``MULLE_ENGINE``):
the compiled ``mulle_env.engine.backends()["c"].Stepper`` (engine/csrc/stepper.c) on the
compiled core, :class:`PyStepper` (its readable twin, here) on the Python engine. Both
play the same games from the same seeds (the golden playthroughs check it).

The contract. A stepper is built as ``Stepper(num_envs, ruleset, internal_random, over,
to_move)`` (``over`` a bool array and ``to_move`` an int8 array of K, which it keeps
current) and provides:

* ``start(i, game_seed, seat, opp_seed)``: deal game ``i`` as ``new_game(game_seed,
  ruleset)`` with the learner in ``seat``; with ``internal_random`` the opponent plays
  ``legal[random.Random(opp_seed).randrange(len(legal))]`` (exactly the ``random``
  agent) until the learner is to move or the game is over.
* ``check(actions, active, ok)``: ``ok[i]`` (a bool array of K) is true where game ``i``
  is inactive or ``actions[i]`` is legal there, judged by the game's own legal ids (never
  by a mask a caller was handed); returns how many are not.
* ``step(actions, active)``: for every ``i`` with ``active[i]``, play action ``actions[i]``
  for the learner; with ``internal_random`` the opponent then moves until the learner is
  to move or the game is over. An illegal action raises ``ValueError`` before any game
  moves.
* ``play(i, action)``: one legal action in game ``i`` for whoever is to move (an illegal
  one raises ``ValueError``).
* ``write(idx, seats, obs, mask)``: for each ``j``, seat ``seats[j]``'s observation of game
  ``idx[j]`` into ``obs[j]`` (float32, :func:`mulle_env.observation.encode_state`) and its
  legal-action mask into ``mask[j]`` (int8; all zeros unless that seat is to move).
* ``scores(i)``: the two game totals ``(seat 0, seat 1)``.
* ``state(i)``: game ``i`` as a :class:`mulle_env.GameState`, to read (moves go through
  ``play`` so that ``over`` and ``to_move`` stay current).

:class:`Stepper` is this contract as a type (a :class:`typing.Protocol`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from .engine import BACKEND, GameState, backends, new_game
from .engine.ruleset import Ruleset
from .observation import encode_state

__all__ = ["Indices", "PyStepper", "Stepper", "make_stepper"]

#: Game indices or seats: a sequence of ints or an integer numpy array.
Indices = Sequence[int] | NDArray[np.integer[Any]]


class Stepper(Protocol):
    """The stepper contract (module docstring): :class:`PyStepper` and the compiled stepper both keep it."""

    @property
    def num_envs(self) -> int:
        """K, the number of games."""
    @property
    def over(self) -> NDArray[np.bool_]:
        """Per game: over (kept current)."""
    @property
    def to_move(self) -> NDArray[np.int8]:
        """Per game: the seat to move (kept current)."""
    def start(self, i: int, game_seed: int, seat: int, opp_seed: int, /) -> None:
        """Deal game ``i``; an internal opponent moves until the learner is to move."""
    def check(self, actions: Indices, active: NDArray[np.bool_], ok: NDArray[np.bool_], /) -> int:
        """``ok[i]``: game ``i`` inactive or ``actions[i]`` legal there; returns how many are not."""
    def step(self, actions: Indices, active: NDArray[np.bool_], /) -> None:
        """Play ``actions[i]`` for the learner in every active game (then the internal opponent)."""
    def play(self, i: int, action: int, /) -> None:
        """Play one legal ``action`` in game ``i`` for the seat to move."""
    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8], /) -> None:
        """Row ``j`` of ``obs``/``mask``: seat ``seats[j]``'s observation and legal mask in game ``idx[j]``."""
    def scores(self, i: int, /) -> tuple[int, int]:
        """Game ``i``'s two game totals by seat."""
    def state(self, i: int, /) -> GameState:
        """Game ``i`` itself (read it; play through :meth:`play`)."""


class PyStepper:
    """K games in pure Python: the reference implementation of the stepper contract (module docstring)."""

    def __init__(self, num_envs: int, ruleset: Ruleset, internal_random: bool, over: NDArray[np.bool_] | None = None,
                 to_move: NDArray[np.int8] | None = None) -> None:
        self.num_envs = num_envs
        self.ruleset = ruleset
        self.internal_random = internal_random
        self.over = np.ones(num_envs, dtype=bool) if over is None else over
        self.to_move = np.zeros(num_envs, dtype=np.int8) if to_move is None else to_move
        self.over[:] = True
        self.to_move[:] = 0
        # Every game is dealt (start) before anything reads it.
        self._states: list[GameState] = cast("list[GameState]", [None] * num_envs)
        self._seats = [0] * num_envs
        self._rngs = [random.Random(0) for _ in range(num_envs)]

    def start(self, i: int, game_seed: int, seat: int, opp_seed: int) -> None:
        """Deal game ``i``; an internal opponent moves until the learner is to move."""
        st = new_game(game_seed, self.ruleset)
        self._states[i] = st
        self._seats[i] = seat
        self._rngs[i] = random.Random(opp_seed)
        if self.internal_random:
            self._random_moves(i, st)
        self._sync(i, st)

    def _random_moves(self, i: int, st: GameState) -> None:
        seat = self._seats[i]
        randrange = self._rngs[i].randrange
        play = st.play_id
        while not st.over and st.to_move != seat:
            ids = st.legal_ids()
            play(ids[randrange(len(ids))])

    def _sync(self, i: int, st: GameState) -> None:
        self.over[i] = st.over
        self.to_move[i] = st.to_move

    def _legal(self, i: int, action: int) -> bool:
        st = self._states[i]
        return not st.over and action in st.legal_ids()

    def check(self, actions: Indices, active: NDArray[np.bool_], ok: NDArray[np.bool_]) -> int:
        """``ok[i]``: game ``i`` inactive or ``actions[i]`` legal there; returns how many are not."""
        ok[:] = True
        for i in np.flatnonzero(active).tolist():
            ok[i] = self._legal(i, int(actions[i]))
        return int(len(ok) - np.count_nonzero(ok))

    def step(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        """Play ``actions[i]`` for the learner in every active game (then the internal opponent)."""
        states = self._states
        internal = self.internal_random
        todo = np.flatnonzero(active).tolist()
        for i in todo:  # every action checked before any is played: a refused step changes no game
            if not self._legal(i, int(actions[i])):
                raise ValueError(f"game {i}: action {int(actions[i])} is not legal there "
                                 "(the game's own legal ids decide, not a mask)")
        for i in todo:
            st = states[i]
            st.play_id(int(actions[i]))
            if internal:
                self._random_moves(i, st)
            self._sync(i, st)

    def play(self, i: int, action: int) -> None:
        """Play one legal ``action`` in game ``i`` for the seat to move."""
        if not self._legal(i, action):
            raise ValueError(f"game {i}: action {action} is not legal there")
        st = self._states[i]
        st.play_id(action)
        self._sync(i, st)

    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8]) -> None:
        """Row ``j`` of ``obs``/``mask``: seat ``seats[j]``'s observation and legal mask in game ``idx[j]``."""
        states = self._states
        for j, (i, s) in enumerate(zip(idx, seats)):
            st = states[i]
            encode_state(st, s, obs[j])
            m = mask[j]
            m.fill(0)
            if st.to_move == s and not st.over:
                m[list(st.legal_ids())] = 1

    def scores(self, i: int) -> tuple[int, int]:
        """Game ``i``'s two game totals by seat."""
        return self._states[i].scores()

    def state(self, i: int) -> GameState:
        """Game ``i`` itself (read it; play through :meth:`play`)."""
        return self._states[i]


def make_stepper(num_envs: int, ruleset: Ruleset, internal_random: bool) -> Stepper:
    """The stepper of the engine's backend (:data:`mulle_env.engine.BACKEND`), keeping ``over``/``to_move`` in numpy."""
    over = np.ones(num_envs, dtype=bool)
    to_move = np.zeros(num_envs, dtype=np.int8)
    if BACKEND == "c":
        stepper: Stepper = backends()["c"].Stepper(num_envs, ruleset, internal_random, over, to_move)
        return stepper
    return PyStepper(num_envs, ruleset, internal_random, over, to_move)
