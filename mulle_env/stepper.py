"""Steppers: K games stepped together, the seam between the environments and a game's rules.

The environments' core (:mod:`mulle_env.envcore`) keeps the Gymnasium side (seeding,
autoreset, rewards, checks, Python agents); a *stepper* owns the K games and their
rules. A game's object (:class:`mulle_env.games.EnvGame`) makes its steppers
(``game.make_stepper``). :class:`PyStepper` steps any game whose states offer
``legal_ids()``, ``play_id(id)``, ``over``, ``to_move`` and ``scores()``
(:class:`mulle_env.games.EnvState`), encoding with the game's ``encode``. A game with a
compiled core has two, one per backend (the project's one switch, ``MULLE_ENGINE``), and
:func:`make_stepper` picks the compiled ``mulle_env._native.Stepper`` (mulle_env/csrc/stepper.c)
on the compiled core, :class:`PyStepper` over the game's object (its readable twin) on the
Python engine. The compiled stepper is written once for every game: it steps a game through
the table of functions its compiled core exports (``GAME_OPS``, mulle_env/engine/csrc/game_ops.h),
Mulle's by default, Casino's when :mod:`mulle_env.games.casino` hands it
:mod:`mulle_env.casino.cstate` (``core=``). Both steppers play the same games from the same
seeds (the golden playthroughs and tests/test_casino_envs.py check it).
:class:`ReplayableStepper` wraps either to make it copyable.

Threads. The compiled stepper runs ``step``, ``play_batch``, ``write`` and ``step_write`` on
``num_threads`` threads with the GIL released (each game on one thread, each thread with
its own capture-search scratch space); a game's moves depend only on its own position and
random stream, so every thread count gives the same games and outputs (tested).
:class:`PyStepper` runs on the calling thread whatever ``num_threads`` says.

The contract. A stepper is built as ``Stepper(num_envs, ruleset, internal_random, over,
to_move, num_threads)`` (``over`` a bool array and ``to_move`` an int8 array of K, which it
keeps current; :class:`PyStepper` takes the game object as ``game=``) and provides:

* ``start(i, game_seed, seat, opp_seed)``: deal game ``i`` as ``new_game(game_seed,
  ruleset)`` with the learner in ``seat``; with ``internal_random`` the opponent plays
  ``legal[random.Random(opp_seed).randrange(len(legal))]`` (exactly the ``random``
  agent) until the learner is to move or the game is over.
* ``check(actions, active, ok)``: ``ok[i]`` (a bool array of K) is true where game ``i``
  is inactive or ``actions[i]`` is legal there, judged by the game's own legal ids (never
  by a mask a caller was handed); returns how many are not.
* ``is_legal(i, action)``: whether ``action`` (an int) is legal for the seat to move in game
  ``i``, judged as ``check`` judges (``False`` once the game is over). The compiled stepper
  answers from the legal ids it kept since the game last changed (the single envs' check of
  the learner's action, no rules call).
* ``step(actions, active)``: for every ``i`` with ``active[i]``, play action ``actions[i]``
  for the learner; with ``internal_random`` the opponent then moves until the learner is
  to move or the game is over. An illegal action raises ``ValueError`` before any game
  moves.
* ``play(i, action)``: one legal action in game ``i`` for whoever is to move (an illegal
  one raises ``ValueError``).
* ``play_batch(idx, actions)``: game ``idx[j]`` plays ``actions[j]`` for the seat to move
  (each game at most once; every action checked before any is played): self-play's
  batched policy.
* ``write(idx, seats, obs, mask)``: for each ``j``, seat ``seats[j]``'s observation of game
  ``idx[j]`` into ``obs[j]`` (float32, the game's ``encode``; Mulle's is
  :func:`mulle_env.observation.encode_state`) and its
  legal-action mask into ``mask[j]`` (int8; all zeros unless that seat is to move);
  ``mask=None`` writes no dense mask.
* ``step_write(actions, active, seats, obs, mask, ids=None, offsets=None)``: ``step(actions,
  active)``, then ``write(range(K), seats, obs, mask)`` and, given ``ids`` and ``offsets``,
  ``legal_csr(range(K), seats, ids, offsets)``, with every argument checked and every action
  judged legal before any game moves. Returns ``(ended, total)``: how many active games are
  over after the step, and ``legal_csr``'s total (-1 without ``ids``). The compiled stepper
  does it all in one pass over its threads (one hand-off per env step instead of two or
  three): the vector env's usual step.
* ``step_write_send(...)`` / ``step_write_recv()``: ``step_write`` in two halves (the vector
  env's ``send``/``recv``). ``step_write_send`` takes ``step_write``'s arguments, checks and
  refusals, starts the step and returns; ``step_write_recv()`` returns its ``(ended,
  total)``. It writes only the rows of the active games, so the other rows may be read
  while the step is in flight (``ids`` and ``offsets`` are written by ``step_write_recv``),
  and every other call is refused with a ``RuntimeError`` until ``step_write_recv``. The
  compiled stepper runs the step on its worker threads meanwhile (on one thread, in
  ``step_write_recv``); :class:`PyStepper` runs it in ``step_write_send``.
* ``restart_write(idx, game_seeds, seats, opp_seeds, obs, mask)``: ``start(idx[j],
  game_seeds[j], seats[j], opp_seeds[j])`` for each ``j``, then seat ``seats[j]``'s
  observation and mask of game ``idx[j]`` into row ``idx[j]`` of ``obs`` and ``mask`` (``K``
  rows each, as ``step_write`` writes them), every argument checked before any game
  changes. The compiled stepper deals into each game's own object (a state handed out
  before is dealt anew) and writes on its threads: the vector env's restart of finished
  games.
* ``legal_csr(idx, seats, ids, offsets)``: the legal ids of seat ``seats[j]`` in game
  ``idx[j]`` (none unless it is to move), ascending, as CSR: row ``j``'s are
  ``ids[offsets[j]:offsets[j + 1]]`` (both int32); ``offsets`` (``n + 1``) is always
  written, ``ids`` only when it has room; returns the total.
* ``scores(i)``: the two game totals ``(seat 0, seat 1)``.
* ``state(i)``: game ``i`` itself (Mulle's: a :class:`mulle_env.GameState`), to read (moves go
  through ``play`` so that ``over`` and ``to_move`` stay current).

:class:`Stepper` is this contract as a type (a :class:`typing.Protocol`).
"""

