"""Cards: 52 faces as small ints, their notation and their values.

A face is an int ``suit * 13 + rank`` with suits in the canonical order KL, SP, HJ, RU
and ranks A, 2, ..., 10, J, Q, K, so sorting ints sorts cards in the canonical card
order of RULES.md 1.1. Two decks are in play, so every face exists twice; a hand or
a pile is a sorted list of faces that may hold a face twice.

The tables below are built once at import and are what the hot paths index.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import InvalidCardError

SUITS: tuple[str, ...] = ("KL", "SP", "HJ", "RU")
RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
NUM_FACES = 52
COPIES = 2
DECK_SIZE = NUM_FACES * COPIES

#: ``CARD_NAMES[face]`` is the seeds' notation, e.g. ``"SP 2"``.
CARD_NAMES: tuple[str, ...] = tuple(f"{s} {r}" for s in SUITS for r in RANKS)
_BY_NAME: dict[str, int] = {name: i for i, name in enumerate(CARD_NAMES)}


def _face(suit: str, rank: str) -> int:
    return SUITS.index(suit) * 13 + RANKS.index(rank)


SP_2 = _face("SP", "2")
RU_10 = _face("RU", "10")

#: Value of a card lying on the table (RULES.md 2): A = 1, J/Q/K = 11/12/13.
TABLE_VALUE: tuple[int, ...] = tuple(f % 13 + 1 for f in range(NUM_FACES))

#: Value of a card played from the hand: A = 14, SP 2 = 15, RU 10 = 16.
HAND_VALUE: tuple[int, ...] = tuple(
    16 if f == RU_10 else 15 if f == SP_2 else 14 if f % 13 == 0 else f % 13 + 1
    for f in range(NUM_FACES)
)

#: Points a card scores in the mulle pile (RULES.md 6.1), default reading.
MULLE_VALUE: tuple[int, ...] = tuple(14 if f % 13 == 0 else f % 13 + 1 for f in range(NUM_FACES))

#: Mulle points under ``mulle_hand_values=True``: SP 2 = 15, RU 10 = 16.
MULLE_VALUE_HAND: tuple[int, ...] = tuple(
    16 if f == RU_10 else 15 if f == SP_2 else v for f, v in enumerate(MULLE_VALUE)
)


def _intake_points(face: int) -> int:
    suit, rank = SUITS[face // 13], RANKS[face % 13]
    if (suit, rank) in (("SP", "2"), ("SP", "A"), ("RU", "10")):
        return 2
    if suit == "SP" and rank not in ("A", "2"):
        return 1
    if rank == "A":  # HJ A, RU A, KL A (SP A scored 2 above)
        return 1
    return 0


#: Intake points (RULES.md 6.3): 20 per deck, so 40 per set.
INTAKE_POINTS: tuple[int, ...] = tuple(_intake_points(f) for f in range(NUM_FACES))


def _rules_signature(face: int) -> tuple[int, ...]:
    # Everything the rules read of a face besides its identity (which only pairs twins).
    return (TABLE_VALUE[face], HAND_VALUE[face], MULLE_VALUE[face], MULLE_VALUE_HAND[face], INTAKE_POINTS[face])


def _suit_map(image: dict[str, str], tens: bool) -> tuple[int, ...]:
    # The suits' map `image` on every rank whose cards of those suits the rules treat alike, and on the
    # rest (only the 10s: RU 10 has its own values) the swap of the two that are alike if `tens`.
    perm = list(range(NUM_FACES))
    for rank in RANKS:
        faces = {s: _face(s, rank) for s in image}
        if len({_rules_signature(f) for f in faces.values()}) == 1:
            for s, t in image.items():
                perm[faces[s]] = faces[t]
        elif tens:
            alike = [s for s in image if sum(_rules_signature(faces[s]) == _rules_signature(faces[t])
                                              for t in image) == 2]
            a, b = alike
            perm[faces[a]], perm[faces[b]] = faces[b], faces[a]
    assert all(_rules_signature(perm[f]) == _rules_signature(f) for f in range(NUM_FACES))
    return tuple(perm)


def _symmetries() -> tuple[tuple[int, ...], ...]:
    kl, hj, ru = "KL", "HJ", "RU"
    ident = {kl: kl, hj: hj, ru: ru}
    swaps = [{kl: hj, hj: kl, ru: ru}, {kl: ru, ru: kl, hj: hj}, {hj: ru, ru: hj, kl: kl}]
    cycles = [{kl: hj, hj: ru, ru: kl}, {kl: ru, ru: hj, hj: kl}]
    # The order is part of the policy files' meaning (a file's `symmetries` k takes the first k):
    # the first four are the identity and the three suit swaps (the 10s follow KL <-> HJ only).
    first = [(ident, False), (swaps[0], True), (swaps[1], False), (swaps[2], False)]
    rest = [(cycles[0], False), (cycles[1], False), (ident, True), (swaps[0], False), (swaps[1], True),
            (swaps[2], True), (cycles[0], True), (cycles[1], True)]
    return tuple(_suit_map(image, tens) for image, tens in first + rest)


#: Face permutations the rules treat alike: ``perm[f]`` replaces face ``f`` everywhere
#: (hands, table, piles, deck) and the position has the images of the legal moves and the
#: same values, points and observation up to the face blocks' order, under every ruleset.
#: KL and HJ are alike card for card; RU is like them except RU 10 (hand value 16, two
#: intake points), which stays; SP differs from every suit in intake points. So the group is
#: the 6 permutations of the suits KL, HJ and RU on every rank but 10, times the 2 of KL 10 and
#: HJ 10: 12 permutations. The identity first, then the three suit swaps (KL <-> HJ with its 10s),
#: then the two 3-cycles, then those six with the 10s' map flipped. They are near
#: symmetries, not exact ones: where RULES.md breaks a tie by the canonical card order (which
#: equal-valued cards a build gathers or a forced capture takes, 3 and 4.1.3) the image may take
#: other cards than the image of the choice. Averaging a net's value of a position over them (an
#: afterstate policy's ``symmetries``) evens out what it learned of one suit and not of another
#: (tested: legal moves and observations map exactly through random games).
FACE_SYMMETRIES: tuple[tuple[int, ...], ...] = _symmetries()


class Card(int):
    """One of the 52 faces: an ``int`` that prints and parses in the seeds' notation.

    ``Card.from_str("SP 2")`` parses, ``str(card)`` prints, ``repr`` pastes back in.
    Instances are interned in :data:`CARDS`; use ``CARDS[face]`` to wrap a face.
    """

    __slots__ = ()

    def __new__(cls, face: int) -> Card:
        """The card of face ``face`` (0..51); raise :class:`InvalidCardError` for anything else."""
        if isinstance(face, bool) or not isinstance(face, int) or not 0 <= face < NUM_FACES:
            raise InvalidCardError(
                f"a card face is an int from 0 to {NUM_FACES - 1} (suit * 13 + rank), not {face!r}; "
                "parse a text such as 'SP 2' with Card.from_str"
            )
        return super().__new__(cls, face)

    @classmethod
    def from_str(cls, text: str) -> Card:
        """Parse ``"<SUIT> <RANK>"`` (case and extra spaces are forgiven)."""
        return CARDS[parse_card(text)]

    @property
    def suit(self) -> str:
        """The suit code: KL, SP, HJ or RU."""
        return SUITS[self // 13]

    @property
    def rank(self) -> str:
        """The rank: A, 2, ..., 10, J, Q or K."""
        return RANKS[self % 13]

    @property
    def table_value(self) -> int:
        """Value when lying on the table."""
        return TABLE_VALUE[self]

    @property
    def hand_value(self) -> int:
        """Value when played from the hand."""
        return HAND_VALUE[self]

    def __str__(self) -> str:
        return CARD_NAMES[self]

    def __repr__(self) -> str:
        return f"Card.from_str({CARD_NAMES[self]!r})"


#: The 52 interned :class:`Card` values, indexed by face.
CARDS: tuple[Card, ...] = tuple(Card(i) for i in range(NUM_FACES))


def parse_card(text: object) -> int:
    """Return the face of a card text such as ``"RU 10"``; raise :class:`InvalidCardError`."""
    if isinstance(text, str):
        face = _BY_NAME.get(text)
        if face is not None:
            return face
        parts = text.upper().split()
        if len(parts) == 2:
            face = _BY_NAME.get(f"{parts[0]} {parts[1]}")
            if face is not None:
                return face
        elif len(parts) == 1 and len(parts[0]) >= 3 and parts[0][:2] in SUITS:
            face = _BY_NAME.get(f"{parts[0][:2]} {parts[0][2:]}")
            if face is not None:
                return face
    raise InvalidCardError(
        f"unknown card {text!r}: expected '<SUIT> <RANK>' with SUIT one of "
        f"{', '.join(SUITS)} and RANK one of {', '.join(RANKS)}, e.g. 'SP 2' or 'RU 10'"
    )


def card_name(face: int) -> str:
    """The notation of a face, e.g. ``card_name(14) == "SP 2"``."""
    return CARD_NAMES[face]


def names(faces: Iterable[int]) -> list[str]:
    """Notation of several faces, in the order given."""
    return [CARD_NAMES[f] for f in faces]
