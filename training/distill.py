"""Learning from the teacher's move values: fit a policy and a value head, export to numpy.

The network is two MLPs on the observation (the layout the numpy policy file holds):
the policy net writes one logit per action, the value net one number, the final score
difference from the mover's seat divided by :data:`~agents.learned.policy.VALUE_SCALE`.

Loss, per decision with legal actions ``L`` and teacher values ``q(a)`` (points):

* policy: cross-entropy between the soft target ``softmax(q / T)`` over the moves the
  teacher searched and the net's softmax over ``L`` (masked logits). ``T``
  (``temperature``, in points) sets how sharply the target prefers the best move: a
  move worth one point less than the best gets ``exp(-1/T)`` times its weight. Moves
  the teacher did not search (a width-limited teacher) get target 0. Why soft targets
  and not the teacher's choice: the values say *how much* worse the other moves are,
  which is what a one-pass policy most needs to learn where the choice is close, and
  they carry more information per (expensive) search than one label.
* value: squared error against the points still to come, ``(outcome - banked) /
  VALUE_SCALE`` (the final score difference minus what the mover had banked at the
  decision, :func:`training.teacher.banked_points`), weighted by ``vf_coef``.
  Learning the remainder rather than the final difference spares the net from
  reproducing the banked points exactly from the score features, and it is what a
  search adds to the points it can count at a leaf.

Each training decision is shown with clubs and hearts swapped half of the time (the
symmetry :func:`training.bc.suit_swap_permutations` checks). 5% of the *games*
are held out (positions of one game are correlated) and the figures reported on them:
agreement with the teacher's move, the *regret* (points the net's choice is worth
less than the teacher's best, by the teacher's own values) and the value error.

Nets of other games than Mulle (``game="casino"``, :mod:`training.games`) read that game's
observation and write one logit per its action ids; the file records the game. The suit
swap is each game's own (:meth:`training.games.TrainGame.suit_swap`: Casino's clubs and hearts
score alike too).

Long fits checkpoint every few minutes (model, optimizer, schedule and position in the
epoch) and resume from the checkpoint exactly. torch is imported only inside the
functions that train: ``pip install "mulle-env[train]"``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from agents.learned.policy import VALUE_SCALE, MLPPolicy, load_policy, save_policy
from mulle_env.codec import NUM_ACTIONS
from mulle_env.observation import OBS_SIZE

from .fitloop import FitLoop

if TYPE_CHECKING:  # torch is imported where it is used; to mypy it is Any (pyproject.toml)
    from torch import Tensor, nn

    from .teacher import TeacherData

__all__ = ["FitConfig", "fit", "held_out_split", "soft_targets"]


class FitConfig(dict[str, Any]):
    """The settings of a fit (a dict, so it is stored as JSON in checkpoints and metadata).

    Keys and defaults: ``hidden`` (512, 256), ``value_hidden`` (256,), ``activation``
    relu, ``epochs`` 8, ``batch_size`` 512, ``lr`` 1e-3 (cosine decay to 0),
    ``temperature`` 1.0 (points), ``vf_coef`` 0.5, ``augment`` True, ``seed`` 0,
    ``weight_decay`` 1e-5.
    """

    DEFAULTS: ClassVar[dict[str, Any]] = {
        "hidden": [512, 256], "value_hidden": [256], "activation": "relu", "epochs": 8, "batch_size": 512,
        "lr": 1e-3, "temperature": 1.0, "vf_coef": 0.5, "augment": True, "seed": 0, "weight_decay": 1e-5,
    }

    def __init__(self, **kw: Any) -> None:
        unknown = set(kw) - set(self.DEFAULTS)
        if unknown:
            raise ValueError(f"unknown fit settings {sorted(unknown)}; known: {sorted(self.DEFAULTS)}")
        super().__init__({**self.DEFAULTS, **kw})
        self["hidden"] = [int(h) for h in self["hidden"]]
        self["value_hidden"] = [int(h) for h in self["value_hidden"]]
        for key in ("epochs", "batch_size"):
            if int(self[key]) < 1:
                raise ValueError(f"{key} must be >= 1, not {self[key]!r}")
        if not float(self["temperature"]) > 0:
            raise ValueError(f"temperature must be > 0 points, not {self['temperature']!r}")
        if self["activation"] not in ("relu", "tanh"):
            raise ValueError(f"activation must be relu or tanh, not {self['activation']!r}")
        if min(self["hidden"] + self["value_hidden"], default=1) < 1:
            raise ValueError("hidden widths must be positive")


def soft_targets(values: NDArray[np.floating[Any]], legal: NDArray[np.integer[Any]],
                 temperature: float) -> NDArray[np.float32]:
    """``softmax(values / T)`` over each row's searched legal moves (0 elsewhere), rows ``(n, MAX_LEGAL)``."""
    searched = (legal >= 0) & np.isfinite(values)
    z = np.where(searched, values, -np.inf) / temperature
    top = z.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(searched, np.exp(z - top), 0.0)
    total = e.sum(axis=1, keepdims=True)
    return (e / np.where(total > 0, total, 1.0)).astype(np.float32)