from __future__ import annotations

import operator
import os
import random
from collections.abc import Sequence
from types import ModuleType
from typing import Any, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from .engine import GameState
from .engine.rng import seed_problem, splitmix64
from .games import EnvGame, EnvState, get_game
from .native import NATIVE

__all__ = ["Indices", "PyStepper", "ReplayableStepper", "Stepper", "make_stepper", "random_playout",
           "resolve_threads"]

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
    @property
    def num_threads(self) -> int:
        """Threads the games are stepped on."""
    def start(self, i: int, game_seed: int, seat: int, opp_seed: int, /) -> None:
        """Deal game ``i``; an internal opponent moves until the learner is to move."""
    def check(self, actions: Indices, active: NDArray[np.bool_], ok: NDArray[np.bool_], /) -> int:
        """``ok[i]``: game ``i`` inactive or ``actions[i]`` legal there; returns how many are not."""
    def is_legal(self, i: int, action: int, /) -> bool:
        """Whether ``action`` is legal for the seat to move in game ``i``."""
    def step(self, actions: Indices, active: NDArray[np.bool_], /) -> None:
        """Play ``actions[i]`` for the learner in every active game (then the internal opponent)."""
    def play(self, i: int, action: int, /) -> None:
        """Play one legal ``action`` in game ``i`` for the seat to move."""
    def play_batch(self, idx: Indices, actions: Indices, /) -> None:
        """Game ``idx[j]`` plays ``actions[j]`` for the seat to move (all checked first)."""
    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8] | None, /
              ) -> None:
        """Row ``j`` of ``obs``/``mask``: seat ``seats[j]``'s observation and legal mask in game ``idx[j]``."""
    def step_write(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                   mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                   offsets: NDArray[np.int32] | None = None, /) -> tuple[int, int]:
        """``step`` then ``write`` (and ``legal_csr``) of every game, all checked first; ``(ended, total)``."""
    def step_write_send(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                        mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                        offsets: NDArray[np.int32] | None = None, /) -> None:
        """``step_write``'s checks, then the step starts (the active games' rows only); ``step_write_recv`` ends it."""
    def step_write_recv(self) -> tuple[int, int]:
        """The step ``step_write_send`` started, finished: ``step_write``'s ``(ended, total)``."""
    def restart_write(self, idx: Sequence[int], game_seeds: Sequence[int], seats: Sequence[int],
                      opp_seeds: Sequence[int], obs: NDArray[np.float32], mask: NDArray[np.int8] | None, /) -> None:
        """``start`` each game ``idx[j]`` anew, then write its row ``idx[j]`` of ``obs``/``mask``; all checked first."""
    def legal_csr(self, idx: Indices, seats: Indices, ids: NDArray[np.int32], offsets: NDArray[np.int32], /
                  ) -> int:
        """Row ``j``'s legal ids in ``ids[offsets[j]:offsets[j + 1]]``; returns the total."""
    def scores(self, i: int, /) -> tuple[int, int]:
        """Game ``i``'s two game totals by seat."""
    def state(self, i: int, /) -> Any:
        """Game ``i`` itself (read it; play through :meth:`play`)."""


