"""What a Casino move does, as the engine says, and what the cards it moves are worth.

The Casino agents never re-derive a rule: what each legal move takes comes from the
engine's own :meth:`mulle_env.casino.PlayerView.move_plans` (the :class:`~mulle_env.casino.rules.Plan`
the engine applies), asked with what the seat can see, and the table a plan leaves is the
engine's :func:`~mulle_env.casino.rules.table_after`. This module says whether a move
sweeps, and prices cards by the round's score sheet (CASINO.md 5.3):

* the **scoring points** of a card are exact: RU 10 = 2, SP 2 = 1, each ace = 1;
* the **cards** (3 points for more than 26) and **spades** (1 point for more than 6) races
  are priced linearly, :data:`CARD_WEIGHT` and :data:`SPADE_WEIGHT` a card, and only
  while the race is open (:func:`race_weights`: nobody has won it yet);
* a **sweep** is worth :data:`SWEEP` (one point), except on the last play of a round,
  where the engine counts none (4.1.6).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from mulle_env.casino import PlayerView, rules
from mulle_env.casino.cards import COURT, POINTS, SPADE, VALUE
from mulle_env.casino.rules import Plan, StoredBuild, build_problem, taken_cards
from mulle_env.casino.state import CARDS_TO_WIN, SPADES_TO_WIN
from mulle_env.engine.knowledge import miss_probability

__all__ = [
    "CARD_WEIGHT", "SPADE_WEIGHT", "SWEEP", "Pricing", "Table", "capture_class", "class_faces", "is_last_play",
    "race_weights", "sweep_threats", "table_after", "taken_cards", "view_table",
]

#: Worth of one card while the cards race (3 points for 27 of 52) is open: about 3 points over the
#: ten-odd cards by which a round's piles usually differ.
CARD_WEIGHT = 0.15
#: Worth of one spade while the spades race (1 point for 7 of 13) is open, on top of its card weight.
SPADE_WEIGHT = 0.2
#: A sweep scores one point (CASINO.md 4.1.6, 5.3).
SWEEP = 1.0



class Table(NamedTuple):
    """A table: loose cards (faces) and builds (``(value, owner, cards)`` as the engine stores them)."""

    loose: tuple[int, ...]
    builds: tuple[StoredBuild, ...]

    @property
    def cards(self) -> list[int]:
        """Every card on the table, loose and built."""
        return [*self.loose, *(c for b in self.builds for c in b[2])]

    @property
    def empty(self) -> bool:
        """Nothing is on the table."""
        return not self.loose and not self.builds


def view_table(view: PlayerView) -> Table:
    """The table the view shows."""
    return Table(tuple(int(c) for c in view.loose), tuple(b.stored for b in view.builds))


def table_after(table: Table, plan: Plan, player: int) -> Table:
    """The table once ``player`` has played ``plan`` on ``table``: the engine's own :func:`rules.table_after`."""
    loose, builds = rules.table_after(table.loose, table.builds, plan, player)
    return Table(tuple(loose), tuple(builds))


def is_last_play(view: PlayerView) -> bool:
    """The view's seat, to move, plays the round's last card (no sweep counts, the table goes to the last capturer)."""
    return len(view.hand) == 1 and view.opponent_hand_size == 0 and view.stock_size == 0


def race_weights(captured: Sequence[Sequence[int]]) -> tuple[float, float]:
    """``(card weight, spade weight)``: :data:`CARD_WEIGHT` and :data:`SPADE_WEIGHT`, or 0 for a race already won."""
    spades = [sum(1 for c in pile if SPADE[c]) for pile in captured]
    card_w = CARD_WEIGHT if max(len(p) for p in captured) < CARDS_TO_WIN else 0.0
    spade_w = SPADE_WEIGHT if max(spades) < SPADES_TO_WIN else 0.0
    return card_w, spade_w


class Pricing:
    """Prices cards for one decision: exact scoring points plus the open races' weights.

    ``worth(cards)`` is what taking ``cards`` into a captured pile is worth this round, in
    points; :attr:`unseen` and :meth:`hold` give the chance that the opponent holds a card
    of a capture class (see :func:`capture_class`), its hand drawn uniformly from the cards
    the seat has not seen.
    """

    __slots__ = ("card_w", "spade_w", "unseen", "hand_size", "ruleset", "_class_count")

    def __init__(self, view: PlayerView) -> None:
        self.ruleset = view.ruleset
        self.card_w, self.spade_w = race_weights(view.captured)
        self.unseen = [int(c) for c in view.unseen()]
        self.hand_size = view.opponent_hand_size
        counts: dict[int, int] = {}
        for f in self.unseen:
            k = capture_class(f)
            counts[k] = counts.get(k, 0) + 1
        self._class_count = counts

    def card(self, face: int) -> float:
        """What one card is worth in a captured pile."""
        return POINTS[face] + self.card_w + (self.spade_w if SPADE[face] else 0.0)

    def worth(self, cards: Iterable[int]) -> float:
        """What ``cards`` are worth in a captured pile (their sum of :meth:`card`)."""
        return sum(self.card(f) for f in cards)

    def hold(self, klass: int) -> float:
        """The chance that the opponent holds at least one unseen card of capture class ``klass``."""
        return 1.0 - miss_probability(self._class_count.get(klass, 0), self.hand_size, len(self.unseen))


def capture_class(face: int) -> int:
    """What decides what a card captures: its value 1..10 for a numeral card, 11..13 for J, Q, K (by rank)."""
    return VALUE[face] if not COURT[face] else face % 13 + 1


def class_faces(faces: Iterable[int]) -> dict[int, list[int]]:
    """``faces`` grouped by :func:`capture_class`."""
    out: dict[int, list[int]] = {}
    for f in faces:
        out.setdefault(capture_class(f), []).append(f)
    return out


def sweep_threats(table: Table) -> set[int]:
    """The capture classes (:func:`capture_class`) of the cards that clear ``table`` with one capture.

    A table is cleared by one card when every pile on it is taken together: a lone loose card
    by its value (a court card by its rank); loose numeral cards that split into groups of one
    value (a pair of 4s by a 4 or an 8, 2 + 3 + 5 by a 5 or a 10) by that value; one build of
    value V with loose cards that are Vs or split into groups of V, by a V. Whether the cards
    split is the engine's :func:`~mulle_env.casino.rules.build_problem`. Empty for an empty
    table and for every table that no single card clears (two builds, a court card among others).
    """
    loose, builds = table.loose, table.builds
    if not loose and not builds:
        return set()
    if len(builds) > 1:
        return set()
    if any(COURT[f] for f in loose):
        if builds or len(loose) != 1:
            return set()
        return {capture_class(loose[0])}
    if builds:
        v = builds[0][0]
        if all(VALUE[f] == v for f in loose) or (len(loose) > 1 and build_problem(v, loose) is None):
            return {v}
        return set()
    if len(loose) == 1:
        return {VALUE[loose[0]]}
    return {v for v in range(1, 11) if build_problem(v, loose) is None}