def held_out_split(games: NDArray[np.integer[Any]], fraction: float,
                   seed: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row indices ``(train, held_out)``: whole games are held out, about ``fraction`` of them."""
    ids = np.unique(games)
    rng = np.random.default_rng(seed)
    n_out = max(1, round(len(ids) * fraction)) if len(ids) > 1 else 0
    out_games = rng.choice(ids, size=n_out, replace=False) if n_out else np.array([], dtype=ids.dtype)
    is_out = np.isin(games, out_games)
    return np.flatnonzero(~is_out), np.flatnonzero(is_out)


def _mlp(sizes: Sequence[int], activation: str) -> nn.Sequential:
    from torch import nn

    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU() if activation == "relu" else nn.Tanh())
    return nn.Sequential(*layers)


def _build(cfg: FitConfig, obs_size: int = OBS_SIZE, num_actions: int = NUM_ACTIONS) -> nn.Module:
    import torch
    from torch import nn

    torch.manual_seed(int(cfg["seed"]))
    net = nn.Module()
    net.pi = _mlp([obs_size, *cfg["hidden"], num_actions], cfg["activation"])
    net.v = _mlp([obs_size, *cfg["value_hidden"], 1], cfg["activation"])
    return net


def _linears(seq: Iterable[nn.Module]) -> list[nn.Linear]:
    from torch import nn

    return [m for m in seq if isinstance(m, nn.Linear)]


def _load_numpy(net: nn.Module, policy: MLPPolicy) -> list[str]:
    """Copy a numpy policy's weights into ``net`` where the shapes agree; return what was copied."""
    import torch

    copied = []
    for name, seq, ws, bs in (("policy", net.pi, policy.weights, policy.biases),
                              ("value", net.v, policy.value_weights, policy.value_biases)):
        lin = _linears(seq)
        if len(lin) == len(ws) and all(tuple(m.weight.shape) == w.T.shape for m, w in zip(lin, ws)):
            with torch.no_grad():
                for m, w, b in zip(lin, ws, bs):
                    m.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T)))
                    m.bias.copy_(torch.from_numpy(b))
            copied.append(name)
    return copied


def to_policy(net: nn.Module, activation: str, metadata: dict[str, Any] | None = None,
              game: str = "mulle") -> MLPPolicy:
    """The numpy :class:`MLPPolicy` (with its value head) equal to the torch ``net``, a net of ``game``."""
    def arrays(seq: nn.Module) -> tuple[list[NDArray[np.float32]], list[NDArray[np.float32]]]:
        lin = _linears(seq)
        return ([m.weight.detach().cpu().numpy().T.copy() for m in lin],
                [m.bias.detach().cpu().numpy().copy() for m in lin])

    w, b = arrays(net.pi)
    vw, vb = arrays(net.v)
    return MLPPolicy(w, b, activation, metadata or {}, vw, vb, game=game)


def _batch(data: TeacherData, idx: NDArray[np.integer[Any]], cfg: FitConfig, targets: NDArray[np.float32],
           perms: tuple[NDArray[np.intp], NDArray[np.intp]] | None, swap: NDArray[np.bool_] | None,
           num_actions: int = NUM_ACTIONS) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    import torch

    obs = np.asarray(data["obs"][idx], dtype=np.float32)
    legal = data["legal"][idx].astype(np.int64)
    tgt = targets[idx]
    if swap is not None and swap.any():
        assert perms is not None  # a swap is drawn only with perms
        obs_perm, act_perm = perms
        obs[swap] = obs[swap][:, obs_perm]
        sl = legal[swap]
        legal[swap] = np.where(sl >= 0, act_perm[np.maximum(sl, 0)], -1)
    n = len(idx)
    mask = np.zeros((n, num_actions), dtype=bool)
    dense = np.zeros((n, num_actions), dtype=np.float32)
    rows = np.repeat(np.arange(n), legal.shape[1])
    cols = legal.ravel()
    keep = cols >= 0
    mask[rows[keep], cols[keep]] = True
    dense[rows[keep], cols[keep]] = tgt.ravel()[keep]
    ret = (data["outcome"][idx] - data["banked"][idx]).astype(np.float32) / VALUE_SCALE
    return (torch.from_numpy(obs), torch.from_numpy(mask), torch.from_numpy(dense), torch.from_numpy(ret))


