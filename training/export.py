"""Export a trained MaskablePPO policy network to the numpy policy file (no torch needed to play).

An afterstate actor (:class:`training.afterstate_policy.AfterstatePolicy`) is written as an
afterstate net by its own :meth:`~training.afterstate_policy.AfterstatePolicy.to_numpy`; what
follows is the logits policy's export.

The actor is exported: the policy MLP (``mlp_extractor.policy_net``) and the action head
(``action_net``). The critic, the value MLP (``mlp_extractor.value_net``) and the value head
(``value_net``), is exported too when asked (``value=True``) as the file's value head, whose
meaning is fixed by the file format: the points still to come / 100
(:data:`agents.learned.policy.VALUE_SCALE`). PPO's critic means that when it was trained with
``--reward score_delta --score-scale 100`` (the steps pay the points as they are made), so
``mulle-train ppo`` asks for it then, and ``mulle-train finetune`` copies it back into a
checkpoint. The observation goes in unscaled (sb3 does not rescale ``Box`` observations for
an MLP), so the numpy forward pass is exactly ``x @ W + b`` with the activation between
layers. Needs torch at export time only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.learned.policy import MLPPolicy, PolicyFileError, save_policy

if TYPE_CHECKING:  # sb3-contrib is imported by the caller; to mypy its names are Any
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

__all__ = ["export_model", "policy_from_sb3"]

_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}


def policy_from_sb3(sb3_policy: MaskableActorCriticPolicy, metadata: dict[str, Any] | None = None,
                    game: str = "mulle", ruleset: dict[str, Any] | None = None, value: bool = False) -> MLPPolicy:
    """The numpy :class:`MLPPolicy` equal to ``sb3_policy``'s actor (a ``MaskableActorCriticPolicy``).

    ``game``: the game the policy plays (Mulle by default); ``ruleset``: the rules it was trained for
    (its changed flags; recorded for games other than Mulle, whose PPO files record none); ``value``:
    the critic too, as the file's value head (only where it predicts the points still to come / 100).
    """
    from torch import nn

    to_numpy = getattr(sb3_policy, "to_numpy", None)
    if to_numpy is not None:  # an afterstate actor (training.afterstate_policy) writes its own file
        if game != "mulle":
            raise PolicyFileError(f"afterstate actors play Mulle; {game} offers no afterstates yet")
        pol: MLPPolicy = to_numpy(metadata, value=value)
        return pol
    if type(sb3_policy.features_extractor).__name__ != "FlattenExtractor":
        raise PolicyFileError(
            f"only the default FlattenExtractor can be exported, not {type(sb3_policy.features_extractor).__name__}"
        )
    act_name = getattr(sb3_policy.activation_fn, "__name__", str(sb3_policy.activation_fn))
    if act_name not in _ACTIVATIONS:
        raise PolicyFileError(f"activation {act_name} cannot be exported; use one of {', '.join(_ACTIVATIONS)}")
    linears = [m for m in sb3_policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    layer_types = (nn.Linear, sb3_policy.activation_fn)
    others = [m for m in [*sb3_policy.mlp_extractor.policy_net, *sb3_policy.mlp_extractor.value_net]
              if not isinstance(m, layer_types)]
    if others:
        raise PolicyFileError(f"the policy net holds layers the numpy MLP does not implement: {others}")
    linears.append(sb3_policy.action_net)
    critic = [m for m in sb3_policy.mlp_extractor.value_net if isinstance(m, nn.Linear)] + [sb3_policy.value_net]
    weights = [m.weight.detach().cpu().numpy().T.copy() for m in linears]
    biases = [m.bias.detach().cpu().numpy().copy() for m in linears]
    value_weights = [m.weight.detach().cpu().numpy().T.copy() for m in critic] if value else []
    value_biases = [m.bias.detach().cpu().numpy().copy() for m in critic] if value else []
    if game == "mulle":
        return MLPPolicy(weights, biases, _ACTIVATIONS[act_name], metadata or {}, value_weights, value_biases)
    return MLPPolicy(weights, biases, _ACTIVATIONS[act_name], metadata or {}, value_weights, value_biases,
                     ruleset=ruleset, game=game)


def export_model(model: MaskablePPO, path: str | Path, metadata: dict[str, Any] | None = None,
                 game: str = "mulle", value: bool = False) -> MLPPolicy:
    """Write ``model``'s (a ``MaskablePPO``) actor (and with ``value`` its critic) to ``path``; return the policy."""
    pol = policy_from_sb3(model.policy, metadata, game, value=value)
    save_policy(pol, path)
    return pol
