"""Reading a Casino position (CASINO.md 6) and refusing a bad one by the field that is wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from mulle_env.engine.cards import CARD_NAMES, parse_card
from mulle_env.engine.errors import InvalidCardError, InvalidPositionError, InvalidRulesetError
from mulle_env.engine.rng import seed_problem

from . import rules
from .cards import VALUE
from .record import sheets_problem
from .ruleset import Ruleset
from .state import MAX_SWEEPS

if TYPE_CHECKING:
    from .state import GameStateBase

_S = TypeVar("_S", bound="GameStateBase")

__all__ = ["KNOWN_KEYS", "read_position"]

#: Every key a position may have: CASINO.md 6's, and what the canonical form adds.
KNOWN_KEYS = ("to_move", "hands", "table", "captured", "sweeps", "last_capturer", "stock", "round", "dealer",
              "scores", "ruleset", "seed", "sheets", "over")


def _seat(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x not in (0, 1):
        raise InvalidPositionError(f"{what} must be 0 or 1, not {x!r:.40}")
    return x


def _seat_or_none(x: Any, what: str) -> int | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, int) or x not in (0, 1):
        raise InvalidPositionError(f"{what} must be 0, 1 or null, not {x!r:.40}")
    return x


def _count(x: Any, what: str, high: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= high:
        raise InvalidPositionError(f"{what} must be a whole number from 0 to {high}, not {x!r:.40}")
    return x


def _cards(x: Any, what: str) -> list[int]:
    if not isinstance(x, list):
        raise InvalidPositionError(f"{what} must be a list of cards like \"SP 2\", not {x!r:.60}")
    out = []
    for i, c in enumerate(x):
        if not isinstance(c, str):
            raise InvalidPositionError(f"{what}[{i}] must be a card text like \"SP 2\", not {c!r:.40}")
        try:
            out.append(parse_card(c))
        except InvalidCardError as exc:
            raise InvalidPositionError(f"{what}[{i}]: {exc}") from None
    return out


def _pair(x: Any, what: str) -> list[Any]:
    if not isinstance(x, list) or len(x) != 2:
        raise InvalidPositionError(f"{what} must be a list of two entries (seat 0, seat 1), not {x!r:.60}")
    return x


def read_position(cls: type[_S], data: Any, ruleset: Ruleset | dict[str, Any] | None = None) -> _S:
    """A :class:`GameState` for ``data``, every field validated (CASINO.md 6); ``ruleset`` wins over the dict's."""
    if not isinstance(data, dict):
        raise InvalidPositionError(f"a Casino position is a JSON object (dict), not {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in KNOWN_KEYS)
    if unknown:
        raise InvalidPositionError(f"unknown position key(s) {', '.join(unknown)}; known: {', '.join(KNOWN_KEYS)}")
    for key in ("to_move", "hands", "table"):
        if key not in data:
            raise InvalidPositionError(f"a position needs {key!r} (required: to_move, hands, table)")
    try:
        rs = Ruleset.from_dict(ruleset if ruleset is not None else data.get("ruleset"))
    except (InvalidRulesetError, TypeError) as exc:
        raise InvalidPositionError(f"ruleset: {exc}") from None
    seed = data.get("seed")
    if seed is not None and (why := seed_problem(seed, "seed")) is not None:
        raise InvalidPositionError(why)
    to_move = _seat(data["to_move"], "to_move")
    hands = [_cards(h, f"hands[{i}]") for i, h in enumerate(_pair(data["hands"], "hands"))]
    captured = [_cards(h, f"captured[{i}]") for i, h in enumerate(_pair(data.get("captured", [[], []]), "captured"))]
    sweeps = [_count(s, f"sweeps[{i}]", MAX_SWEEPS) for i, s in enumerate(_pair(data.get("sweeps", [0, 0]), "sweeps"))]
    scores = [_count(s, f"scores[{i}]", 100_000) for i, s in enumerate(_pair(data.get("scores", [0, 0]), "scores"))]
    if not rs.sweeps and any(sweeps):
        raise InvalidPositionError(f"sweeps must be [0, 0] under sweeps=False (none is ever counted), not {sweeps}")
    last_capturer = _seat_or_none(data.get("last_capturer"), "last_capturer")
    stock = _cards(data.get("stock", []), "stock")
    rnd = data.get("round", 1)
    if isinstance(rnd, bool) or not isinstance(rnd, int) or not 1 <= rnd <= rs.max_rounds:
        raise InvalidPositionError(f"round must be a whole number from 1 to {rs.max_rounds}, not {rnd!r:.40}")
    dealer = _seat(data.get("dealer", 1 if rnd % 2 else 0), "dealer")
    if dealer != (1 if rnd % 2 else 0):
        raise InvalidPositionError(
            f"dealer must be {1 if rnd % 2 else 0} in round {rnd}: seat 1 deals round 1 and the seats alternate "
            "(CASINO.md 1.3)")
    table = data["table"]
    if not isinstance(table, list):
        raise InvalidPositionError(f"table must be a list of loose cards and builds, not {table!r:.60}")
    loose: list[int] = []
    builds: list[rules.StoredBuild] = []
    for i, entry in enumerate(table):
        what = f"table[{i}]"
        if isinstance(entry, str):
            loose.extend(_cards([entry], what))
            continue
        if not isinstance(entry, dict) or set(entry) != {"build", "value", "owner"}:
            raise InvalidPositionError(
                f"{what} must be a card text or {{\"build\": [cards], \"value\": V, \"owner\": seat}}, "
                f"not {entry!r:.80}")
        cards = _cards(entry["build"], f"{what}.build")
        value = entry["value"]
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidPositionError(f"{what}.value must be a whole number from 1 to 10, not {value!r:.40}")
        owner = _seat(entry["owner"], f"{what}.owner")
        why = rules.build_problem(value, cards)
        if why is not None:
            raise InvalidPositionError(f"{what}: not a build of {value}: {why}")
        builds.append((value, owner, tuple(sorted(cards))))
    everything = [*hands[0], *hands[1], *loose, *(c for b in builds for c in b[2]), *captured[0], *captured[1], *stock]
    if len(set(everything)) != len(everything):
        twice = sorted({CARD_NAMES[c] for c in everything if everything.count(c) > 1})
        raise InvalidPositionError(f"every card exists once in Casino; given more than once: {', '.join(twice)}")
    if stock and len(everything) != 52:
        raise InvalidPositionError(
            f"a position with a stock holds all 52 cards (hands, table, captured piles and stock), "
            f"not {len(everything)}; "
            "a hand-made puzzle with fewer cards has an empty stock")
    if len(stock) % 8:
        raise InvalidPositionError(f"the stock is dealt 4 cards to each player at a time, so it holds a multiple "
                                   f"of 8 cards, not {len(stock)}")
    if rs.gather_all:
        values = [b[0] for b in builds]
        twice_v = sorted({v for v in values if values.count(v) > 1})
        if twice_v:
            raise InvalidPositionError(
                f"two builds of {twice_v[0]}: under gather_all=True every build move gathers the others of its "
                "value, so at most one build of each value lies on the table")
    for v, o, cs in builds:
        if not any(VALUE[c] == v for c in hands[o]):
            raise InvalidPositionError(
                f"the build of {v} ({' '.join(CARD_NAMES[c] for c in cs)}) belongs to seat {o}, who holds no card "
                f"of value {v}; a build's owner always keeps one (CASINO.md 4.4)")
    over = not hands[0] and not hands[1]
    if over and (stock or loose or builds):
        raise InvalidPositionError(
            "both hands are empty but cards remain to be played (stock or table): the next deal or the round's end "
            "happens as the last card is played, so no position waits there")
    if not over:
        if not hands[to_move]:
            raise InvalidPositionError(f"seat {to_move} is to move but holds no card")
        if abs(len(hands[0]) - len(hands[1])) > 1:
            raise InvalidPositionError(
                f"the hands hold {len(hands[0])} and {len(hands[1])} cards; players alternate, so they differ by at "
                "most one card")
    if "over" in data and data["over"] is not over:
        raise InvalidPositionError(f"over must be {str(over).lower()} for this position (it is over exactly when "
                                   f"both hands are empty), not {data['over']!r:.20}")
    sheets = data.get("sheets", [])
    if not isinstance(sheets, list):
        raise InvalidPositionError(f"sheets must be a list of score sheet pairs, one per finished round, not "
                                   f"{sheets!r:.60}")
    finished = rnd if over else rnd - 1
    if sheets and len(sheets) != finished:
        raise InvalidPositionError(f"sheets hold one pair per finished round: {finished} in round {rnd}"
                                   f"{' (over)' if over else ''}, not {len(sheets)}")
    why = sheets_problem(sheets, rs.sweeps)
    if why is not None:
        raise InvalidPositionError(f"sheets: {why}")
    read_sheets = [(dict(a), dict(b)) for a, b in sheets]
    if read_sheets and [sum(p[s]["total"] for p in read_sheets) for s in (0, 1)] != scores:
        raise InvalidPositionError("scores must be the sums of the sheets' totals")
    st = cls(rs, seed)
    st._load(hands, loose, builds, captured, sweeps, last_capturer, stock, rnd, scores, read_sheets, to_move)
    return st