def _losses(net: nn.Module, obs: Tensor, mask: Tensor, dense: Tensor, ret: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    import torch

    logits = net.pi(obs).masked_fill(~mask, -1e9)
    logp = torch.log_softmax(logits, dim=1)
    loss_pi = -(dense * logp).sum(dim=1).mean()
    loss_v = torch.nn.functional.mse_loss(net.v(obs).squeeze(1), ret)
    return loss_pi, loss_v, logits


def evaluate(net: nn.Module, data: TeacherData, idx: NDArray[np.integer[Any]], cfg: FitConfig,
             targets: NDArray[np.float32], batch_size: int = 2048, num_actions: int = NUM_ACTIONS) -> dict[str, float]:
    """Held-out figures: policy loss, agreement with the teacher's move, regret in points, value error
    (``num_actions``: the game's action space, Mulle's by default)."""
    import torch

    if len(idx) == 0:
        return {}
    tot_pi = tot_v = agree = regret = 0.0
    with torch.no_grad():
        for i in range(0, len(idx), batch_size):
            b = idx[i : i + batch_size]
            obs, mask, dense, ret = _batch(data, b, cfg, targets, None, None, num_actions)
            loss_pi, loss_v, logits = _losses(net, obs, mask, dense, ret)
            tot_pi += float(loss_pi) * len(b)
            tot_v += float(loss_v) * len(b)
            choice = logits.argmax(dim=1).numpy()
            agree += int((choice == data["action"][b]).sum())
            legal, values = data["legal"][b], data["values"][b]
            pos = (legal == choice[:, None]).argmax(axis=1)
            got = values[np.arange(len(b)), pos]
            best = np.nanmax(np.where(legal >= 0, values, np.nan), axis=1)
            regret += float(np.nansum(best - got))
    n = len(idx)
    return {"heldout_policy_loss": tot_pi / n, "heldout_agreement": agree / n, "heldout_regret_points": regret / n,
            "heldout_value_mse": tot_v / n, "heldout_decisions": n}


def fit(data: TeacherData, out: str | Path, config: FitConfig | None = None, init_from: str | None = None,
        checkpoint: str | Path | None = None, checkpoint_minutes: float = 5.0, metadata: dict[str, Any] | None = None,
        progress: bool = True, log: Callable[[dict[str, Any]], None] | None = None,
        threads: int = 1, game: str = "mulle", ruleset: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fit the networks to teacher ``data`` (:func:`training.teacher.load`) and write the policy file ``out``.

    ``init_from`` starts from a policy file's weights (those of its nets whose shapes
    match). With ``checkpoint`` (a path), the state is saved there every
    ``checkpoint_minutes`` and at every epoch's end, and a fit with the same settings
    and data resumes from it. Returns the figures (also stored in the file's metadata).
    ``game``: the game of the data and the net (Mulle by default; :mod:`training.games`);
    ``ruleset``: the changed rules the net is recorded as trained for (default: the defaults).
    """
    import torch

    from .games import train_game

    tg = train_game(game)
    cfg = config or FitConfig()
    torch.set_num_threads(threads)
    n = len(data["action"])
    if n == 0:
        raise ValueError("no decisions to learn from")
    train_idx, val_idx = held_out_split(data["game"], 0.05, int(cfg["seed"]))
    targets = soft_targets(data["values"], data["legal"], float(cfg["temperature"]))
    perms = tg.suit_swap() if cfg["augment"] else None
    net = _build(cfg, tg.obs_size, tg.num_actions)
    copied = _load_numpy(net, load_policy(init_from)) if init_from else []
    params = list(net.parameters())
    opt = torch.optim.AdamW(params, lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))
    bs = int(cfg["batch_size"])
    steps_per_epoch = max(1, len(train_idx) // bs)
    total = int(cfg["epochs"]) * steps_per_epoch
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total)
    key = {"config": dict(cfg), "decisions": n, "init_from": init_from,
           "digest": float(np.nansum(data["values"][:: max(1, n // 997)]))}
    if tg.name != "mulle":  # Mulle's checkpoints keep their keys
        key["game"] = tg.name
    loop = FitLoop(checkpoint, key, net, opt, sched, copied, int(cfg["epochs"]), steps_per_epoch,
                   checkpoint_minutes, progress)
    try:
        while loop.epoch < int(cfg["epochs"]):
            epoch = loop.epoch
            net.train()
            order = np.random.default_rng([int(cfg["seed"]), epoch]).permutation(train_idx)
            while loop.step < steps_per_epoch:
                b = loop.step
                idx = np.sort(order[b * bs : (b + 1) * bs])
                swap = np.random.default_rng([int(cfg["seed"]), epoch, b]).random(len(idx)) < 0.5 if perms else None
                obs, mask, dense, ret = _batch(data, idx, cfg, targets, perms, swap, tg.num_actions)
                loss_pi, loss_v, _ = _losses(net, obs, mask, dense, ret)
                loss = loss_pi + float(cfg["vf_coef"]) * loss_v
                loop.optimize(loss)
            net.eval()
            loop.epoch_done(evaluate(net, data, val_idx, cfg, targets, num_actions=tg.num_actions), log)
    finally:
        loop.close()
    history, copied = loop.history, loop.copied
    meta = {"trainer": "training.distill", "config": dict(cfg), "decisions": n,
            "train_decisions": len(train_idx), "heldout_decisions": len(val_idx),
            "init_from": init_from, "initialised": copied, "history": history,
            "fit_seconds": round(loop.elapsed, 1), **(metadata or {})}
    policy = to_policy(net, cfg["activation"], meta, tg.name)
    if ruleset:
        policy = MLPPolicy(policy.weights, policy.biases, policy.activation, policy.metadata, policy.value_weights,
                           policy.value_biases, ruleset=ruleset, game=tg.name)
    save_policy(policy, out)
    return {**(history[-1] if history else {}), "fit_seconds": meta["fit_seconds"], "decisions": n}
