"""The learned agent: a network (an afterstate net distilled from search, or a PPO policy), played with numpy alone.

Importing this package needs only numpy (torch and sb3-contrib are for training:
``pip install "mulle-env[train]"`` and ``mulle-train``, see docs/learning.md).

>>> from agents.learned import LearnedAgent
>>> bot = LearnedAgent()             # the shipped policy, agents/data/learned.npz
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # to a type checker the lazy exports below are these imports
    from .afterstate import encode_afterstates
    from .agent import DEFAULT_POLICY_PATH, LearnedAgent
    from .casino import CasinoLearnedAgent
    from .policy import FORMAT_VERSION, HEADS, MLPPolicy, PolicyFileError, load_policy, save_policy

# Lazy exports: ``mulle-train`` (training.ppo) imports this package, and must be
# able to report a Ctrl-C cleanly while numpy and the policy code load.
_EXPORTS = {
    "DEFAULT_POLICY_PATH": ".agent", "LearnedAgent": ".agent", "FORMAT_VERSION": ".policy",
    "MLPPolicy": ".policy", "PolicyFileError": ".policy", "load_policy": ".policy", "save_policy": ".policy",
    "HEADS": ".policy", "encode_afterstates": ".afterstate", "CasinoLearnedAgent": ".casino",
}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'agents.learned' has no attribute {name!r}")
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value
        return value

def register() -> None:
    """Kept compatibility name (0.1.0): ``learned`` is a built-in agent now, registered with the others.

    It did register ``learned`` by hand, e.g. as an arena worker-init hook
    (``--worker-init agents.learned:register``); that hook keeps working and has nothing to do.
    """


__all__ = [
    "CasinoLearnedAgent",
    "DEFAULT_POLICY_PATH",
    "FORMAT_VERSION",
    "HEADS",
    "LearnedAgent",
    "MLPPolicy",
    "PolicyFileError",
    "encode_afterstates",
    "load_policy",
    "register",
    "save_policy",
]

