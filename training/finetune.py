"""The bridge from a distilled policy file to self-play fine-tuning with ``mulle-train --init-from``.

``mulle-train`` fine-tunes by masked PPO from an sb3 checkpoint; :func:`to_sb3_checkpoint`
writes one holding a policy file's weights (the actor always; the value head too when
its widths equal the policy's, as sb3's ``net_arch`` ``pi``/``vf`` are built with the
same ``--net``). A value head means the points still to come / 100, which is PPO's
(undiscounted) return with ``--reward score_delta --score-scale 100``, so it starts the
critic close to right; a file without one (``mulle-train ppo`` writes its critic only
under that reward) or with other widths starts the critic afresh. Then::

    mulle-train finetune gen_002/policy.npz ft/init.zip      # or: python -m training.finetune ...
    mulle-train ppo --init-from ft/init.zip --net 512,256 --activation relu --reward score_delta --lr 3e-5 ...

Needs the ``train`` extra (torch, stable-baselines3, sb3-contrib).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np
from numpy.typing import NDArray

from agents.learned.policy import load_policy

if TYPE_CHECKING:  # torch is imported where it is used; to mypy it is Any
    from torch import nn

__all__ = ["Copied", "add_arguments", "main", "run", "to_sb3_checkpoint"]


class Copied(TypedDict):
    """What :func:`to_sb3_checkpoint` copied: the flags mulle-train needs to load the checkpoint."""

    #: The ``--net`` text (the hidden widths, e.g. ``"512,256"``).
    net: str
    #: The ``--activation`` (``"relu"`` or ``"tanh"``).
    activation: str
    #: Whether the value head was copied (its widths equal the policy's).
    value: bool


def to_sb3_checkpoint(policy_path: str | Path, out: str | Path) -> Copied:
    """Write a MaskablePPO checkpoint (``.zip``) with the weights of ``policy_path``; return what was copied.

    The returned dict holds ``net`` (the ``--net`` text mulle-train must be given),
    ``activation`` and ``value`` (whether the value head was copied).
    """
    import torch
    from sb3_contrib import MaskablePPO
    from torch import nn

    from mulle_env.gym_env import MulleEnv

    pol = load_policy(policy_path)
    if pol.head != "logits":
        raise ValueError(f"{policy_path}: holds a {pol.head!r} net; PPO fine-tunes logits nets (mulle-train ppo or "
                         "fit --net logits make them), an afterstate net is fine-tuned by mulle-train dmc")
    hidden = list(pol.hidden_sizes)
    act = nn.ReLU if pol.activation == "relu" else nn.Tanh
    env = MulleEnv(opponent="random") if pol.game == "mulle" else MulleEnv(opponent="random", game=pol.game)
    model = MaskablePPO("MlpPolicy", env, device="cpu", verbose=0,
                        policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": act})
    sb = model.policy

    def copy(linears: list[nn.Linear], weights: Sequence[NDArray[np.float32]], biases: Sequence[NDArray[np.float32]]
             ) -> None:
        with torch.no_grad():
            for m, w, b in zip(linears, weights, biases):
                m.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T)))
                m.bias.copy_(torch.from_numpy(b))

    actor = [m for m in sb.mlp_extractor.policy_net if isinstance(m, nn.Linear)] + [sb.action_net]
    copy(actor, pol.weights, pol.biases)
    critic = [m for m in sb.mlp_extractor.value_net if isinstance(m, nn.Linear)] + [sb.value_net]
    value = pol.has_value and [tuple(m.weight.shape) for m in critic] == [w.T.shape for w in pol.value_weights]
    if value:
        copy(critic, pol.value_weights, pol.value_biases)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    model.save(out)
    return {"net": ",".join(map(str, hidden)), "activation": pol.activation, "value": bool(value)}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of ``mulle-train finetune`` (and of ``python -m training.finetune``)."""
    ap.add_argument("policy", help="logits policy .npz (made by mulle-train ppo, or fit --net logits); an "
                                   "afterstate net, what mulle-train expert makes, is fine-tuned by mulle-train dmc")
    ap.add_argument("out", help="checkpoint .zip to write (its directory is made)")


def run(args: argparse.Namespace, out: Callable[[str], object] = print) -> int:
    """Write the checkpoint ``args.out`` of ``args.policy`` and say which flags ``mulle-train ppo`` needs."""
    info = to_sb3_checkpoint(args.policy, args.out)
    played = load_policy(args.policy).game  # mulle-train ppo --game must name it
    game = "" if played == "mulle" else f"--game {played} "
    pol = load_policy(args.policy)
    why = ("" if info["value"] else
           " (the critic starts afresh: the file holds no value head; mulle-train ppo writes its critic as one "
           "when trained with --reward score_delta --score-scale 100, where it predicts what a value head means)"
           if not pol.has_value else
           " (the critic starts afresh: the file's value head has other widths than its policy, "
           f"{[w.shape[1] for w in pol.value_weights[:-1]]} against {info['net']})")
    out(f"wrote {args.out}; continue with: mulle-train ppo {game}--init-from {args.out} --net {info['net']} "
        f"--activation {info['activation']} --reward score_delta --score-scale 100 ...{why}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m training.finetune POLICY.npz OUT.zip``: the same as ``mulle-train finetune POLICY.npz OUT.zip``."""
    from .cli import train_main

    return train_main(["finetune", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
