"""``learned``: plays a trained policy file with numpy alone (no torch).

The agent encodes its view with the same encoder the environments use
(:func:`mulle_env.observation.encode_view`), scores the legal actions (their indices
in the shared codec are the moves' ids) with the MLP of :mod:`agents.learned.policy`,
and plays the best one, or samples from the masked softmax with ``sample=true``.
A file's value head (policy files of version 2 may carry one, for ``netsearch``) is
not used here: one forward pass of the policy is the whole decision.

An *afterstate* policy file (``head="afterstate"``, version 3; the shipped one is)
scores moves by the positions they leave instead: the agent encodes the afterstate of
every legal move (:func:`agents.learned.afterstate.encode_afterstates`), runs them
through the net in one batched forward pass and plays the move with the highest
``banked points + net x VALUE_SCALE`` (or samples ``softmax(score / temperature)``,
the temperature in points).
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from mulle_env.engine import Move, PlayerView, Ruleset
from mulle_env.observation import OBS_DTYPE, OBS_SIZE, encode_view

from ..base import Agent
from .afterstate import afterstate_scores
from .policy import MLPPolicy, check_game, load_policy

__all__ = ["DEFAULT_POLICY_PATH", "LearnedAgent", "cached_policy", "pick", "policy_version"]

#: The shipped policy (trained with mulle-train; see docs/learning.md).
DEFAULT_POLICY_PATH = str(Path(__file__).resolve().parents[1] / "data" / "learned.npz")

_CACHE: dict[tuple[str, int, int], MLPPolicy] = {}


def cached_policy(path: str) -> MLPPolicy:
    """:func:`load_policy` once per file version (path, size, mtime) in this process."""
    st = os.stat(path) if os.path.isfile(path) else None
    key = (os.path.abspath(path), st.st_size if st else -1, st.st_mtime_ns if st else -1)
    pol = _CACHE.get(key)
    if pol is None:
        pol = load_policy(path)  # raises PolicyFileError for a missing or bad file
        _CACHE[key] = pol
    return pol


def policy_version(code_version: str, policy: MLPPolicy) -> str:
    """The agent version ``"<code version>+<policy fingerprint>"`` of an agent playing ``policy``."""
    return f"{code_version}+{policy.fingerprint()}"


def pick(z: NDArray[np.floating[Any]], sample: bool, temperature: float, rng: random.Random) -> int:
    """The index of the move a net plays from its legal moves' scores ``z``: the argmax (the first on a tie),
    or with ``sample`` a draw from ``softmax(z / temperature)`` by one number of ``rng``."""
    if not sample:
        return int(np.argmax(z))
    z = (z - z.max()) / temperature
    p = np.exp(z.astype(np.float64))
    cum = np.cumsum(p)
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return min(i, len(z) - 1)


class LearnedAgent(Agent):
    """A policy network from a ``.npz`` file (default: the shipped afterstate net agents/data/learned.npz).

    Args:
        path: The policy ``.npz`` file; empty means the shipped policy.
        sample: Sample from the softmax over legal actions (using the game's ``rng``)
            instead of playing the most likely action.
        temperature: Softmax temperature when sampling.

    Raises :class:`agents.learned.policy.PolicyFileError` (a ``ValueError``) at
    construction for a missing, corrupt or incompatible file.

    Its :attr:`~agents.base.Agent.version` is ``"1+"`` and the policy's
    :meth:`~agents.learned.policy.MLPPolicy.fingerprint`: the spec ``learned`` names
    whatever file ships, so a retrained shipped policy is another version of the agent.
    """

    name = "learned"
    spec = "learned"
    games = ("mulle",)  # every policy file so far reads Mulle's observation
    #: The playing code's own version; :func:`policy_version` appends the policy's fingerprint.
    code_version = "1"

    def __init__(self, path: str = "", sample: bool = False, temperature: float = 1.0) -> None:
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, not {temperature!r}")
        self.path = str(path) if path else DEFAULT_POLICY_PATH
        self.sample = bool(sample)
        self.temperature = float(temperature)
        self.policy = cached_policy(self.path)
        check_game(self.policy, "mulle", f"policy file {self.path!r}")  # a Casino net: refused, naming its game
        self.version = policy_version(self.code_version, self.policy)
        self._obs = np.empty(OBS_SIZE, dtype=OBS_DTYPE)
        self._checked: Ruleset | None = None

    @classmethod
    def from_policy(cls, policy: MLPPolicy, sample: bool = False, temperature: float = 1.0) -> LearnedAgent:
        """An agent around an in-memory policy (used for training snapshots and tests)."""
        check_game(policy, "mulle", "the policy")
        agent = cls.__new__(cls)
        agent.path = "<memory>"
        agent.sample = sample
        agent.temperature = float(temperature)
        agent.policy = policy
        agent.version = policy_version(cls.code_version, policy)
        agent._obs = np.empty(OBS_SIZE, dtype=OBS_DTYPE)
        agent._checked = None
        return agent

    def check_ruleset(self, ruleset: Ruleset) -> None:
        """Refuse rules the net was not trained for, and ``forced_capture=False`` for a logits net.

        A net records the ruleset it was trained for (files without one were trained for
        the default rules); under other rules it would play a game it never saw, so it
        refuses with :class:`~agents.learned.policy.RulesetMismatchError` (a ``ValueError``)
        naming the flags. A logits net's fixed action space also has no index for the
        capture choices of ``forced_capture=False``; an afterstate net scores positions and
        plays any rules it was trained for.
        """
        forced = getattr(ruleset, "forced_capture", True)
        if not forced and (self.policy.head == "logits" or self.policy.ruleset["forced_capture"]):
            raise ValueError(
                "the learned policy's fixed action space needs forced_capture=True "
                "(with forced_capture=false a capture names the cards it takes, which has no action index"
                + (")" if self.policy.head == "logits" else
                   "; this afterstate net was trained with forced captures: train one with "
                   "--rule forced_capture=false)")
            )
        self.policy.check_ruleset(ruleset)

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The policy's choice among ``legal_moves`` (argmax, or a sample with ``sample=true``)."""
        if view.ruleset != self._checked:
            # Tools that do not ask check_ruleset up front still never see a net play rules it does not know.
            self.check_ruleset(view.ruleset)
            self._checked = view.ruleset
        if len(legal_moves) == 1:
            return legal_moves[0]
        ids = [m.id for m in legal_moves]
        z: NDArray[np.floating[Any]]  # float64 scores or float32 logits
        if self.policy.head == "afterstate":
            z = afterstate_scores(self.policy, view, legal_moves, out=self._after_buffer(len(legal_moves)))
        else:
            obs = encode_view(view, out=self._obs)
            z = self.policy.legal_logits(obs, cast("list[int]", ids))  # no None: refused above
        return legal_moves[pick(z, self.sample, self.temperature, rng)]

    def _after_buffer(self, n: int) -> NDArray[np.float32]:
        buf = self.__dict__.get("_after")
        if buf is None or buf.shape[0] < n:
            buf = self._after = np.empty((max(n, 32), OBS_SIZE), dtype=OBS_DTYPE)
        return buf

    def __getstate__(self) -> dict[str, Any]:
        # The weights travel with the agent (pickling for arena workers must not need the file).
        return self.__dict__.copy()


