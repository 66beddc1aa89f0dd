"""Fitting an afterstate net to the teacher's move values.

Teacher data made with ``afterstates=True`` (:mod:`training.teacher`) holds, for
every labelled legal move, the encoding of the position it leaves (mover's seat), the
points banked after it, and the teacher's value of the move. The net learns, per move,
the points still to come::

    target(move) = teacher value(move) - banked after the move        (points)

by squared error (the net writes ``target / VALUE_SCALE``). With ``centered`` (the
default) most of the error is taken *within each decision*: the net's values minus
their mean over the decision's moves against the teacher's values minus theirs, plus
``abs_coef`` times the plain error. A search's values share one sampling error across
all moves of a decision (every move sees the same determinizations): a lucky draw of
the opponent's hand lifts them all alike. That shared error says nothing about which
move is better, and taking it out of the loss takes most of the noise out of the
gradient; the small plain term keeps the values' level (which ``netsearch`` adds to
banked points). Batches are whole decisions for this. Why regression on every
move rather than the teacher's choice: one search labels about seven moves, and the
values say by how much the others are worse. Why an afterstate net: the points a move
takes are then exact (the agent adds the banked points itself), and the net spends its
capacity on what the move leaves to the opponent, which is what a one-ply player gets
wrong. A teacher's value is an average over random determinizations; the net, fitted
over hundreds of thousands of positions, averages that sampling noise away, which is
how a one-pass net can play better than the search that taught it.

Each afterstate is shown with clubs and hearts swapped half of the time
(:func:`training.bc.suit_swap_permutations`). About 5% of the *games* are held
out and reported on: squared error, agreement with the teacher's best move and regret
(points the net's choice is worth less than the teacher's best, by the teacher's
values). A fit checkpoints every few minutes and at every epoch's end and resumes
from the checkpoint exactly. torch is imported only inside the functions that train.

The fit is Mulle's unless ``game=`` names another (``game="casino"``, :mod:`training.games`):
the afterstates are then that game's encodings (Casino's 456 floats), the suit swap is that
game's (:meth:`training.games.TrainGame.suit_swap`) and the policy file names the game. The
extra inputs and the face symmetries beyond the swap read Mulle's layout, and are Mulle's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from numpy.typing import NDArray

from agents.learned.policy import VALUE_SCALE, MLPPolicy, load_policy, save_policy
from mulle_env.extras import extends, extras_size, with_extras
from mulle_env.observation import OBS_SIZE, face_symmetry_columns

from .distill import _linears, _mlp, held_out_split
from .fitloop import FitLoop

if TYPE_CHECKING:  # torch is imported where it is used; to mypy it is Any (pyproject.toml)
    from torch import Tensor, nn

    from mulle_env.engine import Ruleset

    from .stream import Chunk, Source
    from .teacher import CodedRows, TeacherData

__all__ = ["AfterstateConfig", "fit_afterstate", "move_rows"]


class AfterstateConfig(dict[str, Any]):
    """The settings of an afterstate fit (a dict: stored as JSON in checkpoints and metadata).

    Keys and defaults: ``hidden`` (256, 256), ``activation`` relu, ``epochs`` 4,
    ``batch_size`` 1024 afterstates (about: batches are whole decisions), ``lr`` 1e-3
    (cosine decay to 0), ``augment`` True, ``seed`` 0, ``weight_decay`` 1e-5,
    ``centered`` True, ``abs_coef`` 0.1 (see the module docstring), ``extras`` None (or the
    name of an extra-input block the net reads after each encoding, :mod:`mulle_env.extras`),
    ``clone_coef`` 1.0 and ``clone_temperature`` 1.0 (points): the weight of the cloning loss on
    decisions labelled only by the move played (game records) and the temperature of its softmax;
    ``rank_coef`` 0.0 and ``rank_temperature`` 1.0 (points): the weight of a ranking term on
    value-labelled decisions (see :meth:`_Stepper._ranking`) and the temperature of its softmaxes;
    ``augment_symmetries`` 2: with ``augment``, each decision is shown as one of the first this many
    face symmetries (:data:`mulle_env.engine.cards.FACE_SYMMETRIES`), drawn uniformly; 2 is the
    identity or clubs and hearts swapped, as fits have always been made.
    """

    DEFAULTS: ClassVar[dict[str, Any]] = {
        "hidden": [256, 256], "activation": "relu", "epochs": 4, "batch_size": 1024, "lr": 1e-3,
        "augment": True, "seed": 0, "weight_decay": 1e-5, "centered": True, "abs_coef": 0.1, "extras": None,
        "clone_coef": 1.0, "clone_temperature": 1.0, "rank_coef": 0.0, "rank_temperature": 1.0,
        "augment_symmetries": 2,
    }

    def __init__(self, **kw: Any) -> None:
        unknown = set(kw) - set(self.DEFAULTS)
        if unknown:
            raise ValueError(f"unknown afterstate fit settings {sorted(unknown)}; known: {sorted(self.DEFAULTS)}")
        super().__init__({**self.DEFAULTS, **kw})
        self["hidden"] = [int(h) for h in self["hidden"]]
        for key in ("epochs", "batch_size"):
            if int(self[key]) < 1:
                raise ValueError(f"{key} must be >= 1, not {self[key]!r}")
        from mulle_env.engine.cards import FACE_SYMMETRIES

        self["augment_symmetries"] = int(self["augment_symmetries"])
        self["rank_coef"], self["rank_temperature"] = float(self["rank_coef"]), float(self["rank_temperature"])
        if not 1 <= self["augment_symmetries"] <= len(FACE_SYMMETRIES):
            raise ValueError(f"augment_symmetries must be from 1 to {len(FACE_SYMMETRIES)} (the face symmetries), "
                             f"not {self['augment_symmetries']!r}")
        if not (0 <= self["rank_coef"] < np.inf and 0 < self["rank_temperature"] < np.inf):
            raise ValueError(f"rank_coef must be a number >= 0 and rank_temperature one > 0, not "
                             f"{self['rank_coef']!r} and {self['rank_temperature']!r}")
        if self["activation"] not in ("relu", "tanh"):
            raise ValueError(f"activation must be relu or tanh, not {self['activation']!r}")
        if min(self["hidden"], default=1) < 1:
            raise ValueError("hidden widths must be positive")
        extras_size(self["extras"])


def move_rows(data: TeacherData) -> tuple[NDArray[np.intp], NDArray[np.float32], NDArray[np.int64]]:
    """``(decision, value, start)``: per afterstate row its decision and teacher value, and each decision's first row.

    Rows are stored decision by decision in the order of ``legal`` (its non-padding
    entries), so row ``start[i] + j`` is the move ``legal[i, j]``.
    """
    decision, value, start, _ = _rows(data)
    return decision, value, start


def _rows(data: TeacherData) -> tuple[NDArray[np.intp], NDArray[np.float32], NDArray[np.int64], NDArray[np.intp]]:
    """:func:`move_rows` plus each decision's number of rows (its legal moves)."""
    if "after_obs" not in data:
        raise ValueError("this teacher data holds no afterstates: generate it with afterstates=True "
                         "(mulle-expert data --afterstates; a Casino self-play data set gets them by replaying its "
                         "games, training.teacher.replay_afterstates); when several data sets are loaded together, "
                         "every one of them needs them")
    present = data["legal"] >= 0
    counts = present.sum(axis=1)
    if int(counts.sum()) != len(data["after_obs"]):
        raise ValueError(f"teacher data is inconsistent: {int(counts.sum())} labelled moves but "
                         f"{len(data['after_obs'])} afterstates")
    decision = np.repeat(np.arange(len(counts)), counts)
    value = data["values"][present]
    start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return decision, value, start, counts


