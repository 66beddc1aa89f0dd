"""Moves: a small frozen value per move, its notation, and the table of move ids.

Notation (``Move.from_str(str(m)) == m`` for every move)::

    capture KL 9                       # forced capture: the engine decides what it takes
    capture KL 9 taking HJ 4, SP 5     # forced_capture=False: the loose cards it takes
    build HJ 6 on RU 10 to 16          # onto a loose card; 'to' is the new value
    build HJ 8 on [10] to 2            # onto the build of value 10 (up or down)
    trotta SP 5
    discard KL 2

Every move except a ``taking`` capture has a dense integer id, ``move.id``: captures,
then builds, trottas and discards, each by card in the canonical card order (builds
then by target: loose faces in card order, then builds by value, up before down).
Sorting by id is the canonical move order, and the id is what the action codec uses,
so an index always means the same move. The :data:`MOVES` table interns one
:class:`Move` per id, which is why the hot path never constructs moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from .cards import CARD_NAMES, CARDS, NUM_FACES, TABLE_VALUE, Card, parse_card
from .errors import InvalidCardError, InvalidMoveError

CAPTURE = "capture"
BUILD = "build"
TROTTA = "trotta"
DISCARD = "discard"
KINDS: tuple[str, ...] = (CAPTURE, BUILD, TROTTA, DISCARD)

MIN_BUILD_VALUE = 2
MAX_BUILD_VALUE = 16

_FORMS = (
    "'capture <card>', 'capture <card> taking <card>, <card>, ...', "
    "'build <card> on <card> to <value>', 'build <card> on [<value>] to <value>', "
    "'trotta <card>' or 'discard <card>' (cards like 'SP 2', 'RU 10')"
)


@dataclass(frozen=True, slots=True)
class Move:
    """One move: the card played, what it is played as, and its target.

    Attributes:
        kind: ``"capture"``, ``"build"``, ``"trotta"`` or ``"discard"``.
        card: The card played from the hand.
        on: For a build onto a loose card, that card; otherwise ``None``.
        on_build: For a build onto a build, that build's value; otherwise ``None``.
        to: For a build, the new build value; otherwise ``None``.
        taking: Only under ``forced_capture=False``: the loose cards the capture takes.
        id: Dense move id (see module docstring); ``None`` for ``taking`` captures.
    """

    kind: str
    card: Card
    on: Card | None = None
    on_build: int | None = None
    to: int | None = None
    taking: tuple[Card, ...] | None = None
    id: int | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        name = CARD_NAMES[self.card]
        if self.kind == BUILD:
            target = CARD_NAMES[self.on] if self.on is not None else f"[{self.on_build}]"
            return f"build {name} on {target} to {self.to}"
        if self.taking is not None:
            return f"capture {name} taking {', '.join(CARD_NAMES[c] for c in self.taking)}"
        return f"{self.kind} {name}"

    def __repr__(self) -> str:
        return f"Move.from_str({str(self)!r})"

    @property
    def is_build_down(self) -> bool:
        """True for a build that lowers an opponent's build."""
        return self.on_build is not None and cast(int, self.to) < self.on_build

    @classmethod
    def from_str(cls, text: str | Move) -> Move:
        """Parse the notation; raise :class:`InvalidMoveError` on malformed text."""
        if isinstance(text, Move):
            return text
        if not isinstance(text, str):
            raise InvalidMoveError(f"a move must be a string, not {text!r}; forms: {_FORMS}")
        words = text.split()
        if not words:
            raise InvalidMoveError(f"empty move text; forms: {_FORMS}")
        kind = words[0].lower()
        if kind in (CAPTURE, TROTTA, DISCARD, BUILD) and len(words) == 1:
            raise InvalidMoveError(f"malformed move {text!r}: it names no card; e.g. '{kind} SP 2'; forms: {_FORMS}")
        try:
            if kind in (CAPTURE, TROTTA, DISCARD):
                lowered = [w.lower() for w in words]
                if kind == CAPTURE and "taking" in lowered:
                    at = lowered.index("taking")
                    card = parse_card(" ".join(words[1:at]))
                    rest = " ".join(words[at + 1 :])
                    taken = [parse_card(p.strip()) for p in rest.split(",")] if rest.strip() else []
                    if not taken:
                        raise InvalidMoveError(f"{text!r}: 'taking' must list at least one card")
                    return cls(CAPTURE, CARDS[card], taking=tuple(CARDS[c] for c in sorted(taken)))
                card = parse_card(" ".join(words[1:]))
                return MOVES[_SIMPLE_IDS[kind][card]]
            if kind == BUILD:
                return _parse_build(text, words)
        except InvalidCardError as exc:
            raise InvalidMoveError(f"malformed move {text!r}: {exc}") from None
        raise InvalidMoveError(f"malformed move {text!r}: unknown kind {words[0]!r}; forms: {_FORMS}")


