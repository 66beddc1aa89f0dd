"""Reading hand-written or canonical positions, and the invariant check."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeGuard, TypeVar, overload

from . import rules
from .cards import CARD_NAMES, COPIES, DECK_SIZE, HAND_VALUE, INTAKE_POINTS, NUM_FACES, parse_card
from .errors import InvalidCardError, InvalidPositionError, InvalidRulesetError
from .moves import MAX_BUILD_VALUE, MIN_BUILD_VALUE
from .rng import seed_problem
from .ruleset import Ruleset

if TYPE_CHECKING:
    from .state import GameStateBase, StoredBuild

_State = TypeVar("_State", bound="GameStateBase")
_T = TypeVar("_T")

#: Intake points of one set (RULES.md 6.3): 20 per deck.
_MAX_INTAKE = 2 * sum(INTAKE_POINTS)

_KEYS = (
    "ruleset", "seed", "set", "deal", "to_move", "hands", "table", "deck",
    "mulle", "intake", "tabbe", "last_capturer", "sheets", "over",
)
_BUILD_KEYS = {"build", "value", "owner", "locked"}
_SHEET_KEYS = {"mulle", "tabbe", "intake", "bonus", "total"}


def _fail(msg: str) -> NoReturn:
    raise InvalidPositionError(msg)


def _cards(value: object, where: str) -> list[int]:
    if not isinstance(value, (list, tuple)):
        _fail(f"{where} must be a list of cards such as ['SP 2', 'RU 10'], not {value!r}")
    try:
        return [parse_card(c) for c in value]
    except InvalidCardError as exc:
        raise InvalidPositionError(f"{where}: {exc}") from None


def _pair(data: dict[str, Any], key: str, default: object, where_each: Callable[[Any, str], _T]) -> list[_T]:
    value = data.get(key, default)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        _fail(f"'{key}' must be a list of two entries (seat 0, seat 1), not {value!r}")
    return [where_each(v, f"{key}[{i}]") for i, v in enumerate(value)]


def _is_int(value: object) -> TypeGuard[int]:
    # 1.0 == 1, but a float stored in a state changes its canonical JSON (and so key()).
    return isinstance(value, int) and not isinstance(value, bool)


@overload
def _seat(value: object, key: str, allow_none: Literal[False]) -> int: ...
@overload
def _seat(value: object, key: str, allow_none: bool) -> int | None: ...
def _seat(value: object, key: str, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if not _is_int(value) or value not in (0, 1):
        allowed = "0, 1 or null" if allow_none else "0 or 1"
        _fail(f"'{key}' must be {allowed}, not {value!r}")
    return value


def _count(value: object, where: str) -> int:
    if not _is_int(value) or not 0 <= value <= rules.COUNT_LIMIT:
        _fail(f"{where} must be a whole number from 0 to {rules.COUNT_LIMIT}, not {value!r}")
    return value


def build_value_possible(cards: Iterable[int], value: int) -> bool:
    """Whether ``cards`` can form a build of ``value`` under RULES.md 3 and 4.2-4.3.

    A build is groups of cards each worth ``value``: a chain of builds up and down
    (table values added or subtracted) or a single card of that hand value (feed,
    trotta). So some choice of signs makes the table values sum to a positive multiple
    of ``value``, a single card of hand value ``value`` counting as ``value``.
    This is the necessary condition the check uses; it rejects e.g. KL 9 + RU 7 as 15.
    """
    from .cards import TABLE_VALUE

    sums = {0}
    for f in cards:
        options = {TABLE_VALUE[f], -TABLE_VALUE[f]}
        if HAND_VALUE[f] == value:
            options.add(value)
        sums = {s + o for s in sums for o in options}
    return any(s > 0 and s % value == 0 for s in sums)


def read_position(cls: type[_State], data: Any, ruleset: Ruleset | dict[str, Any] | None = None) -> _State:
    """Build a ``cls`` (GameState) from a position dict; see ``GameState.from_dict``."""
    if not isinstance(data, dict):
        _fail(f"a position must be a dict (JSON object), not {type(data).__name__}")
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        _fail(f"unknown position key(s) {', '.join(map(repr, unknown))}; allowed keys: {', '.join(_KEYS)}")
    missing = [k for k in ("to_move", "hands", "table") if k not in data]
    if missing:
        _fail(f"position lacks required key(s) {', '.join(missing)} (required: to_move, hands, table)")
    try:
        if ruleset is None:
            ruleset = Ruleset.from_dict(data.get("ruleset"))
        elif not isinstance(ruleset, Ruleset):
            ruleset = Ruleset.from_dict(ruleset)
    except InvalidRulesetError as exc:
        raise InvalidPositionError(f"ruleset: {exc}") from None
    seed = data.get("seed")
    if seed is not None:
        if (why := seed_problem(seed, "'seed'")) is not None:
            _fail(f"{why} (or null)")
        seed = int(seed)
    to_move = _seat(data["to_move"], "to_move", False)
    hands = [sorted(h) for h in _pair(data, "hands", None, _cards)]
    for p, hand in enumerate(hands):
        if len(hand) > rules.HAND_SIZE:
            _fail(f"hands[{p}] holds {len(hand)} cards; a deal gives each player {rules.HAND_SIZE}, so at most that")
    mulle = [sorted(h) for h in _pair(data, "mulle", [[], []], _cards)]
    intake = [sorted(h) for h in _pair(data, "intake", [[], []], _cards)]
    tabbe = _pair(data, "tabbe", [0, 0], _count)
    deck = _cards(data.get("deck", []), "deck")
    last_capturer = _seat(data.get("last_capturer"), "last_capturer", True)
    table = data["table"]
    if not isinstance(table, (list, tuple)):
        _fail(f"'table' must be a list of cards and builds, not {table!r}")
    loose: list[int] = []
    builds: dict[int, StoredBuild] = {}
    for i, pile in enumerate(table):
        if isinstance(pile, str):
            loose.extend(_cards([pile], f"table[{i}]"))
            continue
        if not isinstance(pile, dict):
            _fail(f"table[{i}] must be a card such as 'SP 2' or a build dict, not {pile!r}")
        extra = sorted(set(pile) - _BUILD_KEYS)
        if extra or "build" not in pile or "value" not in pile:
            _fail(
                f"table[{i}]: a build is {{'build': [cards], 'value': V, 'owner': 0|1|null, 'locked': bool}}"
                + (f"; unknown key(s) {', '.join(extra)}" if extra else "; 'build' and 'value' are required")
            )
        cards = _cards(pile["build"], f"table[{i}].build")
        value = pile["value"]
        if isinstance(value, bool) or not isinstance(value, int) or not MIN_BUILD_VALUE <= value <= MAX_BUILD_VALUE:
            _fail(
                f"table[{i}]: build value {value!r} is impossible: a build is captured by a card of that hand "
                f"value, so it lies from {MIN_BUILD_VALUE} to {MAX_BUILD_VALUE}"
            )
        if len(cards) < 2:
            _fail(f"table[{i}]: a build holds two or more cards, not {len(cards)}")
        if not build_value_possible(cards, value):
            _fail(
                f"table[{i}]: the cards {', '.join(CARD_NAMES[f] for f in sorted(cards))} cannot make a build of "
                f"{value}: a build's cards are groups that each add up (building up and down) to its value"
            )
        if value in builds:
            _fail(f"table[{i}]: a second build of value {value}; at most one build of each value exists (they merge)")
        owner = _seat(pile.get("owner"), f"table[{i}].owner", True)
        locked = pile.get("locked", False)
        if not isinstance(locked, bool):
            _fail(f"table[{i}].locked must be true or false, not {locked!r}")
        builds[value] = (tuple(sorted(cards)), owner, locked)
    loose.sort()
    if sum(map(len, (*hands, loose, deck, *mulle, *intake, *(b[0] for b in builds.values())))) > DECK_SIZE:
        _fail(f"the position holds more than the {DECK_SIZE} cards of two decks")
    from .rules import sheet as score_sheet

    sheets = data.get("sheets", [])
    if not isinstance(sheets, (list, tuple)):
        _fail(f"'sheets' must be a list of [sheet0, sheet1] per finished set, not {sheets!r}")
    for i, pair in enumerate(sheets):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            _fail(f"sheets[{i}] must be [sheet of seat 0, sheet of seat 1]")
        for s in pair:
            if not isinstance(s, dict) or set(s) != _SHEET_KEYS or not all(_is_int(s[k]) and s[k] >= 0 for k in s):
                _fail(
                    f"sheets[{i}]: a score sheet has the whole-number (>= 0) keys "
                    f"{', '.join(sorted(_SHEET_KEYS))}, not {s!r}"
                )
            if s["intake"] > _MAX_INTAKE:
                _fail(f"sheets[{i}]: intake {s['intake']} is more than the {_MAX_INTAKE} intake points of a set")
            if s["mulle"] > rules.COUNT_LIMIT or s["tabbe"] > rules.COUNT_LIMIT:
                _fail(f"sheets[{i}]: a score sheet's numbers are at most {rules.COUNT_LIMIT}, not {s!r}")
            expected = score_sheet(s["mulle"], s["tabbe"], s["intake"])
            if s != expected:
                _fail(
                    f"sheets[{i}]: bonus and total do not follow from mulle, tabbe and intake (RULES.md 6): "
                    f"expected {expected}, not {s!r}"
                )
    sheets = [(dict(a), dict(b)) for a, b in sheets]
    over = len(sheets) >= ruleset.sets
    if len(sheets) > ruleset.sets:
        _fail(f"{len(sheets)} finished sets are scored in 'sheets', but the game has only {ruleset.sets}")
    derived_set = len(sheets) + 1 if not over else ruleset.sets
    set_no = data.get("set", derived_set)
    if not _is_int(set_no) or not 1 <= set_no <= ruleset.sets:
        _fail(f"'set' must be a number from 1 to {ruleset.sets} (Ruleset.sets), not {set_no!r}")
    if set_no != derived_set:
        _fail(
            f"'set' is {set_no} but 'sheets' scores {len(sheets)} finished set(s), so this is set {derived_set}"
            + (" (the game is over)" if over else "")
        )
    per_deal = 2 * rules.HAND_SIZE
    if len(deck) % per_deal:
        _fail(f"the deck holds {len(deck)} cards; deals take {per_deal} at a time, "
              f"so it must hold a multiple of {per_deal}")
    derived_deal = rules.DEALS_PER_SET - len(deck) // per_deal
    deal_no = data.get("deal", derived_deal)
    if not _is_int(deal_no) or deal_no != derived_deal:
        _fail(f"'deal' is {deal_no!r} but a deck of {len(deck)} cards means deal {derived_deal} "
              f"of {rules.DEALS_PER_SET}")
    if derived_deal < 1:
        _fail(f"the deck holds {len(deck)} cards, more than the {(rules.DEALS_PER_SET - 1) * per_deal} "
              "left after a first deal")
    if "over" in data and bool(data["over"]) != over:
        _fail(f"'over' is {data['over']!r} but {len(sheets)} of {ruleset.sets} sets are scored")
    st = cls(ruleset, seed)
    st._load(hands, loose, builds, deck, mulle, intake, tabbe, to_move, set_no, deal_no, last_capturer, sheets,
             over, None, ())
    check_invariants(st, complete=False)
    return st


def check_invariants(st: GameStateBase, complete: bool = True) -> None:
    """Raise :class:`InvalidPositionError` if ``st`` breaks a rule of RULES.md.

    Checked: no face more than twice (exactly twice per set when ``complete``); every
    build's owner holds a card of its value; at most one build per value; the player to
    move has a legal move unless the game is over.
    """
    counts = [0] * NUM_FACES
    piles = [*st.hands, st.loose, st.deck, *st.mulle, *st.intake] + [list(b[0]) for b in st.builds.values()]
    for pile in piles:
        for f in pile:
            counts[f] += 1
    over = [CARD_NAMES[f] for f in range(NUM_FACES) if counts[f] > COPIES]
    if over:
        _fail(f"card(s) {', '.join(over)} appear more than twice; two decks hold every card exactly twice")
    total = sum(counts)
    if complete and total != DECK_SIZE and not (st.over and total == DECK_SIZE):
        missing = [CARD_NAMES[f] for f in range(NUM_FACES) if counts[f] < COPIES]
        _fail(f"{total} cards accounted for, not {DECK_SIZE}; missing: {', '.join(missing)}")
    for v, (cards, owner, _locked) in st.builds.items():
        if owner is not None and not any(HAND_VALUE[f] == v for f in st.hands[owner]):
            _fail(
                f"player {owner} owns the build [{v}] but holds no card of hand value {v}; "
                f"an owner always keeps a card to capture its build with (RULES.md 4.5)"
            )
    if st.over:
        return
    if not st.hands[st.to_move]:
        _fail(f"player {st.to_move} is to move but holds no cards")
    if not st.legal_ids():
        _fail(f"player {st.to_move} is to move but has no legal move (RULES.md 4.6)")