class PyStepper:
    """K games in pure Python: the stepper contract (module docstring) for any game, Mulle's reference.

    ``game``: the game object (:class:`mulle_env.games.EnvGame`, or its name; ``None`` is Mulle):
    its ``new_game`` deals and its ``encode`` writes the observations; the states do the rest
    (``legal_ids``, ``play_id``, ``over``, ``to_move``, ``scores``).
    """

    def __init__(self, num_envs: int, ruleset: Any, internal_random: bool, over: NDArray[np.bool_] | None = None,
                 to_move: NDArray[np.int8] | None = None, num_threads: int = 1, *,
                 game: EnvGame | str | None = None) -> None:
        self.num_envs = num_envs
        self.num_threads = 1  # the reference runs on the calling thread (num_threads is the compiled one's)
        self.game = get_game(game)
        # The game's two calls of the hot paths, looked up once (a game object's static functions stay plain).
        self._new_game = self.game.new_game
        self._encode = self.game.encode
        self.ruleset = ruleset
        self.internal_random = internal_random
        self.over = np.ones(num_envs, dtype=bool) if over is None else over
        self.to_move = np.zeros(num_envs, dtype=np.int8) if to_move is None else to_move
        self.over[:] = True
        self.to_move[:] = 0
        # Every game is dealt (start) before anything reads it.
        self._states: list[EnvState] = cast("list[EnvState]", [None] * num_envs)
        self._seats = [0] * num_envs
        self._rngs = [random.Random(0) for _ in range(num_envs)]
        # step_write_send's (ended, seats, ids, offsets), until step_write_recv
        self._pending: tuple[int, list[int], NDArray[np.int32] | None, NDArray[np.int32] | None] | None = None

    def start(self, i: int, game_seed: int, seat: int, opp_seed: int) -> None:
        """Deal game ``i``; an internal opponent moves until the learner is to move."""
        self._idle()
        st = self._new_game(game_seed, self.ruleset)
        self._states[i] = st
        self._seats[i] = seat
        self._rngs[i] = random.Random(opp_seed)
        if self.internal_random:
            self._random_moves(i, st)
        self._sync(i, st)

    def _random_moves(self, i: int, st: EnvState) -> None:
        seat = self._seats[i]
        randrange = self._rngs[i].randrange
        play = st.play_id
        while not st.over and st.to_move != seat:
            ids = st.legal_ids()
            play(ids[randrange(len(ids))])

    def _sync(self, i: int, st: EnvState) -> None:
        self.over[i] = st.over
        self.to_move[i] = st.to_move

    def _legal(self, i: int, action: int) -> bool:
        st = self._states[i]
        return not st.over and action in st.legal_ids()

    def check(self, actions: Indices, active: NDArray[np.bool_], ok: NDArray[np.bool_]) -> int:
        """``ok[i]``: game ``i`` inactive or ``actions[i]`` legal there; returns how many are not."""
        self._idle()
        ok[:] = True
        for i in np.flatnonzero(active).tolist():
            ok[i] = self._legal(i, int(actions[i]))
        return int(len(ok) - np.count_nonzero(ok))

    def is_legal(self, i: int, action: int) -> bool:
        """Whether ``action`` is legal for the seat to move in game ``i`` (its own legal ids)."""
        self._idle()
        if not 0 <= i < self.num_envs:  # as the compiled stepper (a negative index is no game)
            raise IndexError(f"game index {i} outside 0..{self.num_envs - 1}")
        a = operator.index(action)  # a TypeError for anything but an int, as the compiled one
        return self._states[i] is not None and self._legal(i, a)  # a game never dealt has no legal action

    def step(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        """Play ``actions[i]`` for the learner in every active game (then the internal opponent)."""
        self._idle()
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
        self._idle()
        if not self._legal(i, action):
            raise ValueError(f"game {i}: action {action} is not legal there")
        st = self._states[i]
        st.play_id(action)
        self._sync(i, st)

    def play_batch(self, idx: Indices, actions: Indices) -> None:
        """Game ``idx[j]`` plays ``actions[j]`` for the seat to move (all checked first)."""
        self._idle()
        pairs = [(int(i), int(a)) for i, a in zip(idx, actions, strict=True)]
        if len({i for i, _ in pairs}) != len(pairs):
            raise ValueError("play_batch takes each game at most once")
        for i, a in pairs:
            if not self._legal(i, a):
                raise ValueError(f"game {i}: action {a} is not legal there")
        for i, a in pairs:
            st = self._states[i]
            st.play_id(a)
            self._sync(i, st)

    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8] | None) -> None:
        """Row ``j`` of ``obs``/``mask``: seat ``seats[j]``'s observation and legal mask in game ``idx[j]``."""
        self._idle()
        states, encode = self._states, self._encode
        for j, (i, s) in enumerate(zip(idx, seats)):
            st = states[i]
            encode(st, s, obs[j])
            if mask is None:
                continue
            m = mask[j]
            m.fill(0)
            if st.to_move == s and not st.over:
                m[list(st.legal_ids())] = 1

    def step_write(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                   mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                   offsets: NDArray[np.int32] | None = None) -> tuple[int, int]:
        """``step`` then ``write`` (and ``legal_csr``) of every game, all checked first; ``(ended, total)``.

        ``ended``: how many active games are over after the step; ``total``: ``legal_csr``'s
        (-1 without ``ids``).
        """
        return self._step_write(actions, active, seats, obs, mask, ids, offsets, only_active=False)

    def _step_write(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                    mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None, offsets: NDArray[np.int32] | None,
                    only_active: bool) -> tuple[int, int]:
        self._idle()
        k = self.num_envs
        seat_list = [int(s) for s in seats]
        if len(seat_list) != k or any(s not in (0, 1) for s in seat_list):
            raise ValueError(f"seats must be {k} seats, each 0 or 1, not {seats!r:.80}")
        if len(obs) < k or (mask is not None and len(mask) < k):
            raise ValueError(f"obs and mask need {k} rows")
        if (ids is None) != (offsets is None):
            raise ValueError("ids and offsets go together: give both or neither")
        if ids is not None and offsets is not None and (
                ids.dtype != np.int32 or offsets.dtype != np.int32 or ids.ndim != 1 or offsets.shape != (k + 1,)):
            raise ValueError(f"ids must be a 1-D int32 array and offsets an int32 array of {k + 1}")
        self.step(actions, active)  # checks every action before it plays any
        on = np.asarray(active, dtype=bool)
        if only_active:  # the other games' rows stay as they are (step_write_send): row i of obs is game i's
            for i in np.flatnonzero(on).tolist():
                self.write((i,), (seat_list[i],), obs[i : i + 1], None if mask is None else mask[i : i + 1])
        else:
            self.write(range(k), seat_list, obs, mask)
        ended = int(np.count_nonzero(self.over & on))
        if ids is None or offsets is None or only_active:  # step_write_send: step_write_recv writes them
            return ended, -1
        return ended, self.legal_csr(range(k), seat_list, ids, offsets)

    def step_write_send(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                        mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                        offsets: NDArray[np.int32] | None = None) -> None:
        """``step_write``, the rows of the active games only, run now; :meth:`step_write_recv` writes the CSR ids
        (as the compiled stepper does) and returns the result."""
        self._idle()
        ended, _ = self._step_write(actions, active, seats, obs, mask, ids, offsets, only_active=True)
        self._pending = (ended, [int(s) for s in seats], ids, offsets)

    def step_write_recv(self) -> tuple[int, int]:
        """The result of the step :meth:`step_write_send` ran, its CSR ids written now."""
        if self._pending is None:
            raise RuntimeError("no step in flight: step_write_recv() answers a step_write_send()")
        (ended, seat_list, ids, offsets), self._pending = self._pending, None
        if ids is None or offsets is None:
            return ended, -1
        return ended, self.legal_csr(range(self.num_envs), seat_list, ids, offsets)

    def _idle(self) -> None:
        if self._pending is not None:
            raise RuntimeError("a step is in flight (step_write_send): step_write_recv() comes first")

    def restart_write(self, idx: Sequence[int], game_seeds: Sequence[int], seats: Sequence[int],
                      opp_seeds: Sequence[int], obs: NDArray[np.float32], mask: NDArray[np.int8] | None) -> None:
        """``start`` each game ``idx[j]`` anew, then write its row ``idx[j]`` of ``obs``/``mask``; all checked first."""
        self._idle()
        k = self.num_envs
        rows = [operator.index(i) for i in idx]  # a TypeError for anything but an int, as the compiled one
        seat_list = [operator.index(s) for s in seats]
        n = len(rows)
        if not len(game_seeds) == len(seat_list) == len(opp_seeds) == n:
            raise ValueError("idx, game_seeds, seats and opp_seeds differ in length")
        if n > k:
            raise ValueError(f"restart_write takes each game at most once ({k} games, {n} given)")
        for j, i in enumerate(rows):
            if not 0 <= i < k:
                raise IndexError(f"game index {i} outside 0..{k - 1}")
            if i in rows[:j]:
                raise ValueError(f"restart_write takes each game at most once: game {i} twice")
            if seat_list[j] not in (0, 1):
                raise ValueError(f"seats[{j}] must be 0 or 1, not {seat_list[j]}")
        for what, seeds in (("game_seeds", game_seeds), ("opp_seeds", opp_seeds)):
            for j, seed in enumerate(seeds):
                # Python ints only, as the compiled stepper takes them; their domain is the one seed domain's.
                why = seed_problem(seed, f"{what}[{j}]") if isinstance(seed, int) else \
                    f"{what}[{j}] must be a whole number from 0 to 2**64 - 1, not {seed!r}"
                if why is not None:
                    raise ValueError(why)
        if len(obs) < k or (mask is not None and len(mask) < k):
            raise ValueError(f"obs and mask need {k} rows")
        for i, game_seed, seat, opp_seed in zip(rows, game_seeds, seat_list, opp_seeds):
            self.start(i, game_seed, seat, opp_seed)
            self.write((i,), (seat,), obs[i : i + 1], None if mask is None else mask[i : i + 1])

    def legal_csr(self, idx: Indices, seats: Indices, ids: NDArray[np.int32], offsets: NDArray[np.int32]) -> int:
        """Row ``j``'s legal ids in ``ids[offsets[j]:offsets[j + 1]]``; returns the total (``ids`` written if room)."""
        self._idle()
        rows: list[tuple[int, ...]] = []
        for i, s in zip(idx, seats):
            st = self._states[i]
            rows.append(st.legal_ids() if st.to_move == s and not st.over else ())
        offsets[0] = 0
        offsets[1 : len(rows) + 1] = np.cumsum([len(r) for r in rows], dtype=np.int64)
        total = int(offsets[len(rows)])
        if total <= len(ids):
            at = 0
            for r in rows:
                ids[at : at + len(r)] = r
                at += len(r)
        return total

    def scores(self, i: int) -> tuple[int, int]:
        """Game ``i``'s two game totals by seat."""
        self._idle()
        return self._states[i].scores()

    def state(self, i: int) -> Any:
        """Game ``i`` itself (read it; play through :meth:`play`)."""
        self._idle()
        return self._states[i]


