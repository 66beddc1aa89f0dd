"""``Mulle-v0`` batched: K games stepped in one call, a :class:`gymnasium.vector.VectorEnv`.

>>> import gymnasium as gym, mulle_env
>>> envs = gym.make_vec("Mulle-v0", num_envs=4, vectorization_mode="vector_entry_point", opponent="random")
>>> obs, info = envs.reset(seed=0)
>>> obs.shape, info["action_mask"].shape
((4, 524), (4, 2812))
>>> actions = [envs.single_action_space.sample(mask=m) for m in info["action_mask"]]
>>> obs, rewards, terminated, truncated, info = envs.step(actions)
>>> envs.close()

Game ``i`` behaves exactly like a ``Mulle-v0`` env reset with ``seed + i`` and then
reset without a seed after every episode: the same deal, seat and opponent choices, on
both backends and with every opponent (tested).

Autoreset
---------
``autoreset_mode`` is ``AutoresetMode.SAME_STEP`` by default (what stable-baselines3
expects): when game ``i`` ends in a step, that step returns ``terminated[i] = True``,
the reward of the finished game, and already the first observation and mask of the
next game in ``obs[i]`` and ``info["action_mask"][i]``. The finished game's last
observation is in ``info["final_obs"][i]`` (an object array, ``None`` for games that
did not end; ``info["_final_obs"]`` is the bool mask) and its info in
``info["final_info"]``: ``"final_scores"`` (K, 2) ints (learner's, opponent's game
totals) with ``"_final_scores"``, and ``"illegal_action"`` with ``"_illegal_action"``
when an illegal action ended it. This is the layout Gymnasium's ``SyncVectorEnv``
uses in that mode. ``autoreset_mode=AutoresetMode.NEXT_STEP`` (Gymnasium's default
for its own vector envs) instead returns the final observation (mask all zeros)
with ``info["final_scores"]``/``"_final_scores"`` in the ending step, and the next
``step`` resets those games, ignores their actions and returns reward 0.

``obs`` and ``info["action_mask"]`` are written into arrays allocated once: the
same arrays come back from every call, so copy them to keep them. The masks handed out
(``info["action_mask"]``, :meth:`MulleVectorEnv.action_masks`) are read-only views, and
every action is checked against the game's own legal ids, never against a mask: what a
caller writes into a mask cannot make an illegal move legal.

Opponents
---------
The options match ``Mulle-v0``'s. ``opponent="random"`` plays inside the stepper
(no view, no Python agent). ``opponent="self"``: the learner plays both seats;
game ``i``'s learner seat is chosen by ``seat`` as usual, and the other seat's
moves are chosen by ``opponent_policy(obs, mask) -> actions``, a batched callable
(``(n, 524)`` float32 and ``(n, 2812)`` int8 for the ``n`` games where the other
seat is to move), which the trainer sets to its current network
(:meth:`MulleVectorEnv.set_opponent_policy`): one forward pass for all games.
Any other spec string builds one agent per game (``agents.make``); an agent object
is deep-copied per game (agents may remember a game); a sequence of ``num_envs``
agents is used as given. These agents act through Python, as in ``Mulle-v0``.

The core
--------
This env, ``Mulle-v0`` and the AEC env are faces of one core,
:class:`mulle_env.envcore.EnvCore`: dealing, opponent turns, rewards, ``illegal_action``
and encoding are written there once, for the game object given as ``game=``
(:class:`mulle_env.games.EnvGame`; Mulle by default). The K games live in a stepper
(:mod:`mulle_env.stepper`): the compiled one on the compiled core, the Python one on the
Python engine (the engine's one switch, ``MULLE_ENGINE``); both play the same games, the
in-stepper ``random`` opponent included.
"""

from __future__ import annotations

import functools
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from .engine import BACKEND
from .engine.rng import SEED_DOMAIN, SEED_MAX
from .envcore import SELF_PLAY, EnvCore, OpponentPolicy, check_reset_options, check_seat, check_seed, final_reward
from .games import EnvGame, IllegalActionError, action_int, get_game
from .gym_env import RESET_OPTIONS, ResetNeededError, check_render_mode
from .stepper import PyStepper, make_stepper

