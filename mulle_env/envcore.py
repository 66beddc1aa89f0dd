"""The one environment core: K games of Mulle with everything the environments share.

``Mulle-v0`` (:mod:`mulle_env.gym_env`, a single env: K = 1), the batched vector env
(:mod:`mulle_env.vector_env`) and the PettingZoo AEC env (:mod:`mulle_env.pettingzoo`) are
thin faces over :class:`EnvCore`, which owns, once: the options and their checks, dealing
(the seeded draws of each game), the opponents' turns (the in-stepper ``random``, the
self-play policy, or any agent through the engine's game loop,
:class:`~mulle_env.engine.GameLoop`), the learner's checked actions and the
``illegal_action`` policy, rewards, and the observation (with the optional extra-input
blocks) and mask encoding. The games themselves live in a stepper
(:mod:`mulle_env.stepper`), compiled or Python by the engine's backend.

Every game ``i`` draws from its own ``np_random`` exactly as ``Mulle-v0.reset`` always
has: the deal seed, then the opponent's seed, then (``seat="random"``) the seat; the AEC
env, which has no opponent, draws the deal seed only. So game ``i`` of a vector env
reset with ``seed + i`` plays the game ``Mulle-v0`` reset with that seed plays, on both
backends.

Copies. ``Mulle-v0`` and the AEC env copy (``copy.deepcopy``) and pickle, and the copy plays
on independently (search and rollback users rely on it). The compiled stepper keeps its games
and its in-stepper opponent's generator in C, out of pickle's reach, so these envs build their
core with ``replayable=True``: the stepper is wrapped in a :class:`ReplayableStepper` that keeps
each game's deal and moves, and a copy deals the same games again and replays those moves (the
stepper is deterministic from them), then points the game loop at the copy's games. The
vector env does not keep that log (one more Python step per game per batch) and refuses to be
copied, naming itself.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, cast, overload

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from numpy.typing import NDArray

from . import codec
from .engine.errors import IllegalMoveError
from .engine.loop import GameLoop, agent_name, ruleset_refusal
from .engine.moves import MOVES, Move
from .engine.rng import seed_problem
from .engine.ruleset import Ruleset
from .native import NATIVE as _NATIVE
from .observation import OBS_DTYPE, OBS_SIZE, SHEET_BOUND_PER_SET, observation_bounds
from .stepper import Indices, Stepper, make_stepper

__all__ = [
    "AGENT_ENTRY_POINT_GROUP", "EXTRAS_BOUND", "ILLEGAL_ACTION_MODES", "REWARD_MODES", "SEAT_MODES", "SEED_BOUND",
    "SELF_PLAY", "EnvCore", "OpponentPolicy", "check_reset_options", "final_reward", "illegal_reward",
    "resolve_agent",
]

REWARD_MODES = ("win", "score")
SEAT_MODES = (0, 1, "random", "alternate")
ILLEGAL_ACTION_MODES = ("raise", "lose")
AGENT_ENTRY_POINT_GROUP = "mulle_env.agents"
SEED_BOUND = 2**63 - 1  # game and opponent seeds are drawn below this from np_random
#: The opponent spec under which the learner plays both seats (the vector env).
SELF_PLAY = "self"
#: Every entry of an extra-input block lies in ``[0, EXTRAS_BOUND]`` (the observation space's bound).
EXTRAS_BOUND = 64.0
#: ``opponent_policy(obs (n, size) float32, mask (n, 2812) int8) -> actions (n,)``.
OpponentPolicy = Callable[[NDArray[np.float32], NDArray[np.int8]], Any]

_NA = codec.NUM_ACTIONS


def resolve_agent(opponent: Any) -> Any:
    """An agent from a spec string (``"heuristic"``, ``"pimc:samples=10"``) or an agent object.

    Strings are built by the factories registered under the ``mulle_env.agents``
    entry-point group (the ``agents`` package installs ``agents.registry:make``), so
    this package never imports ``agents``. An object is accepted as is if it has
    ``act(view, legal_moves, rng)``.
    """
    if isinstance(opponent, str):
        factories = sorted(entry_points(group=AGENT_ENTRY_POINT_GROUP), key=lambda ep: ep.name)
        if not factories:
            raise ValueError(
                f"cannot build opponent {opponent!r}: no agent registry is installed under the entry-point "
                f"group {AGENT_ENTRY_POINT_GROUP!r}; install mulle-env with its agents, or pass an agent object"
            )
        errors: list[ValueError] = []
        for ep in factories:
            try:
                return ep.load()(opponent)
            except ValueError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise ValueError(f"no agent registry can build {opponent!r}: " + "; ".join(map(str, errors)))
    if callable(getattr(opponent, "act", None)):
        return opponent
    raise ValueError(
        f"opponent must be an agent spec string such as 'heuristic' or 'random', or an object with "
        f"act(view, legal_moves, rng), not {opponent!r}"
    )


def final_reward(reward_mode: str, mine: int, theirs: int, score_scale: float) -> float:
    """The reward at the end of a game from the mover's game total ``mine`` and the other's ``theirs``.

    ``reward="win"``: +1, 0 or -1; ``reward="score"``: the score difference / ``score_scale``.
    """
    if reward_mode == "score":
        return (mine - theirs) / score_scale
    return float((mine > theirs) - (mine < theirs))


def illegal_reward(reward_mode: str, ruleset: Ruleset, score_scale: float) -> float:
    """The reward for an illegal action under ``illegal_action="lose"``: the worst one possible.

    Under ``reward="score"`` a lost game can cost more than -1, so an illegal move must cost
    at least as much as the heaviest defeat, or a learner behind on points would prefer it.
    """
    if reward_mode == "score":
        return -ruleset.sets * SHEET_BOUND_PER_SET / score_scale
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


def _extras_module() -> ModuleType:
    from . import extras

    return extras


def _rebuild_stepper(num_envs: int, ruleset: Ruleset, internal_random: bool,
                     deals: list[tuple[int, int, int] | None], moves: list[list[tuple[bool, int]]],
                     num_threads: int = 1) -> ReplayableStepper:
    """A :class:`ReplayableStepper` whose games are dealt ``deals`` and played ``moves`` (how a copy is made)."""
    out = ReplayableStepper(make_stepper(num_envs, ruleset, internal_random, num_threads), ruleset, internal_random)
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
    moves. The log is one list append per move.
    """

    def __init__(self, inner: Stepper, ruleset: Ruleset, internal_random: bool) -> None:
        self.inner = inner
        self.ruleset = ruleset
        self.internal_random = internal_random
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
                                  [list(m) for m in self.moves], self.inner.num_threads)