def _build(cfg: Mapping[str, Any], width: int = OBS_SIZE) -> nn.Sequential:
    import torch

    torch.manual_seed(int(cfg["seed"]))
    return _mlp([width + extras_size(cfg.get("extras")), *cfg["hidden"], 1], cfg["activation"])


def to_policy(net: nn.Module, activation: str, metadata: dict[str, Any] | None = None, extras: str | None = None,
              ruleset: Ruleset | dict[str, Any] | None = None, game: str = "mulle") -> MLPPolicy:
    """The numpy afterstate :class:`MLPPolicy` equal to the torch ``net`` (which reads the block ``extras``),
    for the rules ``ruleset`` (default: the default rules) of ``game``."""
    lin = _linears(net)
    return MLPPolicy([m.weight.detach().cpu().numpy().T.copy() for m in lin],
                     [m.bias.detach().cpu().numpy().copy() for m in lin], activation, metadata or {},
                     head="afterstate", extras=extras, ruleset=ruleset, game=game)


def _load_numpy(net: nn.Module, policy: MLPPolicy, extras: str | None = None) -> bool:
    """Copy ``policy``'s weights into ``net`` (which reads the block ``extras``) if the shapes fit (False if not).

    A net may start from a policy whose extra inputs are a first part of its own (none,
    or an earlier block, :func:`mulle_env.extras.extends`): its first layer's
    weights on the inputs the policy lacks start at zero, so it starts as the same function.
    """
    import torch

    lin = _linears(net)
    if policy.head != "afterstate" or len(lin) != len(policy.weights):
        return False
    w0 = policy.weights[0]
    grows = extends(extras, policy.extras) and lin[0].weight.shape[1] > w0.shape[0]
    if any(tuple(m.weight.shape) != w.T.shape for m, w in list(zip(lin, policy.weights))[1:]):
        return False
    if tuple(lin[0].weight.shape) != w0.T.shape and not (grows and lin[0].weight.shape[0] == w0.shape[1]):
        return False
    with torch.no_grad():
        for m, w, b in zip(lin, policy.weights, policy.biases):
            # Zeros first, then the policy's columns: a grown first layer's new inputs stay at zero.
            m.weight.zero_()
            m.weight[:, : w.shape[0]] = torch.from_numpy(np.ascontiguousarray(w.T))
            m.bias.copy_(torch.from_numpy(b))
    return True


