"""``Mulle-v0``: single-agent Gymnasium environment, the learner against a fixed opponent.

>>> import gymnasium as gym, mulle_env
>>> env = gym.make("Mulle-v0", opponent="random")
>>> obs, info = env.reset(seed=0)
>>> action = env.action_space.sample(mask=info["action_mask"])
>>> obs, reward, terminated, truncated, info = env.step(action)
"""

from __future__ import annotations

import random
from importlib.metadata import entry_points
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import codec
from .engine import GameState, new_game  # the active backend: the compiled core when it is built
from .engine.errors import GameOverError
from .engine.moves import MOVES
from .engine.render import render_view
from .engine.ruleset import Ruleset
from .observation import OBS_DTYPE, OBS_SIZE, SHEET_BOUND_PER_SET, encode_into, observation_bounds

__all__ = ["ILLEGAL_ACTION_MODES", "REWARD_MODES", "SEAT_MODES", "MulleEnv", "final_reward", "resolve_agent"]

REWARD_MODES = ("win", "score")
SEAT_MODES = (0, 1, "random", "alternate")
ILLEGAL_ACTION_MODES = ("raise", "lose")
AGENT_ENTRY_POINT_GROUP = "mulle_env.agents"
SEED_BOUND = 2**63 - 1  # game and opponent seeds are drawn below this from np_random


def resolve_agent(opponent: Any):
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


def checked_index(state, action, illegal_action: str) -> int | None:
    """``action`` as a legal index of ``state``; ``None`` if it is not one and ``illegal_action="lose"``.

    With ``illegal_action="raise"`` an illegal or malformed action raises the codec's
    error, which names the action, the move it stands for, why, and the legal actions.
    """
    a = codec.action_int(action)
    if a is not None and a in state.legal_ids():
        return a
    if illegal_action == "raise":
        codec.decode(state, action)  # raises, naming the action, why and the legal ones
        raise AssertionError("unreachable: decode accepted an action outside the legal ids")
    return None


#: Keys ``MulleEnv.reset(options=...)`` understands.
RESET_OPTIONS = ("seat",)


class ResetNeededError(gym.error.ResetNeeded, GameOverError):
    """The env was used (``step``, ``observe``, ``last``) before its first ``reset()``.

    Also a :class:`~mulle_env.GameOverError` (so a ``MulleError`` and a ``ValueError``):
    the PettingZoo env raised that for ``step`` before ``reset`` before this class existed,
    and code that catches it keeps working.
    """


def check_reset_options(options, allowed: tuple[str, ...]) -> dict:
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


def check_options(reward, illegal_action, render_mode, render_modes, score_scale, ruleset) -> Ruleset:
    """Validate the options both environments share; return the ruleset to play by."""
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, not {reward!r}")
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, not {illegal_action!r}")
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(f"render_mode must be None or one of {render_modes}, not {render_mode!r}")
    if isinstance(score_scale, bool) or not isinstance(score_scale, (int, float)) or not score_scale > 0:
        raise ValueError(f"score_scale must be a positive number, not {score_scale!r}")
    if ruleset is not None and not isinstance(ruleset, Ruleset):
        ruleset = Ruleset.from_dict(ruleset)
    return codec.check_ruleset(ruleset or Ruleset())


