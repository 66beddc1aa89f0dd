"""The agents' compiled module, chosen by the engine's one backend switch.

``agents._native`` (agents/csrc/) runs what agents decide in C: pimc's rollouts and their
playout policies. (The afterstate encodings the learned agents read are the env layer's,
:mod:`mulle_env.afterstates`.) It follows
:data:`mulle_env.engine.BACKEND` like every compiled part of the project: on the compiled
core it must be there (built by ``pip install -e .`` beside the core, speaking the core's
ABI); on the Python engine it is not used. A missing or stale module next to a compiled
core is refused with a message that says to rebuild, never silently replaced by the Python
code (which would make the same seed play differently fast and slowly, and hide the fault).

:data:`NATIVE` is the module, or ``None`` on the Python engine. The Python code beside each
function (:mod:`agents.rollout`) is the reference the golden playthroughs check it against.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mulle_env.engine import BACKEND, GameState

__all__ = ["NATIVE", "NativeModule"]


class NativeModule(Protocol):
    """What the agents call in ``agents._native``; mypy checks the module (agents/_native.pyi) against it."""

    def rollout_values(self, root: GameState, candidates: Sequence[int | tuple[int, Sequence[int]] | None], player: int,
                       policy: int, plies: int, stop: int, root_set: int, root_deal: int, seed: int, /
                       ) -> list[float]:
        """Per candidate, the root with it played and rolled out (:func:`agents.rollout.rollout_values`)."""


def _load() -> NativeModule | None:
    if BACKEND != "c":
        return None
    try:
        from . import _native
    except ImportError as exc:
        raise ImportError(
            f"the engine runs on its compiled core, but the agents' compiled module agents._native cannot be used "
            f"({exc}); rebuild both with pip install -e . (or set MULLE_ENGINE=python to run everything on the "
            "Python reference)"
        ) from exc
    return _native


#: ``agents._native`` when the engine runs on its compiled core, else ``None``.
NATIVE: NativeModule | None = _load()
