"""``Mulle-v0``: single-agent Gymnasium environment, the learner against a fixed opponent.

A thin face over the one environment core (:class:`mulle_env.envcore.EnvCore`, K = 1),
which the vector and AEC envs share: dealing, opponent turns, rewards, illegal actions
and encoding are written there once. The face knows no rules either: ``game=`` (a game
object, :class:`mulle_env.games.EnvGame`, or its name; Mulle by default) supplies them, so
another game's single env is this class with that game's object.

>>> import gymnasium as gym, mulle_env
>>> env = gym.make("Mulle-v0", opponent="random")
>>> obs, info = env.reset(seed=0)
>>> action = env.action_space.sample(mask=info["action_mask"])
>>> obs, reward, terminated, truncated, info = env.step(action)
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from .engine.errors import GameOverError
from .envcore import (
    ILLEGAL_ACTION_MODES,
    REWARD_MODES,
    SEAT_MODES,
    EnvCore,
    check_reset_options,
    check_seat,
    check_seed,
    final_reward,
    resolve_agent,
)
from .games import EnvGame, get_game

__all__ = ["ILLEGAL_ACTION_MODES", "REWARD_MODES", "SEAT_MODES", "CasinoEnv", "MulleEnv", "final_reward",
           "resolve_agent"]

#: Keys ``MulleEnv.reset(options=...)`` understands.
RESET_OPTIONS = ("seat",)


class ResetNeededError(gym.error.ResetNeeded, GameOverError):
    """The env was used (``step``, ``observe``, ``last``) before its first ``reset()``.

    Also a :class:`~mulle_env.GameOverError` (so a ``MulleError`` and a ``ValueError``):
    the PettingZoo env raised that for ``step`` before ``reset`` before this class existed,
    and code that catches it keeps working.
    """


def check_render_mode(render_mode: str | None, render_modes: Container[str]) -> None:
    """``render_mode`` is ``None`` or one of ``render_modes``; a ValueError saying which otherwise."""
    if render_mode is not None and render_mode not in render_modes:
        raise ValueError(f"render_mode must be None or one of {render_modes}, not {render_mode!r}")


class MulleEnv(gym.Env[NDArray[np.float32], np.int64]):
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
    ``Box(0, high, (524,), float32)`` (:data:`mulle_env.observation.OBS_SIZE`; more with
    ``extras``), built
    only from what the learner may know: own hand, the table (loose cards, builds with
    value, owner, lock and size), every captured card per side, unseen card counts,
    the opponent's hand size, the deck size, both score sheets (game and set),
    set/deal counters and turn flags. Slice by slice in
    :data:`mulle_env.observation.OBS_SLICES` and docs/environments.md.

    ## Rewards
    ``reward="win"`` and ``"score"``: zero on every step but the last. At the end,
    ``"win"``: +1 win, 0 draw, -1 loss; ``"score"``: (learner's game total - opponent's)
    / ``score_scale``. ``reward="score_delta"``: every step, the change of that
    difference since the learner's previous step (the points both sides made in between,
    the set's bonus as the intake grows) / ``score_scale``; a game's rewards add up to
    ``"score"``'s, and each point comes at the move that made it instead of 96 moves later.
    An illegal action under ``illegal_action="lose"`` ends the episode with the worst
    reward possible: -1 under ``"win"``, ``-sets * 600 / score_scale`` under ``"score"``,
    twice that under ``"score_delta"`` (more than any defeat costs, so an illegal move
    never pays).

    ## Episode End
    Terminates when the last set has been scored (or on an illegal action under
    ``illegal_action="lose"``). Never truncates. Stepping a finished episode raises
    :class:`mulle_env.GameOverError`; call :meth:`reset`.

    ## Arguments
    ```python
    gymnasium.make("Mulle-v0", opponent="heuristic", reward="win", seat="random",
                   ruleset=None, illegal_action="raise", score_scale=100.0, render_mode=None,
                   extras=None)
    ```
    * ``opponent``: agent spec string (``"heuristic"``, ``"random"``, ``"pimc:samples=10"``;
      resolved through the ``mulle_env.agents`` entry points) or an object with
      ``act(view, legal_moves, rng)`` (and optionally ``reset()``, ``observe(event)``, and
      ``needs_view = False`` if ``act`` never reads the view: it then gets ``None``).
    * ``reward``: ``"win"``, ``"score"`` or ``"score_delta"``.
    * ``seat``: the learner's seat, ``0``, ``1``, ``"random"`` (drawn from the seeded
      ``np_random`` at each reset) or ``"alternate"`` (0, 1, 0, ... by episode). Seat 0
      leads the first deal. ``reset(options={"seat": s})`` overrides it for one episode.
    * ``ruleset``: a :class:`mulle_env.Ruleset` or dict of flags; only
      ``forced_capture=True`` fits the fixed action space.
    * ``illegal_action``: ``"raise"`` (an :class:`mulle_env.codec.IllegalActionError`
      naming the action and the legal ones) or ``"lose"`` (PettingZoo's convention: the
      episode ends with the worst reward, see Rewards, and ``info["illegal_action"] = True``).
    * ``score_scale``: divisor of the score difference under ``reward="score"`` and ``"score_delta"``.
    * ``render_mode``: ``None`` or ``"ansi"`` (the table, hand and scores as text).
    * ``extras``: ``None`` or an extra-input block of :mod:`mulle_env.extras` (``"capture-v1"``,
      ``"capture-v2"``, ``"capture-v3"``, ``"capture-v4"``): features computed from the
      observation (what each hand value would take, twins left loose, the chance the
      opponent holds each value, each player's best next capture, ...), appended to it by
      the same code the learned agent uses.
    * ``game``: the game played (:class:`mulle_env.games.EnvGame` or its name); ``None``, the
      default, is Mulle (:data:`mulle_env.games.mulle.MULLE`), which this docstring describes.

    ``reset(seed=s)`` fixes the whole episode: the deal, the seat (under ``"random"``)
    and the opponent's choices (its ``random.Random`` is seeded from ``np_random``).

    ## Version History
    * v0: Initial version (engine 1.0, observation of 524 floats, 2812 actions); the
      ``extras`` option (off by default, so the spaces are unchanged) came later.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        opponent: Any = "heuristic",
        reward: str = "win",
        seat: int | str = "random",
        ruleset: Any = None,  # the game's Ruleset, a dict of its flags, or None
        illegal_action: str = "raise",
        score_scale: float = 100.0,
        render_mode: str | None = None,
        extras: str | None = None,
        game: EnvGame | str | None = None,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        game = get_game(game, ruleset)
        if opponent is None or (isinstance(opponent, str) and opponent == "self"):
            raise ValueError(f"{game.env_id} plays against an opponent: an agent spec such as 'heuristic' or an agent "
                             f"object, not {opponent!r} (self-play: the vector env's opponent='self', or the "
                             "PettingZoo env)")
        self._core = core = EnvCore(1, opponent, reward, seat, ruleset, illegal_action, score_scale, extras,
                                    replayable=True, game=game)  # copies and pickles (envcore's docstring)
        #: The game played (its rules, codec and observation).
        self.env_game = core.game
        self.ruleset = core.ruleset
        #: The opponent agent (``random`` plays inside the stepper, drawing exactly as this agent would).
        self.opponent = core.agents[0] if core.agents else resolve_agent(opponent, core.game.name)
        self.reward_mode = reward
        self.seat_mode = core.seat_mode
        self.illegal_action = illegal_action
        self.score_scale = core.score_scale
        self.extras = extras
        self.render_mode = render_mode
        self.action_space = core.action_space()
        self.observation_space = core.observation_space()
        #: Learner decisions per episode at most (Mulle: exactly; every card play is a decision).
        self.max_steps = self.env_game.max_decisions(self.ruleset)
        self._started = False
        self._seat = 0  # the episode's seat as a Python int (numpy indexing costs on every step)
        self._done = False

    @property
    def state(self) -> Any:
        """The game being played (read it; ``None`` before the first ``reset``): a :class:`mulle_env.GameState`
        for Mulle, the game's own state for another game."""
        return self._core.stepper.state(0) if self._started else None

    @property
    def seat(self) -> int:
        """The learner's seat in this episode."""
        return self._seat

    # ----- Gymnasium API -----------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Deal a new game; the opponent moves first if the learner is seat 1 (or leads later)."""
        super().reset(seed=check_seed(seed))
        options = check_reset_options(options, RESET_OPTIONS)
        seat = check_seat(options.get("seat", self.seat_mode), "options['seat']")
        core = self._core
        core.reseed(0, self.np_random)  # the env's own generator: the same draws as ever
        core.start(0, seat)
        self._seat = int(core.seats[0])
        self._started = True
        self._done = False
        return self._observe()

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Play the learner's move, then the opponent's until the learner is to move again."""
        if not self._started:
            raise ResetNeededError("call reset() before step()")
        core = self._core
        if self._done:
            raise GameOverError(
                f"the episode is over (final scores {core.final_scores(0)}); call reset() before stepping again"
            )
        a = core.checked_action(0, action)
        if a is None:
            self._done = True
            obs, info = self._observe()
            info["illegal_action"] = True
            return obs, core.illegal_reward(), True, False, info
        obs, mask = core.play_observe(0, a)  # one stepper call where the stepper can fuse them
        reward = 0.0
        info = {"action_mask": mask}
        if core.stepper.over[0]:  # the mask is all zeros then: nobody is to move
            self._done = True
            reward = core.final_reward(0)
            info["final_scores"] = core.final_scores(0)
        elif core.reward_mode == "score_delta":
            reward = core.delta_reward(0)
        return obs, reward, self._done, False, info

    def afterstates(self) -> tuple[list[int], NDArray[np.float32], NDArray[np.float64]]:
        """``(actions, obs, banked)``: each legal action of the learner, the encoding of the position it leaves
        (from the learner's seat, hidden cards never shown) and the learner's score difference after it.

        What a network that scores moves by their result reads (:mod:`mulle_env.afterstates`);
        empty when the learner cannot move (before ``reset``, after the game).
        """
        game = self._core.game
        if not self._started or self._done:
            return [], np.empty((0, game.afterstate_size), np.float32), np.empty(0, np.float64)
        actions = [int(a) for a in np.flatnonzero(self._core.legal_mask(0, bool))]
        obs = np.empty((len(actions), game.afterstate_size), dtype=np.float32)
        banked = np.empty(len(actions), dtype=np.float64)
        game.write_afterstates(self._core.stepper.state(0), self._seat, actions, obs, banked)
        return actions, obs, banked

    def action_masks(self) -> NDArray[np.bool_]:
        """Bool mask of the learner's legal actions (the method sb3-contrib's ``MaskablePPO`` calls)."""
        if not self._started or self._done:
            return np.zeros(self.env_game.num_actions, dtype=bool)
        return self._core.legal_mask(0, bool)

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the table, the learner's hand and the scores as text."""
        env_id = self.env_game.env_id
        if self.render_mode is None:
            gym.logger.warn(f'render() needs render_mode="ansi" (e.g. gymnasium.make("{env_id}", render_mode="ansi"))')
            return None
        if not self._started:
            return "(no game yet: call reset())"
        st = self._core.stepper.state(0)
        view = st.view(self.seat)
        head = f"{env_id}: you are player {self.seat}"
        last_move = getattr(view, "last_move", None)  # a game whose views name the last move
        if last_move is not None:
            who, move = last_move
            head += f"; last move: player {who} {move}"
        if st.over:
            head += f"; game over, final scores {self._core.final_scores(0)}"
        return head + "\n" + self.env_game.render(view) + "\n"

    # ----- internals ---------------------------------------------------------------
    def _observe(self) -> tuple[NDArray[np.float32], dict[str, Any]]:
        core = self._core
        obs, mask = core.observation(0, self._seat)
        if self._done:
            mask[:] = 0
        info: dict[str, Any] = {"action_mask": mask}
        if core.stepper.state(0).over:
            info["final_scores"] = core.final_scores(0)
        return obs, info


