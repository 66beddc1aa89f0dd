"""Casino's hooks for the determinized search (:mod:`agents.determinized`): playout, hidden facts, evaluation.

* :func:`heuristic_playout`: the playout policy ``heuristic``: each seat of the
  determinization plays what :class:`~agents.casino.heuristic.CasinoHeuristicAgent` would
  play from its own view (about 0.1 ms a move). It measured both stronger and faster as a
  playout than a cheaper static score (the search's rollouts end sooner when the players
  capture sensibly).
* :func:`hidden_requirements`: what the view proves about the opponent's hand: it owns a
  build of value V, so it holds a card of value V (the reservation, CASINO.md 4.2.3, 4.4).
  A determinization without one would leave the opponent without a legal move.
* :func:`evaluate`: the round in play's point difference as the piles stand, for rollouts
  that stop before the round's end (the search's default horizon is a number of plies).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from mulle_env.casino import GameState, Move, PlayerView
from mulle_env.casino.cards import SPADE, VALUE
from mulle_env.casino.state import round_sheets

from .effects import race_weights
from .heuristic import choose, score_moves

__all__ = ["evaluate", "heuristic_playout", "hidden_requirements"]


def hidden_requirements(view: PlayerView) -> list[frozenset[int]]:
    """Sets of unseen cards of which the opponent's hand holds at least one each (module docstring)."""
    opp = 1 - view.player
    values = {b.value for b in view.builds if b.owner == opp}
    if not values:
        return []
    unseen = [int(c) for c in view.unseen()]
    return [frozenset(f for f in unseen if VALUE[f] == v) for v in sorted(values)]


def evaluate(state: GameState, seat: int) -> float:
    """The round in play's expected point difference for ``seat``, from the piles so far (for short horizons).

    Scoring points and sweeps already captured count exactly; the cards and spades races
    count 3 and 1 points once won (more than 26 cards, more than 6 spades) and
    :data:`~agents.casino.effects.CARD_WEIGHT` / :data:`~agents.casino.effects.SPADE_WEIGHT`
    a card of the lead while open. The cards on the table are not counted.
    """
    captured = state.captured
    sheets = round_sheets(captured, state.sweeps, state.ruleset)  # the engine's sheet, races counted once won
    value = float(sheets[seat]["total"] - sheets[1 - seat]["total"])
    mine, theirs = captured[seat], captured[1 - seat]
    card_w, spade_w = race_weights(captured)  # 0 for a race already won
    value += card_w * (len(mine) - len(theirs))
    value += spade_w * (sum(1 for f in mine if SPADE[f]) - sum(1 for f in theirs if SPADE[f]))
    return value


def heuristic_playout(state: GameState, legal: Sequence[Move], rng: random.Random) -> Move:
    """The move :class:`~agents.casino.heuristic.CasinoHeuristicAgent` plays from the seat to move's view of ``state``.

    ``legal`` are that seat's legal moves; ties are drawn with ``rng``. Each seat of the
    determinization sees only its own hand, as in a real game.
    """
    if len(legal) == 1:
        return legal[0]
    return choose(score_moves(state.view(state.to_move), legal), rng)
