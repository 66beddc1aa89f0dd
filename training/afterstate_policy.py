"""An afterstate actor for sb3-contrib's ``MaskablePPO``: each legal move scored by the position it leaves.

Why. ``Mulle-v0``'s 2,812 action ids name moves, not what they do; an MLP that writes one
logit per id must learn, id by id, what capturing with each card takes and leaves. On 2
cores that network, cloned from ``greedy`` and tuned by PPO, stayed at 27-31% against
``heuristic`` (docs/learning.md, "Training with standard RL"), though ``greedy`` itself
beats ``heuristic`` about 70% of the time: the network could not even copy its teacher
(65% of its moves). An *afterstate* actor reads what each move leaves
(:mod:`mulle_env.afterstates`) through one shared network, so a lesson about one move is a
lesson about every move that leaves a similar table.

What. The observation is :class:`training.sb3_vec.SB3VectorEnv`'s ``Dict`` with
``afterstate_slots``: ``obs`` (the learner's observation), ``after`` (``K`` afterstate
encodings), ``banked`` (the learner's score difference after each move) and ``ids`` (the
moves' action ids, ``-1`` in empty slots). The logit of action ``ids[k]`` is::

    (banked[k] + VALUE_SCALE * actor(after[k])) / temperature

the score by which this project's afterstate nets rank moves (``agents.learned.policy``,
``head="afterstate"``), divided by a learned temperature in points; the other actions'
logits are masked. The actor's last layer starts at zero, so a fresh policy already takes
points greedily (it prefers the moves that bank most) and PPO learns what comes after. The
critic is an MLP on ``obs``. :meth:`AfterstatePolicy.to_numpy` writes the actor as an
afterstate policy file (and the critic as its value head): ``learned:path=FILE`` plays it
with numpy alone, by its best score.

Only the slots that hold a move go through the actor (a batch's rows are gathered first),
so a position with five moves costs five rows whatever ``K`` is.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from agents.learned.policy import VALUE_SCALE, MLPPolicy

if TYPE_CHECKING:
    from sb3_contrib.common.maskable.distributions import MaskableDistribution
    from stable_baselines3.common.type_aliases import Schedule

__all__ = ["AfterstatePolicy", "DEFAULT_TEMPERATURE"]

#: The starting temperature, in points: a move that banks 2 points more is e times as likely.
DEFAULT_TEMPERATURE = 2.0

_ACTIVATIONS: dict[type[nn.Module], str] = {nn.Tanh: "tanh", nn.ReLU: "relu"}


def _mlp(n_in: int, hidden: list[int], activation: type[nn.Module], zero_last: bool) -> nn.Sequential:
    layers: list[nn.Module] = []
    width = n_in
    for h in hidden:
        layers += [nn.Linear(width, h), activation()]
        width = h
    last = nn.Linear(width, 1)
    if zero_last:
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
    layers.append(last)
    return nn.Sequential(*layers)


class AfterstatePolicy(MaskableActorCriticPolicy):
    """``MaskablePPO``'s policy with an afterstate actor and an observation critic (module docstring).

    ``net_arch``: ``{"pi": [...], "vf": [...]}`` hidden widths of the actor and the critic;
    ``temperature``: the starting temperature in points (learned from there); ``extras``: the
    extra-input block the env appends to each afterstate (``SB3VectorEnv(afterstate_extras=)``),
    recorded in the exported file so the ``learned`` agent computes the same.
    """

    def __init__(self, observation_space: spaces.Space[Any], action_space: spaces.Space[Any], lr_schedule: Schedule,
                 net_arch: dict[str, list[int]] | None = None, activation_fn: type[nn.Module] = nn.Tanh,
                 temperature: float = DEFAULT_TEMPERATURE, extras: str | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, spaces.Dict) or set(observation_space.spaces) != {
                "obs", "after", "banked", "ids"}:
            raise ValueError("AfterstatePolicy reads SB3VectorEnv(..., afterstate_slots=K)'s Dict observation "
                             f"(obs, after, banked, ids), not {observation_space}")
        if not (temperature > 0 and math.isfinite(temperature)):
            raise ValueError(f"temperature must be a positive number of points, not {temperature}")
        if activation_fn not in _ACTIVATIONS:
            raise ValueError(f"activation_fn must be one of {[a.__name__ for a in _ACTIVATIONS]}, not {activation_fn}")
        self.temperature = float(temperature)
        self.extras = extras
        kwargs.pop("ortho_init", None)  # the actor's last layer starts at zero instead (module docstring)
        super().__init__(observation_space, action_space, lr_schedule, net_arch=net_arch, activation_fn=activation_fn,
                         ortho_init=False, **kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        arch = self.net_arch if isinstance(self.net_arch, dict) else {"pi": self.net_arch, "vf": self.net_arch}
        space = self.observation_space
        assert isinstance(space, spaces.Dict)
        after_size = int(space["after"].shape[1])  # type: ignore[index]
        obs_size = int(space["obs"].shape[0])  # type: ignore[index]
        self.actor = _mlp(after_size, list(arch.get("pi", [])), self.activation_fn, zero_last=True)
        self.critic = _mlp(obs_size, list(arch.get("vf", [])), self.activation_fn, zero_last=False)
        self.log_temperature = nn.Parameter(torch.tensor(math.log(self.temperature), dtype=torch.float32))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data: dict[str, Any] = super()._get_constructor_parameters()
        data.update(temperature=self.temperature, extras=self.extras)
        return data

    # ----- the two heads ----------------------------------------------------------------------
    def action_logits(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """``(B, num_actions)`` logits: each slotted move's score / temperature, 0 elsewhere (masked later)."""
        ids = obs["ids"].long()
        filled = ids >= 0
        rows, slots = filled.nonzero(as_tuple=True)
        scores = obs["banked"][rows, slots] + VALUE_SCALE * self.actor(obs["after"][rows, slots]).squeeze(-1)
        n = int(self.action_space.n)
        logits = torch.zeros((ids.shape[0], n), dtype=scores.dtype, device=scores.device)
        logits[rows, ids[rows, slots]] = scores / self.log_temperature.exp()
        return logits

    def _distribution(self, obs: dict[str, torch.Tensor], action_masks: Any) -> MaskableDistribution:
        distribution = self.action_dist.proba_distribution(action_logits=self.action_logits(obs))
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution

    def _values(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        values: torch.Tensor = self.critic(obs["obs"])
        return values

    # ----- what MaskablePPO calls ---------------------------------------------------------------
    def forward(self, obs: Any, deterministic: bool = False, action_masks: Any = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values and log-probabilities of a batch (the rollout's call)."""
        distribution = self._distribution(obs, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        return actions, self._values(obs), distribution.log_prob(actions)

    def evaluate_actions(self, obs: Any, actions: torch.Tensor, action_masks: Any = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities of ``actions`` and entropies (PPO's update)."""
        distribution = self._distribution(obs, action_masks)
        return self._values(obs), distribution.log_prob(actions), distribution.entropy()

    def get_distribution(self, obs: Any, action_masks: Any = None) -> MaskableDistribution:
        """The masked action distribution of a batch."""
        return self._distribution(obs, action_masks)

    def predict_values(self, obs: Any) -> torch.Tensor:
        """The critic's values of a batch."""
        return self._values(obs)

    # ----- export -----------------------------------------------------------------------------------
    def to_numpy(self, metadata: dict[str, Any] | None = None, value: bool = False) -> MLPPolicy:
        """The actor as an afterstate policy file's net (``head="afterstate"``), the critic as its value head
        when ``value`` (where it predicts the points still to come / 100)."""

        def layers(seq: nn.Sequential) -> tuple[list[np.ndarray[Any, Any]], list[np.ndarray[Any, Any]]]:
            lin = [m for m in seq if isinstance(m, nn.Linear)]
            return ([m.weight.detach().cpu().numpy().T.copy() for m in lin],
                    [m.bias.detach().cpu().numpy().copy() for m in lin])

        weights, biases = layers(self.actor)
        vw, vb = layers(self.critic) if value else ([], [])
        meta = dict(metadata or {})
        meta.setdefault("temperature_points", round(float(self.log_temperature.detach().exp()), 4))
        return MLPPolicy(weights, biases, _ACTIVATIONS[self.activation_fn], meta, vw, vb, head="afterstate",
                         extras=self.extras)