class CasinoEnv(MulleEnv):
    """Casino, the fishing card game Mulle descends from, played against a fixed opponent: ``Casino-v0``.

    The same env as ``Mulle-v0`` (this class adds only Casino's defaults and this description):
    one core, :class:`mulle_env.envcore.EnvCore`, given Casino's game object
    (:mod:`mulle_env.games.casino`; the rules in docs/casino.md, the env side in
    docs/casino_env.md). The learner holds one seat; the opponent moves inside :meth:`step`
    until it is the learner's turn again or the game is over. Every card play is one
    decision: 24 per seat a round, so a one-round game (``ruleset={"rounds": 1}``) is exactly
    24 learner steps, and a game to 21 points (the default) lasts three or four rounds, rarely
    two or five (random play).

    ## Action Space
    ``Discrete(504)`` (:data:`mulle_env.casino.NUM_MOVE_IDS`): index ``i`` is always the move
    ``mulle_env.casino.MOVES[i]`` (captures and court captures 0-87, new builds by card and
    value 88-307, increases by card and build value 308-451, trails 452-503). About 4 are legal
    per decision (at most 15 seen): use ``info["action_mask"]`` (int8) or :meth:`action_masks`.
    Under ``gather_all=False`` moves name what they take and have no ids: ``ruleset={"gather_all":
    False}`` gives ``Discrete(4096)``, where action ``k`` is the ``k``-th legal move of the position
    (the game object ``"casino_choices"``, chosen by the rules; docs/casino_env.md has the
    trade-off and the measured bound).

    ## Observation Space
    ``Box(0, high, (456,), float32)`` (:data:`mulle_env.games.casino.OBS_SIZE`), built only from
    what the learner may know (the engine's ``view``): own hand, loose table cards, the cards in
    each side's builds and per build value who owns how many and their sizes, both captured
    piles, the unseen cards, each side's race (cards, spades, aces, the two casinos, sweeps),
    the game scores, round, hand and stock sizes, turn and dealer flags, the last capturer and
    the ruleset's flags. ``high`` depends on the ruleset. Slice by slice in
    :data:`mulle_env.games.casino.OBS_SLICES` and docs/casino_env.md.

    ## Rewards
    Zero on every step but the last. At the end, ``reward="win"``: +1 win, 0 draw, -1 loss;
    ``reward="score"``: (learner's game total - opponent's) / ``score_scale`` (11 by default:
    the points one round hands out besides sweeps). An illegal action under
    ``illegal_action="lose"`` ends the episode with the worst reward possible: -1 under
    ``"win"``, minus the largest score difference a game can end with under ``"score"``
    (:func:`mulle_env.games.casino.score_bound` / ``score_scale``).

    ## Episode End
    Terminates when the game is over: after the round in which a player reaches
    ``target_score`` (21) with the totals unequal, or after ``rounds`` rounds when the ruleset
    fixes them (or on an illegal action under ``illegal_action="lose"``). Never truncates.
    Stepping a finished episode raises :class:`mulle_env.GameOverError`; call :meth:`reset`.

    ## Arguments
    ```python
    gymnasium.make("Casino-v0", opponent="heuristic", reward="win", seat="random", ruleset=None,
                   illegal_action="raise", score_scale=11.0, render_mode=None, game="casino")
    ```
    * ``opponent``: an agent spec that plays Casino (``"random"``, and the Casino agents the
      ``agents`` registry declares: ``mulle-arena --agents --game casino`` lists them), or an
      object with ``act(view, legal_moves, rng)``. ``"random"`` plays inside the stepper.
    * ``reward``, ``seat``, ``illegal_action``, ``render_mode``: as ``Mulle-v0``'s.
    * ``ruleset``: a :class:`mulle_env.casino.Ruleset` or a dict of its flags
      (``{"rounds": 1}``, ``Ruleset.app()``...).
    * ``score_scale``: divisor of the score difference under ``reward="score"``.
    * ``game``: ``"casino"`` (the default) or ``"casino_choices"`` (whose rules default to
      ``gather_all=False``); a ``ruleset`` naming ``gather_all`` picks the one that plays it.
    * ``extras``: Casino has no extra-input blocks (only ``None``).

    ``reset(seed=s)`` fixes the whole episode: the deal of every round, the seat (under
    ``"random"``) and the opponent's choices.

    ## Version History
    * v0: Initial version (Casino engine 1.0, observation of 456 floats, 504 actions; 4096
      under ``gather_all=False``).
    """

    def __init__(
        self,
        opponent: Any = "heuristic",
        reward: str = "win",
        seat: int | str = "random",
        ruleset: Any = None,  # a mulle_env.casino.Ruleset, a dict of its flags, or None
        illegal_action: str = "raise",
        score_scale: float = 11.0,
        render_mode: str | None = None,
        extras: str | None = None,
        game: EnvGame | str = "casino",
    ) -> None:
        found = get_game(game)
        if found.name != "casino":
            raise ValueError(f"CasinoEnv plays Casino (game 'casino' or 'casino_choices'), not {found.name!r}: "
                             "MulleEnv(game=...) plays any game")
        super().__init__(opponent, reward, seat, ruleset, illegal_action, score_scale, render_mode, extras, found)