def _parse_build(text: str, words: list[str]) -> Move:
    lowered = [w.lower() for w in words]
    if "on" not in lowered or "to" not in lowered or lowered.index("on") > lowered.index("to"):
        raise InvalidMoveError(f"malformed move {text!r}: a build reads 'build <card> on <target> to <value>'")
    on_at, to_at = lowered.index("on"), lowered.index("to")
    card = parse_card(" ".join(words[1:on_at]))
    target = " ".join(words[on_at + 1 : to_at]).strip()
    to_text = " ".join(words[to_at + 1 :]).strip()
    if not to_text.isdigit():
        raise InvalidMoveError(f"malformed move {text!r}: the new value after 'to' must be a number, not {to_text!r}")
    to = int(to_text)
    tv = TABLE_VALUE[card]
    if target.startswith("[") and target.endswith("]"):
        inner = target[1:-1].strip()
        if not inner.isdigit():
            raise InvalidMoveError(f"malformed move {text!r}: a build target reads '[<value>]', not {target!r}")
        base = int(inner)
        if not MIN_BUILD_VALUE <= base <= MAX_BUILD_VALUE:
            raise InvalidMoveError(
                f"malformed move {text!r}: builds have values {MIN_BUILD_VALUE} to {MAX_BUILD_VALUE}, not [{base}]"
            )
        if to == base + tv and to <= MAX_BUILD_VALUE:
            return MOVES[BUILD_UP_ID[card][base]]
        if to == base - tv and to >= MIN_BUILD_VALUE:
            return MOVES[BUILD_DOWN_ID[card][base]]
        raise InvalidMoveError(
            f"malformed move {text!r}: {CARD_NAMES[card]} (table value {tv}) on [{base}] makes "
            f"{base + tv} up or {base - tv} down, and a build value must be {MIN_BUILD_VALUE} to {MAX_BUILD_VALUE}"
        )
    on = parse_card(target)
    made = tv + TABLE_VALUE[on]
    if made > MAX_BUILD_VALUE:
        raise InvalidMoveError(
            f"malformed move {text!r}: {CARD_NAMES[card]} on {CARD_NAMES[on]} makes {made}, above {MAX_BUILD_VALUE}"
        )
    if to != made:
        raise InvalidMoveError(
            f"malformed move {text!r}: {CARD_NAMES[card]} on {CARD_NAMES[on]} makes {made}, not {to}"
        )
    return MOVES[BUILD_LOOSE_ID[card][on]]


def _make_table() -> tuple[tuple[Move, ...], list[int], list[int], list[int], list[list[int]], list[list[int]],
                         list[list[int]]]:
    moves: list[Move] = []
    capture_id, trotta_id, discard_id = [0] * NUM_FACES, [0] * NUM_FACES, [0] * NUM_FACES
    loose_id = [[-1] * NUM_FACES for _ in range(NUM_FACES)]
    up_id = [[-1] * (MAX_BUILD_VALUE + 1) for _ in range(NUM_FACES)]
    down_id = [[-1] * (MAX_BUILD_VALUE + 1) for _ in range(NUM_FACES)]

    def add(move: Move) -> int:
        i = len(moves)
        moves.append(Move(move.kind, move.card, move.on, move.on_build, move.to, None, i))
        return i

    for c in range(NUM_FACES):
        capture_id[c] = add(Move(CAPTURE, CARDS[c]))
    for c in range(NUM_FACES):
        tv = TABLE_VALUE[c]
        for f in range(NUM_FACES):
            if tv + TABLE_VALUE[f] <= MAX_BUILD_VALUE:
                loose_id[c][f] = add(Move(BUILD, CARDS[c], on=CARDS[f], to=tv + TABLE_VALUE[f]))
        for v in range(MIN_BUILD_VALUE, MAX_BUILD_VALUE + 1):
            if v + tv <= MAX_BUILD_VALUE:
                up_id[c][v] = add(Move(BUILD, CARDS[c], on_build=v, to=v + tv))
            if v - tv >= MIN_BUILD_VALUE:
                down_id[c][v] = add(Move(BUILD, CARDS[c], on_build=v, to=v - tv))
    for c in range(NUM_FACES):
        trotta_id[c] = add(Move(TROTTA, CARDS[c]))
    for c in range(NUM_FACES):
        discard_id[c] = add(Move(DISCARD, CARDS[c]))
    return tuple(moves), capture_id, trotta_id, discard_id, loose_id, up_id, down_id


#: Every move that has an id, indexed by id (the canonical move order).
MOVES: tuple[Move, ...]
MOVES, CAPTURE_ID, TROTTA_ID, DISCARD_ID, BUILD_LOOSE_ID, BUILD_UP_ID, BUILD_DOWN_ID = _make_table()
NUM_MOVE_IDS = len(MOVES)
_SIMPLE_IDS = {CAPTURE: CAPTURE_ID, TROTTA: TROTTA_ID, DISCARD: DISCARD_ID}


def sort_key(move: Move) -> tuple[int, tuple[Card, ...] | None]:
    """Canonical order: by id; ``taking`` captures sit with their card's capture."""
    if move.id is not None:
        return (move.id, ())
    return (CAPTURE_ID[move.card], move.taking)
