"""Who plays the seats the learner does not hold: the env core's four opponent modes, each one small object.

The env core (:class:`mulle_env.envcore.EnvCore`) picks one mode in its constructor, from its
``opponent`` option (:func:`make_opponents`), and from then on calls that object's methods
without asking which mode it is:

=============================  ======================================================================
mode                           ``opponent=``
=============================  ======================================================================
:class:`StepperRandom`         ``"random"``: the stepper's own random opponent, inside its step (no
                               Python call per move; it draws exactly as the ``random`` agent does)
:class:`AgentOpponents`        any other agent spec, an agent object or a sequence of K agents: each
                               game's agent plays through the engine's game loop
                               (:class:`~mulle_env.engine.GameLoop`), one game at a time
:class:`SelfPlayPolicy`        ``"self"`` (:data:`SELF_PLAY`): one batched policy call for all games
                               where the other seat is to move (the vector env's self-play)
:class:`BothLearners`          ``None``: no opponent; both seats are the caller's (the AEC env)
=============================  ======================================================================

What the core calls (:class:`Opponents`, the base, is the plain behaviour every mode starts from):
``start`` (deal a game, and let its opponent move until the learner is to move), ``resolve`` (let
opponents move), ``learner_play`` (one checked learner action, then the opponents' answers),
``step`` and ``step_if_legal`` (the learners' actions in many games at once), and three facts fixed
per mode: ``internal_random`` (the stepper plays the opponent itself), ``draws_opponent`` (a deal
draws an opponent seed and a seat) and ``fused`` (the stepper's one-pass ``step_write`` and
``restart_write`` may stand for a step and a restart: no opponent needs Python between them).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from .engine.errors import IllegalMoveError
from .engine.loop import GameLoop, agent_name, ruleset_refusal
from .games import DEFAULT_GAME, EnvGame, shown
from .stepper import Indices, Stepper

if TYPE_CHECKING:
    from .envcore import EnvCore

__all__ = ["AGENT_ENTRY_POINT_GROUP", "SELF_PLAY", "AgentOpponents", "BothLearners", "OpponentPolicy", "Opponents",
           "SelfPlayPolicy", "StepperRandom", "make_opponents", "resolve_agent"]

AGENT_ENTRY_POINT_GROUP = "mulle_env.agents"
#: The opponent spec under which the learner plays both seats (the vector env).
SELF_PLAY = "self"
#: ``opponent_policy(obs (n, size) float32, mask (n, num_actions) int8) -> actions (n,)``.
OpponentPolicy = Callable[[NDArray[np.float32], NDArray[np.int8]], Any]


def resolve_agent(opponent: Any, game: str | None = None) -> Any:
    """An agent from a spec string (``"heuristic"``, ``"pimc:samples=10"``) or an agent object.

    Strings are built by the factories registered under the ``mulle_env.agents``
    entry-point group (the ``agents`` package installs ``agents.registry:make``), so
    this package never imports ``agents``. ``game``: the short name of the game the agent
    plays (the game object's ``name``); for any game but Mulle the factory is called as
    ``make(spec, game=game)``, so that ``"heuristic"`` is Casino's heuristic in Casino-v0
    (for Mulle as ``make(spec)``, as registries written before other games expect). An
    object is accepted as is if it has ``act(view, legal_moves, rng)``.
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
                make = ep.load()
                return make(opponent) if game in (None, DEFAULT_GAME) else make(opponent, game=game)
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


def make_opponents(core: EnvCore, opponent: Any) -> Opponents:
    """The mode ``opponent`` names (module docstring), for ``core`` (whose ruleset each agent must accept)."""
    if opponent is None:
        return BothLearners(core)
    if isinstance(opponent, str) and opponent == SELF_PLAY:
        return SelfPlayPolicy(core)
    if isinstance(opponent, str) and opponent == "random":
        return StepperRandom(core)
    return AgentOpponents(core, opponent)


class Opponents:
    """The plain mode the others start from: the stepper plays the learners' actions, and nobody else moves.

    Holds its core (``self.core``) and reads the core's stepper at each call, so that a copied
    core's mode plays the copied games.
    """

    #: The stepper's own random opponent plays the other seat (its ``internal_random``).
    internal_random = False
    #: A deal draws an opponent seed and the learner's seat after the deal seed (``False``: the deal seed only).
    draws_opponent = True
    #: The stepper's one-pass ``step_write``/``restart_write`` may stand for a step or restart and its writes.
    fused = True
    #: The opponent agents, one per game, where the mode has them.
    agents: list[Any] | None = None

    def __init__(self, core: EnvCore) -> None:
        self.core = core

    def start(self, i: int, game_seed: int, seat: int, opp_seed: int) -> None:
        """Deal game ``i`` with the learner in ``seat``; the opponent moves until the learner is to move."""
        self.core.stepper.start(i, game_seed, seat, opp_seed)

    def resolve(self, idx: Sequence[int] | None = None) -> None:
        """Let the opponents of games ``idx`` (all: ``None``) move until each learner is to move or its game ends."""

    def learner_play(self, i: int, action: int) -> None:
        """The learner's (already checked) action in game ``i``, then the opponents' turns."""
        self.core.stepper.play(i, action)

    def step(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        """The learners' (already checked) actions in every active game, then every opponent."""
        self.core.stepper.step(actions, active)
        self.resolve()

    def step_if_legal(self, actions: Indices, active: NDArray[np.bool_]) -> bool:
        """:meth:`step` if every active game's action is legal there (the stepper checks them all before it
        plays any); else ``False``, with nothing played."""
        try:
            self.core.stepper.step(actions, active)
        except ValueError:
            return False
        self.resolve()  # outside the try: an error of the self-play policy is the caller's to see
        return True

    def copied(self) -> None:
        """The core was just copied (``copy.deepcopy``, ``pickle``): point whatever reads games at the copy's."""


class BothLearners(Opponents):
    """No opponent: both seats are the caller's (the AEC env). A deal draws only its deal seed."""

    draws_opponent = False


class StepperRandom(Opponents):
    """``opponent="random"``: the stepper's own opponent, which plays uniformly random legal moves inside its step.

    It draws exactly as the ``random`` agent does through the game loop (a test compares the two
    envs move for move), with no Python call per move.
    """

    internal_random = True

    def __init__(self, core: EnvCore) -> None:
        super().__init__(core)
        k = core.num_envs
        self._one = (np.zeros(k, dtype=np.int64), np.zeros(k, dtype=bool))  # one game's step through the stepper

    def learner_play(self, i: int, action: int) -> None:
        """The learner's action in game ``i``; the stepper's opponent answers inside the same step."""
        acts, active = self._one
        acts[i], active[i] = action, True
        self.core.stepper.step(acts, active)
        active[i] = False


class SelfPlayPolicy(Opponents):
    """``opponent="self"``: the other seat's moves for all games from one batched ``opponent_policy`` call.

    The policy (the core's ``opponent_policy``, set by the trainer to its current network) sees
    the other seat's observations and masks, written as the learner's are (extra inputs
    included); each answer is checked against that game's own legal ids before the stepper
    plays it, and an illegal or malformed one is an :class:`~mulle_env.IllegalMoveError` naming
    ``opponent_policy``.
    """

    fused = False  # the policy runs in Python between the learner's move and the next observation

    def __init__(self, core: EnvCore) -> None:
        super().__init__(core)
        self._obs: NDArray[np.float32] | None = None
        self._mask: NDArray[np.int8] | None = None

    def resolve(self, idx: Sequence[int] | None = None) -> None:
        """Ask the policy for the other seat's moves until every learner is to move or its game is over."""
        core = self.core
        while True:
            st = core.stepper
            pending = np.flatnonzero(~st.over & (st.to_move != core.seats))
            if not len(pending):
                return
            self._policy_moves(pending)

    def learner_play(self, i: int, action: int) -> None:
        """The learner's action in game ``i``, then the policy's answers."""
        self.core.stepper.play(i, action)
        self.resolve()

    def _policy_moves(self, pending: NDArray[np.intp]) -> None:
        core = self.core
        na = core.game.num_actions
        policy = core.opponent_policy
        if policy is None:
            raise ValueError('opponent="self" needs a batched policy: pass opponent_policy=fn or call '
                             f"set_opponent_policy(fn), fn(obs (n, {core.obs_size}), mask (n, {na})) -> actions (n,)")
        n = len(pending)
        if self._obs is None or self._mask is None or len(self._obs) < n:
            self._obs = np.zeros((core.num_envs, core.obs_size), dtype=core.game.obs_dtype)
            self._mask = np.zeros((core.num_envs, na), dtype=np.int8)
        obs, mask = self._obs[:n], self._mask[:n]
        core.write(pending, 1 - core.seats[pending], obs, mask)
        shown_mask = mask.view()
        shown_mask.flags.writeable = False  # the policy reads the mask; legality is the games' own (below)
        acts = np.asarray(policy(obs, shown_mask)).reshape(-1)
        if acts.shape != (n,):
            raise ValueError(f"opponent_policy returned {acts.shape[0]} actions for {n} observations")
        if acts.dtype.kind not in "iu":  # a float or bool array: the policy's raw output, not actions
            raise IllegalMoveError(
                f"opponent_policy returned {acts.dtype} values; actions are ints from 0 to {na - 1} (e.g. the argmax "
                "of the masked logits as an int array)", agent="opponent_policy", reason="not integer actions")
        stepper = core.stepper
        try:  # on the stepper's threads; every action is checked before any is played
            stepper.play_batch(pending, acts.astype(np.int64, copy=False))
            return
        except ValueError:
            pass  # named below
        for j, i in enumerate(pending.tolist()):
            a = acts[j]
            if not (0 <= a < na and _legal(stepper, i, int(a))):  # integer actions: refused above otherwise
                raise IllegalMoveError(
                    f"opponent_policy chose action {shown(a)} in env {i}, which is not legal there; "
                    f"legal: {list(stepper.state(i).legal_ids())}",
                    agent="opponent_policy", seat=int(1 - core.seats[i]), reason="not a legal action")
        raise AssertionError("unreachable: the stepper refused actions the games allow")


def _legal(stepper: Stepper, i: int, action: int) -> bool:
    """Whether ``action`` is legal in game ``i``, by the game's own legal ids (never a mask handed out)."""
    st = stepper.state(i)
    return not st.over and action in st.legal_ids()


class AgentOpponents(Opponents):
    """Agents (a spec, an agent object, or K of them): each game's agent plays through the engine's game loop.

    A spec builds one agent per game; an agent object is deep-copied per game when K > 1 (agents
    may remember a game); a sequence of K agents is used as given. Each agent must accept the
    core's ruleset (:func:`~mulle_env.engine.loop.ruleset_refusal`). Games are played one at a
    time (the loop asks, checks, plays and tells every agent), so a batched step is never
    fused or stepped in one stepper call.
    """

    fused = False

    def __init__(self, core: EnvCore, opponent: Any) -> None:
        super().__init__(core)
        self.agents = self._agents(opponent, core.num_envs, core.game.name)
        for agent in self.agents:
            if (why := ruleset_refusal(agent, core.ruleset)) is not None:
                raise ValueError(f"opponent {agent_name(agent)!r} cannot play under these rules: {why}")
        #: One game loop per game, made as the game starts.
        self.loops: list[GameLoop | None] = [None] * core.num_envs

    @staticmethod
    def _agents(opponent: Any, k: int, game: str) -> list[Any]:
        if isinstance(opponent, str):
            return [resolve_agent(opponent, game) for _ in range(k)]
        if isinstance(opponent, Sequence):
            if len(opponent) != k:
                raise ValueError(f"a sequence of opponents must hold num_envs={k} agents, not {len(opponent)}")
            return [resolve_agent(a, game) for a in opponent]
        agent = resolve_agent(opponent, game)
        return [agent] if k == 1 else [copy.deepcopy(agent) for _ in range(k)]

    def start(self, i: int, game_seed: int, seat: int, opp_seed: int) -> None:
        """Deal game ``i`` and run its loop until the learner is to move (the agent is seeded from ``opp_seed``)."""
        core = self.core
        agents = self.agents
        assert agents is not None  # set in __init__; the base class's None is for the other modes
        seats: list[Any] = [None, None]
        seats[1 - seat] = agents[i]
        rngs: list[random.Random | None] = [None, None]
        rngs[1 - seat] = random.Random(opp_seed)
        core.stepper.start(i, game_seed, seat, opp_seed)
        play = _SteppedPlay(core.stepper, i, core.game)
        loop = self.loops[i] = GameLoop(play.state, seats, rngs, play=play)
        loop.start()
        loop.run()

    def _loop(self, i: int) -> GameLoop:
        loop = self.loops[i]
        if loop is None:
            raise RuntimeError(f"game {i} has not started: call reset() first")
        return loop

    def resolve(self, idx: Sequence[int] | None = None) -> None:
        """Run each game's loop until its learner is to move or the game is over."""
        for i in range(self.core.num_envs) if idx is None else idx:
            self._loop(i).run()

    def learner_play(self, i: int, action: int) -> None:
        """The learner's action in game ``i``; every agent is told; then the loop runs the opponent's turns."""
        loop = self._loop(i)
        seat = loop.game.to_move  # the learner's (its action was checked legal); no numpy read per step
        core = self.core
        # The move before it is played: a game's action may name a move only in its position (Casino's
        # gather_all=False indexes the legal moves).
        move = core.game.decode(loop.game, action)
        core.stepper.play(i, action)
        loop.notify(seat, move)
        loop.run()

    def step(self, actions: Indices, active: NDArray[np.bool_]) -> None:
        """Each active game's action through :meth:`learner_play`, one game at a time."""
        for i in np.flatnonzero(active).tolist():
            self.learner_play(i, int(actions[i]))

    def step_if_legal(self, actions: Indices, active: NDArray[np.bool_]) -> bool:
        """``False``: these games are played one at a time through their loops (the caller checks and steps them)."""
        return False

    def copied(self) -> None:
        """Each game loop reads its game from the copied stepper, not from a detached copy of the game."""
        stepper = self.core.stepper
        for i, loop in enumerate(self.loops):
            if loop is not None:
                loop.game = stepper.state(i)


class _SteppedPlay:
    """Game ``i`` of a stepper, played the way the game loop plays a move: checked, then through the stepper.

    The loop reads the game itself (made once the stepper has dealt it, the stepper's until
    it starts that game again); only its moves must go through ``stepper.play``, which keeps
    the batched ``over``/``to_move`` arrays in step.
    """

    __slots__ = ("stepper", "i", "game", "state")

    def __init__(self, stepper: Stepper, i: int, game: EnvGame) -> None:
        self.stepper = stepper
        self.i = i
        self.game = game
        self.state = stepper.state(i)

    def __reduce__(self) -> tuple[Any, ...]:
        # A copy reads its game from the copied stepper (its state is the stepper's own object).
        return _SteppedPlay, (self.stepper, self.i, self.game)

    def __call__(self, move: Any) -> _Played:
        # The engine's checked parse: an illegal, malformed or missing move raises, saying why.
        m = self.state.check(move)
        self.stepper.play(self.i, self.game.action_of(m, self.state))
        return _Played(m)


class _Played:
    """What a stepped game's play returns: the move played, which the game loop tells the agents."""

    __slots__ = ("move",)

    def __init__(self, move: Any) -> None:
        self.move = move