def _predict(net: nn.Module, obs16: NDArray[np.float16] | CodedRows, rows: NDArray[np.integer[Any]], batch: int = 8192,
             extras: str | None = None) -> NDArray[np.float64]:
    import torch

    out = np.empty(len(rows), dtype=np.float64)
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            r = rows[i : i + batch]
            x = with_extras(obs16[r], extras)  # float32, the block appended when there is one
            out[i : i + len(r)] = net(torch.from_numpy(x))[:, 0].numpy()
    return out * VALUE_SCALE


def evaluate(net: nn.Module, data: TeacherData, val_decisions: NDArray[np.integer[Any]], decision: NDArray[np.intp],
             value: NDArray[np.float32], start: NDArray[np.int64], extras: str | None = None) -> dict[str, float]:
    """Held-out figures: squared error (points^2), agreement with the teacher's best move, regret (points);
    on decisions of game records (no values) the share where the net picks the move played."""
    if len(val_decisions) == 0:
        return {}
    counts = (data["legal"][val_decisions] >= 0).sum(axis=1)
    rows = np.concatenate([np.arange(s, s + c) for s, c in zip(start[val_decisions], counts)])
    pred = _predict(net, data["after_obs"], rows, extras=extras)
    banked = data["after_banked"][rows].astype(np.float64)
    teacher = value[rows].astype(np.float64)
    ok = np.isfinite(teacher)
    mse = float(np.mean((pred[ok] - (teacher[ok] - banked[ok])) ** 2)) if ok.any() else float("nan")
    score = banked + pred
    agree = regret = 0.0
    n = cloned = copied = 0
    at = 0
    for d, c in zip(val_decisions, counts):
        s, t = score[at : at + c], teacher[at : at + c]
        at += c
        if not np.isfinite(t).any():
            # A decision of a game record: judged by whether the net picks the move the player made.
            cloned += 1
            copied += bool(data["legal"][d, int(np.argmax(s))] == data["action"][d])
            continue
        # Only moves the teacher valued can be judged: the net's choice among those.
        best = np.nanmax(t)
        pick = int(np.argmax(np.where(np.isfinite(t), s, -np.inf)))
        agree += bool(t[pick] == best)
        regret += float(best - t[pick])
        n += 1
    out: dict[str, float] = {"heldout_decisions": len(val_decisions)}
    if n:
        out.update(heldout_mse_points2=mse, heldout_agreement=agree / n, heldout_regret_points=regret / n)
    if cloned:
        out.update(heldout_played_agreement=copied / cloned, heldout_played_decisions=cloned)
    return out


