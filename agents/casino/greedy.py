"""One-move look-ahead on the round's points: bank what a move takes, less the opponent's best reply.

Value of a move ``m`` (higher is better)::

    value(m) = gain(m) - reply(m)

* ``gain(m)``: a capture's cards (taken and played) at their worth (:mod:`agents.casino.effects`:
  scoring points exact, the cards and spades races a little a card while open), plus a
  sweep; a build's or an increase's cards at their worth times the chance that the
  opponent holds no card of its value (the mover captures it next turn unless the
  opponent takes it first); a trail nothing. On the round's last play the cards left on
  the table go to the last capturer, and that counts too.
* ``reply(m)``: the **expected** points of the opponent's best capture on the table ``m``
  leaves, averaged over the opponent's possible hands: the hand is drawn uniformly from
  the cards this seat has not seen (:meth:`PlayerView.unseen`), and for each unseen card
  the engine's rules say what capturing with it would take (:func:`rules.plans` on that
  table with that one card). Sorting the unseen cards by what their capture is worth,
  ``E[best] = sum_i g_i * (P(no card among the first i-1) - P(none among the first i))``,
  exactly, with the hypergeometric chance that a hand misses a set of cards. Replies that
  build or trail count nothing (they bank nothing now); the reservation facts (an
  opponent who owns a build holds its value) are not used.

Ties go to the heuristic's score (:mod:`agents.casino.heuristic`), then to the rng.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from mulle_env.casino import Move, PlayerView
from mulle_env.casino.cards import COURT, VALUE
from mulle_env.casino.moves import CAPTURE, TRAIL
from mulle_env.casino.rules import Plan, plans
from mulle_env.engine.knowledge import miss_probability

from ..base import Agent
from .effects import (
    SWEEP,
    Pricing,
    Table,
    capture_class,
    class_faces,
    is_last_play,
    table_after,
    taken_cards,
    view_table,
)
from .heuristic import TIE, score_plan

__all__ = ["CasinoGreedyAgent", "capture_classes", "capture_worth", "expected_best_reply", "gain"]


def capture_worth(table: Table, face: int, player: int, pricing: Pricing, last_play: bool) -> float:
    """What ``player``'s best capture with ``face`` on ``table`` is worth (0: it captures nothing).

    The engine says what the capture takes (:func:`rules.plans` with the one card in hand);
    the builds are handed over as the other seat's so that no reservation of ``player``'s
    own builds hides a capture (what a capture takes does not depend on who owns what).
    On the last play of a round (``last_play``) the capturer also gets what is left.
    """
    builds = [(v, 1 - player, cards) for v, _, cards in table.builds]
    best = 0.0
    for plan in plans(pricing.ruleset, [face], table.loose, builds, player).values():
        if plan.kind != CAPTURE:
            continue
        got = pricing.worth((face, *taken_cards(plan)))
        left = table_after(table, plan, player)
        if last_play:
            got += pricing.worth(left.cards)
        elif left.empty:
            got += SWEEP
        best = max(best, got)
    return best


def capture_classes(table: Table) -> set[int]:
    """The capture classes (:func:`~agents.casino.effects.capture_class`) that may capture something on ``table``.

    A capture takes groups of table cards each adding up to the card's value (a build counts its
    value, a court card pairs only with its rank), so a numeral class must be a sum of some loose
    numerals or a build's value, and a court class a court's rank on the table. The set may hold
    classes that capture nothing there (the engine decides); it never misses one that captures, so
    the classes outside it need no engine query.
    """
    sums = 1  # bit v: some loose numerals add up to v (up to 10, the largest numeral)
    out = {b[0] for b in table.builds}
    for f in table.loose:
        if COURT[f]:
            out.add(capture_class(f))
        else:
            sums |= (sums << VALUE[f]) & 0x7FF
    out.update(v for v in range(1, 11) if sums >> v & 1)
    return out


def expected_best_reply(table: Table, player: int, pricing: Pricing, last_play: bool) -> float:
    """The expected worth of ``player``'s best capture on ``table`` when its hand is drawn from the unseen cards.

    One engine query per capture class (cards of one value, or one court rank, take the
    same table cards), then each unseen card's own worth added; the expectation of the
    maximum is exact under the uniform hand (module docstring).
    """
    if pricing.hand_size <= 0 or table.empty:
        return 0.0
    gains: list[float] = []
    takes = capture_classes(table)
    for klass, faces in class_faces(pricing.unseen).items():
        if klass not in takes:  # nothing there adds up to its value: no capture, no engine query
            continue
        base = capture_worth(table, faces[0], player, pricing, last_play)
        if base <= 0.0:
            continue
        first = pricing.card(faces[0])
        gains.extend(base - first + pricing.card(f) for f in faces)
    if not gains:
        return 0.0
    gains.sort(reverse=True)
    u, h = len(pricing.unseen), pricing.hand_size
    total, miss_before = 0.0, 1.0
    for i, g in enumerate(gains, 1):
        miss = miss_probability(i, h, u)
        total += g * (miss_before - miss)
        miss_before = miss
        if miss <= 0.0:
            break
    return total


def gain(view: PlayerView, table: Table, plan: Plan, pricing: Pricing, last_play: bool) -> tuple[float, Table]:
    """What ``plan`` banks for the view's seat now (module docstring), and the table it leaves."""
    me = view.player
    after = table_after(table, plan, me)
    if plan.kind == CAPTURE:
        got = pricing.worth((plan.card, *taken_cards(plan)))
        if last_play:
            got += pricing.worth(after.cards)
        elif after.empty:
            got += SWEEP
        return got, after
    if plan.kind == TRAIL:
        if last_play and view.last_capturer is not None:
            rest = pricing.worth(after.cards)
            return (rest if view.last_capturer == me else -rest), after
        return 0.0, after
    assert plan.value is not None
    return pricing.worth((plan.card, *taken_cards(plan))) * (1.0 - pricing.hold(plan.value)), after


