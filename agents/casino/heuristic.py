"""Casino's common sense as a scripted player: take points, sweep, build for points, trail cheaply.

Every legal move gets a score (higher is better), from what the engine says it does
(:meth:`PlayerView.move_plans <mulle_env.casino.PlayerView.move_plans>`) and the prices of :mod:`agents.casino.effects`
(scoring points exact, the cards and spades races a little a card while they are open):

* **capture**: the worth of the cards taken and of the card played, one point more for a
  sweep, and :data:`STEAL` for each of the opponent's builds taken (a build the opponent
  staged for its own capture);
* **build / increase**: :data:`BUILD_SHARE` of the worth of the build's cards (the mover
  means to capture it next turn), less the chance that the opponent holds its value and
  takes it first, plus :data:`STEAL` for each opponent build it absorbs (an increase of
  theirs passes it to us). The engine offers only builds the mover can capture (the
  reservation of CASINO.md 4.2.3);
* **trail**: minus the worth of the card trailed (point cards and spades stay in hand) and
  minus twice its scoring points; a court card, which joins no sum and no build, costs
  :data:`COURT_TRAIL` less;
* every move but a sweep is then charged for the **easy sweep** it leaves: when one card
  would clear the table it leaves (:func:`~agents.casino.effects.sweep_threats`: a lone
  card, cards that sum to one value, a lone build with its loose matches), the chance the
  opponent holds such a card (its hand drawn from the unseen cards) times a sweep plus the
  worth of the table.

The best score wins; moves within :data:`TIE` of it are ties, broken by the rng (so the
agent is deterministic given the rng's state).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from mulle_env.casino import Move, PlayerView
from mulle_env.casino.cards import COURT, POINTS
from mulle_env.casino.moves import CAPTURE, TRAIL
from mulle_env.casino.rules import Plan

from ..base import Agent
from .effects import (
    SWEEP,
    Pricing,
    Table,
    is_last_play,
    sweep_threats,
    table_after,
    taken_cards,
    view_table,
)

__all__ = ["BUILD_SHARE", "COURT_TRAIL", "CasinoHeuristicAgent", "STEAL", "TIE", "choose", "score_moves"]

#: Share of a build's worth credited when it is made (it is captured a turn later, if all goes well).
BUILD_SHARE = 0.6
#: Bonus for each of the opponent's builds a move takes or absorbs.
STEAL = 0.3
#: How much cheaper trailing a court card is than trailing a numeral card of equal worth.
COURT_TRAIL = 0.1
#: Scores closer than this are ties (broken by the rng).
TIE = 1e-9


def sweep_risk(table: Table, pricing: Pricing) -> float:
    """The expected cost of the easy sweep ``table`` offers: P(the opponent holds a clearing card) x (1 + worth)."""
    threats = sweep_threats(table)
    if not threats:
        return 0.0
    p = max(pricing.hold(k) for k in threats)
    return p * (SWEEP + pricing.worth(table.cards))


def score_plan(view: PlayerView, table: Table, plan: Plan, pricing: Pricing, last_play: bool) -> float:
    """The heuristic score of one move (see the module docstring)."""
    me = view.player
    opp_builds = sum(1 for b in (*plan.builds, *((plan.base,) if plan.base else ())) if b[1] != me)
    after = table_after(table, plan, me)
    if plan.kind == CAPTURE:
        score = pricing.worth((plan.card, *taken_cards(plan))) + STEAL * opp_builds
        if after.empty:
            return score + (0.0 if last_play else SWEEP)
    elif plan.kind == TRAIL:
        card = plan.card
        score = -pricing.card(card) - 2 * POINTS[card] + (COURT_TRAIL if COURT[card] else 0.0)
    else:
        assert plan.value is not None
        made = pricing.worth((plan.card, *taken_cards(plan)))
        score = made * (BUILD_SHARE - 0.5 * pricing.hold(plan.value)) + STEAL * opp_builds
    if last_play:
        return score
    return score - sweep_risk(after, pricing)


def score_moves(view: PlayerView, legal_moves: Sequence[Move]) -> list[tuple[float, Move]]:
    """``(score, move)`` for every legal move, in the given order (see the module docstring)."""
    plans = view.move_plans()
    pricing = Pricing(view)
    table = view_table(view)
    last = is_last_play(view)
    out = []
    for move in legal_moves:
        plan = plans.get(move)
        # A move the engine's plans do not list is not legal here: never preferred.
        out.append((float("-inf") if plan is None else score_plan(view, table, plan, pricing, last), move))
    return out


def choose(scored: Sequence[tuple[float, Move]], rng: random.Random) -> Move:
    """The move of the best score; ties (within :data:`TIE`) drawn with ``rng``."""
    best = max(s for s, _ in scored)
    tied = [m for s, m in scored if s >= best - TIE]
    return tied[0] if len(tied) == 1 else tied[rng.randrange(len(tied))]


class CasinoHeuristicAgent(Agent):
    """Casino's common sense: take points and spades, sweep, build for points, trail cheap cards safely.

    See the module docstring for the scores; ties are broken by the rng.
    """

    name = spec = "heuristic"
    games = ("casino",)  # it prices Casino's score sheet
    version = "1"

    def act(self, view: PlayerView, legal_moves: Sequence[Move],  # type: ignore[override]  # Casino's types
            rng: random.Random) -> Move:
        """The best-scoring legal move (ties drawn with ``rng``)."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        return choose(score_moves(view, legal_moves), rng)
