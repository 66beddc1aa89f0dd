"""Registering ``Mulle-v0`` and ``Casino-v0`` with Gymnasium without importing Gymnasium.

``import mulle_env.engine`` runs ``mulle_env/__init__.py`` first, and the engine must not
load anything outside the standard library (Gymnasium and numpy take ~360 ms to import).
Gymnasium 1.x has no plugin entry points, so the registration waits for Gymnasium
instead: if its registry is already imported it happens at once; otherwise a one-shot
import hook registers the env the moment ``gymnasium.envs.registration`` finishes
loading. Either way ``gym.make("Mulle-v0")`` works after ``import mulle_env``, in any
import order, and ``import mulle_env.engine`` alone imports no third-party module.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

ENV_ID = "Mulle-v0"
ENTRY_POINT = "mulle_env.gym_env:MulleEnv"
#: ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``: the batched env.
VECTOR_ENTRY_POINT = "mulle_env.vector_env:MulleVectorEnv"
#: Every env id this package registers: its single env's entry point and the spec's kwargs (the game its envs
#: play, a name of :data:`mulle_env.games.GAMES`, and the defaults that differ from Mulle's). Every game's envs
#: are the same core and faces, given that game's object (``CasinoEnv`` is ``MulleEnv`` with Casino's defaults
#: and docstring); the vector entry point is :data:`VECTOR_ENTRY_POINT` for all. A new game adds its line here.
ENV_IDS: dict[str, tuple[str, dict[str, Any]]] = {
    ENV_ID: (ENTRY_POINT, {}),
    "Casino-v0": ("mulle_env.gym_env:CasinoEnv", {"game": "casino", "score_scale": 11.0}),
}
_REGISTRY_MODULE = "gymnasium.envs.registration"


def register_with(registration: ModuleType) -> None:
    """Register every env of :data:`ENV_IDS` in the Gymnasium registry module ``registration`` (once)."""
    for env_id, (entry_point, kwargs) in ENV_IDS.items():
        if env_id not in registration.registry:
            # The entry points are strings and the game a name, so that registering imports nothing.
            registration.register(id=env_id, entry_point=entry_point, vector_entry_point=VECTOR_ENTRY_POINT,
                                  kwargs=dict(kwargs))


class _Loader(importlib.abc.Loader):
    """Runs the real loader of Gymnasium's registry module, then registers the env."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        register_with(module)


class _Hook(importlib.abc.MetaPathFinder):
    """One-shot finder: wraps the loader of ``gymnasium.envs.registration`` when it is imported."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if name != _REGISTRY_MODULE:
            return None
        _remove_hook()
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader)
        return spec


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Hook)]


def register_envs() -> None:
    """Make ``gym.make("Mulle-v0")`` (every id of :data:`ENV_IDS`) work, now or as soon as Gymnasium is imported."""
    registration = sys.modules.get(_REGISTRY_MODULE)
    if registration is not None:
        register_with(registration)
    elif not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())