def fit_afterstate(data: TeacherData | Source, out: str | Path, config: AfterstateConfig | None = None,
                   init_from: str | None = None, checkpoint: str | Path | None = None,
                   checkpoint_minutes: float = 5.0, metadata: dict[str, Any] | None = None, progress: bool = True,
                   log: Callable[[dict[str, Any]], None] | None = None, threads: int = 1,
                   ruleset: Ruleset | dict[str, Any] | None = None, game: str = "mulle") -> dict[str, Any]:
    """Fit an afterstate net to teacher ``data`` (with afterstates) and write the policy file ``out``.

    ``data`` is teacher data in memory (:func:`training.teacher.load`) or a
    :class:`training.stream.ShardSource`, read from disk a chunk at a time (bounded
    memory; with one chunk the same fit). ``init_from`` starts from an afterstate policy
    file of the same shape. With ``checkpoint`` the state is saved there every
    ``checkpoint_minutes`` and at each epoch's end, and a fit with the same settings and
    data resumes from it. ``ruleset`` (a :class:`mulle_env.Ruleset` or its dict) is
    the rules the data was played under, recorded in the policy file. ``game``: the game the
    data is of (:mod:`training.games`; the module docstring). Returns the last held-out figures
    (also stored in the file's metadata).
    """
    import torch

    from .games import train_game
    from .stream import MemorySource

    cfg = config or AfterstateConfig()
    tg = train_game(game)
    if tg.name != "mulle" and (cfg["extras"] or (cfg["augment"] and cfg["augment_symmetries"] > 2)):
        raise ValueError(f"extra inputs and face symmetries beyond the suit swap read Mulle's layout; a {tg.title} "
                         "afterstate fit takes neither (extras None, augment_symmetries at most 2)")
    torch.set_num_threads(threads)
    source: Source = cast("Source", data) if hasattr(data, "plan") else MemorySource(data)
    seed = int(cfg["seed"])
    train_dec, val_dec = held_out_split(source.games, 0.05, seed)
    val_dec = _cap_held_out(val_dec, source.games)
    is_train = np.zeros(source.decisions, dtype=bool)
    is_train[train_dec] = True
    n_rows = int(source.counts[train_dec].sum())
    if n_rows == 0:
        raise ValueError("no afterstates to learn from")
    rows_per_decision = max(1.0, float(source.counts.sum()) / max(1, source.decisions))
    net = _build(cfg, tg.obs_size)
    copied = False
    if init_from:
        init = load_policy(init_from)
        if init.game != tg.name:
            raise ValueError(f"--init-from {init_from}: a {init.game!r} net, and this fit's data are {tg.name!r}'s")
        copied = _load_numpy(net, init, cfg["extras"])
        if not copied:
            # Starting from random weights by accident would cost a whole fit: refuse instead.
            theirs = f"{init.head}, hidden {list(init.hidden_sizes)}, extra inputs {init.extras}"
            ours = f"afterstate, hidden {list(cfg['hidden'])}, extra inputs {cfg['extras']}"
            hint = f", and --extras {init.extras} or a later block" if init.extras else ""
            raise ValueError(f"--init-from {init_from}: its net ({theirs}) does not fit this fit's net ({ours}); "
                             f"give the same shapes{hint}")
    opt = torch.optim.AdamW(net.parameters(), lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))
    # Batches of whole decisions, about batch_size rows each.
    dec_per_batch = max(1, round(int(cfg["batch_size"]) / rows_per_decision))
    epochs = int(cfg["epochs"])
    plans = [_epoch_plan(source, is_train, e, seed, dec_per_batch) for e in range(epochs)]
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=sum(sum(st for _, st in pl) for pl in plans))
    # Settings at the values fits had before they existed stay out of the key, so that a checkpoint
    # written then still resumes.
    before = {k: AfterstateConfig.DEFAULTS[k] for k in ("rank_coef", "rank_temperature", "augment_symmetries")}
    described = {k: v for k, v in cfg.items()
                 if k not in before or (float(cfg["rank_coef"]) and k.startswith("rank_")) or v != before[k]}
    key = {"config": described, "rows": n_rows, "init_from": init_from, **source.describe()}
    held = source.subset(val_dec)
    held_dec = np.arange(len(val_dec))
    held_rows = _rows(held.data)
    step_fn = _Stepper(net, cfg, dec_per_batch, tg.name)
    loop = FitLoop(checkpoint, key, net, opt, sched, copied, epochs, [sum(st for _, st in pl) for pl in plans],
                   checkpoint_minutes, progress)
    try:
        while loop.epoch < epochs:
            epoch = loop.epoch
            net.train()
            done = 0
            for c, (chunk, steps) in enumerate(plans[epoch]):
                if loop.step >= done + steps:
                    done += steps
                    continue
                loaded = step_fn.load(source, chunk)
                local = np.flatnonzero(is_train[loaded.ids])
                rng = [seed, epoch] if len(plans[epoch]) == 1 else [seed, epoch, c]
                order = np.random.default_rng(rng).permutation(local)
                while loop.step < done + steps:
                    b = loop.step - done
                    # The flip coins of a batch are drawn from the epoch and the batch's number in the epoch.
                    loss = step_fn.loss(np.sort(order[b * dec_per_batch: (b + 1) * dec_per_batch]), epoch,
                                        loop.step)
                    loop.optimize(loss, show_loss=True)
                done += steps
            net.eval()
            loop.epoch_done(evaluate(net, held.data, held_dec, *held_rows[:3], cfg["extras"]), log)
    finally:
        loop.close()
    history, copied = loop.history, loop.copied
    meta = {"trainer": "training.afterfit", "config": dict(cfg), "decisions": source.decisions,
            "train_afterstates": n_rows, "heldout_decisions": len(val_dec), "init_from": init_from,
            "initialised": copied, "history": history, "fit_seconds": round(loop.elapsed, 1),
            **(metadata or {})}
    if tg.name != "mulle":  # only for other games, so Mulle's files keep their metadata
        meta["game"] = tg.name
    save_policy(to_policy(net, cfg["activation"], meta, cfg["extras"], ruleset, tg.name), out)
    return {**(history[-1] if history else {}), "fit_seconds": meta["fit_seconds"], "decisions": source.decisions}