class MulleEnv(gym.Env):
    """Mulle, the Swedish two-deck fishing card game, played against a fixed opponent.

    The learner holds one seat; the opponent (an agent) moves inside :meth:`step`
    until it is the learner's turn again or the game is over. Every card play is one
    decision, so a game under the default ruleset is exactly 192 moves, 96 of them
    the learner's: episodes have a fixed length and are never truncated.

    ## Action Space
    ``Discrete(2812)`` (:data:`mulle_env.codec.NUM_ACTIONS`): index ``i`` is always the
    move ``mulle_env.MOVES[i]`` (captures 0-51, builds 52-2707, trottas 2708-2759,
    discards 2760-2811; see docs/environments.md). About 8 indices are legal per
    decision (at most about 50): use ``info["action_mask"]`` (int8) or
    :meth:`action_masks` (bool, for sb3-contrib's ``MaskablePPO``).

    ## Observation Space
    ``Box(0, high, (524,), float32)`` (:data:`mulle_env.observation.OBS_SIZE`), built
    only from what the learner may know: own hand, the table (loose cards, builds with
    value, owner, lock and size), every captured card per side, unseen card counts,
    the opponent's hand size, the deck size, both score sheets (game and set),
    set/deal counters and turn flags. Slice by slice in
    :data:`mulle_env.observation.OBS_SLICES` and docs/environments.md.

    ## Rewards
    Zero on every step but the last. At the end, ``reward="win"``: +1 win, 0 draw,
    -1 loss; ``reward="score"``: (learner's game total - opponent's) / ``score_scale``.
    An illegal action under ``illegal_action="lose"`` ends the episode with the worst
    reward possible: -1 under ``"win"``, ``-sets * 600 / score_scale`` under ``"score"``
    (more than any defeat costs, so an illegal move never pays).

    ## Episode End
    Terminates when the last set has been scored (or on an illegal action under
    ``illegal_action="lose"``). Never truncates. Stepping a finished episode raises
    :class:`mulle_env.GameOverError`; call :meth:`reset`.

    ## Arguments
    ```python
    gymnasium.make("Mulle-v0", opponent="heuristic", reward="win", seat="random",
                   ruleset=None, illegal_action="raise", score_scale=100.0, render_mode=None)
    ```
    * ``opponent``: agent spec string (``"heuristic"``, ``"random"``, ``"pimc:samples=10"``;
      resolved through the ``mulle_env.agents`` entry points) or an object with
      ``act(view, legal_moves, rng)`` (and optionally ``reset()``, ``observe(event)``, and
      ``needs_view = False`` if ``act`` never reads the view: it then gets ``None``).
    * ``reward``: ``"win"`` or ``"score"``.
    * ``seat``: the learner's seat, ``0``, ``1``, ``"random"`` (drawn from the seeded
      ``np_random`` at each reset) or ``"alternate"`` (0, 1, 0, ... by episode). Seat 0
      leads the first deal. ``reset(options={"seat": s})`` overrides it for one episode.
    * ``ruleset``: a :class:`mulle_env.Ruleset` or dict of flags; only
      ``forced_capture=True`` fits the fixed action space.
    * ``illegal_action``: ``"raise"`` (an :class:`mulle_env.codec.IllegalActionError`
      naming the action and the legal ones) or ``"lose"`` (PettingZoo's convention: the
      episode ends with the worst reward, see Rewards, and ``info["illegal_action"] = True``).
    * ``score_scale``: divisor of the score difference under ``reward="score"``.
    * ``render_mode``: ``None`` or ``"ansi"`` (the table, hand and scores as text).

    ``reset(seed=s)`` fixes the whole episode: the deal, the seat (under ``"random"``)
    and the opponent's choices (its ``random.Random`` is seeded from ``np_random``).

    ## Version History
    * v0: Initial version (engine 1.0, observation of 524 floats, 2812 actions).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        opponent: Any = "heuristic",
        reward: str = "win",
        seat: int | str = "random",
        ruleset: Ruleset | dict | None = None,
        illegal_action: str = "raise",
        score_scale: float = 100.0,
        render_mode: str | None = None,
    ) -> None:
        if isinstance(seat, bool) or seat not in SEAT_MODES:
            raise ValueError(f"seat must be one of {SEAT_MODES}, not {seat!r}")
        self.ruleset = check_options(
            reward, illegal_action, render_mode, self.metadata["render_modes"], score_scale, ruleset
        )
        self.opponent = resolve_agent(opponent)
        self.reward_mode = reward
        self.seat_mode = seat
        self.illegal_action = illegal_action
        self.score_scale = float(score_scale)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(codec.NUM_ACTIONS)
        low, high = observation_bounds(self.ruleset)
        self.observation_space = spaces.Box(low, high, (OBS_SIZE,), OBS_DTYPE)
        #: Learner decisions per episode (fixed: every card play is a decision).
        self.max_steps = codec.max_game_length(self.ruleset) // 2
        self.state: GameState | None = None
        self.seat = 0
        self._episodes = 0
        self._done = False
        self._opp_rng = random.Random(0)
        self._observe = getattr(self.opponent, "observe", None)

    # ----- Gymnasium API -----------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Deal a new game; the opponent moves first if the learner is seat 1 (or leads later)."""
        super().reset(seed=seed)
        options = check_reset_options(options, RESET_OPTIONS)
        seat = options.get("seat", self.seat_mode)
        if isinstance(seat, bool) or seat not in SEAT_MODES:
            raise ValueError(f"options['seat'] must be one of {SEAT_MODES}, not {seat!r}")
        rng = self.np_random
        game_seed = int(rng.integers(SEED_BOUND))
        self._opp_rng = random.Random(int(rng.integers(SEED_BOUND)))
        if seat == "random":
            seat = int(rng.integers(2))
        elif seat == "alternate":
            seat = self._episodes % 2
        self._episodes += 1
        self.seat = seat
        self.state = new_game(game_seed, self.ruleset)
        self._done = False
        reset_agent = getattr(self.opponent, "reset", None)
        if reset_agent is not None:
            reset_agent()
        self._opponent_moves()
        return self._obs(), self._info()

    def step(self, action):
        """Play the learner's move, then the opponent's until the learner is to move again."""
        st = self.state
        if st is None:
            raise ResetNeededError("call reset() before step()")
        if self._done:
            raise GameOverError(
                f"the episode is over (final scores {self._final_scores()}); call reset() before stepping again"
            )
        a = checked_index(st, action, self.illegal_action)
        if a is None:
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs(), illegal_reward(self.reward_mode, self.ruleset, self.score_scale), True, False, info
        move = MOVES[a]
        st.play_unchecked(move)
        if self._observe is not None:
            self._observe((self.seat, move))
        self._opponent_moves()
        reward = 0.0
        if st.over:
            self._done = True
            reward = self._final_reward()
        return self._obs(), reward, self._done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Bool mask of the learner's legal actions (the method sb3-contrib's ``MaskablePPO`` calls)."""
        if self.state is None or self._done:
            return np.zeros(codec.NUM_ACTIONS, dtype=bool)
        return codec.legal_mask(self.state, dtype=bool)

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the table, the learner's hand and the scores as text."""
        if self.render_mode is None:
            gym.logger.warn('render() needs render_mode="ansi" (e.g. gymnasium.make("Mulle-v0", render_mode="ansi"))')
            return None
        if self.state is None:
            return "(no game yet: call reset())"
        view = self.state.view(self.seat)
        head = f"Mulle-v0: you are player {self.seat}"
        if view.last_move is not None:
            who, move = view.last_move
            head += f"; last move: player {who} {move}"
        if self.state.over:
            head += f"; game over, final scores {self._final_scores()}"
        return head + "\n" + render_view(view) + "\n"

    # ----- internals ---------------------------------------------------------------
    def _opponent_moves(self) -> None:
        st = self.state
        opp = 1 - self.seat
        agent = self.opponent
        needs_view = getattr(agent, "needs_view", True)
        while not st.over and st.to_move == opp:
            legal = st.legal_moves()
            move = agent.act(st.view(opp) if needs_view else None, legal, self._opp_rng)
            if move.id is None or move.id not in st.legal_ids():
                raise ValueError(f"opponent {agent!r} chose {move}, which is not one of its legal moves")
            st.play_unchecked(move)
            if self._observe is not None:
                self._observe((opp, move))

    def _obs(self) -> np.ndarray:
        return encode_into(self.state, self.seat, np.empty(OBS_SIZE, dtype=OBS_DTYPE))

    def _info(self) -> dict:
        st = self.state
        mask = np.zeros(codec.NUM_ACTIONS, dtype=np.int8)
        if not self._done:
            mask[st.legal_ids()] = 1
        info = {"action_mask": mask}
        if st.over:
            info["final_scores"] = self._final_scores()
        return info

    def _final_scores(self) -> tuple[int, int]:
        """(learner's, opponent's) game totals."""
        totals = self.state.scores()
        return totals[self.seat], totals[1 - self.seat]

    def _final_reward(self) -> float:
        return final_reward(self.reward_mode, *self._final_scores(), self.score_scale)
