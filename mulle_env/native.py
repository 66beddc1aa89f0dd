"""The env layer's compiled module, chosen by the engine's one backend switch.

``mulle_env._native`` (mulle_env/csrc/) runs what the environments do in C, on the engine
core's C API (its capsule): the batched stepper and its thread pool
(:mod:`mulle_env.stepper`), the extra-input blocks (:mod:`mulle_env.extras`) and the
random playout (:func:`mulle_env.stepper.random_playout`). It follows
:data:`mulle_env.engine.BACKEND` like every compiled part of the project: on the compiled
core it must be there (built by ``pip install -e .`` beside the core, speaking the core's
ABI); on the Python engine it is not used. A missing or stale module next to a compiled
core is refused with a message that says to rebuild, never silently replaced by the
Python code (the same seed would then run at another speed, and the fault would hide).

:data:`NATIVE` is the module, or ``None`` on the Python engine.
"""

from __future__ import annotations

from types import ModuleType

from .engine import BACKEND

__all__ = ["NATIVE"]


def _load() -> ModuleType | None:
    if BACKEND != "c":
        return None
    try:
        from . import _native
    except ImportError as exc:
        raise ImportError(
            f"the engine runs on its compiled core, but the env layer's compiled module mulle_env._native cannot be "
            f"used ({exc}); rebuild both with pip install -e . (or set MULLE_ENGINE=python to run everything on "
            "the Python reference)"
        ) from exc
    return _native


#: ``mulle_env._native`` when the engine runs on its compiled core, else ``None``.
NATIVE: ModuleType | None = _load()
