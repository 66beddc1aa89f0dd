"""Agents: every player behind one small interface; each says which games it plays.

>>> import agents
>>> bot = agents.make("random")
>>> sorted(agents.available())[:1]
['random']
"""

from .base import ANY_GAME, Agent
from .registry import AgentSpecError, available, canonical, make, parse_spec, plays, register

__all__ = ["ANY_GAME", "Agent", "AgentSpecError", "available", "canonical", "make", "parse_spec", "plays", "register"]
