"""The arena: fair, reproducible, parallel tournaments between agent specs.

>>> from arena import Plan, run
>>> outcome = run(Plan(("random", "heuristic"), games=4, ruleset={"sets": 1}), "results.jsonl")  # doctest: +SKIP

* :mod:`arena.schedule`: which games a tournament plays (duplicate deals, game ids).
* :mod:`arena.worker`: playing one game from its task (the function every backend runs).
* :mod:`arena.runner`: the local process pool with its watchdog; :mod:`arena.ray_backend`: Ray.
* :mod:`arena.results`: the JSON Lines results file (durable appends, forgiving reads).
* :mod:`arena.tournament`: resume, run, early stopping; :mod:`arena.stats`: the numbers;
  :mod:`arena.report`: JSON, Markdown, terminal table and plot; :mod:`arena.cli`: ``mulle-arena``.

The arena knows agents only by spec string (:func:`agents.make`) and a game only through
the protocol of :mod:`arena.game` (``new_game``; a state's ``legal_moves``, ``play``,
``view``, ``is_over``, ``result`` and ``to_move``), checked when a game module is loaded.
"""

from .game import Game, GameProtocolError, check_game
from .runner import ProcessBackend
from .schedule import Plan
from .stats import SPRT
from .tournament import Outcome, run

__all__ = ["Game", "GameProtocolError", "Outcome", "Plan", "ProcessBackend", "SPRT", "check_game", "run"]
