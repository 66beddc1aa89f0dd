"""``mulle_v0``: the two-player PettingZoo AEC environment (optional extra ``pettingzoo``).

>>> from mulle_env.pettingzoo import env
>>> e = env()
>>> e.reset(seed=42)
>>> for agent in e.agent_iter():
...     obs, reward, terminated, truncated, info = e.last()
...     action = None if terminated or truncated else e.action_space(agent).sample(obs["action_mask"])
...     e.step(action)
>>> e.close()
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding

try:
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "mulle_env.pettingzoo needs PettingZoo: pip install 'mulle-env[pettingzoo]' "
        "(from a checkout: pip install -e '.[pettingzoo]'; or pip install pettingzoo)"
    ) from exc

from .engine.errors import GameOverError
from .envcore import EnvCore, check_reset_options, check_seed, final_reward
from .games import EnvGame
from .gym_env import ResetNeededError, check_render_mode

__all__ = ["AGENTS", "env", "raw_env"]

#: Agent names; ``player_i`` sits in seat ``i`` (seat 0 leads the first deal).
AGENTS = ("player_0", "player_1")


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment wrapped in PettingZoo's ``OrderEnforcingWrapper``; kwargs go to :class:`raw_env`."""
    return _OrderEnforcing(raw_env(**kwargs))


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]  # PettingZoo ships no types
    """PettingZoo's ``OrderEnforcingWrapper``, with ``last()`` answered by the env itself once it was reset.

    The inherited ``last()`` reads five attributes, each through the wrapper's
    ``__getattr__`` (a name check, then a forward): about a third of a decision's Python
    time. After ``reset()`` the wrapper has nothing left to enforce there, so the env's own
    ``last()`` gives the same answer; before it, the wrapper's (and its errors) are kept.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``(observation, cumulative reward, termination, truncation, info)`` of ``agent_selection``."""
        if not self._has_reset:
            return super().last(observe)  # type: ignore[no-any-return]  # PettingZoo ships no types
        return self.env.last(observe)  # type: ignore[no-any-return]

    def step(self, action: Any) -> None:
        """Play ``action`` for ``agent_selection`` (the wrapper's checks, the env's own attributes)."""
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        """The agents in turn (PettingZoo's order-enforcing iterator, reading the env's own attributes)."""
        if not self._has_reset:
            return super().agent_iter(max_iter)
        return _AgentIterable(self, max_iter)


class _AgentIterable(AECOrderEnforcingIterable):  # type: ignore[misc]  # PettingZoo ships no types
    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator):  # type: ignore[misc]  # PettingZoo ships no types
    """``AECOrderEnforcingIterator`` with the agents read off the env, not through the wrapper's ``__getattr__``."""

    def __next__(self) -> str:
        inner = self.env.env
        if not inner.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert self.env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        self.env._has_updated = False
        return inner.agent_selection  # type: ignore[no-any-return]


