"""``learned`` at Casino: a Casino policy file played with numpy alone (no torch).

The agent encodes its view with the encoder Casino's environments use
(:func:`mulle_env.games.casino.encode_view`, 456 floats), computes the logits of the legal
moves only (a move's index among the net's 504 outputs is its id,
:data:`mulle_env.casino.MOVES`) and plays the best one, or samples from the masked softmax
with ``sample=true``. The file must be a Casino net (its ``game`` key,
:mod:`agents.learned.policy`): ``mulle-train ppo --game casino`` and ``mulle-train expert
--game casino`` write them. Without a path it plays the shipped Casino net,
:data:`DEFAULT_CASINO_POLICY_PATH` (made by ``mulle-train expert --game casino``; how, and how
strong it is: docs/casino.md, "The learned agent").

>>> import agents
>>> bot = agents.make("learned", game="casino")                                # the shipped net
>>> bot = agents.make("learned:path=runs/casino/best.npz", game="casino")  # doctest: +SKIP
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..base import Agent
from .agent import cached_policy, pick, policy_version
from .policy import MLPPolicy, check_game

__all__ = ["CasinoLearnedAgent", "DEFAULT_CASINO_POLICY_PATH", "NO_SHIPPED_NET"]

#: The shipped Casino net, played by ``learned`` at Casino without a path (and searched by Casino's ``netsearch``).
DEFAULT_CASINO_POLICY_PATH = str(Path(__file__).resolve().parents[1] / "data" / "casino_learned.npz")

#: Why ``learned`` without a path cannot play Casino when the shipped net's file is missing (an install without
#: the package data).
NO_SHIPPED_NET = (
    f"the shipped Casino net {DEFAULT_CASINO_POLICY_PATH} is missing (an install without agents/data): name a "
    "Casino policy file, learned:path=FILE (mulle-train ppo --game casino or mulle-train expert --game casino make "
    "one), or reinstall mulle-env")


class CasinoLearnedAgent(Agent):
    """A Casino logits net from a ``.npz`` policy file (``learned:path=FILE`` at ``--game casino``).

    Args:
        path: The Casino policy ``.npz`` file; empty means the shipped net (:data:`DEFAULT_CASINO_POLICY_PATH`).
        sample: Sample from the softmax over the legal moves (using the game's ``rng``)
            instead of playing the most likely one.
        temperature: Softmax temperature when sampling.

    Raises a ``ValueError`` at construction when the shipped net is asked for and its file is missing, and
    :class:`~agents.learned.policy.PolicyFileError` /
    :class:`~agents.learned.policy.PolicyGameError` for a bad file or a Mulle net.
    Its :attr:`~agents.base.Agent.version` is ``"1+"`` and the policy's fingerprint.
    """

    name = "learned"
    spec = "learned"
    games = ("casino",)
    #: The playing code's own version; :func:`~agents.learned.agent.policy_version` appends the policy's fingerprint.
    code_version = "1"

    def __init__(self, path: str = "", sample: bool = False, temperature: float = 1.0) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, not {temperature!r}")
        if not path and not Path(DEFAULT_CASINO_POLICY_PATH).is_file():
            raise ValueError(NO_SHIPPED_NET)
        self.path = str(path) if path else DEFAULT_CASINO_POLICY_PATH
        self._setup(cached_policy(self.path), sample, temperature, f"policy file {self.path!r}")

    @classmethod
    def from_policy(cls, policy: MLPPolicy, sample: bool = False, temperature: float = 1.0) -> CasinoLearnedAgent:
        """An agent around an in-memory Casino policy (training snapshots, evaluations and tests)."""
        agent = cls.__new__(cls)
        agent.path = "<memory>"
        agent._setup(policy, sample, temperature, "the policy")
        return agent

    def _setup(self, policy: MLPPolicy, sample: bool, temperature: float, where: str) -> None:
        check_game(policy, "casino", where)  # a Mulle net: refused, naming its game
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, not {temperature!r}")
        self.policy = policy
        self.sample = bool(sample)
        self.temperature = float(temperature)
        self.version = policy_version(self.code_version, policy)
        self._obs = np.empty(policy.obs_size, dtype=np.float32)
        self._checked: Any = None

    def check_ruleset(self, ruleset: Any) -> None:
        """Refuse ``gather_all=False`` (moves without ids have no logit) and rules the net was not trained for."""
        if not getattr(ruleset, "gather_all", True):
            raise ValueError(
                "a Casino logits net writes one logit per move id, and under gather_all=False moves name what they "
                "take and have no ids: play it under gather_all=True (the default)")
        self.policy.check_ruleset(ruleset)

    def act(self, view: Any, legal_moves: Sequence[Any], rng: random.Random) -> Any:
        """The policy's choice among ``legal_moves`` (argmax, or a sample with ``sample=true``)."""
        from mulle_env.games.casino import encode_view

        if view.ruleset != self._checked:
            # Tools that do not ask check_ruleset up front still never see a net play rules it does not know.
            self.check_ruleset(view.ruleset)
            self._checked = view.ruleset
        if len(legal_moves) == 1:
            return legal_moves[0]
        obs = encode_view(view, out=self._obs)
        z = self.policy.legal_logits(obs, [m.id for m in legal_moves])
        return legal_moves[pick(z, self.sample, self.temperature, rng)]

    def __getstate__(self) -> dict[str, Any]:
        # The weights travel with the agent (pickling for arena workers must not need the file).
        return self.__dict__.copy()
