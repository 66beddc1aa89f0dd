"""The one environment core: K games of any game with everything the environments share.

``Mulle-v0`` (:mod:`mulle_env.gym_env`, a single env: K = 1), the batched vector env
(:mod:`mulle_env.vector_env`) and the PettingZoo AEC env (:mod:`mulle_env.pettingzoo`) are
thin faces over :class:`EnvCore`, which owns, once: the options and their checks, dealing
(the seeded draws of each game), the opponents' turns, the learner's checked actions and the
``illegal_action`` policy, rewards, and the observation (with the optional extra-input
blocks) and mask encoding. It knows no game: everything game-specific comes from the game
object it is given (:class:`mulle_env.games.EnvGame`; ``None`` is Mulle's,
:data:`mulle_env.games.mulle.MULLE`), and the games themselves live in that game's stepper
(:mod:`mulle_env.stepper`).

Its parts, each chosen once in the constructor:

* the opponents (:mod:`mulle_env.opponents`): one of four small mode objects (the stepper's
  own ``random``, agents through the engine's game loop, the batched self-play policy, or
  no opponent for the AEC env's two learners) whose ``start``/``resolve``/``learner_play``/
  ``step`` the core calls without asking which mode it is;
* the ``illegal_action`` policy (:class:`IllegalActions`);
* the extra inputs (:class:`ExtraInputs`, or ``None``).

The last two are components of the core rather than Gymnasium/PettingZoo wrappers: the
faces' constructors take ``illegal_action=`` and ``extras=`` directly (``MulleEnv(...)``,
``raw_env(...)`` and ``MulleVectorEnv(...)`` are public, not only the factories), the
self-play policy must see the learner's observations extra inputs included (inside the core,
where no wrapper reaches), and the vector env ends an illegal action's game while the other
games play on, with its own autoreset and ``final_info``: a wrapper would have to redo its step.

Every game ``i`` draws from its own ``np_random`` exactly as ``Mulle-v0.reset`` always
has: the deal seed, then the opponent's seed, then (``seat="random"``) the seat; the AEC
env, which has no opponent, draws the deal seed only. So game ``i`` of a vector env
reset with ``seed + i`` plays the game ``Mulle-v0`` reset with that seed plays, on both
backends.

Copies. ``Mulle-v0`` and the AEC env copy (``copy.deepcopy``) and pickle, and the copy plays
on independently (search and rollback users rely on it). The compiled stepper keeps its games
and its in-stepper opponent's generator in C, out of pickle's reach, so these envs build their
core with ``replayable=True``: the stepper is wrapped in a
:class:`~mulle_env.stepper.ReplayableStepper` that keeps each game's deal and moves, and a copy
deals the same games again and replays those moves (the stepper is deterministic from them),
then points the game loops at the copy's games. The vector env does not keep that log (one more
Python step per game per batch) and refuses to be copied, naming itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast, overload

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from numpy.typing import NDArray

from .engine.errors import IllegalMoveError
from .engine.rng import seed_problem
from .games import EnvGame, action_int, get_game
from .native import NATIVE as _NATIVE
from .opponents import (
    AGENT_ENTRY_POINT_GROUP,
    SELF_PLAY,
    OpponentPolicy,
    Opponents,
    SelfPlayPolicy,
    make_opponents,
    resolve_agent,
)
from .stepper import Indices, ReplayableStepper, Stepper

__all__ = [
    "AGENT_ENTRY_POINT_GROUP", "ILLEGAL_ACTION_MODES", "REWARD_MODES", "SEAT_MODES", "SEED_BOUND",
    "SELF_PLAY", "EnvCore", "ExtraInputs", "IllegalActions", "OpponentPolicy", "ReplayableStepper",
    "check_reset_options", "final_reward", "illegal_reward", "resolve_agent",
]

#: ``"score_delta"``: the change of the score difference since the learner's last move, every step (below).
REWARD_MODES = ("win", "score", "score_delta")
SEAT_MODES = (0, 1, "random", "alternate")
ILLEGAL_ACTION_MODES = ("raise", "lose")
SEED_BOUND = 2**63 - 1  # game and opponent seeds are drawn below this from np_random


def __getattr__(name: str) -> Any:
    # Kept for code written before games had objects: the bound of Mulle's extra inputs is Mulle's
    # (mulle_env.games.mulle.EXTRAS_BOUND), so the core looks it up only when asked.
    if name == "EXTRAS_BOUND":
        from .games.mulle import EXTRAS_BOUND

        return EXTRAS_BOUND
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def final_reward(reward_mode: str, mine: int, theirs: int, score_scale: float) -> float:
    """The reward at the end of a game from the mover's game total ``mine`` and the other's ``theirs``.

    ``reward="win"``: +1, 0 or -1; ``reward="score"``: the score difference / ``score_scale``.
    Under ``reward="score_delta"`` this is the game's whole score difference / ``score_scale``, the
    sum of its steps' rewards (:meth:`EnvCore.delta_reward` gives each step its part).
    """
    if reward_mode in ("score", "score_delta"):
        return (mine - theirs) / score_scale
    return float((mine > theirs) - (mine < theirs))


def illegal_reward(reward_mode: str, ruleset: Any, score_scale: float, game: EnvGame | str | None = None) -> float:
    """The reward for an illegal action under ``illegal_action="lose"``: the worst one possible.

    Under ``reward="score"`` a lost game can cost more than -1, so an illegal move must cost
    at least as much as the heaviest defeat (the game's ``score_bound``; ``game=None`` is Mulle),
    or a learner behind on points would prefer it. Under ``reward="score_delta"`` it is twice that:
    whatever the game's earlier steps gave (at most the bound), its rewards then add up to no more
    than the heaviest defeat's.
    """
    if reward_mode == "score":
        return -get_game(game).score_bound(ruleset) / score_scale
    if reward_mode == "score_delta":
        return -2 * get_game(game).score_bound(ruleset) / score_scale
    return -1.0


def check_reset_options(options: object, allowed: tuple[str, ...]) -> dict[str, Any]:
    """``options`` as a dict after checking its keys, so a misspelt option is not silently ignored."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"reset(options=...) takes a dict, not {options!r}")
    unknown = sorted(set(options) - set(allowed), key=str)
    if unknown:
        known = ", ".join(map(repr, allowed)) if allowed else "none"
        raise ValueError(f"unknown reset option(s) {', '.join(map(repr, unknown))}; options this env takes: {known}")
    return options


def check_seat(seat: Any, what: str = "seat") -> int | str:
    """``seat`` if it is one of :data:`SEAT_MODES` (an int 0/1, numpy ints too, or the two words); a ValueError else."""
    if isinstance(seat, (int, np.integer)) and not isinstance(seat, (bool, np.bool_)) and int(seat) in (0, 1):
        return int(seat)
    if isinstance(seat, str) and seat in ("random", "alternate"):
        return seat
    raise ValueError(f"{what} must be one of {SEAT_MODES}, not {seat!r}")


@overload
def check_seed(seed: int | np.integer[Any], what: str = "seed") -> int: ...
@overload
def check_seed(seed: Any, what: str = "seed") -> int | None: ...
def check_seed(seed: Any, what: str = "seed") -> int | None:
    """``seed`` as an int (numpy ints too) or ``None``; a ValueError naming it for anything else (1.5, True, '3', -1).

    The one seed domain (:func:`mulle_env.engine.rng.seed_problem`, docs/engine.md "Seeds"), or ``None``.
    """
    if seed is None:
        return None
    why = seed_problem(seed, what)
    if why is not None:
        raise ValueError(f"{why} (or None)")
    return int(seed)



class IllegalActions:
    """The ``illegal_action`` option: what a learner's illegal or malformed action does, decided in one place.

    ``"raise"``: the game's codec error (:class:`mulle_env.codec.IllegalActionError`, or
    :class:`~mulle_env.GameOverError` once the game is over), naming the action, the move it
    stands for, why, and the legal actions; nothing is played. ``"lose"`` (PettingZoo's
    convention): the mover's game ends with :attr:`reward`, the worst reward possible
    (:func:`illegal_reward`); each face reports it its own way (``info["illegal_action"]``).
    """

    def __init__(self, mode: str, game: EnvGame, reward_mode: str, ruleset: Any, score_scale: float) -> None:
        #: ``"raise"`` or ``"lose"``.
        self.mode = mode
        self.game = game
        #: The reward of an illegal action under ``"lose"``.
        self.reward = illegal_reward(reward_mode, ruleset, score_scale, game)

    def refuse(self, state: Any, action: Any) -> None:
        """An action that is not legal in ``state``: raises under ``"raise"``; returns ``None`` under ``"lose"``."""
        if self.mode == "raise":
            self.game.decode(state, action)  # raises, naming the action, why and the legal ones
            raise AssertionError("unreachable: decode accepted an action outside the legal ids")

    def judge(self, stepper: Stepper, acts: NDArray[np.int64], active: NDArray[np.bool_], sent: NDArray[Any],
              ok: NDArray[np.bool_]) -> NDArray[np.bool_] | None:
        """The active games whose action is illegal (under ``"lose"``), or ``None``; under ``"raise"`` it raises.

        The vector env's check of a step the stepper refused: judged by the stepper from the
        games' own legal ids (never from a mask handed out), ``ok`` its scratch array of K;
        the message names the first bad game (``env 3: ...``) and its action as the caller
        sent it (``sent``).
        """
        na = self.game.num_actions
        if acts.min() >= 0 and acts.max() < na:  # the usual case: one call
            if not stepper.check(acts, active, ok):
                return None
        else:
            in_range = (acts >= 0) & (acts < na)
            stepper.check(np.where(in_range, acts, 0), active & in_range, ok)
            ok &= in_range
        bad: NDArray[np.bool_] = active & ~ok
        if not bad.any():
            return None
        if self.mode == "raise":
            i = int(np.flatnonzero(bad)[0])
            try:
                self.game.decode(stepper.state(i), sent[i])
            except IllegalMoveError as exc:
                raise type(exc)(f"env {i}: {exc}") from None
            raise AssertionError("unreachable: decode accepted an action the stepper rejects")
        return bad


class ExtraInputs:
    """The ``extras`` option: an extra-input block of the game, appended to every observation the core writes.

    The stepper writes the game's observation into a scratch array; the block is computed from
    it by the game (``add_extras``: for Mulle, :mod:`mulle_env.extras`, the code the learned
    agent uses) into the tail of each row. The self-play policy reads the same rows.
    """

    def __init__(self, game: EnvGame, name: str, num_envs: int) -> None:
        self.game = game
        #: The block's name.
        self.name = name
        #: ``(low, high)`` of the block's entries.
        self.bounds = game.extras_bounds(name)
        #: Floats the block adds to each observation.
        self.size = len(self.bounds[0])
        self._base = np.zeros((num_envs, game.obs_size), dtype=game.obs_dtype)

    def write(self, stepper: Stepper, idx: Indices, seats: Indices, obs: NDArray[np.float32],
              mask: NDArray[np.int8] | None) -> None:
        """:meth:`EnvCore.write` with the block: the stepper's rows, then the block after each."""
        base = self._base[: len(idx)]
        stepper.write(idx, seats, base, mask)
        obs[:, : base.shape[1]] = base
        self.game.add_extras(base, obs[:, base.shape[1] :], self.name)


class EnvCore:
    """K games for the environments (module docstring): options, deals, opponents, actions, rewards, encoding.

    Args:
        num_envs: K.
        opponent: ``None`` (no opponent: both seats are the caller's, the AEC env),
            ``"random"`` (inside the stepper), ``"self"`` (the batched ``opponent_policy``),
            any other agent spec, an agent object (deep-copied per game when K > 1), or a
            sequence of K agents (:mod:`mulle_env.opponents`).
        reward, seat, ruleset, illegal_action, score_scale: the environments' options.
        extras: ``None`` or the name of one of the game's extra-input blocks (Mulle's:
            :data:`mulle_env.extras.EXTRAS`) appended to every observation.
        opponent_policy: the batched policy of the other seat under ``opponent="self"``.
        replayable: keep each game's deal and moves (:class:`~mulle_env.stepper.ReplayableStepper`),
            so that the core copies and pickles (``Mulle-v0``, the AEC env; module docstring).
        num_threads: the compiled stepper's threads (an int or ``"auto"``,
            :func:`mulle_env.stepper.resolve_threads`).
        game: the game (:class:`mulle_env.games.EnvGame`, or its name); ``None`` is Mulle.
    """

    #: ``learner_play(i, action)``: the learner's (already checked) action in game ``i``, then the opponents'
    #: turns, every agent told. The opponent mode's own method, bound in the constructor: ``Mulle-v0`` and the
    #: AEC env call it on every step, and a forwarding method would cost a call more each time.
    learner_play: Callable[[int, int], None]

    def __init__(self, num_envs: int, opponent: Any, reward: str = "win", seat: int | str = "random",
                 ruleset: Any = None, illegal_action: str = "raise", score_scale: float = 100.0,
                 extras: str | None = None, opponent_policy: OpponentPolicy | None = None,
                 replayable: bool = False, num_threads: int | str = 1, game: EnvGame | str | None = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, not {num_envs!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, not {reward!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, not {illegal_action!r}")
        if (isinstance(score_scale, bool) or not isinstance(score_scale, (int, float)) or not score_scale > 0
                or not math.isfinite(score_scale)):
            raise ValueError(f"score_scale must be a positive finite number, not {score_scale!r}")
        #: The game object (:class:`mulle_env.games.EnvGame`): everything the core knows of the rules.
        self.game = game = get_game(game, ruleset)  # the object whose action space plays these rules
        self.ruleset = game.check_ruleset(ruleset)
        # The rewards must stay finite numbers: 1e-320 made the largest one inf (and inf made every reward 0, an
        # illegal move as good as a win; issue 53, item 8).
        if not math.isfinite(game.score_bound(self.ruleset) / score_scale):
            raise ValueError(f"score_scale {score_scale!r} is too small: the largest score difference "
                             f"({game.score_bound(self.ruleset):g}) divided by it is not a finite reward")
        self.seat_mode = check_seat(seat)
        if extras is not None and extras not in game.extra_blocks:
            raise ValueError(f"extras must be None or one of {list(game.extra_blocks)}, not {extras!r}")
        K = self.num_envs = int(num_envs)
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.score_scale = float(score_scale)
        self.extras = extras
        self.opponent = opponent
        self.opponent_policy = opponent_policy
        self.seats = np.zeros(K, dtype=np.int8)
        #: Under ``reward="score_delta"``: each game's score difference (learner's seat) already paid out as rewards.
        self.paid = np.zeros(K, dtype=np.int64)
        #: Who plays the other seat: one mode object (:mod:`mulle_env.opponents`), chosen here once.
        self.opponents: Opponents = make_opponents(self, opponent)
        self.self_play = isinstance(self.opponents, SelfPlayPolicy)
        self.learner_play = self.opponents.learner_play
        #: What an illegal action does.
        self.illegal = IllegalActions(illegal_action, game, reward, self.ruleset, self.score_scale)
        #: The extra inputs appended to each observation, or ``None``.
        self.extra_inputs = ExtraInputs(game, extras, K) if extras is not None else None
        #: Size of one observation: the game's encoding plus the extra-input block, if any.
        self.obs_size = game.obs_size + (self.extra_inputs.size if self.extra_inputs is not None else 0)
        #: Size of the action space (the game's), and the observations' dtype: read on every observation made.
        self.num_actions = game.num_actions
        self.obs_dtype = game.obs_dtype
        internal_random = self.opponents.internal_random
        self.stepper: Stepper = game.make_stepper(K, self.ruleset, internal_random, num_threads)
        if replayable:
            self.stepper = ReplayableStepper(self.stepper, self.ruleset, internal_random, game)
        # The stepper's one-pass step_write/restart_write stand for a step or restart and its writes when no
        # opponent moves in Python in between and nothing is appended to its rows.
        self._fused = self.opponents.fused and self.extra_inputs is None
        self._rows = np.arange(K)
        self._one = (np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool))  # play_observe's action and active game
        self._fused_one = self._fused and K == 1
        self.np_randoms = [seeding.np_random(None)[0] for _ in range(K)]
        self.episodes = [0] * K
        self._sent: tuple[int, int] | None = None  # step_write_send_if_legal's result when it ran the step itself

    @property
    def agents(self) -> list[Any] | None:
        """The opponent agents, one per game (``None`` for ``"random"``, ``"self"`` and no opponent)."""
        return self.opponents.agents

    def __getstate__(self) -> dict[str, Any]:
        if not isinstance(self.stepper, ReplayableStepper):
            raise TypeError("this EnvCore keeps no log of its games (replayable=False), so it cannot be copied "
                            "or pickled")
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.opponents.copied()

    # ----- spaces -------------------------------------------------------------------------
    def observation_space(self) -> spaces.Box[np.float32]:
        """The space of one observation (the game's bounds under the ruleset, then the extra-input block's)."""
        game = self.game
        low, high = game.observation_bounds(self.ruleset)
        if self.extra_inputs is not None:
            extra_low, extra_high = self.extra_inputs.bounds
            low = np.concatenate([low, extra_low])
            high = np.concatenate([high, extra_high])
        return spaces.Box(low, high, (self.obs_size,), game.obs_dtype)

    def action_space(self) -> spaces.Discrete[np.int64]:
        """``Discrete(num_actions)``: an index is always the same move (the game's codec; Mulle's 2812)."""
        return spaces.Discrete(self.game.num_actions)

    # ----- games ----------------------------------------------------------------------------
    def reseed(self, i: int, seed: int | np.random.Generator | None) -> None:
        """Game ``i``'s generator: seeded from ``seed``, or a generator given as it is (Mulle-v0's own)."""
        if isinstance(seed, np.random.Generator):
            self.np_randoms[i] = seed
        elif seed is not None:
            self.np_randoms[i], _ = seeding.np_random(check_seed(seed))

    def _draw(self, i: int, seat_mode: int | str | None = None) -> tuple[int, int, int]:
        """Game ``i``'s next ``(game_seed, seat, opp_seed)`` from its generator; counts the episode, sets the seat."""
        rng = self.np_randoms[i]
        game_seed = int(rng.integers(SEED_BOUND))
        opp_seed = 0
        seat = 0
        if self.opponents.draws_opponent:
            opp_seed = int(rng.integers(SEED_BOUND))
            mode = self.seat_mode if seat_mode is None else seat_mode
            if mode == "random":
                seat = int(rng.integers(2))
            elif mode == "alternate":
                seat = self.episodes[i] % 2
            else:
                seat = cast(int, mode)  # check_seat let only 0, 1 and the two words through
        self.episodes[i] += 1
        self.seats[i] = seat
        return game_seed, seat, opp_seed

    def _draw_many(self, idx: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
        """:meth:`_draw` for each game of ``idx`` against an opponent: ``(game_seeds, seats, opp_seeds)``.

        The same draws from the same generators, made in C when the env layer is compiled
        (``_native.draw_deals``: numpy's own bounded-integer method on each Generator's bit
        generator, a few nanoseconds a draw where ``Generator.integers`` costs about 2 us).
        """
        if _NATIVE is None or not self.opponents.draws_opponent:
            deals = [self._draw(i) for i in idx]
            return [d[0] for d in deals], [d[1] for d in deals], [d[2] for d in deals]
        mode = self.seat_mode
        game_seeds, opp_seeds, drawn = _NATIVE.draw_deals([self.np_randoms[i] for i in idx], SEED_BOUND,
                                                          mode == "random")
        episodes = self.episodes
        if drawn is not None:
            seats = drawn
        elif mode == "alternate":
            seats = [episodes[i] % 2 for i in idx]
        else:
            seats = [cast(int, mode)] * len(idx)
        for i, seat in zip(idx, seats):
            episodes[i] += 1
            self.seats[i] = seat
        return game_seeds, seats, opp_seeds

    def restart(self, idx: Sequence[int], obs: NDArray[np.float32], mask: NDArray[np.int8] | None) -> None:
        """Deal the games ``idx`` anew (:meth:`start`), let their opponents move and write their learner rows.

        Rows ``idx[j]`` of ``obs`` and ``mask`` (K rows each). Where the stepper's one pass may
        stand for it (the in-stepper opponent, no extra inputs) this is one stepper call that
        deals into the games' own objects; elsewhere :meth:`start`, :meth:`resolve` and :meth:`write`.
        """
        self.paid[list(idx)] = 0
        if not self._fused:
            for i in idx:
                self.start(i)
            self.resolve()
            self.write_rows(idx, obs, mask)
            return
        game_seeds, seats, opp_seeds = self._draw_many(idx)
        self.stepper.restart_write(idx, game_seeds, seats, opp_seeds, obs, mask)

    def start(self, i: int, seat_mode: int | str | None = None) -> None:
        """Deal game ``i`` from its generator (deal seed, opponent seed, seat) and let the opponent move."""
        game_seed, seat, opp_seed = self._draw(i, seat_mode)
        self.paid[i] = 0
        self.opponents.start(i, game_seed, seat, opp_seed)

    def resolve(self, idx: Sequence[int] | None = None) -> None:
        """Let the opponents (agents, the self-play policy) move until each learner is to move or its game is over."""
        self.opponents.resolve(idx)

    def step(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        """The learners' actions in every active game (checked already), then every opponent."""
        self.opponents.step(actions, active)

    def step_if_legal(self, actions: Indices, active: NDArray[np.bool_]) -> bool:
        """:meth:`step` if every active game's action is legal there; else ``False``, with nothing played.

        The stepper checks every action against the games before it plays any, so the usual
        all-legal step costs no separate check. Games whose opponents are agents (played
        one game at a time through the game loop) are not stepped here: ``False``.
        """
        return self.opponents.step_if_legal(actions, active)

    def step_write_if_legal(self, actions: Indices, active: NDArray[np.bool_], obs: NDArray[np.float32],
                            mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                            offsets: NDArray[np.int32] | None = None) -> tuple[int, int] | None:
        """:meth:`step_if_legal` then :meth:`write` of every game's learner row, in one stepper pass where it can.

        The vector env's usual step against the in-stepper opponent (no agents, no self-play
        policy, no extra inputs): the compiled stepper plays and writes each game (and, given
        ``ids`` and ``offsets``, the learners' legal ids in CSR form) in one job on its
        threads. Elsewhere the two calls, as before, and no CSR. Returns ``(ended, total)``:
        how many active games are over, and the CSR total (-1 if not written); ``None``:
        nothing was played or written (an action is not legal; the caller sorts it out).
        """
        if not self._fused:
            if not self.opponents.step_if_legal(actions, active):
                return None
            self.write(self._rows, self.seats, obs, mask)
            return int(np.count_nonzero(self.stepper.over & active)), -1
        try:
            return self.stepper.step_write(actions, active, self.seats, obs, mask, ids, offsets)
        except ValueError:
            return None

    def step_write_send_if_legal(self, actions: Indices, active: NDArray[np.bool_], obs: NDArray[np.float32],
                                 mask: NDArray[np.int8] | None, ids: NDArray[np.int32] | None = None,
                                 offsets: NDArray[np.int32] | None = None) -> bool:
        """:meth:`step_write_if_legal` in two halves: start it and return; :meth:`step_write_recv` ends it.

        Against the in-stepper opponent the step runs on the stepper's threads until then
        (``step_write_send``: only the active games' rows are written); with a self-play
        policy or extra inputs it runs here and now. ``False``: nothing was played or started
        (an action is not legal, or agent opponents, which :meth:`step_write_if_legal` never
        steps: the caller steps them itself, as after a refusal).
        """
        if not self._fused:
            self._sent = self.step_write_if_legal(actions, active, obs, mask, ids, offsets)
            return self._sent is not None
        try:
            self.stepper.step_write_send(actions, active, self.seats, obs, mask, ids, offsets)
        except ValueError:
            return False
        self._sent = None
        return True

    def step_write_recv(self) -> tuple[int, int]:
        """The ``(ended, total)`` of the step :meth:`step_write_send_if_legal` started."""
        sent, self._sent = self._sent, None
        return self.stepper.step_write_recv() if sent is None else sent

    # ----- actions, rewards ------------------------------------------------------------------
    def checked_action(self, i: int, action: Any) -> int | None:
        """``action`` as a legal index of game ``i``; ``None`` if it is not one under ``illegal_action="lose"``.

        With ``illegal_action="raise"`` an illegal or malformed action raises the codec's
        error, which names the action, the move it stands for, why, and the legal actions.
        """
        a = action_int(action)
        if a is not None and self.stepper.is_legal(i, a):  # the stepper's kept legal ids: no rules call
            return a
        self.illegal.refuse(self.stepper.state(i), action)
        return None

    def final_scores(self, i: int) -> tuple[int, int]:
        """(learner's, opponent's) game totals of game ``i``."""
        s = self.stepper.scores(i)
        seat = int(self.seats[i])
        return s[seat], s[1 - seat]

    def final_reward(self, i: int) -> float:
        """The learner's reward for finished game ``i`` (under ``"score_delta"``: its last step's part)."""
        if self.reward_mode == "score_delta":
            return self.delta_reward(i)
        return final_reward(self.reward_mode, *self.final_scores(i), self.score_scale)

    def delta_reward(self, i: int) -> float:
        """``reward="score_delta"``'s reward for game ``i`` now: its score difference's change since the last one.

        The learner's game total minus the opponent's (the running totals: every mulle and tabbe
        as it is made, the set's bonus as the intake grows), less what earlier steps paid out,
        / ``score_scale``. A game's rewards add up to ``reward="score"``'s one final reward, and
        the points the opponent makes before the learner's first move count at its first step.
        """
        mine, theirs = self.final_scores(i)
        diff = mine - theirs
        change = diff - int(self.paid[i])
        self.paid[i] = diff
        return change / self.score_scale

    def delta_rewards(self, idx: NDArray[np.intp], out: NDArray[np.float64]) -> None:
        """:meth:`delta_reward` of every game of ``idx`` into ``out[idx]``."""
        for i in idx.tolist():
            out[i] = self.delta_reward(i)

    def illegal_reward(self) -> float:
        """The reward of an illegal action under ``illegal_action="lose"``."""
        return self.illegal.reward

    # ----- encoding ------------------------------------------------------------------------
    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8] | None) -> None:
        """Row ``j``: seat ``seats[j]``'s observation (with the extra-input block) and legal mask of game ``idx[j]``.

        ``mask=None`` writes no dense mask (the stepper still keeps the legal ids for its checks).
        """
        if self.extra_inputs is None:
            self.stepper.write(idx, seats, obs, mask)
        else:
            self.extra_inputs.write(self.stepper, idx, seats, obs, mask)

    def write_rows(self, idx: Sequence[int] | NDArray[np.intp], obs: NDArray[np.float32],
                   mask: NDArray[np.int8] | None) -> None:
        """The learner rows of the games ``idx`` into rows ``idx`` of ``obs`` and ``mask`` (K rows each; the other
        rows untouched), where :meth:`write` fills rows ``0..n-1``."""
        rows = np.asarray(idx, dtype=np.intp)
        part = np.empty((len(rows), self.obs_size), dtype=self.game.obs_dtype)
        if mask is None:
            self.write(rows, self.seats[rows], part, None)
        else:
            part_mask = np.empty((len(rows), self.game.num_actions), dtype=np.int8)
            self.write(rows, self.seats[rows], part, part_mask)
            mask[rows] = part_mask
        obs[rows] = part

    def play_observe(self, i: int, action: int) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
        """The learner's legal ``action`` in game ``i`` (the opponent answering), then the learner's observation.

        In a one-game env whose stepper's one-pass ``step_write`` stands for the play and the
        write (the in-stepper opponent, no extra inputs) this is one stepper call; elsewhere
        ``learner_play`` then :meth:`observation`. The single envs' step.
        """
        if self._fused_one:
            obs = np.empty((1, self.obs_size), dtype=self.obs_dtype)
            mask = np.empty((1, self.num_actions), dtype=np.int8)
            acts, active = self._one
            acts[0] = action
            self.stepper.step_write(acts, active, self.seats, obs, mask)
            return obs[0], mask[0]
        self.learner_play(i, action)
        return self.observation(i, int(self.seats[i]))

    def observation(self, i: int, seat: int) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
        """A fresh ``(obs, mask)`` of seat ``seat`` in game ``i`` (the mask all zeros unless it is to move)."""
        obs = np.empty((1, self.obs_size), dtype=self.obs_dtype)
        mask = np.empty((1, self.num_actions), dtype=np.int8)
        self.write((i,), (seat,), obs, mask)
        return obs[0], mask[0]

    def legal_mask(self, i: int, dtype: Any = bool) -> NDArray[Any]:
        """Game ``i``'s legal actions as a fresh mask of ``num_actions`` (all zeros once the game is over)."""
        mask = np.zeros(self.game.num_actions, dtype=dtype)
        st = self.stepper.state(i)
        if not st.over:
            mask[list(st.legal_ids())] = 1
        return mask
