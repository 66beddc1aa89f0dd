"""The resumable bookkeeping shared by the fits (:mod:`.distill`, :mod:`.afterfit`).

A fit is epochs of steps. :class:`FitLoop` holds where it is (epoch, step in the
epoch), the per-epoch figures and the time spent, shows a progress bar, and saves all
of it with the model, optimizer and schedule to a checkpoint every few minutes and at
every epoch's end (written to a temporary name and renamed, so a checkpoint is whole
or absent). A fit started again with the same ``key`` (its settings and a digest of
its data) resumes from the checkpoint to the same weights; another key starts afresh.
The DMC learner (:mod:`.dmc`), whose unit is a round of games rather than an epoch,
uses the two pieces underneath: :func:`gradient_step` and :func:`save_checkpoint`.
torch is imported only inside the functions that need it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch and tqdm are imported where they are used; to mypy they are Any (pyproject.toml)
    from torch import Tensor, nn, optim
    from tqdm import tqdm

__all__ = ["FitLoop", "gradient_step", "save_checkpoint"]


def gradient_step(net: nn.Module, opt: optim.Optimizer, loss: Tensor, max_norm: float = 1.0) -> None:
    """One optimizer step of ``opt`` on ``loss``, the gradients of ``net`` clipped to norm ``max_norm``."""
    import torch

    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    opt.step()


def save_checkpoint(state: dict[str, Any], path: Path) -> None:
    """``torch.save`` to a temporary name, then rename: a checkpoint on disk is whole or absent."""
    import torch

    from mulle_env.util.files import replacing

    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp:
        torch.save(state, tmp)


class FitLoop:
    """Epoch and step counters, history, elapsed time, progress bar and checkpoints of one fit.

    Args:
        checkpoint: Checkpoint file, or ``None`` for none.
        key: JSON-able description of the fit; a checkpoint with another key is ignored.
        net, opt, sched: The torch module, optimizer and LR schedule to save and restore.
        copied: What the fit copied from an ``init_from`` file (kept in the checkpoint).
        steps_per_epoch: Steps in one epoch, or a list of each epoch's steps; ``epochs`` epochs in all.
        checkpoint_minutes: Interval between checkpoints within an epoch.
        progress: Show a tqdm bar.
    """

    def __init__(self, checkpoint: str | Path | None, key: dict[str, Any], net: nn.Module, opt: optim.Optimizer,
                 sched: optim.lr_scheduler.LRScheduler, copied: Any, epochs: int,
                 steps_per_epoch: int | list[int] | tuple[int, ...], checkpoint_minutes: float = 5.0,
                 progress: bool = True) -> None:
        self.path = Path(checkpoint) if checkpoint else None
        self.key = json.loads(json.dumps(key))
        self.net, self.opt, self.sched = net, opt, sched
        self.copied = copied
        self.epochs = epochs
        self.steps = (list(steps_per_epoch) if isinstance(steps_per_epoch, (list, tuple))
                      else [int(steps_per_epoch)] * epochs)
        self.interval = 60 * checkpoint_minutes
        self.epoch = self.step = 0
        self.history: list[dict[str, Any]] = []
        self._before = 0.0
        if self.path is not None and self.path.is_file():
            import torch

            state = torch.load(self.path, weights_only=False)
            if state.get("key") == self.key:
                net.load_state_dict(state["net"])
                opt.load_state_dict(state["opt"])
                sched.load_state_dict(state["sched"])
                self.epoch, self.step = state["epoch"], state["step"]
                self.history, self._before = state["history"], state["elapsed"]
                self.copied = state.get("copied", copied)
        self.bar: tqdm | None = None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=sum(self.steps), initial=sum(self.steps[: self.epoch]) + self.step,
                            unit="batch", desc="fit", dynamic_ncols=True)
        self._t0 = self._last = time.monotonic()

    @property
    def elapsed(self) -> float:
        """Seconds spent fitting, over every run that resumed this fit."""
        return self._before + time.monotonic() - self._t0

    def save(self) -> None:
        """Write the checkpoint now (nothing without a checkpoint file)."""
        if self.path is None:
            return
        save_checkpoint({"key": self.key, "net": self.net.state_dict(), "opt": self.opt.state_dict(),
                         "sched": self.sched.state_dict(), "epoch": self.epoch, "step": self.step,
                         "history": self.history, "elapsed": self.elapsed, "copied": self.copied}, self.path)
        self._last = time.monotonic()

    def optimize(self, loss: Tensor, max_norm: float = 1.0, show_loss: bool = False) -> None:
        """One optimizer step on ``loss`` (gradients clipped to ``max_norm``), then :meth:`step_done`."""
        gradient_step(self.net, self.opt, loss, max_norm)
        self.sched.step()
        self.step_done(loss if show_loss else None)

    def step_done(self, loss: Tensor | None = None) -> None:
        """One step finished: count it, show it (and now and then ``loss``), checkpoint when it is time."""
        self.step += 1
        if self.bar:
            self.bar.update(1)
            if loss is not None and self.step % 200 == 0:
                self.bar.set_postfix(loss=f"{float(loss.detach()):.3f}")
        if self.path is not None and time.monotonic() - self._last > self.interval:
            self.save()

    def epoch_done(self, figures: dict[str, float], log: Callable[[dict[str, Any]], None] | None = None) -> None:
        """An epoch finished with these held-out ``figures``: record, checkpoint, then report them."""
        self.history.append({"epoch": self.epoch + 1, **figures})
        self.epoch += 1
        self.step = 0
        self.save()
        if log is not None:
            log(self.history[-1])

    def close(self) -> None:
        """Close the progress bar."""
        if self.bar:
            self.bar.close()