def resolve_threads(num_threads: int | str) -> int:
    """``num_threads`` as a count: an int >= 1, or ``"auto"`` for the cores this process may run on.

    ``"auto"`` reads :func:`os.sched_getaffinity` where the platform has it (a container or
    ``taskset`` may allow fewer cores than the machine has), else :func:`os.cpu_count`.
    """
    if num_threads == "auto":
        getaffinity = getattr(os, "sched_getaffinity", None)
        return max(1, len(getaffinity(0)) if getaffinity is not None else (os.cpu_count() or 1))
    if isinstance(num_threads, (int, np.integer)) and not isinstance(num_threads, (bool, np.bool_)) \
            and 1 <= num_threads <= 1024:
        return int(num_threads)
    raise ValueError(f"num_threads must be an int from 1 to 1024 or 'auto', not {num_threads!r}")


def make_stepper(num_envs: int, ruleset: Any, internal_random: bool, num_threads: int | str = 1, *,
                 core: ModuleType | None = None) -> Stepper:
    """Mulle's stepper of the engine's backend (:data:`mulle_env.engine.BACKEND`), with ``over``/``to_move`` in numpy.

    The compiled stepper on the compiled core, else :class:`PyStepper` over Mulle's game object
    (Mulle's ``make_stepper``, :data:`mulle_env.games.mulle.MULLE`). ``num_threads`` (an int or
    ``"auto"``, :func:`resolve_threads`): the compiled stepper's threads.

    ``core``: another game's compiled core (its ``cstate`` module, which offers ``GAME_OPS`` and
    ``new_game``, as :mod:`mulle_env.casino.cstate` does): the compiled stepper steps that game
    through its table. The game's object decides when its core is used (Casino's
    ``make_stepper``); there is no Python fallback here, so without the env layer's compiled
    module this refuses, saying so.
    """
    threads = resolve_threads(num_threads)
    over = np.ones(num_envs, dtype=bool)
    to_move = np.zeros(num_envs, dtype=np.int8)
    if core is not None:
        if NATIVE is None:
            raise RuntimeError(f"the compiled stepper of {core.__name__} needs the env layer's compiled module, and "
                               "the engine runs on the Python reference here (MULLE_ENGINE=python or no build): "
                               "step the game with PyStepper (its make_stepper picks it)")
        compiled: Stepper = NATIVE.Stepper(num_envs, ruleset, internal_random, over, to_move, threads,
                                           core.GAME_OPS, core.new_game)
        return compiled
    if NATIVE is not None:
        stepper: Stepper = NATIVE.Stepper(num_envs, ruleset, internal_random, over, to_move, threads)
        return stepper
    return PyStepper(num_envs, ruleset, internal_random, over, to_move, threads, game="mulle")


