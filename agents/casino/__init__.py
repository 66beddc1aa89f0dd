"""Agents for Casino (``mulle_env.casino``), and Casino's hooks for the game-agnostic search.

* :class:`~agents.casino.heuristic.CasinoHeuristicAgent` (``heuristic``): Casino's common
  sense as a scored move list;
* :class:`~agents.casino.greedy.CasinoGreedyAgent` (``greedy``): one move of look-ahead on
  the round's points, less the opponent's expected best reply;
* :class:`agents.determinized.DeterminizedSearchAgent` (``pimc``) plays Casino through the
  hooks here: :data:`PLAYOUTS` (its playout policies by name), :func:`hidden_requirements`
  (what the view proves about the opponent's hand) and :func:`evaluate` (the round's points
  so far, for rollouts that stop inside a round), all from :mod:`agents.casino.playout`;
* :mod:`agents.casino.endgame`: the round's last deal, where nothing is hidden, solved exactly
  (``learned`` plays it there).

Every agent gets only a ``PlayerView``; what a move takes is the engine's own plan
(:mod:`agents.casino.effects`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .greedy import CasinoGreedyAgent
from .heuristic import CasinoHeuristicAgent
from .playout import evaluate, heuristic_playout, hidden_requirements

__all__ = ["CasinoGreedyAgent", "CasinoHeuristicAgent", "PLAYOUTS", "evaluate", "hidden_requirements"]

#: Playout policies the determinized search may use for Casino, by name (``random`` is the search's own).
PLAYOUTS: dict[str, Callable[[Any, Sequence[Any], Any], Any]] = {"heuristic": heuristic_playout}
