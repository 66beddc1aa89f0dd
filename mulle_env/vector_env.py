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
reset without a seed after every episode: the same deal, seat and opponent choices
(tested for the Python stepper with every opponent; see "Steppers" for the C one).

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
same arrays come back from every call, so copy them to keep them.

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

Steppers (the seam between the env and the game rules)
------------------------------------------------------
The env keeps the Gymnasium side (seeding, autoreset, rewards, validation, Python
agents); a *stepper* owns the K games and their rules. :class:`PyStepper` is the
pure-Python one; a compiled one, ``mulle_env.engine.backends()["c"].Stepper``, is used when
it exists and the engine runs on the compiled core (``stepper="auto"``:
``mulle_env.engine.BACKEND == "c"``; force one with ``stepper="python"`` or ``"c"``). A
stepper is built as ``Stepper(num_envs, ruleset, internal_random)`` (the compiled one
also takes the two arrays it keeps ``over`` and ``to_move`` in) and provides:

* ``over``: bool array (K,), game ``i`` is over; ``to_move``: int8 array (K,), the
  seat to move. Both always current, read by the env without a call.
* ``start(i, game_seed, seat, opp_seed)``: deal game ``i`` as
  ``new_game(game_seed, ruleset)`` with the learner in ``seat``; with
  ``internal_random`` the opponent's generator is seeded with ``opp_seed`` and the
  opponent moves until the learner is to move or the game is over.
* ``step(actions, active)``: for every ``i`` with ``active[i]``, play action
  ``actions[i]`` (int64, already checked legal by the env) for the learner; with
  ``internal_random`` the opponent then moves until the learner is to move or the
  game is over.
* ``play(i, action)``: play one legal action in game ``i`` for whoever is to move
  (the env uses it for opponents that act through Python).
* ``write(idx, seats, obs, mask)``: for each ``j``, the observation of seat
  ``seats[j]`` in game ``idx[j]`` into ``obs[j]`` (float32, equal to
  :func:`mulle_env.observation.encode_state`) and its legal-action mask into
  ``mask[j]`` (int8, all zeros unless that seat is to move and the game is on).
* ``scores(i)``: the two game totals ``(seat 0, seat 1)``.
* ``state(i)``: game ``i`` as a :class:`mulle_env.GameState` (for Python agents and
  error messages; may be slower).

The internal random opponent of :class:`PyStepper` draws exactly as the ``random``
agent does in ``Mulle-v0`` (``legal[rng.randrange(len(legal))]`` with a
``random.Random(opp_seed)``), so its games equal ``Mulle-v0``'s; a compiled stepper
may use its own generator: its games are then fixed by the seed but differ.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import codec
from .engine import GameState, new_game  # the active backend: the compiled core when it is built
from .engine.errors import IllegalMoveError
from .engine.moves import MOVES
from .engine.ruleset import Ruleset
from .gym_env import (
    RESET_OPTIONS,
    SEAT_MODES,
    SEED_BOUND,
    ResetNeededError,
    check_options,
    check_reset_options,
    final_reward,
    illegal_reward,
    resolve_agent,
)
from .observation import OBS_DTYPE, OBS_SIZE, encode_into, observation_bounds

__all__ = ["MulleVectorEnv", "PyStepper", "make_stepper", "OpponentPolicy", "SELF_PLAY", "STEPPERS"]

#: The opponent spec under which the learner plays both seats.
SELF_PLAY = "self"
#: Names accepted by ``stepper=``.
STEPPERS = ("auto", "python", "c")
#: ``opponent_policy(obs (n, 524) float32, mask (n, 2812) int8) -> actions (n,)``.
OpponentPolicy = Callable[[np.ndarray, np.ndarray], Any]

_NA = codec.NUM_ACTIONS


