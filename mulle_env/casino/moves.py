"""Casino's moves: a small frozen value per move, its notation, and the table of move ids.

Notation (``Move.from_str(str(m)) == m`` for every move, CASINO.md 6)::

    capture HJ 5                        # what the capture takes is the rules' (gather_all)
    capture HJ K take SP K              # a court card taking one card of its rank (court_capture="one")
    build HJ 3 to 8                     # a new build of value 8
    increase 5 with HJ 3                # the build of value 5 increased to 8
    trail HJ 3

With ``gather_all=False`` every valid choice of cards is its own move, so a capture, a new
build and an increase also name what they take after ``take``: loose cards by name and
builds as their cards in brackets, separated by commas, loose cards first in the canonical
card order, then builds by their cards; an increase names the build it increases by its
cards, because two builds of one value may then lie on the table::

    capture HJ 5 take KL 5, [KL 2 SP 3]
    build HJ 3 to 8 take KL 5, RU 8
    increase [KL 2 SP 3] with HJ 3 take RU 8

Every move of the default notation has a dense integer id, ``move.id``: for each card in
the canonical order its capture and its court captures of one card, then the new builds
by card and value, the increases by card and build value, the trails by card. Sorting by id
is the canonical move order, and the id is the action the environments use, so an index
always means the same move. :data:`MOVES` interns one :class:`Move` per id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from mulle_env.engine.cards import CARD_NAMES, CARDS, NUM_FACES, Card, parse_card
from mulle_env.engine.errors import InvalidCardError, InvalidMoveError

from .cards import COURT, VALUE

__all__ = [
    "BUILD", "CAPTURE", "INCREASE", "KINDS", "MOVES", "Move", "NUM_MOVE_IDS", "TRAIL", "Take", "sort_key",
]

CAPTURE = "capture"
BUILD = "build"
INCREASE = "increase"
TRAIL = "trail"
KINDS: tuple[str, ...] = (CAPTURE, BUILD, INCREASE, TRAIL)

#: What a move takes from the table: a loose card, or a build as its cards (sorted).
Take = Union[Card, tuple[Card, ...]]

_FORMS = (
    "'capture <card>', 'capture <card> take <card>', 'build <card> to <value>', "
    "'increase <value> with <card>', 'trail <card>', and with gather_all=False "
    "'... take <card>, [<card> <card>], ...' and 'increase [<cards>] with <card>' (cards like 'SP 2', 'RU 10')"
)


def _take_key(item: Take) -> tuple[int, tuple[int, ...]]:
    return (0, (item,)) if isinstance(item, int) else (1, tuple(item))


def _take_text(item: Take) -> str:
    if isinstance(item, int):
        return CARD_NAMES[item]
    return "[" + " ".join(CARD_NAMES[c] for c in item) + "]"


@dataclass(frozen=True, slots=True)
class Move:
    """One move: the card played, what it is played as, and what it names.

    Attributes:
        kind: ``"capture"``, ``"build"``, ``"increase"`` or ``"trail"``.
        card: The card played from the hand.
        value: A new build's declared value, or the value of the build an increase adds to; else ``None``.
        build: Under ``gather_all=False``, the cards of the build an increase adds to; else ``None``.
        take: What the move names as taken (sorted: loose cards, then builds); ``None`` when the
            rules decide it (the default notation).
        id: Dense move id (module docstring); ``None`` for moves that name what they take
            (other than a court card's capture of one card).
    """

    kind: str
    card: Card
    value: int | None = None
    build: tuple[Card, ...] | None = None
    take: tuple[Take, ...] | None = None
    id: int | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        name = CARD_NAMES[self.card]
        tail = "" if self.take is None else " take " + ", ".join(map(_take_text, self.take))
        if self.kind == BUILD:
            return f"build {name} to {self.value}{tail}"
        if self.kind == INCREASE:
            target = str(self.value) if self.build is None else _take_text(self.build)
            return f"increase {target} with {name}{tail}"
        return f"{self.kind} {name}{tail}"

    def __repr__(self) -> str:
        return f"Move.from_str({str(self)!r})"

    @property
    def taken_loose(self) -> tuple[Card, ...]:
        """The loose cards this move names as taken (empty in the default notation)."""
        return tuple(t for t in self.take or () if isinstance(t, int))

    @property
    def taken_builds(self) -> tuple[tuple[Card, ...], ...]:
        """The builds (as their cards) this move names as taken (empty in the default notation)."""
        return tuple(t for t in self.take or () if not isinstance(t, int))

    @classmethod
    def from_str(cls, text: str | Move) -> Move:
        """Parse the notation (syntax only: legality is the position's); raise :class:`InvalidMoveError`."""
        if isinstance(text, Move):
            return text
        if not isinstance(text, str):
            raise InvalidMoveError(f"a Casino move must be a string, not {text!r:.80}; forms: {_FORMS}")
        words = text.split()
        if not words:
            raise InvalidMoveError(f"empty move text; forms: {_FORMS}")
        kind = words[0].lower()
        if kind not in KINDS:
            raise InvalidMoveError(f"malformed move {text!r:.80}: unknown kind {words[0]!r:.20}; forms: {_FORMS}")
        if len(words) == 1:
            raise InvalidMoveError(f"malformed move {text!r}: it names no card; forms: {_FORMS}")
        try:
            return _parse(kind, text, words)
        except InvalidCardError as exc:
            raise InvalidMoveError(f"malformed move {text!r:.200}: {exc}") from None


def _cards(text: str, what: str, whole: str) -> tuple[Card, ...]:
    tokens = text.split()
    if not tokens or len(tokens) % 2:
        raise InvalidMoveError(
            f"malformed move {whole!r:.200}: {what} {text!r:.60} is not a list of cards like 'KL 2 SP 3'")
    return tuple(CARDS[parse_card(f"{tokens[i]} {tokens[i + 1]}")] for i in range(0, len(tokens), 2))


def _parse_take(text: str, whole: str) -> tuple[Take, ...]:
    items: list[Take] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise InvalidMoveError(f"malformed move {whole!r:.200}: an empty item after 'take'")
        if part.startswith("["):
            if not part.endswith("]"):
                raise InvalidMoveError(
                    f"malformed move {whole!r:.200}: a build reads '[<card> <card> ...]', not {part!r:.60}")
            cards = _cards(part[1:-1], "a build", whole)
            if len(cards) < 2:
                raise InvalidMoveError(f"malformed move {whole!r:.200}: a build holds at least two cards, not {part!r}")
            items.append(tuple(sorted(cards)))
        else:
            items.append(CARDS[parse_card(part)])
    flat = [c for item in items for c in ((item,) if isinstance(item, int) else item)]
    if len(set(flat)) != len(flat):
        raise InvalidMoveError(f"malformed move {whole!r:.200}: a card is named twice after 'take'")
    return tuple(sorted(items, key=_take_key))


def _value(text: str, whole: str, low: int, high: int, what: str) -> int:
    # ASCII digits only: str.isdigit() also says yes to "²", which int() refuses with a bare ValueError,
    # and to other scripts' digits, which the notation never writes.
    if not (text.isascii() and text.isdigit()) or not low <= int(text) <= high:
        raise InvalidMoveError(
            f"malformed move {whole!r:.200}: {what} must be a number from {low} to {high}, not {text!r:.20}")
    return int(text)


def _numeral(card: int, whole: str, kind: str) -> None:
    if COURT[card]:
        raise InvalidMoveError(
            f"malformed move {whole!r:.200}: {CARD_NAMES[card]} has no value, so it cannot {kind}; "
            "a J, Q or K only captures or trails")


def _parse(kind: str, text: str, words: list[str]) -> Move:
    lowered = [w.lower() for w in words]
    take: tuple[Take, ...] | None = None
    if "take" in lowered:
        at = lowered.index("take")
        if kind == TRAIL:
            raise InvalidMoveError(f"malformed move {text!r:.200}: a trail takes nothing")
        take = _parse_take(" ".join(words[at + 1:]), text)
        words, lowered = words[:at], lowered[:at]
    if kind == TRAIL:
        return MOVES[TRAIL_ID[parse_card(" ".join(words[1:]))]]
    if kind == CAPTURE:
        card = parse_card(" ".join(words[1:]))
        if take is None:
            return MOVES[CAPTURE_ID[card]]
        if COURT[card] and len(take) == 1 and isinstance(take[0], int) and take[0] in CAPTURE_TAKE_ID[card]:
            return MOVES[CAPTURE_TAKE_ID[card][take[0]]]
        return Move(CAPTURE, CARDS[card], take=take)
    if kind == BUILD:
        if "to" not in lowered:
            raise InvalidMoveError(f"malformed move {text!r:.200}: a build reads 'build <card> to <value>'")
        at = lowered.index("to")
        card = parse_card(" ".join(words[1:at]))
        _numeral(card, text, "build")
        value = _value(" ".join(words[at + 1:]), text, max(VALUE[card], 1), 10, "the build's value")
        if take is None:
            return MOVES[BUILD_ID[card][value]]
        return Move(BUILD, CARDS[card], value=value, take=take)
    # increase <value or [cards]> with <card>
    if "with" not in lowered:
        raise InvalidMoveError(f"malformed move {text!r:.200}: an increase reads 'increase <value> with <card>'")
    at = lowered.index("with")
    card = parse_card(" ".join(words[at + 1:]))
    _numeral(card, text, "increase a build")
    target = " ".join(words[1:at]).strip()
    if target.startswith("[") and target.endswith("]"):
        cards = tuple(sorted(_cards(target[1:-1], "the increased build", text)))
        if len(cards) < 2 or any(COURT[c] for c in cards) or card in cards or len(set(cards)) != len(cards):
            raise InvalidMoveError(f"malformed move {text!r:.200}: {target!r:.60} is not a build another card can join")
        named = [*cards, *(c for t in take or () for c in ((t,) if isinstance(t, int) else t))]
        if len(set(named)) != len(named):
            raise InvalidMoveError(f"malformed move {text!r:.200}: a card of the increased build is named again "
                                   "after 'take'")
        base = sum(VALUE[c] for c in cards)
        if base + VALUE[card] > 10:
            raise InvalidMoveError(f"malformed move {text!r:.200}: {target} (value {base}) with "
                                   f"{CARD_NAMES[card]} makes {base + VALUE[card]}, above 10")
        return Move(INCREASE, CARDS[card], value=base, build=cards, take=take)
    base = _value(target, text, 2, 9, "the increased build's value")
    if base + VALUE[card] > 10:
        raise InvalidMoveError(f"malformed move {text!r:.200}: a build of {base} with {CARD_NAMES[card]} "
                               f"makes {base + VALUE[card]}, above 10")
    if take is None:
        return MOVES[INCREASE_ID[card][base]]
    return Move(INCREASE, CARDS[card], value=base, take=take)


def _make_table() -> tuple[tuple[Move, ...], list[int], list[dict[int, int]], list[dict[int, int]],
                         list[dict[int, int]], list[int]]:
    moves: list[Move] = []
    capture_id = [0] * NUM_FACES
    capture_take_id: list[dict[int, int]] = [{} for _ in range(NUM_FACES)]
    build_id: list[dict[int, int]] = [{} for _ in range(NUM_FACES)]
    increase_id: list[dict[int, int]] = [{} for _ in range(NUM_FACES)]
    trail_id = [0] * NUM_FACES

    def add(kind: str, card: int, value: int | None = None, take: tuple[Take, ...] | None = None) -> int:
        moves.append(Move(kind, CARDS[card], value, None, take, len(moves)))
        return len(moves) - 1

    for c in range(NUM_FACES):
        capture_id[c] = add(CAPTURE, c)
        if COURT[c]:
            for t in range(c % 13, NUM_FACES, 13):
                if t != c:
                    capture_take_id[c][t] = add(CAPTURE, c, take=(CARDS[t],))
    for c in range(NUM_FACES):
        if not COURT[c]:
            for v in range(VALUE[c], 11):
                build_id[c][v] = add(BUILD, c, v)
    for c in range(NUM_FACES):
        if not COURT[c]:
            for w in range(2, 11 - VALUE[c]):
                increase_id[c][w] = add(INCREASE, c, w)
    for c in range(NUM_FACES):
        trail_id[c] = add(TRAIL, c)
    return tuple(moves), capture_id, capture_take_id, build_id, increase_id, trail_id


#: Every move that has an id, indexed by id (the canonical move order).
MOVES: tuple[Move, ...]
MOVES, CAPTURE_ID, CAPTURE_TAKE_ID, BUILD_ID, INCREASE_ID, TRAIL_ID = _make_table()
#: How many moves have ids: the environments' ``Discrete`` action count.
NUM_MOVE_IDS = len(MOVES)


def sort_key(move: Move) -> tuple[int, str]:
    """Canonical order: by id; a move without one sits after its card's moves of the same kind, by its text."""
    if move.id is not None:
        return (move.id * 2, "")
    anchor = {CAPTURE: CAPTURE_ID, TRAIL: TRAIL_ID}.get(move.kind)
    if anchor is not None:
        return (anchor[move.card] * 2 + 1, str(move))
    table = BUILD_ID if move.kind == BUILD else INCREASE_ID
    ids = table[move.card]
    base = ids.get(move.value or 0, max(ids.values(), default=0))
    return (base * 2 + 1, str(move))