__all__ = ["ConcurrentCallError", "MulleVectorEnv", "PyStepper", "make_stepper", "OpponentPolicy", "SELF_PLAY",
           "STEPPERS"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class ConcurrentCallError(RuntimeError):
    """A vector env was called from a thread while another thread was inside one of its calls.

    One vector env serves one thread at a time (docs/threads.md): its arrays are reused from
    step to step, so two threads stepping it at once would read each other's half-written
    rows. The refused call changed nothing.
    """


def _one_thread(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Refuse (:class:`ConcurrentCallError`) a call made while another thread is inside a call of the same env.

    Without it the compiled stepper refused the overlap, but the Python bookkeeping around
    it had already changed, and ``legal_ids()`` gave empty rows for live games, sometimes
    for good (issue 53, item 9). A re-entrant lock taken without waiting: the env's own
    calls into itself pass (``recv`` reads ``legal_ids``), another thread is told at once.
    """

    @functools.wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        busy: Any = args[0]._busy  # type: ignore[attr-defined]
        if not busy.acquire(blocking=False):
            raise ConcurrentCallError(
                f"{args[0]!r}.{method.__name__}() was called while another thread is inside one of its calls: a vector "
                "env serves one thread at a time (give each thread its own env, or a lock around them; "
                "docs/threads.md)")
        try:
            return method(*args, **kwargs)
        finally:
            busy.release()

    return guarded


#: Names ``stepper=`` accepts, kept for code written before the one backend switch: only
#: ``"auto"`` and the engine's own backend; the stepper follows ``MULLE_ENGINE``.
STEPPERS = ("auto", "python", "c")

_INT64 = np.dtype(np.int64)

#: Bytes one game of the vector env holds besides its observation and mask rows: its state in the
#: stepper, its generator, its bookkeeping. Measured: about 20 kB per game in all after ``reset``
#: with the in-stepper ``random`` opponent (the lightest; 30 kB with ``heuristic``, whose agent
#: and game loop add to it), so an estimate made with it is a floor.
GAME_BYTES = 15_000


def memory_estimate(num_envs: int, obs_size: int, num_actions: int | None = None) -> int:
    """The least memory in bytes ``num_envs`` games of the vector env take (:data:`GAME_BYTES` plus the arrays).

    ``num_actions``: the width of a mask row (``None``: Mulle's, 2812).
    """
    width = get_game().num_actions if num_actions is None else num_actions
    per_game = GAME_BYTES + obs_size * np.dtype(np.float32).itemsize + width  # + its observation and mask rows
    return num_envs * per_game


def available_memory() -> int | None:
    """Bytes of memory the machine can still give (Linux ``MemAvailable``, else free pages), or ``None`` if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def check_memory(num_envs: int, obs_size: int, num_actions: int | None = None) -> None:
    """Refuse, before anything is allocated, ``num_envs`` games that cannot fit in the memory available.

    ``make_vec(num_envs=10**6)`` used to be accepted and took 200 s and 19 GB to reset. A
    ``MemoryError`` names the estimate and what the machine has; an estimate above half of
    it warns (the machine will swap or other work will lose its memory).
    """
    need = memory_estimate(num_envs, obs_size, num_actions)
    have = available_memory()
    if have is None:
        return
    gib = 1024**3
    if need > have:
        raise MemoryError(
            f"num_envs={num_envs:,} needs at least {need / gib:,.1f} GiB ({need // num_envs:,} bytes per game), "
            f"more than the {have / gib:,.1f} GiB this machine has available; use fewer games "
            f"(at most about {have // (need // num_envs):,} here)")
    if need > have // 2:
        warnings.warn(f"num_envs={num_envs:,} needs at least {need / gib:,.1f} GiB, more than half of the "
                      f"{have / gib:,.1f} GiB this machine has available", ResourceWarning, stacklevel=3)


class MulleVectorEnv(VectorEnv[NDArray[np.float32], NDArray[np.int64], NDArray[Any]]):
    """``num_envs`` games of ``Mulle-v0`` stepped together (module docstring: autoreset, opponents, the core).

    Args:
        num_envs: K, the number of games.
        opponent: ``"random"`` (inside the stepper), ``"self"`` (the learner plays both
            seats through ``opponent_policy``), any other agent spec, an agent object
            (deep-copied per game) or a sequence of ``num_envs`` agents.
        reward, seat, ruleset, illegal_action, score_scale, extras: as for ``Mulle-v0``.
        autoreset_mode: ``AutoresetMode.SAME_STEP`` (default) or ``NEXT_STEP`` (or their values as text).
        opponent_policy: the batched policy of the other seat under ``opponent="self"``.
        stepper: kept for old code: ``"auto"`` or the engine's backend; the stepper follows
            ``MULLE_ENGINE`` (:data:`mulle_env.engine.BACKEND`).
        num_threads: threads the compiled stepper steps the K games on, with the GIL released
            (default 1; ``"auto"``: the cores this process may run on). The same seed gives
            the same games and outputs for every count. The in-stepper ``random`` opponent and
            ``"self"``'s batched policy path run there; agent objects and specs act through
            Python (holding the GIL) whatever the count. The Python engine runs on one thread.
        dense_mask: write the dense ``(K, 2812)`` mask each step (default, what Gymnasium
            wrappers and ``MaskablePPO`` read). ``False`` leaves ``info["action_mask"]`` out
            and saves its writing, for drivers that read :meth:`legal_ids` instead;
            :meth:`action_masks` then builds one on demand.
        game: the game played (:class:`mulle_env.games.EnvGame` or its name); ``None`` is Mulle,
            which the sizes here describe.

    Observations ``(K, 524)`` float32 (wider with ``extras``), ``info["action_mask"]``
    ``(K, 2812)`` int8 and :meth:`action_masks` ``(K, 2812)`` bool (for ``MaskablePPO``), both
    read-only; :meth:`legal_ids` gives the same legal actions sparse, in CSR form.
    ``info["seat"]`` is the learner's seat in each game.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 8,
        opponent: Any = "heuristic",
        reward: str = "win",
        seat: int | str = "random",
        ruleset: Any = None,  # the game's Ruleset, a dict of its flags, or None
        illegal_action: str = "raise",
        score_scale: float = 100.0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        opponent_policy: OpponentPolicy | None = None,
        stepper: str = "auto",
        render_mode: str | None = None,
        extras: str | None = None,
        num_threads: int | str = 1,
        dense_mask: bool = True,
        game: EnvGame | str | None = None,
    ) -> None:
        if stepper not in ("auto", BACKEND):
            raise ValueError(f"stepper={stepper!r}: the stepper follows the engine's backend, {BACKEND!r} here "
                             "(set MULLE_ENGINE=python or c before importing mulle_env to choose it); pass "
                             "stepper='auto' or leave it out")
        check_render_mode(render_mode, [])
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be AutoresetMode.SAME_STEP or NEXT_STEP, not {autoreset_mode!r}"
            ) from None
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(f"autoreset_mode must be AutoresetMode.SAME_STEP or NEXT_STEP, not {mode}")
        if opponent is None:
            raise ValueError("the vector env plays against an opponent: an agent spec, 'random' or 'self'")
        if not isinstance(dense_mask, (bool, np.bool_)):
            raise ValueError(f"dense_mask must be True or False, not {dense_mask!r}")
        game = get_game(game, ruleset)  # the object whose action space plays these rules
        if isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool) and num_envs > 0:
            # a floor: an extra-input block adds a few floats a game
            check_memory(int(num_envs), game.obs_size, game.num_actions)
        self._core = core = EnvCore(num_envs, opponent, reward, seat, ruleset, illegal_action, score_scale, extras,
                                    opponent_policy, num_threads=num_threads, game=game)
        #: The game played (its rules, codec and observation).
        self.env_game = game
        self._na = game.num_actions
        K = self.num_envs = core.num_envs
        self.ruleset = core.ruleset
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.reward_mode = reward
        self.seat_mode = core.seat_mode
        self.illegal_action = illegal_action
        self.score_scale = core.score_scale
        self.extras = extras
        self.render_mode = None
        self.self_play = core.self_play
        self.agents: list[Any] | None = core.agents
        self.opponent = opponent
        #: Which stepper runs: ``"python"`` or ``"c"`` (the engine's backend).
        self.stepper_kind = "python" if isinstance(core.stepper, PyStepper) else "c"
        #: Threads the stepper steps the games on (1 on the Python engine).
        self.num_threads = core.stepper.num_threads
        self.dense_mask = bool(dense_mask)

        self.single_action_space = core.action_space()
        self.single_observation_space = core.observation_space()
        self.action_space = batch_space(self.single_action_space, K)
        self.observation_space = batch_space(self.single_observation_space, K)
        #: Learner decisions per episode at most (as in ``Mulle-v0``; Mulle's are fixed).
        self.max_steps = game.max_decisions(self.ruleset)

        self._obs = np.zeros((K, core.obs_size), dtype=game.obs_dtype)
        self._mask = np.zeros((K, self._na), dtype=np.int8)
        # What callers get: read-only views (0/1 int8 reads as bool without a copy). Actions are
        # checked by the stepper against the games themselves, so even a view made writable
        # again cannot smuggle a move in.
        self._mask_out = _read_only(self._mask)
        self._mask_bool = _read_only(self._mask.view(bool))
        self._ok = np.ones(K, dtype=bool)
        self._mask_arg: NDArray[np.int8] | None = self._mask if self.dense_mask else None
        # legal_ids(): CSR arrays written by the stepper, reused (ids grows when a step needs more room).
        self._ids = np.zeros(K * 64, dtype=np.int32)
        self._offsets = np.zeros(K + 1, dtype=np.int32)
        self._ids_out, self._offsets_out = _read_only(self._ids), _read_only(self._offsets)
        # The step writes them too (in the same pass as the observations) once a caller reads legal_ids() or when
        # there is no dense mask; _csr_total is their total while they are current, -1 when they must be made.
        self._want_csr = not self.dense_mask
        self._ids_view: NDArray[np.int32] | None = None
        self._csr_total = -1
        self._rewards = np.zeros(K, dtype=np.float64)
        self._terminated = np.zeros(K, dtype=bool)
        self._ended_last = False  # a step set rewards or terminated: the next one clears them first
        # send()'s batch until recv(): (batch mask, its indices, the games that move, illegal ones, a result made
        # at send time or None while the stepper runs it).
        self._sent: tuple[Any, ...] | None = None
        self._send_acts = np.zeros(K, dtype=np.int64)
        self._batches: dict[tuple[str, bytes], tuple[Any, ...]] = {}
        self._truncated = np.zeros(K, dtype=bool)
        self._all = np.ones(K, dtype=bool)
        self._rows = np.arange(K)
        self._rows_out = _read_only(self._rows)
        self._needs_reset = np.zeros(K, dtype=bool)
        self._any_needs_reset = False  # _needs_reset.any(), kept: numpy's any() costs 2 us a call
        self._started = False
        self._busy = threading.RLock()  # one thread at a time in the env's calls (_one_thread)

    @property
    def opponent_policy(self) -> OpponentPolicy | None:
        """The batched policy of the other seat under ``opponent="self"``."""
        return self._core.opponent_policy

    @opponent_policy.setter
    def opponent_policy(self, policy: OpponentPolicy | None) -> None:
        self._core.opponent_policy = policy

    # ----- Gymnasium API ---------------------------------------------------------------
    @_one_thread
    def set_opponent_policy(self, policy: OpponentPolicy | None) -> None:
        """Set the batched policy that plays the other seat under ``opponent="self"``."""
        self._core.opponent_policy = policy

    @_one_thread
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Deal K new games: game ``i`` seeded with ``seed + i`` (or ``seed[i]``), as ``Mulle-v0.reset``.

        A batch in flight (:meth:`send`) is finished first and its results dropped.
        """
        K, core = self.num_envs, self._core
        if self._sent is not None:  # finish the stepping only: no autoreset draws that would shift the games' streams
            result = self._sent[4]
            self._sent = None
            if result is None:
                core.step_write_recv()
        if seed is None:
            seeds: list[int | None] = [None] * K
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
            base = check_seed(seed)
            if base + K - 1 > SEED_MAX:  # game i is seeded with seed + i: all of them in the one seed domain
                raise ValueError(f"seed must leave room for num_envs={K} games (game i is seeded with seed + i): "
                                 f"a whole number from 0 to 2**64 - {K}, not {seed!r}")
            seeds = [base + i for i in range(K)]
        elif isinstance(seed, (list, tuple, np.ndarray)):
            seeds = [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
            if len(seeds) != K:
                raise ValueError(f"seed must be an int, None or a list of num_envs={K} seeds, not {seed!r}")
        else:
            raise ValueError(f"seed must be {SEED_DOMAIN}, None or a list of num_envs={K} seeds, not {seed!r:.60}")
        options = check_reset_options(options, RESET_OPTIONS)
        seat = check_seat(options.get("seat", self.seat_mode), "options['seat']")
        self._csr_total = -1  # before any game changes: a failure below must not leave old ids current
        for i, s in enumerate(seeds):
            core.reseed(i, s)
            core.start(i, seat)
        core.resolve()
        self._needs_reset[:] = False
        self._any_needs_reset = False
        self._started = True
        core.write(self._rows, core.seats, self._obs, self._mask_arg)
        return self._obs, self._info()

    @_one_thread
    def step(self, actions: Any
             ) -> tuple[NDArray[np.float32], NDArray[Any], NDArray[Any], NDArray[Any], dict[str, Any]]:
        """Play one learner action in each game (then the opponents'); autoreset finished games."""
        if not self._started:
            raise ResetNeededError("call reset() before step()")
        if self._sent is not None:
            raise RuntimeError("a batch sent with send() is in flight: recv() comes first")
        acts, sent = self._as_actions(actions)
        if self._ended_last or self._any_needs_reset:
            active = self._begin(self._all)
        else:  # the usual step: nothing to clear or restart first
            active = self._all
            self._csr_total = -1  # before any game changes; the step sets it when it wrote them
        # The usual, all-legal step is one stepper call (play and write each game, and their legal ids, in one pass
        # on its threads); a refused one changed nothing and is sorted out by _step_checked.
        ids, offsets = (self._ids, self._offsets) if self._want_csr else (None, None)
        result = self._core.step_write_if_legal(acts, active, self._obs, self._mask_arg, ids, offsets)
        if result is not None:
            if result[0] == 0 and self.reward_mode != "score_delta":  # no game ended: _finish's first lines
                total = result[1]
                self._csr_total = total if ids is not None and 0 <= total <= len(ids) else -1
                return self._obs, self._rewards, self._terminated, self._truncated, self._info()
            return self._finish(self._all, active, None, result)
        active, illegal = self._step_checked(acts, active, sent)
        return self._finish(self._all, active, illegal, (-1, -1))

    @_one_thread
    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start a step of the games ``env_ids`` (all by default) and return at once; :meth:`recv` ends it.

        EnvPool's asynchronous pair, for overlapping the policy's work on one batch of games
        with the stepping of another: ``actions`` holds one action per game of ``env_ids``
        (ints, in that order), checked as :meth:`step` checks them. With the compiled stepper
        and the in-stepper ``random`` opponent (no extra inputs) the step runs on the
        stepper's threads while the caller goes on (with ``num_threads=1`` it runs in
        :meth:`recv`); elsewhere ``send`` steps the games before it returns. One batch is in
        flight at a time: until :meth:`recv`, :meth:`step`, :meth:`send` and the stepper's
        other calls are refused (:meth:`reset` finishes the batch's stepping and drops its
        results), and only the rows of the other games of the arrays handed out
        (observations, masks, :meth:`legal_ids`) may be read. Every seed
        and every split into batches gives the games :meth:`step` gives with the same
        actions (tested). Typical use, two halves ``A`` and ``B`` of the games::

            envs.send(pick(A), A)
            while training:
                act_b = pick(B)                   # runs while A's games are stepped
                obs, rew, term, trunc, info = envs.recv()   # A's
                envs.send(act_b, B)
                act_a = pick(A)                   # runs while B's games are stepped
                obs, rew, term, trunc, info = envs.recv()   # B's
                envs.send(act_a, A)
        """
        if not self._started:
            raise ResetNeededError("call reset() before send()")
        if self._sent is not None:
            raise RuntimeError("a batch sent with send() is in flight: recv() comes first (one batch at a time)")
        batch, rows, index = self._batch(env_ids)
        acts_b, sent_b = self._as_actions(actions, len(rows))
        acts = self._send_acts  # the stepper reads the batch's entries only
        acts[index] = acts_b
        active = self._begin(batch, index, sending=True)
        core = self._core
        ids, offsets = (self._ids, self._offsets) if self._want_csr else (None, None)
        if core.step_write_send_if_legal(acts, active, self._obs, self._mask_arg, ids, offsets):
            self._sent = (batch, rows, active, None, None)
            return
        sent = np.zeros(self.num_envs, dtype=sent_b.dtype)  # for the messages: the actions as they came
        sent[index] = sent_b
        active, illegal = self._step_checked(acts, active, sent)
        self._ids_for_the_flight()  # stepped here and now
        self._sent = (batch, rows, active, illegal, (-1, -1))

    @_one_thread
    def recv(self) -> tuple[NDArray[np.float32], NDArray[Any], NDArray[Any], NDArray[Any], dict[str, Any]]:
        """The step :meth:`send` started, finished: :meth:`step`'s five values for its games.

        The arrays are the env's own (K rows, as :meth:`step` returns them); the rows of the
        batch's games (``info["env_id"]``, ascending) are this step's, the other rows are the
        other games' (their rewards and ``terminated`` as their last ``recv`` left them).
        Finished games of the batch restart as in :meth:`step`.
        """
        if self._sent is None:
            raise RuntimeError("nothing is in flight: recv() answers a send()")
        batch, rows, active, illegal, result = self._sent
        self._sent = None
        if result is None:
            self._csr_total = -1  # the batch's games moved: should the stepper fail, no old ids stay current
            result = self._core.step_write_recv()
        out = self._finish(batch, active, illegal, result)
        out[4]["env_id"] = rows
        self._ids_for_the_flight()
        return out

    def _ids_for_the_flight(self) -> None:
        """With no step in flight, make the CSR ids current if the caller reads them: during the next batch's
        flight :meth:`legal_ids` cannot ask the stepper."""
        if self._want_csr and self._csr_total < 0:
            self.legal_ids()

    def _batch(self, env_ids: Any) -> tuple[NDArray[np.bool_], NDArray[np.intp], Any]:
        """``env_ids`` as a mask of K games, their ascending indices and an index of them in the caller's order
        (a slice when they run on in order), for all games with ``None``. The batches seen are kept by value: a
        loop over the same few batches checks each once."""
        K = self.num_envs
        if env_ids is None:
            return self._all, self._rows_out, slice(0, K)
        key = None
        if type(env_ids) is np.ndarray and env_ids.ndim == 1 and env_ids.dtype.kind in "iu":
            key = (env_ids.dtype.char, env_ids.tobytes())
            known = self._batches.get(key)
            if known is not None:
                return known
        try:
            ids = np.asarray(env_ids)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"env_ids must be distinct game indices from 0 to {K - 1}: {exc}") from None
        if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu") or ids.dtype == bool:
            raise ValueError(f"env_ids must be a 1-D sequence of game indices from 0 to {K - 1}, not {env_ids!r:.80}")
        if not ids.size:
            raise ValueError("env_ids is empty: a batch needs at least one game")
        if ids.min() < 0 or ids.max() >= K:
            raise ValueError(f"env_ids must be game indices from 0 to {K - 1}, not {int(ids.min())}..{int(ids.max())}")
        batch = np.zeros(K, dtype=bool)
        batch[ids] = True
        if np.count_nonzero(batch) != ids.size:
            raise ValueError("env_ids names a game twice: each game at most once a batch")
        rows = _read_only(np.flatnonzero(batch))  # handed out as info["env_id"]
        # actions[j] is game ids[j]'s: a slice where ids run on in order, else ids themselves
        in_order = bool(np.array_equal(ids, rows)) and int(rows[-1]) - int(rows[0]) + 1 == len(rows)
        found = (batch, rows, slice(int(rows[0]), int(rows[-1]) + 1) if in_order else ids.astype(np.intp))
        if key is not None:
            if len(self._batches) >= 64:  # a caller making new batches all the time: keep the newest only
                self._batches.clear()
            self._batches[key] = found
        return found

    def _begin(self, batch: NDArray[np.bool_], index: Any = None, sending: bool = False) -> NDArray[np.bool_]:
        """Clear the batch's rewards, start its games waiting for their NEXT_STEP reset; the games that move.

        ``index``: the batch's games as an index (:meth:`_batch`); ``sending``: for :meth:`send`,
        whose step writes only the moving games' rows (so the restarted ones are written here).
        """
        core = self._core
        if batch is self._all and not sending:
            if self._ended_last:  # else they are all 0 and False still
                self._rewards.fill(0.0)
                self._terminated.fill(False)
                self._ended_last = False
            self._csr_total = -1  # before any game changes; the step sets it when it wrote them
        else:
            # The other games' rows are theirs; the CSR stays readable for them until recv() writes it anew.
            self._rewards[index] = 0.0
            self._terminated[index] = False
        active = batch
        if self._any_needs_reset:  # NEXT_STEP autoreset
            waiting = self._needs_reset & batch
            if waiting.any():
                active = batch & ~waiting
                for i in np.flatnonzero(waiting).tolist():
                    core.start(i)
                self._needs_reset &= ~waiting
                self._any_needs_reset = bool(self._needs_reset.any())
                if sending:  # send()'s step writes only the moving games' rows: these now
                    core.write_rows(np.flatnonzero(waiting), self._obs, self._mask_arg)
        return active

    def _step_checked(self, acts: NDArray[np.int64], active: NDArray[np.bool_], sent: NDArray[Any]
                      ) -> tuple[NDArray[np.bool_], NDArray[np.bool_] | None]:
        """A step the stepper refused: judge each action (raise, or the illegal ones end their games), play the rest."""
        core = self._core
        illegal = core.illegal.judge(core.stepper, acts, active, sent, self._ok)
        if illegal is not None:
            active = active & ~illegal
        core.step(acts, active)
        core.write(self._rows, core.seats, self._obs, self._mask_arg)
        self._csr_total = -1
        return active, illegal

    def _finish(self, batch: NDArray[np.bool_], active: NDArray[np.bool_], illegal: NDArray[np.bool_] | None,
                result: tuple[int, int]
                ) -> tuple[NDArray[np.float32], NDArray[Any], NDArray[Any], NDArray[Any], dict[str, Any]]:
        """The step's rewards, terminations and info for the games of ``batch``; finished games autoreset."""
        K, core = self.num_envs, self._core
        rewards, terminated = self._rewards, self._terminated
        n_ended, total = result
        if n_ended >= 0:  # the stepper wrote the CSR (or -1: it was not asked)
            ids = self._ids if self._want_csr else None
            self._csr_total = total if ids is not None and 0 <= total <= len(ids) else -1  # -1: legal_ids() grows
        info = self._info()
        if core.reward_mode == "score_delta":  # every game that moved and goes on: its points' change (the ended
            core.delta_rewards((active & ~core.stepper.over).nonzero()[0], rewards)  # ones get theirs below)
        if n_ended == 0:  # the usual step: no game ended (-1: not counted)
            return self._obs, rewards, terminated, self._truncated, info
        self._ended_last = True
        ended = (core.stepper.over & active).nonzero()[0]
        final_scores = None
        if len(ended) or illegal is not None:
            final_scores = np.zeros((K, 2), dtype=np.int64)
            if len(ended):
                final_scores[ended] = [core.final_scores(i) for i in ended.tolist()]
                mode, scale = self.reward_mode, self.score_scale
                rewards[ended] = ([core.final_reward(i) for i in ended.tolist()] if mode == "score_delta" else
                                  [final_reward(mode, m, t, scale) for m, t in final_scores[ended].tolist()])
                terminated[ended] = True
            if illegal is not None:
                bad = np.flatnonzero(illegal)
                for i in bad.tolist():
                    final_scores[i] = core.final_scores(i)
                    self._mask[i] = 0
                rewards[bad] = core.illegal_reward()
                terminated[bad] = True
        ended_mask = terminated & batch
        done = ended_mask.nonzero()[0]
        if len(done):
            final_info: dict[str, Any] = {"final_scores": final_scores, "_final_scores": ended_mask}
            if illegal is not None:
                final_info["illegal_action"] = illegal.copy()
                final_info["_illegal_action"] = ended_mask
            if self.autoreset_mode is AutoresetMode.SAME_STEP:
                final_obs = np.full(K, None, dtype=object)
                rows = self._obs[done]  # one copy for all of them; each entry is its own row of it
                for j, i in enumerate(done.tolist()):
                    final_obs[i] = rows[j]
                info["final_obs"] = final_obs
                info["_final_obs"] = ended_mask
                info["final_info"] = final_info
                self._csr_total = -1
                core.restart(done.tolist(), self._obs, self._mask_arg)
            else:
                info.update(final_info)
                self._needs_reset |= ended_mask
                self._any_needs_reset = True
        return self._obs, rewards, terminated, self._truncated, info

    @_one_thread
    def action_masks(self) -> NDArray[np.bool_]:
        """Bool ``(K, 2812)`` masks of the current observations (a read-only view of ``info["action_mask"]``).

        With ``dense_mask=False`` a fresh array built from :meth:`legal_ids`.
        """
        if self.dense_mask:
            return self._mask_bool
        ids, offsets = self.legal_ids()
        mask = np.zeros((self.num_envs, self._na), dtype=bool)
        mask[np.repeat(self._rows, np.diff(offsets)), ids] = True
        return mask

    @_one_thread
    def legal_ids(self) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
        """The learner's legal actions in every game, sparse: ``(ids, offsets)`` int32 arrays in CSR form.

        Game ``i``'s legal ids are ``ids[offsets[i]:offsets[i + 1]]``, ascending; a game
        that cannot move (a finished game under ``NEXT_STEP`` autoreset, or one ended by an
        illegal action) has none. Written by the stepper from the games' own legal ids
        into arrays it reuses (read-only views: copy them to keep them), so they are the
        current step's only until the next ``step``/``reset``. ``mulle_env.codec.sample_csr``
        draws a uniform legal action per game from them. While a batch is in flight
        (:meth:`send`) the other games' rows are current and the batch's are not; :meth:`recv`
        writes them all anew.
        """
        if not self._started:
            raise ResetNeededError("call reset() before legal_ids()")
        self._want_csr = True  # from now on every step writes them
        total = self._csr_total
        if total < 0:
            if self._sent is not None:
                raise RuntimeError("legal_ids() has nothing current while a batch is in flight: recv() writes them "
                                   "(call legal_ids() once before the first send() and they are kept current)")
            core = self._core
            # A game waiting for its NEXT_STEP reset has no move: ask for the seat not to move.
            seats = np.where(self._needs_reset, 1 - core.seats, core.seats) if self._any_needs_reset else core.seats
            total = core.stepper.legal_csr(self._rows, seats, self._ids, self._offsets)
            if total > len(self._ids):
                self._ids = np.zeros(max(total, 2 * len(self._ids)), dtype=np.int32)
                self._ids_out = _read_only(self._ids)
                self._ids_view = None
                core.stepper.legal_csr(self._rows, seats, self._ids, self._offsets)
            self._csr_total = total
        view = self._ids_view
        if view is None or len(view) != total:
            view = self._ids_view = self._ids_out[:total]  # a step's total mostly repeats: one view for them
        return view, self._offsets_out

    @_one_thread
    def legal_afterstates(self) -> tuple[NDArray[np.float32], NDArray[np.float64]]:
        """What each legal action of :meth:`legal_ids` leaves, row for row: ``(obs, banked)``.

        Row ``r`` describes action ``ids[r]`` of ``legal_ids()``'s ``(ids, offsets)``: ``obs[r]``
        the encoding of the position it leaves, from the learner's seat with the hidden cards
        never shown, and ``banked[r]`` the learner's score difference after it
        (:mod:`mulle_env.afterstates`). A network that scores these shares what it learns across
        moves that leave alike positions, where one logit per action id must learn each id
        alone (docs/learning.md, "Training with standard RL"). Fresh arrays each call, written
        in C on the compiled core (about 5 microseconds a move).
        """
        core = self._core
        game = core.game
        size = game.check_afterstates()
        ids, offsets = self.legal_ids()
        obs = np.empty((len(ids), size), dtype=np.float32)
        banked = np.empty(len(ids), dtype=np.float64)
        offs = offsets.tolist()
        for i in range(self.num_envs):
            a, b = offs[i], offs[i + 1]
            if b > a:
                game.write_afterstates(core.stepper.state(i), int(core.seats[i]), ids[a:b].tolist(), obs[a:b],
                                       banked[a:b])
        return obs, banked

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the games live in this process."""

    # ----- internals -------------------------------------------------------------------
    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"seat": self._core.seats}
        if self.dense_mask:
            info["action_mask"] = self._mask_out
            info["_action_mask"] = self._all
        return info

    def _as_actions(self, actions: Any, n: int | None = None) -> tuple[NDArray[np.int64], NDArray[Any]]:
        """The actions as int64 (one out of range stays out of range) and as the caller sent them (for messages).

        ``n``: how many (a batch of :meth:`send`); K by default.
        """
        K = self.num_envs if n is None else n
        na = self._na
        if type(actions) is np.ndarray and actions.dtype is _INT64 and actions.shape == (K,):
            return actions, actions  # what codec.sample_csr and most policies hand over: nothing to convert
        each = "one per game" if n is None else "one per game of env_ids"
        try:
            arr = np.asarray(actions)
        except (TypeError, ValueError) as exc:  # ragged input
            raise IllegalActionError(f"actions must be {K} ints from 0 to {na - 1}: {exc}") from None
        if arr.shape != (K,):
            raise IllegalActionError(f"actions must be an array of shape ({K},) ({each}), not shape {arr.shape}")
        # A cast to int64 would wrap np.uint64(2**64 - 1) to -1 and overflow on a Python int of 2**70: values
        # beyond the action range are clipped to just beyond it, and messages name what was sent.
        if arr.dtype.kind == "i":
            return arr.astype(np.int64, copy=False), arr
        if arr.dtype.kind == "u":
            return np.minimum(arr, na).astype(np.int64), arr
        # Floats and bools are refused as Mulle-v0 refuses them (action_int): a policy's raw output is a bug.
        if arr.dtype == object:
            ints = [action_int(a) for a in arr]
            if all(i is not None for i in ints):
                return np.array([min(max(i, -1), na) for i in ints if i is not None], dtype=np.int64), arr
        raise IllegalActionError(
            f"actions must be ints from 0 to {na - 1} (Python or numpy integers, not floats or bools), "
            f"not {arr.dtype} values {arr!r}"
        )

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Refused up front, naming this env, rather than failing deep inside on the compiled stepper.
        raise TypeError(f"{self!r} cannot be copied or pickled: it keeps no log of its {self.num_envs} games to "
                        "replay them into a copy (Mulle-v0 and the AEC env do). Make another with the same "
                        "arguments and reset it with the same seed to play the same games again")

    def __repr__(self) -> str:
        k, opp, stepper = (getattr(self, name, "?") for name in ("num_envs", "opponent", "stepper_kind"))
        return f"MulleVectorEnv(num_envs={k}, opponent={opp!r}, stepper={stepper!r})"


def _read_only(a: NDArray[Any]) -> NDArray[Any]:
    """A read-only view of ``a`` (which stays writable for the env's own writers)."""
    view = a.view()
    view.flags.writeable = False
    return view