def _cap_held_out(val_dec: NDArray[np.intp], games: NDArray[np.integer[Any]], cap: int | None = None
                  ) -> NDArray[np.intp]:
    """The held-out decisions cut to at most about ``cap`` (at a game's end), so the held-out set's memory is bounded.

    The decisions cut stay out of the training set too: they are only not measured.
    """
    from .stream import HELDOUT_CAP

    cap = HELDOUT_CAP if cap is None else cap
    if len(val_dec) <= cap:
        return val_dec
    cut = cap
    while cut < len(val_dec) and games[val_dec[cut]] == games[val_dec[cut - 1]]:
        cut += 1
    return val_dec[:cut]


def _epoch_plan(source: Source, is_train: NDArray[np.bool_], epoch: int, seed: int,
                dec_per_batch: int) -> list[tuple[list[int], int]]:
    """``[(chunk, steps)]`` of one epoch: each chunk's training decisions make whole batches (a lone chunk >= 1)."""
    chunks = source.plan(epoch, seed)
    out: list[tuple[list[int], int]] = []
    for chunk in chunks:
        n = int(is_train[source.decisions_of(chunk)].sum())
        steps = n // dec_per_batch
        out.append((chunk, max(1, steps) if len(chunks) == 1 else steps))
    return out


def _by_decision(seg: NDArray[np.intp], values: list[Tensor], fill: float
                 ) -> tuple[NDArray[np.intp], NDArray[np.intp], list[Tensor]]:
    """Each decision's moves in a row of a (decisions x moves) table, for rows grouped by the sorted ``seg``.

    Returns the decisions (their ``seg`` numbers, ascending), each row's table row, and one table
    per tensor of ``values`` (one entry a row), ``fill`` padding the decisions with fewer moves.
    """
    import torch

    col = np.arange(len(seg)) - np.searchsorted(seg, seg)
    dec_ids, dec_row = np.unique(seg, return_inverse=True)
    at = (torch.from_numpy(dec_row), torch.from_numpy(col))
    shape = (len(dec_ids), int(col.max()) + 1)
    return dec_ids, dec_row, [torch.full(shape, fill).index_put(at, v) for v in values]


