"""Casino's cards: one deck of the 52 faces Mulle uses, with Casino's values and points.

A face is the same int as in Mulle (``suit * 13 + rank``, suits KL, SP, HJ, RU, ranks A..K),
printed and parsed by the shared notation (:mod:`mulle_env.engine.cards`, CASINO.md 1.1).
Casino plays one deck, so every face exists once. The tables are built at import and are
what the rules index.
"""

from __future__ import annotations

from mulle_env.engine.cards import CARD_NAMES, CARDS, NUM_FACES, RANKS, SUITS, Card, parse_card

__all__ = [
    "ACE", "CARDS", "CARD_NAMES", "COURT", "Card", "DECK", "NUM_FACES", "POINTS", "RANK", "RANKS", "SPADE", "SUITS",
    "VALUE", "parse_card",
]

#: Every face once, in the canonical order: a fresh deck before the shuffle.
DECK: tuple[int, ...] = tuple(range(NUM_FACES))

#: Value of a card (CASINO.md 2): A = 1, 2..10 their face, J/Q/K 0 (no value: never in a sum or build).
VALUE: tuple[int, ...] = tuple(f % 13 + 1 if f % 13 < 10 else 0 for f in range(NUM_FACES))

#: True for J, Q and K, which capture only by rank (4.1.3).
COURT: tuple[bool, ...] = tuple(f % 13 >= 10 for f in range(NUM_FACES))

#: The rank of a card, 0 (A) to 12 (K): a court card captures the loose cards of its own rank (4.1.3).
RANK: tuple[int, ...] = tuple(f % 13 for f in range(NUM_FACES))

#: True for the four aces (a point each, 5.3).
ACE: tuple[bool, ...] = tuple(f % 13 == 0 for f in range(NUM_FACES))

#: True for spades (the "spades" point, and the third tie-break of 4.1.2).
SPADE: tuple[bool, ...] = tuple(f // 13 == 1 for f in range(NUM_FACES))

_RU_10 = parse_card("RU 10")
_SP_2 = parse_card("SP 2")

#: Scoring points of a card (4.1.5, 5.3): big casino RU 10 = 2, little casino SP 2 = 1, each ace 1.
POINTS: tuple[int, ...] = tuple(
    2 if f == _RU_10 else 1 if f == _SP_2 or f % 13 == 0 else 0 for f in range(NUM_FACES)
)

BIG_CASINO = _RU_10
LITTLE_CASINO = _SP_2