def move_values(view: PlayerView, legal_moves: Sequence[Move]) -> list[tuple[float, float, Move]]:
    """``(value, heuristic score, move)`` for every legal move, in the given order (module docstring)."""
    plans_ = view.move_plans()
    pricing = Pricing(view)
    table = view_table(view)
    last = is_last_play(view)
    # The opponent's reply is the round's last play when it holds one card, we play our last and no stock is left.
    reply_last = view.stock_size == 0 and len(view.hand) == 1 and view.opponent_hand_size == 1
    opp = 1 - view.player
    out = []
    for move in legal_moves:
        plan = plans_.get(move)
        if plan is None:  # not legal here: never preferred
            out.append((float("-inf"), float("-inf"), move))
            continue
        got, after = gain(view, table, plan, pricing, last)
        reply = 0.0 if last else expected_best_reply(after, opp, pricing, reply_last)
        out.append((got - reply, score_plan(view, table, plan, pricing, last), move))
    return out


class CasinoGreedyAgent(Agent):
    """One-move look-ahead: the points a move banks now, less the opponent's expected best reply capture.

    See the module docstring; the opponent's hand is averaged over (uniform over the unseen
    cards), not taken at its worst.
    """

    name = spec = "greedy"
    games = ("casino",)  # it prices Casino's score sheet
    version = "1"

    def act(self, view: PlayerView, legal_moves: Sequence[Move],  # type: ignore[override]  # Casino's types
            rng: random.Random) -> Move:
        """The legal move of the best value; ties go to the heuristic's score, then to ``rng``."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        scored = move_values(view, legal_moves)
        best = max(v for v, _, _ in scored)
        tied = [(h, m) for v, h, m in scored if v >= best - TIE]
        top = max(h for h, _ in tied)
        final = [m for h, m in tied if h >= top - TIE]
        return final[0] if len(final) == 1 else final[rng.randrange(len(final))]