class PyStepper:
    """K games in pure Python: the reference implementation of the stepper contract (module docstring)."""

    def __init__(self, num_envs: int, ruleset: Ruleset, internal_random: bool) -> None:
        self.num_envs = num_envs
        self.ruleset = ruleset
        self.internal_random = internal_random
        self.over = np.ones(num_envs, dtype=bool)
        self.to_move = np.zeros(num_envs, dtype=np.int8)
        self._states: list[GameState | None] = [None] * num_envs
        self._seats = [0] * num_envs
        self._rngs = [random.Random(0) for _ in range(num_envs)]

    def start(self, i: int, game_seed: int, seat: int, opp_seed: int) -> None:
        """Deal game ``i``; an internal opponent moves until the learner is to move."""
        st = new_game(game_seed, self.ruleset)
        self._states[i] = st
        self._seats[i] = seat
        if self.internal_random:
            self._rngs[i] = random.Random(opp_seed)
            self._random_moves(i, st)
        self.over[i] = st.over
        self.to_move[i] = st.to_move

    def _random_moves(self, i: int, st: GameState) -> None:
        seat = self._seats[i]
        randrange = self._rngs[i].randrange
        play = st.play_unchecked
        while not st.over and st.to_move != seat:
            ids = st.legal_ids()
            play(MOVES[ids[randrange(len(ids))]])

    def step(self, actions: np.ndarray, active: np.ndarray) -> None:
        """Play ``actions[i]`` for the learner in every active game (then the internal opponent)."""
        states, over, to_move = self._states, self.over, self.to_move
        internal = self.internal_random
        for i in np.flatnonzero(active).tolist():
            st = states[i]
            st.play_unchecked(MOVES[actions[i]])
            if internal:
                self._random_moves(i, st)
            over[i] = st.over
            to_move[i] = st.to_move

    def play(self, i: int, action: int) -> None:
        """Play one legal ``action`` in game ``i`` for the seat to move."""
        st = self._states[i]
        st.play_unchecked(MOVES[action])
        self.over[i] = st.over
        self.to_move[i] = st.to_move

    def write(self, idx: Sequence[int], seats: Sequence[int], obs: np.ndarray, mask: np.ndarray) -> None:
        """Row ``j`` of ``obs``/``mask``: seat ``seats[j]``'s observation and legal mask in game ``idx[j]``."""
        states = self._states
        for j, (i, s) in enumerate(zip(idx, seats)):
            st = states[i]
            encode_into(st, s, obs[j])
            m = mask[j]
            m.fill(0)
            if st.to_move == s and not st.over:
                m[st.legal_ids()] = 1

    def scores(self, i: int) -> tuple[int, int]:
        """Game ``i``'s two game totals by seat."""
        return self._states[i].scores()

    def state(self, i: int) -> GameState:
        """Game ``i`` itself (the Python stepper's games are GameStates)."""
        return self._states[i]


def _c_stepper():
    from . import engine

    c = engine.backends().get("c")
    return None if c is None else c.Stepper


def make_stepper(kind: str, num_envs: int, ruleset: Ruleset, internal_random: bool):
    """A stepper by name: ``"python"``, ``"c"`` (error if it is not built) or ``"auto"`` (C when built)."""
    if kind not in STEPPERS:
        raise ValueError(f"stepper must be one of {STEPPERS}, not {kind!r}")
    from . import engine

    # "auto" follows the engine's backend (MULLE_ENGINE=python forces the Python stepper too).
    cls = None if kind == "python" or (kind == "auto" and engine.BACKEND != "c") else _c_stepper()
    if cls is None:
        if kind == "c":
            raise ValueError('stepper="c" needs the compiled core (mulle_env.engine.backends()["c"].Stepper), '
                             'which is not built here; use stepper="auto" or "python"')
        return PyStepper(num_envs, ruleset, internal_random)
    # The compiled stepper keeps over/to_move in buffers it is given: numpy arrays, so the env reads them directly.
    return cls(num_envs, ruleset, internal_random, np.ones(num_envs, dtype=bool), np.zeros(num_envs, dtype=np.int8))