class raw_env(AECEnv, EzPickle):  # type: ignore[misc]  # PettingZoo ships no types: AECEnv is Any
    """Mulle for two learners: agents ``player_0`` and ``player_1`` take turns by the rules.

    Observation of each agent: ``{"observation": float32[524], "action_mask": int8[2812]}``,
    the same encoder and codec as ``Mulle-v0`` (the one env core,
    :class:`mulle_env.envcore.EnvCore`; docs/environments.md); the mask is all
    zeros for the agent not to move. Turns do not simply alternate: the leader of each
    deal changes, so an agent may move twice in a row across a deal boundary; always
    use ``agent_iter()``/``agent_selection``.

    Rewards are zero until the game ends; then ``reward="win"`` gives +1/-1 (0 each on
    a draw) and ``reward="score"`` gives ± the score difference / ``score_scale``.
    ``reward="score_delta"`` gives, after every move, ± the change of the score difference
    it brought / ``score_scale`` (each agent's rewards add up to ``"score"``'s).
    An illegal action raises :class:`mulle_env.codec.IllegalActionError` by default;
    ``illegal_action="lose"`` ends the game with the worst reward for the offender (-1, or
    ``-sets * 600 / score_scale`` under ``reward="score"``) and 0 for the other
    (PettingZoo's ``TerminateIllegalWrapper`` convention). ``reset(seed=s)`` fixes the game.

    Args:
        ruleset: :class:`mulle_env.Ruleset` or dict of flags (``forced_capture=True`` only).
        reward: ``"win"``, ``"score"`` or ``"score_delta"``.
        illegal_action: ``"raise"`` or ``"lose"``.
        score_scale: Divisor of the score difference under ``reward="score"`` and ``"score_delta"``.
        render_mode: ``None`` or ``"ansi"``.
        extras: ``None`` or an extra-input block appended to each observation (as ``Mulle-v0``).
        game: the game played (:class:`mulle_env.games.EnvGame` or its name); ``None`` is Mulle.
            ``metadata["name"]`` is the game's PettingZoo name (``"mulle_v0"``).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "name": "mulle_v0", "is_parallelizable": False,
                                "render_fps": 1}

    def __init__(
        self,
        ruleset: Any = None,  # the game's Ruleset, a dict of its flags, or None
        reward: str = "win",
        illegal_action: str = "raise",
        score_scale: float = 100.0,
        render_mode: str | None = None,
        extras: str | None = None,
        game: EnvGame | str | None = None,
    ) -> None:
        EzPickle.__init__(self, ruleset, reward, illegal_action, score_scale, render_mode, extras, game)
        super().__init__()
        check_render_mode(render_mode, self.metadata["render_modes"])
        # Both seats are learners: the core has no opponent and draws only each game's deal seed.
        self._core = core = EnvCore(1, None, reward, 0, ruleset, illegal_action, score_scale, extras,
                                    replayable=True, game=game)  # copies and pickles (envcore's docstring)
        #: The game played (its rules, codec and observation).
        self.env_game = core.game
        if self.env_game.aec_name != self.metadata["name"]:
            self.metadata = {**self.metadata, "name": self.env_game.aec_name}
        self.ruleset = core.ruleset
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.score_scale = core.score_scale
        self.render_mode = render_mode
        self.extras = extras
        self.possible_agents = list(AGENTS)
        self.agents = self.possible_agents[:]
        obs_space = spaces.Dict(
            {
                "observation": core.observation_space(),
                "action_mask": spaces.Box(0, 1, (self.env_game.num_actions,), np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: core.action_space() for a in self.possible_agents}
        self._started = False
        self.np_random, _ = seeding.np_random(None)
        self._clear()

    def __getstate__(self) -> dict[str, Any]:
        # The whole env, game included: EzPickle (PettingZoo's base) would pickle only the constructor's
        # arguments, and a "copy" would be a fresh env. The core copies its games (envcore's docstring).
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @property
    def game(self) -> Any:
        """The game being played (read it; ``None`` before the first ``reset``). Not ``state``: that is
        PettingZoo's method for a global observation."""
        return self._core.stepper.state(0) if self._started else None

    def _clear(self) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[0]

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of ``agent`` (the same for both)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """The action space of ``agent``: ``Discrete(num_actions)`` (the game's codec)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; ``seed`` fixes it (and reseeds the env's ``np_random``). It takes no options.

        PettingZoo's ``api_test`` requires ``reset`` to accept any ``options`` dict, so an
        unknown option is not an error here, as it is in ``MulleEnv``; it warns instead of
        being ignored silently.
        """
        if options:
            try:
                check_reset_options(options, ())
            except ValueError as exc:
                warnings.warn(f"{exc}; they are ignored", stacklevel=2)
        if seed is not None:
            self.np_random, _ = seeding.np_random(check_seed(seed))
        core = self._core
        core.reseed(0, self.np_random)
        core.start(0)
        self._started = True
        self._clear()
        self.agent_selection = AGENTS[core.stepper.state(0).to_move]

    def observe(self, agent: str) -> dict[str, Any]:
        """``{"observation", "action_mask"}`` for ``agent``; the mask is all zeros unless it is to move."""
        p = self._seat(agent)
        if not self._started:
            raise ResetNeededError(f"call reset() before observe({agent!r}) or last()")
        obs, mask = self._core.observation(0, p)
        # An agent removed at the end of the game has no entries left: its mask is all zeros.
        if agent not in self.agents or self.terminations[agent] or self.truncations[agent]:
            mask[:] = 0
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        """Play ``action`` for ``agent_selection`` (``None`` for an agent whose game is over)."""
        if not self._started:
            raise ResetNeededError("no game yet: call reset() before step()")
        if not self.agents:
            raise GameOverError(
                f"the game is over (final scores {self._core.stepper.state(0).scores()}); call reset() before "
                "stepping again"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        core = self._core
        st = core.stepper.state(0)
        p = st.to_move
        self._cumulative_rewards[agent] = 0.0
        a = core.checked_action(0, action)
        if a is None:
            self.rewards = {AGENTS[p]: core.illegal_reward(), AGENTS[1 - p]: 0.0}
            self.infos[agent] = {"illegal_action": True}
            self._end()
            return
        core.learner_play(0, a)
        if self.reward_mode == "score_delta":  # seat 0's change of the score difference; seat 1's is its negative
            change = core.delta_reward(0)
            self.rewards = {AGENTS[0]: change, AGENTS[1]: -change}
        if st.over:
            t = st.scores()
            if self.reward_mode != "score_delta":
                self.rewards = {AGENTS[0]: final_reward(self.reward_mode, t[0], t[1], self.score_scale),
                                AGENTS[1]: final_reward(self.reward_mode, t[1], t[0], self.score_scale)}
            for a_ in self.agents:
                self.infos[a_] = {"final_scores": t}
            self._end()
            return
        if self.reward_mode != "score_delta":
            self.rewards = {AGENTS[0]: 0.0, AGENTS[1]: 0.0}
        self.agent_selection = AGENTS[st.to_move]
        self._accumulate_rewards()

    def _end(self) -> None:
        self.terminations = dict.fromkeys(self.agents, True)
        # Both agents must see the end through last(); the one that did not just move goes first.
        self.agent_selection = AGENTS[1 - AGENTS.index(self.agent_selection)]
        self._accumulate_rewards()

    @staticmethod
    def _seat(agent: str) -> int:
        try:
            return AGENTS.index(agent)
        except ValueError:
            raise ValueError(f"unknown agent {agent!r}; agents are {', '.join(AGENTS)}") from None

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the position as the agent to move sees it."""
        if self.render_mode is None:
            return None
        if not self._started:
            return "(no game yet: call reset())"
        st = self._core.stepper.state(0)
        if st.over:
            return f"Game over: final scores {st.scores()}\n"
        return f"{AGENTS[st.to_move]} to move\n" + self.env_game.render(st.view(st.to_move)) + "\n"

    def close(self) -> None:
        """Nothing to release."""

    def __repr__(self) -> str:
        return str(self.metadata["name"])
