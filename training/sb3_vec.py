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

Wrap it in ``VecMonitor`` for episode statistics. Needs stable-baselines3 (the
``train`` extra).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from mulle_env.vector_env import MulleVectorEnv

if TYPE_CHECKING:  # sb3-contrib is imported by the trainer; to mypy its names are Any
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

__all__ = ["SB3VectorEnv"]

#: What ``indices`` may be in sb3's ``VecEnv`` methods: all games, one, or several.
Indices = int | Iterable[int] | None


class SB3VectorEnv(VecEnv):
    """A :class:`MulleVectorEnv` as an sb3 ``VecEnv`` (same-step autoreset, ``action_masks`` for ``MaskablePPO``)."""

    def __init__(self, venv: MulleVectorEnv) -> None:
        if not isinstance(venv, MulleVectorEnv):
            raise ValueError(f"SB3VectorEnv wraps a MulleVectorEnv, not {venv!r}")
        if venv.autoreset_mode.value != "SameStep":
            raise ValueError("SB3VectorEnv needs autoreset_mode=AutoresetMode.SAME_STEP (sb3 resets in the same step)")
        self.venv = venv  # before VecEnv.__init__, which reads render_mode through get_attr
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: NDArray[np.int64] | None = None
        self._no_info: list[dict[str, Any]] = [{} for _ in range(venv.num_envs)]

    def use_policy(self, policy: MaskableActorCriticPolicy) -> None:
        """Under ``opponent="self"``: the other seat plays by ``policy`` (an sb3 masked policy), sampling."""

        def act(obs: NDArray[np.float32], mask: NDArray[np.int8]) -> NDArray[np.int64]:
            actions: NDArray[np.int64]
            # A writable copy: the mask handed out is read-only, and torch warns on non-writable arrays.
            actions, _ = policy.predict(obs, deterministic=False, action_masks=mask.astype(bool))
            return actions

        self.venv.set_opponent_policy(act)

    def reset(self) -> NDArray[np.float32]:
        """Reset every game (seeded by the last :meth:`seed` call, as ``DummyVecEnv`` does)."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        return obs.copy()

    def step_async(self, actions: NDArray[np.int64]) -> None:
        """Store the actions for :meth:`step_wait`."""
        self._actions = actions

    def step_wait(self) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_], list[dict[str, Any]]]:
        """Step all games; finished ones restart at once, their last observation in ``terminal_observation``."""
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        if dones.any():
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            final_obs = info["final_obs"]
            scores = info["final_info"]["final_scores"]
            for i in np.flatnonzero(dones).tolist():
                infos[i] = {"terminal_observation": final_obs[i],
                            "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                            "final_scores": tuple(int(x) for x in scores[i])}
        else:
            infos = self._no_info
            for d in infos:  # sb3 may write into them (e.g. VecMonitor's "episode"): keep them empty
                d.clear()
        return obs.copy(), rewards.astype(np.float32), dones, infos

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
            masks = self.venv.action_masks()
            return [masks[i] for i in idx]
        value = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [value for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Indices = None) -> list[bool]:
        """No Gymnasium wrappers sit inside the batched env."""
        return [False for _ in self._indices(indices)]