def _rebuild_stepper(num_envs: int, ruleset: Any, internal_random: bool,
                     deals: list[tuple[int, int, int] | None], moves: list[list[tuple[bool, int]]],
                     num_threads: int = 1, game: EnvGame | str | None = None) -> ReplayableStepper:
    """A :class:`ReplayableStepper` whose games are dealt ``deals`` and played ``moves`` (how a copy is made)."""
    played = get_game(game)
    out = ReplayableStepper(played.make_stepper(num_envs, ruleset, internal_random, num_threads), ruleset,
                            internal_random, played)
    acts, active = np.zeros(num_envs, dtype=np.int64), np.zeros(num_envs, dtype=bool)
    for i, deal in enumerate(deals):
        if deal is None:
            continue
        out.start(i, *deal)
        for stepped, action in moves[i]:
            if stepped:  # the learner's action, then the in-stepper opponent's answers
                acts[i], active[i] = action, True
                out.step(acts, active)
                active[i] = False
            else:
                out.play(i, action)
    return out


class ReplayableStepper:
    """A stepper (the contract of :mod:`mulle_env.stepper`) that keeps each game's deal and moves, to copy itself.

    Copying or pickling it (``copy.deepcopy``, ``pickle``) deals the same games again in a new
    stepper of the same backend and replays the moves: the compiled stepper's games and its
    opponent's generator live in C, and the stepper is deterministic from the deal and the
    moves. The log is one list append per move. ``game``: the game object whose ``make_stepper``
    made ``inner`` (``None``: Mulle), which makes the copy's.
    """

    def __init__(self, inner: Stepper, ruleset: Any, internal_random: bool, game: EnvGame | str | None = None
                 ) -> None:
        self.inner = inner
        self.ruleset = ruleset
        self.internal_random = internal_random
        self.game = get_game(game)
        self.num_envs = inner.num_envs
        self.over = inner.over
        self.to_move = inner.to_move
        #: Per game: ``(game_seed, seat, opp_seed)`` it was dealt with, or ``None`` before its first deal.
        self.deals: list[tuple[int, int, int] | None] = [None] * self.num_envs
        #: Per game: ``(stepped, action)`` for each move since the deal (``stepped``: through :meth:`step`).
        self.moves: list[list[tuple[bool, int]]] = [[] for _ in range(self.num_envs)]

    def start(self, i: int, game_seed: int, seat: int, opp_seed: int, /) -> None:
        """Deal game ``i`` (and remember the deal)."""
        self.inner.start(i, game_seed, seat, opp_seed)
        self.deals[i] = (game_seed, seat, opp_seed)
        self.moves[i] = []

    def step(self, actions: Indices, active: NDArray[np.bool_], /) -> None:
        """The stepper's ``step`` (and remember each active game's action)."""
        self.inner.step(actions, active)
        self._remember_stepped(actions, active)

    def _remember_stepped(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        if self.num_envs == 1:  # Mulle-v0's every step: no array scan
            if active[0]:
                self.moves[0].append((True, int(actions[0])))
            return
        for i in np.flatnonzero(active).tolist():
            self.moves[i].append((True, int(actions[i])))

    def step_write(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                   mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                   offsets: NDArray[np.int32] | None = None, /) -> tuple[int, int]:
        """The stepper's ``step_write`` (and remember each active game's action, as :meth:`step`)."""
        result = self.inner.step_write(actions, active, seats, obs, mask, ids, offsets)
        self._remember_stepped(actions, active)
        return result

    def step_write_send(self, actions: Indices, active: NDArray[np.bool_], seats: Indices, obs: NDArray[np.float32],
                        mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                        offsets: NDArray[np.int32] | None = None, /) -> None:
        """The stepper's ``step_write_send`` (and remember each active game's action: it was judged legal)."""
        self.inner.step_write_send(actions, active, seats, obs, mask, ids, offsets)
        self._remember_stepped(actions, active)

    def step_write_recv(self) -> tuple[int, int]:
        """The stepper's ``step_write_recv``."""
        return self.inner.step_write_recv()

    @property
    def num_threads(self) -> int:
        """The stepper's threads."""
        return self.inner.num_threads

    def check(self, actions: Indices, active: NDArray[np.bool_], ok: NDArray[np.bool_], /) -> int:
        """The stepper's ``check`` (nothing is played, nothing to remember)."""
        return self.inner.check(actions, active, ok)

    def is_legal(self, i: int, action: int, /) -> bool:
        """The stepper's ``is_legal``."""
        return self.inner.is_legal(i, action)

    def play(self, i: int, action: int, /) -> None:
        """The stepper's ``play`` (and remember the action)."""
        self.inner.play(i, action)
        self.moves[i].append((False, int(action)))

    def play_batch(self, idx: Indices, actions: Indices, /) -> None:
        """The stepper's ``play_batch`` (and remember each game's action, as one ``play`` each)."""
        self.inner.play_batch(idx, actions)
        for i, a in zip(np.asarray(idx).tolist(), np.asarray(actions).tolist()):
            self.moves[i].append((False, int(a)))

    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8] | None, /
              ) -> None:
        """The stepper's ``write``."""
        self.inner.write(idx, seats, obs, mask)

    def restart_write(self, idx: Sequence[int], game_seeds: Sequence[int], seats: Sequence[int],
                      opp_seeds: Sequence[int], obs: NDArray[np.float32], mask: NDArray[np.int8] | None, /) -> None:
        """The stepper's ``restart_write`` (and remember the deals, as :meth:`start`)."""
        self.inner.restart_write(idx, game_seeds, seats, opp_seeds, obs, mask)
        for i, deal in zip(idx, zip(game_seeds, seats, opp_seeds)):
            self.deals[i] = deal
            self.moves[i] = []

    def legal_csr(self, idx: Indices, seats: Indices, ids: NDArray[np.int32], offsets: NDArray[np.int32], /
                  ) -> int:
        """The stepper's ``legal_csr``."""
        return self.inner.legal_csr(idx, seats, ids, offsets)

    def scores(self, i: int, /) -> tuple[int, int]:
        """The stepper's ``scores``."""
        return self.inner.scores(i)

    def state(self, i: int, /) -> Any:
        """The stepper's ``state``."""
        return self.inner.state(i)

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild_stepper, (self.num_envs, self.ruleset, self.internal_random, list(self.deals),
                                  [list(m) for m in self.moves], self.inner.num_threads, self.game)


_MASK64 = (1 << 64) - 1


def random_playout(state: GameState, seed: int, n: int) -> int:
    """Play up to ``n`` uniformly random legal moves in ``state`` (or to the game's end); returns how many.

    Each move is ``legal[splitmix64(seed) % len(legal)]``; on the compiled core the whole loop
    runs in C (``mulle_env._native.random_playout``, the raw-speed benchmark), on the Python
    engine here, with the same stream: the same seed plays the same moves on both.
    """
    if (why := seed_problem(seed)) is not None:  # the one seed domain: -1 and 2**70 were masked to other seeds
        raise ValueError(why)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a whole number of moves (0 or more), not {n!r:.40}")
    n = min(n, 2**31 - 1)  # no game is longer: a larger n means "to the end", which C's int can hold
    if NATIVE is not None:
        played: int = NATIVE.random_playout(state, seed, n)
        return played
    x, done = seed & _MASK64, 0
    while done < n and not state.over:
        ids = state.legal_ids()
        if not ids:
            raise ValueError("no legal move (a position the rules never reach)")
        x, r = splitmix64(x)  # the compiled core's splitmix, the same stream
        state.play_id(ids[r % len(ids)])
        done += 1
    return done
