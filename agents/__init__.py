"""Agents: every Mulle player behind one small interface.

>>> import agents
>>> bot = agents.make("random")
>>> sorted(agents.available())[:1]
['random']
"""

from .base import Agent
from .registry import AgentSpecError, available, canonical, make, parse_spec, register

__all__ = ["Agent", "AgentSpecError", "available", "canonical", "make", "parse_spec", "register"]