class _SteppedPlay:
    """Game ``i`` of a stepper, played the way the game loop plays a move: checked, then through the stepper.

    The loop reads the game itself (made once the stepper has dealt it, the stepper's until
    it starts that game again); only its moves must go through ``stepper.play``, which keeps
    the batched ``over``/``to_move`` arrays in step.
    """

    __slots__ = ("stepper", "i", "state")

    def __init__(self, stepper: Stepper, i: int) -> None:
        self.stepper = stepper
        self.i = i
        self.state = stepper.state(i)

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy reads its game from the copied stepper (its state is the stepper's own object).
        return _SteppedPlay, (self.stepper, self.i)

    def __call__(self, move: Move | str) -> _Played:
        # The engine's checked parse: an illegal, malformed or missing move raises, saying why.
        m = self.state.check(move)
        self.stepper.play(self.i, m.id)  # type: ignore[arg-type]  # the envs' rules have an id for every move
        return _Played(m)


class _Played:
    """What a stepped game's play returns: the move played, which the game loop tells the agents."""

    __slots__ = ("move",)

    def __init__(self, move: Move) -> None:
        self.move = move


class EnvCore:
    """K games for the environments (module docstring): options, deals, opponents, actions, rewards, encoding.

    Args:
        num_envs: K.
        opponent: ``None`` (no opponent: both seats are the caller's, the AEC env),
            ``"random"`` (inside the stepper), ``"self"`` (the batched ``opponent_policy``),
            any other agent spec, an agent object (deep-copied per game when K > 1), or a
            sequence of K agents.
        reward, seat, ruleset, illegal_action, score_scale: the environments' options.
        extras: ``None`` or the name of an extra-input block (:data:`mulle_env.extras.EXTRAS`)
            appended to every observation.
        opponent_policy: the batched policy of the other seat under ``opponent="self"``.
        replayable: keep each game's deal and moves (:class:`ReplayableStepper`), so that the
            core copies and pickles (``Mulle-v0``, the AEC env; module docstring).
        num_threads: the compiled stepper's threads (an int or ``"auto"``,
            :func:`mulle_env.stepper.resolve_threads`).
    """

    def __init__(self, num_envs: int, opponent: Any, reward: str = "win", seat: int | str = "random",
                 ruleset: Ruleset | dict[str, Any] | None = None, illegal_action: str = "raise",
                 score_scale: float = 100.0,
                 extras: str | None = None, opponent_policy: OpponentPolicy | None = None,
                 replayable: bool = False, num_threads: int | str = 1) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, not {num_envs!r}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, not {reward!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, not {illegal_action!r}")
        if isinstance(score_scale, bool) or not isinstance(score_scale, (int, float)) or not score_scale > 0:
            raise ValueError(f"score_scale must be a positive number, not {score_scale!r}")
        if ruleset is not None and not isinstance(ruleset, Ruleset):
            ruleset = Ruleset.from_dict(ruleset)
        self.ruleset = codec.check_ruleset(ruleset or Ruleset())
        self.seat_mode = check_seat(seat)
        if extras is not None and extras not in _extras_module().EXTRAS:
            raise ValueError(f"extras must be None or one of {list(_extras_module().EXTRAS)}, not {extras!r}")
        K = self.num_envs = int(num_envs)
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.score_scale = float(score_scale)
        self.extras = extras
        self.opponent = opponent
        self.opponent_policy = opponent_policy
        self.two_learners = opponent is None
        self.self_play = isinstance(opponent, str) and opponent == SELF_PLAY
        self.internal_random = isinstance(opponent, str) and opponent == "random"
        self.agents: list[Any] | None = None
        if not (self.two_learners or self.self_play or self.internal_random):
            self.agents = self._agents(opponent, K)
            for agent in self.agents:
                if (why := ruleset_refusal(agent, self.ruleset)) is not None:
                    raise ValueError(f"opponent {agent_name(agent)!r} cannot play under these rules: {why}")
        self.stepper: Stepper = make_stepper(K, self.ruleset, self.internal_random, num_threads)
        if replayable:
            self.stepper = ReplayableStepper(self.stepper, self.ruleset, self.internal_random)
        self.seats = np.zeros(K, dtype=np.int8)
        self._rows = np.arange(K)
        self.np_randoms = [seeding.np_random(None)[0] for _ in range(K)]
        self.episodes = [0] * K
        self._sent: tuple[int, int] | None = None  # step_write_send_if_legal's result when it ran the step itself
        self.loops: list[GameLoop | None] | None = None
        if self.agents is not None:
            self.loops = [None] * K  # one per game, made as the game starts
        #: Size of one observation: the encoding plus the extra-input block, if any.
        self.obs_size = OBS_SIZE + (_extras_module().extras_size(extras) if extras else 0)
        self._base = np.zeros((K, OBS_SIZE), dtype=OBS_DTYPE) if extras else None
        self._opp_obs: NDArray[np.float32] | None = None
        self._opp_mask: NDArray[np.int8] | None = None
        self._one = (np.zeros(K, dtype=np.int64), np.zeros(K, dtype=bool))  # one game's step through the stepper

    def __getstate__(self) -> dict[str, Any]:
        if not isinstance(self.stepper, ReplayableStepper):
            raise TypeError("this EnvCore keeps no log of its games (replayable=False), so it cannot be copied "
                            "or pickled")
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # Each game loop reads its game from the copied stepper, not from a detached copy of the game.
        for i, loop in enumerate(self.loops or ()):
            if loop is not None:
                loop.game = self.stepper.state(i)

    @staticmethod
    def _agents(opponent: Any, k: int) -> list[Any]:
        if isinstance(opponent, str):
            return [resolve_agent(opponent) for _ in range(k)]
        if isinstance(opponent, Sequence):
            if len(opponent) != k:
                raise ValueError(f"a sequence of opponents must hold num_envs={k} agents, not {len(opponent)}")
            return [resolve_agent(a) for a in opponent]
        agent = resolve_agent(opponent)
        return [agent] if k == 1 else [copy.deepcopy(agent) for _ in range(k)]

    # ----- spaces -------------------------------------------------------------------------
    def observation_space(self) -> spaces.Box[np.float32]:
        """The space of one observation (bounds by the ruleset; extra-input entries in ``[0, EXTRAS_BOUND]``)."""
        low, high = observation_bounds(self.ruleset)
        if self.extras:
            n = self.obs_size - OBS_SIZE
            low = np.concatenate([low, np.zeros(n, OBS_DTYPE)])
            high = np.concatenate([high, np.full(n, EXTRAS_BOUND, OBS_DTYPE)])
        return spaces.Box(low, high, (self.obs_size,), OBS_DTYPE)

    @staticmethod
    def action_space() -> spaces.Discrete[np.int64]:
        """``Discrete(2812)``: an index is always the same move (:mod:`mulle_env.codec`)."""
        return spaces.Discrete(_NA)

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
        if not self.two_learners:
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
        if _NATIVE is None or self.two_learners:
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

        Rows ``idx[j]`` of ``obs`` and ``mask`` (K rows each). Against the in-stepper opponent
        without extra inputs this is one stepper call that deals into the games' own objects;
        elsewhere :meth:`start`, :meth:`resolve` and :meth:`write`, as before.
        """
        if self.loops is not None or self.self_play or self.extras is not None:
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
        if self.loops is not None:
            agent = self.agents[i]  # type: ignore[index]  # the loops are there when the agents are
            seats: list[Any] = [None, None]
            seats[1 - seat] = agent
            rngs: list[random.Random | None] = [None, None]
            rngs[1 - seat] = random.Random(opp_seed)
            self.stepper.start(i, game_seed, seat, opp_seed)
            play = _SteppedPlay(self.stepper, i)
            loop = self.loops[i] = GameLoop(play.state, seats, rngs, play=play)
            loop.start()
            loop.run()
        else:
            self.stepper.start(i, game_seed, seat, opp_seed)

    def resolve(self, idx: Sequence[int] | None = None) -> None:
        """Let the opponents (agents, the self-play policy) move until each learner is to move or its game is over."""
        if self.self_play:
            while True:
                st = self.stepper
                pending = np.flatnonzero(~st.over & (st.to_move != self.seats))
                if not len(pending):
                    return
                self._policy_moves(pending)
        if self.loops is None:
            return
        for i in range(self.num_envs) if idx is None else idx:
            self._loop(i).run()

    def _loop(self, i: int) -> GameLoop:
        loop = self.loops[i] if self.loops is not None else None
        if loop is None:
            raise RuntimeError(f"game {i} has not started: call reset() first")
        return loop

    def learner_play(self, i: int, action: int) -> None:
        """The learner's (already checked) action in game ``i``, then the opponents' turns; every agent is told."""
        if self.loops is not None:
            loop = self._loop(i)
            seat = loop.game.to_move  # the learner's (its action was checked legal); no numpy read per step
            self.stepper.play(i, action)
            loop.notify(seat, MOVES[action])
            loop.run()
        elif self.internal_random:  # the stepper's own opponent answers inside its step
            acts, active = self._one
            acts[i], active[i] = action, True
            self.stepper.step(acts, active)
            active[i] = False
        else:
            self.stepper.play(i, action)
            if self.self_play:
                self.resolve()

    def step(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        """The learners' actions in every active game (checked already), then every opponent."""
        if self.loops is None:
            self.stepper.step(actions, active)
            self.resolve()
            return
        for i in np.flatnonzero(active).tolist():
            self.learner_play(i, int(actions[i]))

    def step_if_legal(self, actions: Indices, active: NDArray[np.bool_]) -> bool:
        """:meth:`step` if every active game's action is legal there; else ``False``, with nothing played.

        The stepper checks every action against the games before it plays any, so the usual
        all-legal step costs no separate check. Games whose opponents are agents (played
        one game at a time through the game loop) are not stepped here: ``False``.
        """
        if self.loops is not None:
            return False
        try:
            self.stepper.step(actions, active)
        except ValueError:
            return False
        self.resolve()  # outside the try: an error of the self-play policy is the caller's to see
        return True

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
        if self.loops is not None or self.self_play or self.extras is not None:
            if not self.step_if_legal(actions, active):
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
        if self.loops is not None or self.self_play or self.extras is not None:
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

    def _policy_moves(self, pending: NDArray[np.intp]) -> None:
        if self.opponent_policy is None:
            raise ValueError('opponent="self" needs a batched policy: pass opponent_policy=fn or call '
                             f"set_opponent_policy(fn), fn(obs (n, {self.obs_size}), mask (n, {_NA})) -> actions (n,)")
        n = len(pending)
        if self._opp_obs is None or len(self._opp_obs) < n:
            self._opp_obs = np.zeros((self.num_envs, self.obs_size), dtype=OBS_DTYPE)
            self._opp_mask = np.zeros((self.num_envs, _NA), dtype=np.int8)
        obs, mask = self._opp_obs[:n], self._opp_mask[:n]  # type: ignore[index]  # made together
        self.write(pending, 1 - self.seats[pending], obs, mask)
        shown = mask.view()
        shown.flags.writeable = False  # the policy reads the mask; legality is the games' own (below)
        acts = np.asarray(self.opponent_policy(obs, shown)).reshape(-1)
        if acts.shape != (n,):
            raise ValueError(f"opponent_policy returned {acts.shape[0]} actions for {n} observations")
        if acts.dtype.kind not in "iu":  # a float or bool array: the policy's raw output, not actions
            raise IllegalMoveError(
                f"opponent_policy returned {acts.dtype} values; actions are ints from 0 to {_NA - 1} (e.g. the argmax "
                "of the masked logits as an int array)", agent="opponent_policy", reason="not integer actions")
        try:  # on the stepper's threads; every action is checked before any is played
            self.stepper.play_batch(pending, acts.astype(np.int64, copy=False))
            return
        except ValueError:
            pass  # named below
        for j, i in enumerate(pending.tolist()):
            a = acts[j]
            if not (0 <= a < _NA and self._legal(i, int(a))):  # integer actions: refused above otherwise
                raise IllegalMoveError(
                    f"opponent_policy chose action {codec.shown(a)} in env {i}, which is not legal there; "
                    f"legal: {list(self.stepper.state(i).legal_ids())}",
                    agent="opponent_policy", seat=int(1 - self.seats[i]), reason="not a legal action")
        raise AssertionError("unreachable: the stepper refused actions the games allow")

    def _legal(self, i: int, action: int) -> bool:
        """Whether ``action`` is legal in game ``i``, by the game's own legal ids (never a mask handed out)."""
        st = self.stepper.state(i)
        return not st.over and action in st.legal_ids()

    # ----- actions, rewards ------------------------------------------------------------------
    def checked_action(self, i: int, action: Any) -> int | None:
        """``action`` as a legal index of game ``i``; ``None`` if it is not one under ``illegal_action="lose"``.

        With ``illegal_action="raise"`` an illegal or malformed action raises the codec's
        error, which names the action, the move it stands for, why, and the legal actions.
        """
        st = self.stepper.state(i)
        a = codec.action_int(action)
        if a is not None and a in st.legal_ids():
            return a
        if self.illegal_action == "raise":
            codec.decode(st, action)  # raises, naming the action, why and the legal ones
            raise AssertionError("unreachable: decode accepted an action outside the legal ids")
        return None

    def final_scores(self, i: int) -> tuple[int, int]:
        """(learner's, opponent's) game totals of game ``i``."""
        s = self.stepper.scores(i)
        seat = int(self.seats[i])
        return s[seat], s[1 - seat]

    def final_reward(self, i: int) -> float:
        """The learner's reward for finished game ``i``."""
        return final_reward(self.reward_mode, *self.final_scores(i), self.score_scale)

    def illegal_reward(self) -> float:
        """The reward of an illegal action under ``illegal_action="lose"``."""
        return illegal_reward(self.reward_mode, self.ruleset, self.score_scale)

    # ----- encoding ------------------------------------------------------------------------
    def write(self, idx: Indices, seats: Indices, obs: NDArray[np.float32], mask: NDArray[np.int8] | None) -> None:
        """Row ``j``: seat ``seats[j]``'s observation (with the extra-input block) and legal mask of game ``idx[j]``.

        ``mask=None`` writes no dense mask (the stepper still keeps the legal ids for its checks).
        """
        if self.extras is None:
            self.stepper.write(idx, seats, obs, mask)
            return
        n = len(idx)
        base = self._base[:n]  # type: ignore[index]  # there whenever extras are
        self.stepper.write(idx, seats, base, mask)
        obs[:, :OBS_SIZE] = base
        _extras_module().afterstate_extras(base, obs[:, OBS_SIZE:], self.extras)

    def write_rows(self, idx: Sequence[int] | NDArray[np.intp], obs: NDArray[np.float32],
                   mask: NDArray[np.int8] | None) -> None:
        """The learner rows of the games ``idx`` into rows ``idx`` of ``obs`` and ``mask`` (K rows each; the other
        rows untouched), where :meth:`write` fills rows ``0..n-1``."""
        rows = np.asarray(idx, dtype=np.intp)
        part = np.empty((len(rows), self.obs_size), dtype=OBS_DTYPE)
        if mask is None:
            self.write(rows, self.seats[rows], part, None)
        else:
            part_mask = np.empty((len(rows), _NA), dtype=np.int8)
            self.write(rows, self.seats[rows], part, part_mask)
            mask[rows] = part_mask
        obs[rows] = part

    def observation(self, i: int, seat: int) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
        """A fresh ``(obs, mask)`` of seat ``seat`` in game ``i`` (the mask all zeros unless it is to move)."""
        obs = np.empty((1, self.obs_size), dtype=OBS_DTYPE)
        mask = np.empty((1, _NA), dtype=np.int8)
        self.write((i,), (seat,), obs, mask)
        return obs[0], mask[0]