class _Stepper:
    """The loss of one batch of decisions of the loaded chunk (regression on values, cloning of choices)."""

    #: The chunk :meth:`load` read last.
    chunk: Chunk

    def __init__(self, net: nn.Module, cfg: AfterstateConfig, dec_per_batch: int, game: str = "mulle") -> None:
        from .bc import suit_swap_permutations
        from .games import train_game

        self.net, self.cfg = net, cfg
        count = cfg["augment_symmetries"] if cfg["augment"] else 1
        # Two symmetries keep the coin of the fits made before there was a choice (same draws, same nets).
        swap = suit_swap_permutations if game == "mulle" else train_game(game).suit_swap
        self.obs_perm = swap()[0] if count == 2 else None
        self.sym_cols = face_symmetry_columns(count) if count > 2 else None
        self._key: tuple[int, tuple[int, ...]] | None = None

    def load(self, source: Source, chunk: list[int]) -> Chunk:
        """Load ``chunk`` of ``source`` unless it is the one loaded (a lone chunk is read once)."""
        key = (id(source), tuple(chunk))
        if key != self._key:
            self.chunk = None  # type: ignore[assignment]  # free the previous chunk before reading the next
            self.chunk = source.load(chunk)
            self.decision, self.value, self.start, self.counts = _rows(self.chunk.data)
            self.labelled = np.isfinite(self.value)
            self.target = ((self.value - self.chunk.data["after_banked"]) / VALUE_SCALE).astype(np.float32)
            self.weighted = bool((self.chunk.weight != 1).any())
            self._key = key
        return self.chunk

    def loss(self, decs: NDArray[np.integer[Any]], epoch: int, b: int) -> Tensor:
        """The loss of the decisions ``decs`` (sorted indices into the loaded chunk); ``b`` numbers the batch."""
        import torch

        cfg, chunk = self.cfg, self.chunk
        every = np.concatenate([np.arange(self.start[i], self.start[i] + self.counts[i]) for i in decs])
        cloned = chunk.choice[decs]
        # Decisions labelled by values learn their labelled moves; those labelled by a choice need every move.
        rows = every if cloned.any() else every[self.labelled[every]]
        # Compact rows (teacher.CodedRows) decode to float32 already: no second copy.
        x = np.asarray(chunk.data["after_obs"][rows], dtype=np.float32)
        seg_np = np.searchsorted(decs, self.decision[rows])
        if self.sym_cols is not None:
            # One symmetry per decision: a decision's moves are compared in one position.
            pick = np.random.default_rng([int(cfg["seed"]), epoch, b]).integers(0, len(self.sym_cols), len(decs))
            x = np.take_along_axis(x, self.sym_cols[pick[seg_np]], axis=1)
        elif self.obs_perm is not None:
            # One coin per decision: a decision's moves are compared in one position.
            flip = np.random.default_rng([int(cfg["seed"]), epoch, b]).random(len(decs)) < 0.5
            swap = flip[seg_np]
            x[swap] = x[swap][:, self.obs_perm]
        # The extra inputs are computed after the swap, so they describe the position shown.
        x = with_extras(x, cfg["extras"])
        pred = self.net(torch.from_numpy(x))[:, 0]
        # Squared errors in (points / 10)^2: the scale keeps the loss near 1.
        scale = (VALUE_SCALE / 10.0) ** 2
        lab = self.labelled[rows]
        loss = torch.zeros(())
        if lab.any():
            sel = torch.from_numpy(np.flatnonzero(lab)) if not lab.all() else None
            p = pred if sel is None else pred[sel]
            err = p - torch.from_numpy(self.target[rows[lab]])
            w = torch.from_numpy(self.chunk.weight[decs][seg_np[lab]]) if self.weighted else None
            loss = self._regression(err, seg_np[lab], len(decs), w) * scale
            if float(cfg["rank_coef"]):
                loss = loss + self._ranking(p, rows[lab], seg_np[lab], w)
        if cloned.any():
            loss = loss + self._cloning(pred, rows, seg_np, decs, cloned)
        return loss

    def _regression(self, err: Tensor, seg_np: NDArray[np.intp], n_dec: int, w: Tensor | None) -> Tensor:
        import torch

        def mean(v: Tensor) -> Tensor:
            return torch.mean(v) if w is None else torch.sum(w * v) / torch.sum(w)

        if self.cfg["centered"]:
            seg = torch.from_numpy(seg_np)
            n_seg = torch.zeros(n_dec).index_add_(0, seg, torch.ones(len(seg_np)))
            centre = torch.zeros(n_dec).index_add_(0, seg, err) / n_seg.clamp(min=1)
            return mean((err - centre[seg]) ** 2) + float(self.cfg["abs_coef"]) * mean(err**2)
        return mean(err**2)

    def _ranking(self, pred: Tensor, rows: NDArray[np.integer[Any]], seg_np: NDArray[np.intp],
                 w: Tensor | None) -> Tensor:
        """KL divergence from the teacher's move distribution to the net's, per value-labelled decision.

        Both are softmaxes of a decision's move values (banked points plus the points to come)
        at ``rank_temperature`` points. The regression weighs an error on a move the teacher
        rates ten points down as much as one on its best two moves; a player only needs the
        order at the top right, and this term spends the net's capacity there. ``w`` weighs
        the decisions (rows grouped by ``seg_np``, which is sorted); a decision with fewer than
        two labelled moves has no order to learn and stays out of the mean.
        """
        import torch

        data = self.chunk.data
        temp = float(self.cfg["rank_temperature"])
        banked = data["after_banked"][rows].astype(np.float32)
        net = (torch.from_numpy(banked / VALUE_SCALE) + pred) * (VALUE_SCALE / temp)
        teacher = torch.from_numpy((self.value[rows] / temp).astype(np.float32))
        # Padding far below any move (not -inf: 0 * -inf would be nan) gets probability 0 on both sides.
        dec_ids, dec_row, (q, t) = _by_decision(seg_np, [net, teacher], -1e9)
        p = torch.softmax(t, dim=1)
        kl = torch.sum(p * (torch.log_softmax(t, dim=1) - torch.log_softmax(q, dim=1)), dim=1)
        ranked = torch.from_numpy(np.bincount(dec_row, minlength=len(dec_ids)) >= 2)
        wd = torch.ones(len(dec_ids)) if w is None else torch.zeros(len(dec_ids)).index_put(
            (torch.from_numpy(dec_row),), w)
        wd = wd * ranked
        if not bool(ranked.any()):
            return torch.zeros(())
        return float(self.cfg["rank_coef"]) * torch.sum(wd * kl) / torch.sum(wd)

    def _cloning(self, pred: Tensor, rows: NDArray[np.integer[Any]], seg_np: NDArray[np.intp],
                 decs: NDArray[np.integer[Any]], cloned: NDArray[np.bool_]) -> Tensor:
        """Cross-entropy of the move played among each cloned decision's moves, scored as ``learned`` scores them."""
        import torch

        data = self.chunk.data
        local = np.flatnonzero(cloned[seg_np])
        seg = seg_np[local]
        score = (torch.from_numpy(data["after_banked"][rows[local]].astype(np.float32)) / VALUE_SCALE
                 + pred[torch.from_numpy(local)]) * (VALUE_SCALE / float(self.cfg["clone_temperature"]))
        dec_ids, _, (table,) = _by_decision(seg, [score], float("-inf"))
        legal = data["legal"][decs[dec_ids]]
        target = np.argmax(legal == data["action"][decs[dec_ids]][:, None], axis=1)
        ce = torch.nn.functional.cross_entropy(table, torch.from_numpy(target), reduction="none")
        w = torch.from_numpy(self.chunk.weight[decs[dec_ids]])
        return float(self.cfg["clone_coef"]) * torch.sum(w * ce) / torch.sum(w)
