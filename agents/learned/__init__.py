"""The learned agent: a policy trained with masked PPO, played with numpy alone.

Importing this package needs only numpy (torch and sb3-contrib are for training:
``pip install "mulle-env[train]"`` and ``mulle-train``, see docs/learning.md).

>>> from agents.learned import LearnedAgent
>>> bot = LearnedAgent()             # the shipped policy, agents/data/learned.npz
"""

from .agent import DEFAULT_POLICY_PATH, LearnedAgent
from .policy import FORMAT_VERSION, MLPPolicy, PolicyFileError, load_policy, save_policy

__all__ = [
    "DEFAULT_POLICY_PATH",
    "FORMAT_VERSION",
    "LearnedAgent",
    "MLPPolicy",
    "PolicyFileError",
    "load_policy",
    "register",
    "save_policy",
]


def register() -> None:
    """Register ``learned`` in the agent registry (for processes where agents.builtin does not yet).

    Usable as an arena worker-init hook: ``agents.learned:register``.
    """
    from ..registry import _REGISTRY
    from ..registry import register as _register

    if "learned" not in _REGISTRY:
        _register("learned", LearnedAgent,
                  "a policy trained with masked PPO, played with numpy (learned:path=<file.npz>)")
