"""The arena: fair, reproducible, parallel tournaments between agent specs.

>>> from arena import Plan, run
>>> outcome = run(Plan(("random", "heuristic"), games=4, ruleset={"sets": 1}), "results.jsonl")  # doctest: +SKIP

* :mod:`arena.schedule`: which games a tournament plays (duplicate deals, game ids).
* :mod:`arena.worker`: playing one game from its task (the function every backend runs).
* :mod:`arena.isolate`: untrusted agents, each in a process of its own (``--isolate``).
* :mod:`arena.runner`: the local process pool with its watchdog; :mod:`arena.ray_backend`: Ray.
* :mod:`arena.results`: the JSON Lines results file (durable appends, forgiving reads).
* :mod:`arena.tournament`: resume, run, early stopping; :mod:`arena.stats`: the numbers;
  :mod:`arena.report`: JSON, Markdown, terminal table and plot; :mod:`arena.cli`: ``mulle-arena``.

The arena knows agents only by spec string (:func:`agents.make`) and a game only through
the protocol of :mod:`arena.game` (``new_game``; a state's ``legal_moves``, ``play``,
``view``, ``is_over``, ``result`` and ``to_move``), checked when a game module is loaded.
Games have short names (:data:`arena.game.GAMES`: ``mulle``, ``casino``), and a tournament
that seats an agent at a game it does not play (:attr:`agents.Agent.games`) is refused
(:class:`arena.game.AgentGameError`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # to a type checker the lazy exports below are these imports
    from .game import GAMES, AgentGameError, Game, GameProtocolError, check_game
    from .runner import ProcessBackend
    from .schedule import Plan
    from .stats import SPRT
    from .tournament import Outcome, run

__all__ = ["GAMES", "AgentGameError", "Game", "GameProtocolError", "Outcome", "Plan", "ProcessBackend", "SPRT",
           "check_game", "run"]

# Lazy exports: `mulle-arena` imports its heavy modules (numpy, scipy) only once it can
# report a Ctrl-C cleanly, and a worker needs none of the statistics.
_EXPORTS = {
    "GAMES": ".game", "AgentGameError": ".game", "Game": ".game", "GameProtocolError": ".game", "check_game": ".game",
    "ProcessBackend": ".runner",
    "Plan": ".schedule", "SPRT": ".stats", "Outcome": ".tournament", "run": ".tournament",
}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'arena' has no attribute {name!r}")
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
