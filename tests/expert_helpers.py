"""Helpers shared by the expert-iteration tests: small random policy files."""

from __future__ import annotations

import itertools

import numpy as np

from agents.learned import MLPPolicy
from mulle_env.codec import NUM_ACTIONS
from mulle_env.observation import OBS_SIZE


def net(seed=0, hidden=(16,), value=(8,)) -> MLPPolicy:
    """A random ReLU policy (and value head unless ``value`` is None) for the current encoding."""
    rng = np.random.default_rng(seed)

    def mlp(sizes):
        ws = [rng.normal(0, 1 / np.sqrt(a), (a, b)).astype(np.float32) for a, b in itertools.pairwise(sizes)]
        return ws, [rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:]]

    w, b = mlp([OBS_SIZE, *hidden, NUM_ACTIONS])
    vw, vb = mlp([OBS_SIZE, *value, 1]) if value is not None else ([], [])
    return MLPPolicy(w, b, "relu", {"note": "test"}, vw, vb)