class MulleVectorEnv(VectorEnv):
    """``num_envs`` games of ``Mulle-v0`` stepped together (module docstring: autoreset, opponents, steppers).

    Args:
        num_envs: K, the number of games.
        opponent: ``"random"`` (inside the stepper), ``"self"`` (the learner plays both
            seats through ``opponent_policy``), any other agent spec, an agent object
            (deep-copied per game) or a sequence of ``num_envs`` agents.
        reward, seat, ruleset, illegal_action, score_scale: as for ``Mulle-v0``.
        autoreset_mode: ``AutoresetMode.SAME_STEP`` (default) or ``NEXT_STEP`` (or their values as text).
        opponent_policy: the batched policy of the other seat under ``opponent="self"``.
        stepper: ``"auto"``, ``"python"`` or ``"c"``.

    Observations ``(K, 524)`` float32, ``info["action_mask"]`` ``(K, 2812)`` int8 and
    :meth:`action_masks` ``(K, 2812)`` bool (for ``MaskablePPO``). ``info["seat"]`` is
    the learner's seat in each game.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        num_envs: int = 8,
        opponent: Any = "heuristic",
        reward: str = "win",
        seat: int | str = "random",
        ruleset: Ruleset | dict | None = None,
        illegal_action: str = "raise",
        score_scale: float = 100.0,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        opponent_policy: OpponentPolicy | None = None,
        stepper: str = "auto",
        render_mode: str | None = None,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, not {num_envs!r}")
        if isinstance(seat, bool) or seat not in SEAT_MODES:
            raise ValueError(f"seat must be one of {SEAT_MODES}, not {seat!r}")
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be AutoresetMode.SAME_STEP or NEXT_STEP, not {autoreset_mode!r}"
            ) from None
        if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
            raise ValueError(f"autoreset_mode must be AutoresetMode.SAME_STEP or NEXT_STEP, not {mode}")
        self.ruleset = check_options(reward, illegal_action, render_mode, [], score_scale, ruleset)
        K = self.num_envs = int(num_envs)
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.reward_mode = reward
        self.seat_mode = seat
        self.illegal_action = illegal_action
        self.score_scale = float(score_scale)
        self.render_mode = None
        self.self_play = isinstance(opponent, str) and opponent == SELF_PLAY
        internal = self.self_play or (isinstance(opponent, str) and opponent == "random")
        self.agents: list | None = None if internal else self._agents(opponent, K)
        self.opponent = opponent
        self.opponent_policy = opponent_policy
        self._stepper = make_stepper(stepper, K, self.ruleset, internal and not self.self_play)
        #: Which stepper runs: ``"python"`` or ``"c"``.
        self.stepper_kind = "python" if isinstance(self._stepper, PyStepper) else "c"

        self.single_action_space = spaces.Discrete(_NA)
        low, high = observation_bounds(self.ruleset)
        self.single_observation_space = spaces.Box(low, high, (OBS_SIZE,), OBS_DTYPE)
        self.action_space = batch_space(self.single_action_space, K)
        self.observation_space = batch_space(self.single_observation_space, K)
        #: Learner decisions per episode (fixed, as in ``Mulle-v0``).
        self.max_steps = codec.max_game_length(self.ruleset) // 2

        self._obs = np.zeros((K, OBS_SIZE), dtype=OBS_DTYPE)
        self._mask = np.zeros((K, _NA), dtype=np.int8)
        self._mask_bool = self._mask.view(bool)  # 0/1 int8 reads as bool without a copy
        self._rewards = np.zeros(K, dtype=np.float64)
        self._terminated = np.zeros(K, dtype=bool)
        self._truncated = np.zeros(K, dtype=bool)
        self._all = np.ones(K, dtype=bool)
        self._rows = np.arange(K)
        self._seats = np.zeros(K, dtype=np.int8)
        self._needs_reset = np.zeros(K, dtype=bool)
        self._np_randoms = [seeding.np_random(None)[0] for _ in range(K)]
        self._opp_rngs = [random.Random(0) for _ in range(K)]
        self._episodes = [0] * K
        self._started = False
        self._observe = None if self.agents is None else [getattr(a, "observe", None) for a in self.agents]
        self._opp_obs: np.ndarray | None = None
        self._opp_mask: np.ndarray | None = None

    @staticmethod
    def _agents(opponent: Any, k: int) -> list:
        if isinstance(opponent, str):
            return [resolve_agent(opponent) for _ in range(k)]
        if isinstance(opponent, Sequence):
            if len(opponent) != k:
                raise ValueError(f"a sequence of opponents must hold num_envs={k} agents, not {len(opponent)}")
            return [resolve_agent(a) for a in opponent]
        agent = resolve_agent(opponent)
        return [copy.deepcopy(agent) for _ in range(k)]

    # ----- Gymnasium API ---------------------------------------------------------------
    def set_opponent_policy(self, policy: OpponentPolicy | None) -> None:
        """Set the batched policy that plays the other seat under ``opponent="self"``."""
        self.opponent_policy = policy

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None):
        """Deal K new games: game ``i`` seeded with ``seed + i`` (or ``seed[i]``), as ``Mulle-v0.reset``."""
        K = self.num_envs
        if seed is None:
            seeds: list = [None] * K
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(K)]
        else:
            seeds = list(seed)
            if len(seeds) != K:
                raise ValueError(f"seed must be an int, None or a list of num_envs={K} seeds, not {seed!r}")
        options = check_reset_options(options, RESET_OPTIONS)
        seat = options.get("seat", self.seat_mode)
        if isinstance(seat, bool) or seat not in SEAT_MODES:
            raise ValueError(f"options['seat'] must be one of {SEAT_MODES}, not {seat!r}")
        for i, s in enumerate(seeds):
            if s is not None:
                self._np_randoms[i], _ = seeding.np_random(s)
            self._start(i, seat)
        self._resolve_opponents()
        self._needs_reset[:] = False
        self._started = True
        self._write_all()
        return self._obs, {"action_mask": self._mask, "_action_mask": self._all, "seat": self._seats}

    def step(self, actions):
        """Play one learner action in each game (then the opponents'); autoreset finished games."""
        if not self._started:
            raise ResetNeededError("call reset() before step()")
        K = self.num_envs
        acts = self._as_actions(actions)
        rewards, terminated = self._rewards, self._terminated
        rewards.fill(0.0)
        terminated.fill(False)
        active = self._all
        if self.autoreset_mode is AutoresetMode.NEXT_STEP and self._needs_reset.any():
            active = ~self._needs_reset
            for i in np.flatnonzero(self._needs_reset).tolist():
                self._start(i, self.seat_mode)
            self._needs_reset[:] = False
        illegal = self._check_actions(acts, active)
        if illegal is not None:
            active = active & ~illegal
        st = self._stepper
        if self._observe is not None:
            for i in np.flatnonzero(active).tolist():
                if self._observe[i] is not None:
                    self._observe[i]((int(self._seats[i]), MOVES[acts[i]]))
        st.step(acts, active)
        self._resolve_opponents()
        self._write_all()
        over = st.over
        ended = np.flatnonzero(over & active)
        final_scores = None
        if len(ended) or illegal is not None:
            final_scores = np.zeros((K, 2), dtype=np.int64)
            for i in ended.tolist():
                mine, theirs = self._final_scores(i)
                final_scores[i] = mine, theirs
                rewards[i] = final_reward(self.reward_mode, mine, theirs, self.score_scale)
            terminated[ended] = True
            if illegal is not None:
                bad = np.flatnonzero(illegal)
                for i in bad.tolist():
                    final_scores[i] = self._final_scores(i)
                    self._mask[i] = 0
                rewards[bad] = illegal_reward(self.reward_mode, self.ruleset, self.score_scale)
                terminated[bad] = True
        info: dict[str, Any] = {"action_mask": self._mask, "_action_mask": self._all, "seat": self._seats}
        done = np.flatnonzero(terminated)
        if len(done):
            ended_mask = terminated.copy()
            final_info: dict[str, Any] = {"final_scores": final_scores, "_final_scores": ended_mask}
            if illegal is not None:
                final_info["illegal_action"] = illegal.copy()
                final_info["_illegal_action"] = ended_mask
            if self.autoreset_mode is AutoresetMode.SAME_STEP:
                final_obs = np.full(K, None, dtype=object)
                for i in done.tolist():
                    final_obs[i] = self._obs[i].copy()
                info["final_obs"] = final_obs
                info["_final_obs"] = ended_mask
                info["final_info"] = final_info
                for i in done.tolist():
                    self._start(i, self.seat_mode)
                self._resolve_opponents()
                self._write(done)
            else:
                info.update(final_info)
                self._needs_reset |= terminated
        return self._obs, rewards, terminated, self._truncated, info

    def action_masks(self) -> np.ndarray:
        """Bool ``(K, 2812)`` masks of the current observations (a view of ``info["action_mask"]``)."""
        return self._mask_bool

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the games live in this process."""

    # ----- internals -------------------------------------------------------------------
    def _start(self, i: int, seat_mode) -> None:
        """Deal game ``i`` exactly as ``MulleEnv.reset`` does (same draws from the same generator)."""
        rng = self._np_randoms[i]
        game_seed = int(rng.integers(SEED_BOUND))
        opp_seed = int(rng.integers(SEED_BOUND))
        if seat_mode == "random":
            seat = int(rng.integers(2))
        elif seat_mode == "alternate":
            seat = self._episodes[i] % 2
        else:
            seat = seat_mode
        self._episodes[i] += 1
        self._seats[i] = seat
        if self.agents is not None:  # only Python agents use it (the stepper seeds its own opponent)
            self._opp_rngs[i] = random.Random(opp_seed)
        if self.agents is not None:
            reset_agent = getattr(self.agents[i], "reset", None)
            if reset_agent is not None:
                reset_agent()
        self._stepper.start(i, game_seed, seat, opp_seed)

    def _final_scores(self, i: int) -> tuple[int, int]:
        s = self._stepper.scores(i)
        seat = int(self._seats[i])
        return s[seat], s[1 - seat]

    def _write_all(self) -> None:
        self._stepper.write(self._rows, self._seats, self._obs, self._mask)

    def _write(self, idx: np.ndarray) -> None:
        n = len(idx)
        obs = np.empty((n, OBS_SIZE), dtype=OBS_DTYPE)
        mask = np.empty((n, _NA), dtype=np.int8)
        self._stepper.write(idx, self._seats[idx], obs, mask)
        self._obs[idx] = obs
        self._mask[idx] = mask

    def _pending(self) -> np.ndarray:
        st = self._stepper
        return np.flatnonzero(~st.over & (st.to_move != self._seats))

    def _resolve_opponents(self) -> None:
        """Let Python-side opponents (agents, or the self-play policy) move until every learner is to move."""
        if self.agents is None and not self.self_play:
            return
        while True:
            pending = self._pending()
            if not len(pending):
                return
            if self.self_play:
                self._policy_moves(pending)
                continue
            for i in pending.tolist():
                self._agent_move(i)

    def _agent_move(self, i: int) -> None:
        st = self._stepper
        agent = self.agents[i]
        game = st.state(i)
        opp = 1 - int(self._seats[i])
        legal = game.legal_moves()
        view = game.view(opp) if getattr(agent, "needs_view", True) else None
        move = agent.act(view, legal, self._opp_rngs[i])
        if move.id is None or move.id not in game.legal_ids():
            raise ValueError(f"opponent {agent!r} in env {i} chose {move}, which is not one of its legal moves")
        st.play(i, move.id)
        if self._observe[i] is not None:
            self._observe[i]((opp, move))

    def _policy_moves(self, pending: np.ndarray) -> None:
        if self.opponent_policy is None:
            raise ValueError('opponent="self" needs a batched policy: pass opponent_policy=fn or call '
                             "set_opponent_policy(fn), fn(obs (n, 524), mask (n, 2812)) -> actions (n,)")
        n = len(pending)
        if self._opp_obs is None or len(self._opp_obs) < n:
            self._opp_obs = np.zeros((self.num_envs, OBS_SIZE), dtype=OBS_DTYPE)
            self._opp_mask = np.zeros((self.num_envs, _NA), dtype=np.int8)
        obs, mask = self._opp_obs[:n], self._opp_mask[:n]
        seats = 1 - self._seats[pending]
        self._stepper.write(pending, seats, obs, mask)
        acts = np.asarray(self.opponent_policy(obs, mask)).reshape(-1)
        if acts.shape != (n,):
            raise ValueError(f"opponent_policy returned {acts.shape[0]} actions for {n} observations")
        for j, i in enumerate(pending.tolist()):
            a = int(acts[j])
            if not (0 <= a < _NA and mask[j, a]):
                raise ValueError(f"opponent_policy chose action {acts[j]!r} in env {i}, which is not legal there; "
                                 f"legal: {np.flatnonzero(mask[j]).tolist()}")
            self._stepper.play(i, a)

    def _as_actions(self, actions) -> np.ndarray:
        K = self.num_envs
        try:
            arr = np.asarray(actions)
        except (TypeError, ValueError) as exc:  # ragged input
            raise codec.IllegalActionError(f"actions must be {K} ints from 0 to {_NA - 1}: {exc}") from None
        if arr.shape != (K,):
            raise codec.IllegalActionError(
                f"actions must be an array of shape ({K},) (one per game), not shape {arr.shape}"
            )
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64, copy=False)
        # Floats and bools are refused as Mulle-v0 refuses them (codec.action_int): a policy's raw output is a bug.
        if arr.dtype == object and all(codec.action_int(a) is not None for a in arr):
            return arr.astype(np.int64)
        raise codec.IllegalActionError(
            f"actions must be ints from 0 to {_NA - 1} (Python or numpy integers, not floats or bools), "
            f"not {arr.dtype} values {arr!r}"
        )

    def _check_actions(self, acts: np.ndarray, active: np.ndarray) -> np.ndarray | None:
        """The games whose action is illegal (``illegal_action="lose"``), or None; raises under ``"raise"``."""
        if acts.min() >= 0 and acts.max() < _NA:  # the usual case: one gather from the masks
            ok = self._mask_bool[self._rows, acts]
        else:
            in_range = (acts >= 0) & (acts < _NA)
            ok = in_range.copy()
            ok[in_range] = self._mask_bool[self._rows[in_range], acts[in_range]]
        if active is self._all and ok.all():
            return None
        bad = active & ~ok
        if not bad.any():
            return None
        if self.illegal_action == "raise":
            i = int(np.flatnonzero(bad)[0])
            try:
                codec.decode(self._stepper.state(i), acts[i])
            except IllegalMoveError as exc:
                raise type(exc)(f"env {i}: {exc}") from None
            raise AssertionError("unreachable: decode accepted an action the mask rejects")
        return bad

    def __repr__(self) -> str:
        return f"MulleVectorEnv(num_envs={self.num_envs}, opponent={self.opponent!r}, stepper={self.stepper_kind!r})"
