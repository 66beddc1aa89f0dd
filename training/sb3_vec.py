"""stable-baselines3's ``VecEnv`` interface around the batched :class:`~mulle_env.vector_env.MulleVectorEnv`.

sb3 (and sb3-contrib's ``MaskablePPO``) drive a ``VecEnv``: one ``step`` for all
environments, autoreset in the same step with the finished episode's last
observation in ``infos[i]["terminal_observation"]``. The batched env already works
that way (``AutoresetMode.SAME_STEP``), so this adapter only reshapes its output:

* observations are copied out of the env's preallocated array (sb3 keeps the
  previous step's observation while the env writes the next one);
* ``env_method("action_masks")`` returns the K bool masks that ``MaskablePPO``
  stacks, straight from the env's mask array;
* ``seed(s)`` then ``reset()`` seeds game ``i`` with ``s + i``, as ``DummyVecEnv``
  seeds its ``Mulle-v0`` envs;
* ``opponent="self"``: :meth:`SB3VectorEnv.use_policy` makes the model being trained
  play the other seat (one batched forward pass per opponent turn).

With ``afterstate_slots=K`` the observation is a ``Dict`` for an afterstate actor
(:class:`training.afterstate_policy.AfterstatePolicy`): ``"obs"`` (the observation, for the
critic), ``"after"`` ``(K, 524)`` (the position each of the first ``K`` legal actions leaves,
:meth:`~mulle_env.vector_env.MulleVectorEnv.legal_afterstates`, with ``afterstate_extras``
an extra-input block of :mod:`mulle_env.extras` appended), ``"banked"`` ``(K,)`` (the
learner's score difference after it) and ``"ids"`` ``(K,)`` (the actions, ``-1`` in empty
slots). A position with more than ``K`` legal actions offers its first ``K`` (the masks say
so; :attr:`SB3VectorEnv.truncated_positions` counts them): none of 57,600 positions of 300
random games had more than 42.

Wrap it in ``VecMonitor`` for episode statistics. Needs stable-baselines3 (the
``train`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from mulle_env.vector_env import MulleVectorEnv

if TYPE_CHECKING:  # sb3-contrib is imported by the trainer; to mypy its names are Any
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

__all__ = ["SB3VectorEnv"]

#: ``afterstate_slots`` of the ``mulle-train ppo --actor afterstate`` runs: above the most legal moves seen (42).
AFTERSTATE_SLOTS = 48

#: What ``indices`` may be in sb3's ``VecEnv`` methods: all games, one, or several.
Indices = int | Iterable[int] | None


class SB3VectorEnv(VecEnv):
    """A :class:`MulleVectorEnv` as an sb3 ``VecEnv`` (same-step autoreset, ``action_masks`` for ``MaskablePPO``)."""

    def __init__(self, venv: MulleVectorEnv, afterstate_slots: int = 0, afterstate_extras: str | None = None) -> None:
        if not isinstance(venv, MulleVectorEnv):
            raise ValueError(f"SB3VectorEnv wraps a MulleVectorEnv, not {venv!r}")
        if venv.autoreset_mode.value != "SameStep":
            raise ValueError("SB3VectorEnv needs autoreset_mode=AutoresetMode.SAME_STEP (sb3 resets in the same step)")
        if afterstate_slots < 0:
            raise ValueError(f"afterstate_slots must be >= 0 (0: no afterstates), not {afterstate_slots}")
        self.venv = venv  # before VecEnv.__init__, which reads render_mode through get_attr
        #: ``K`` of the ``Dict`` observation (module docstring); 0: the plain observation.
        self.afterstate_slots = afterstate_slots
        #: The extra-input block (:mod:`mulle_env.extras`) appended to each afterstate, or ``None``.
        self.afterstate_extras = afterstate_extras
        #: Positions that had more legal actions than slots (their first ``K`` were offered).
        self.truncated_positions = 0
        obs_space: spaces.Space[Any] = venv.single_observation_space
        if afterstate_slots:
            game = venv.env_game
            k, n = afterstate_slots, game.check_afterstates()
            if afterstate_extras is not None:
                from mulle_env.extras import extras_size

                n += extras_size(afterstate_extras)  # a ValueError names the blocks there are
            obs_space = spaces.Dict({
                "obs": venv.single_observation_space,
                "after": spaces.Box(-np.inf, np.inf, (k, n), np.float32),
                "banked": spaces.Box(-np.inf, np.inf, (k,), np.float32),
                "ids": spaces.Box(-1, game.num_actions - 1, (k,), np.float32),
            })
        super().__init__(venv.num_envs, obs_space, venv.single_action_space)
        self._actions: NDArray[np.int64] | None = None
        self._no_info: list[dict[str, Any]] = [{} for _ in range(venv.num_envs)]
        self._masks: NDArray[np.bool_] | None = None

    def _observe(self, obs: NDArray[np.float32]) -> Any:
        """The observation sb3 stores: a copy of the env's rows, or with afterstates the ``Dict`` of them."""
        if not self.afterstate_slots:
            return obs.copy()
        k, num = self.afterstate_slots, self.num_envs
        ids, offsets = self.venv.legal_ids()
        after, banked = self.venv.legal_afterstates()
        if self.afterstate_extras is not None:
            from mulle_env.extras import with_extras

            after = with_extras(after, self.afterstate_extras)
        out_after = np.zeros((num, k, after.shape[1]), np.float32)
        out_banked = np.zeros((num, k), np.float32)
        out_ids = np.full((num, k), -1, np.float32)
        masks = np.zeros((num, self.venv.env_game.num_actions), dtype=bool)
        offs = offsets.tolist()
        for i in range(num):
            a, b = offs[i], offs[i + 1]
            if b - a > k:
                self.truncated_positions += 1
                b = a + k
            n = b - a
            out_after[i, :n] = after[a:b]
            out_banked[i, :n] = banked[a:b]
            out_ids[i, :n] = ids[a:b]
            masks[i, ids[a:b]] = True
        self._masks = masks
        return {"obs": obs.copy(), "after": out_after, "banked": out_banked, "ids": out_ids}

    def use_policy(self, policy: MaskableActorCriticPolicy) -> None:
        """Under ``opponent="self"``: the other seat plays by ``policy`` (an sb3 masked policy), sampling."""
        if self.afterstate_slots:
            raise ValueError("opponent='self' plays the network on the other seat's observation rows, and an "
                             "afterstate actor needs that seat's afterstates: train against agents and snapshots "
                             "(--opponents with 'self') instead")

        def act(obs: NDArray[np.float32], mask: NDArray[np.int8]) -> NDArray[np.int64]:
            actions: NDArray[np.int64]
            # A writable copy: the mask handed out is read-only, and torch warns on non-writable arrays.
            actions, _ = policy.predict(obs, deterministic=False, action_masks=mask.astype(bool))
            return actions

        self.venv.set_opponent_policy(act)

    def reset(self) -> Any:
        """Reset every game (seeded by the last :meth:`seed` call, as ``DummyVecEnv`` does)."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        return self._observe(obs)

    def step_async(self, actions: NDArray[np.int64]) -> None:
        """Store the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> tuple[Any, NDArray[np.float32], NDArray[np.bool_], list[dict[str, Any]]]:
        """Step all games; finished ones restart at once, their last observation in ``terminal_observation``."""
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        if dones.any():
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            final_obs = info["final_obs"]
            scores = info["final_info"]["final_scores"]
            for i in np.flatnonzero(dones).tolist():
                # A finished game has no moves: with afterstates its last observation has empty slots.
                last = final_obs[i] if not self.afterstate_slots else {
                    "obs": final_obs[i], "after": np.zeros(self.observation_space["after"].shape, np.float32),
                    "banked": np.zeros(self.afterstate_slots, np.float32),
                    "ids": np.full(self.afterstate_slots, -1, np.float32)}
                infos[i] = {"terminal_observation": last,
                            "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                            "final_scores": tuple(int(x) for x in scores[i])}
        else:
            infos = self._no_info
            for d in infos:  # sb3 may write into them (e.g. VecMonitor's "episode"): keep them empty
                d.clear()
        return self._observe(obs), rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the wrapped env."""
        self.venv.close()

    def _indices(self, indices: Indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: Indices = None) -> list[Any]:
        """The attribute of the batched env, once per index (the K games share one env)."""
        value = getattr(self.venv, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Indices = None) -> None:
        """Set an attribute of the batched env (it is shared by every index)."""
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Indices = None, **method_kwargs: Any
                   ) -> list[Any]:
        """``action_masks`` gives one bool row per game; other methods are called once, their result repeated."""
        idx = self._indices(indices)
        if method_name == "action_masks":
            # With afterstates: the actions offered in the slots (all legal ones but past K).
            masks = self.venv.action_masks() if self._masks is None else self._masks
            return [masks[i] for i in idx]
        value = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [value for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Indices = None) -> list[bool]:
        """No Gymnasium wrappers sit inside the batched env."""
        return [False for _ in self._indices(indices)]
