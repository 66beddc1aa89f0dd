"""Registers the built-in agents (imported lazily by :func:`agents.make`)."""

from __future__ import annotations

from .random_agent import RandomAgent
from .registry import register

register("random", RandomAgent, "uniform over legal moves")
