"""JSON forms that leave the process: game records and player views.

A **game record** is everything that fixes a finished (or unfinished) game: the deal
seed, the ruleset, the move texts in order, optionally who played which seat and the
result. ``mulle-play --replay``, the live server's replays and the arena's results lines
all read it with :meth:`GameRecord.from_dict`, which also accepts an arena results line
(whose move list is under ``move_list``, ``moves`` being the move count there).

A **view** (:class:`~mulle_env.engine.state.PlayerView`) goes over the wire to a person's
browser; :func:`view_to_dict` and :func:`view_from_dict` are its JSON form. It carries
exactly what ``state.view(player)`` carries: the public position plus that player's own
hand, nothing of the opponent's hand or the deck order.

Both forms carry a version (``record_version``, ``view_version``) and are validated on
read: a malformed record or view raises :class:`InvalidRecordError` saying what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NoReturn, TypeVar, overload

from .cards import CARD_NAMES, CARDS, COPIES, INTAKE_POINTS, Card, parse_card
from .errors import InvalidCardError, InvalidMoveError, InvalidRulesetError, MulleError
from .moves import Move
from .rng import seed_problem
from .rules import DEALS_PER_SET, HAND_SIZE
from .ruleset import Ruleset
from .state import Sheet, intake_bonus

if TYPE_CHECKING:
    from .match import Match
    from .state import PlayerView

_T = TypeVar("_T")

__all__ = [
    "RECORD_VERSION", "VIEW_VERSION", "GameRecord", "InvalidRecordError", "check_result", "view_from_dict",
    "view_to_dict",
]

#: Version of the game-record JSON form written by :meth:`GameRecord.to_dict`.
RECORD_VERSION = 1
#: Version of the view JSON form written by :func:`view_to_dict`.
VIEW_VERSION = 1

_SHEET_KEYS = ("mulle", "tabbe", "intake", "bonus", "total")


class InvalidRecordError(MulleError):
    """A game record or view (JSON) that is malformed: names the field and what it must be."""


def _fail(msg: str) -> NoReturn:
    raise InvalidRecordError(msg)


def _int(value: object, where: str, low: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _fail(f"{where} must be a whole number, not {value!r}")
    if low is not None and value < low:
        _fail(f"{where} must be at least {low}, not {value!r}")
    return value


@overload
def _seat(value: object, where: str, allow_none: Literal[False] = False) -> int: ...
@overload
def _seat(value: object, where: str, allow_none: bool) -> int | None: ...
def _seat(value: object, where: str, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or value not in (0, 1):
        _fail(f"{where} must be 0, 1{' or null' if allow_none else ''}, not {value!r}")
    return value


def _cards(value: object, where: str) -> tuple[Card, ...]:
    if not isinstance(value, (list, tuple)):
        _fail(f"{where} must be a list of cards such as ['SP 2', 'RU 10'], not {value!r}")
    try:
        return tuple(CARDS[parse_card(c)] for c in value)
    except InvalidCardError as exc:
        raise InvalidRecordError(f"{where}: {exc}") from None


def _sheet(value: object, where: str) -> Sheet:
    if not isinstance(value, dict) or set(value) != set(_SHEET_KEYS):
        _fail(f"{where} must be a score sheet with the keys {', '.join(_SHEET_KEYS)}, not {value!r}")
    return {k: _int(value[k], f"{where}.{k}") for k in _SHEET_KEYS}


def _ruleset(value: Any, where: str) -> Ruleset:
    try:
        return Ruleset.from_dict(value or {})
    except InvalidRulesetError as exc:
        raise InvalidRecordError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class GameRecord:
    """A game as JSON: seed, ruleset, moves in order, and optionally seats' specs and the result.

    Attributes:
        seed: The deal seed (``new_game(seed, ruleset)``).
        moves: The move texts in the order they were played (the project's notation).
        ruleset: The rules played.
        specs: Who sat where, e.g. ``("heuristic", "person:Anna")``; ``None`` when unknown.
        result: ``GameResult.to_dict()`` of the finished game, or ``None`` while it runs.
    """

    seed: int
    moves: tuple[str, ...] = ()
    ruleset: Ruleset = field(default_factory=Ruleset)
    specs: tuple[str | None, str | None] | None = None
    result: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``record_version``, ``seed``, ``ruleset``, ``specs``, ``moves``, ``result``)."""
        return {
            "record_version": RECORD_VERSION,
            "seed": self.seed,
            "ruleset": self.ruleset.to_dict(),
            "specs": list(self.specs) if self.specs is not None else None,
            "moves": list(self.moves),
            "result": self.result,
        }

    @classmethod
    def from_dict(cls, data: Any) -> GameRecord:
        """Read a record (or an arena results line with its ``move_list``); raise :class:`InvalidRecordError`.

        Only ``seed`` and the move list are required. Move texts are checked for syntax
        here; their legality is checked when the record is replayed (:meth:`replay`).
        """
        if not isinstance(data, dict):
            _fail(f"a game record is a JSON object with keys seed, moves (optional ruleset, specs, result), "
                  f"not {type(data).__name__}")
        version = data.get("record_version", RECORD_VERSION)
        if version != RECORD_VERSION:
            _fail(f"record_version {version!r} is not supported (this code reads version {RECORD_VERSION})")
        if "seed" not in data:
            _fail("the game record lacks 'seed' (needs seed and moves; optional ruleset, specs, result)")
        seed = data["seed"]
        if (why := seed_problem(seed)) is not None:
            _fail(why)
        # Arena results lines keep the move count under "moves" and the list under "move_list".
        moves = data.get("move_list", data.get("moves"))
        if moves is None or isinstance(moves, int) and "move_list" not in data:
            _fail("the game record has no move list (an arena results file keeps moves only when the arena "
                  "ran with --save-games)")
        if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
            _fail(f"moves must be a list of move texts such as 'capture KL 9', not {moves!r:.80}")
        for i, text in enumerate(moves, 1):
            try:
                Move.from_str(text)
            except InvalidMoveError as exc:
                _fail(f"move {i}: {exc}")
        specs = data.get("specs")
        if specs is not None:
            if (not isinstance(specs, (list, tuple)) or len(specs) != 2
                    or not all(s is None or isinstance(s, str) for s in specs)):
                _fail(f"specs must be a list of two seat names (or null), not {specs!r}")
            specs = tuple(specs)
        result = data.get("result")
        if result is not None and not isinstance(result, dict):
            _fail(f"result must be a JSON object (GameResult.to_dict()) or null, not {result!r}")
        return cls(seed, tuple(moves), _ruleset(data.get("ruleset"), "ruleset"), specs, result)

    def replay(self) -> Match:
        """The :class:`~mulle_env.engine.match.Match` this record describes, every move checked.

        Raises :class:`IllegalMoveError` naming the move number for a move that is not
        legal where it stands, and :class:`InvalidRecordError` when a recorded result
        disagrees with the replayed game.
        """
        from .match import Match

        m = Match(self.seed, self.ruleset, self.specs)
        for i, text in enumerate(self.moves, 1):
            try:
                m.play(text)
            except MulleError as exc:
                raise type(exc)(f"move {i} of the record ({text!r}): {exc}") from None
        if self.result is not None:
            if not m.over:
                _fail(f"the record holds a result but its {len(self.moves)} moves stop before the game ends: a "
                      "record of a finished game lists every move (leave the result out for a game in progress)")
            replayed = m.result().to_dict()
            if replayed != self.result:
                differ = [k for k in sorted(set(replayed) | set(self.result))
                          if replayed.get(k) != self.result.get(k)]
                # The short fields side by side; sheets and totals (per-set dicts) are only named.
                shown = "; ".join(f"{k}: recorded {self.result.get(k)!r}, replayed {replayed.get(k)!r}"
                                  for k in differ if k in ("scores", "winner"))
                _fail(f"the recorded result differs from the replayed game's in {', '.join(differ)}"
                      + (f" ({shown})" if shown else "") + ": the record was changed or made by another engine "
                      "version")
        return m


# ----- results ------------------------------------------------------------------------

#: Tabbes one seat can score in a set: one per card it plays (RULES.md 1.2: 6 deals of 8 cards).
MAX_TABBE_PER_SET = DEALS_PER_SET * HAND_SIZE
#: Intake points of a set's cards, both seats together (RULES.md 6.3: 20 per deck).
INTAKE_PER_SET = COPIES * sum(INTAKE_POINTS)


def check_result(result: Any, ruleset: Ruleset | dict[str, Any] | None = None) -> None:
    """Raise :class:`InvalidRecordError` unless ``result`` is how a finished game of ``ruleset`` can end.

    ``result`` is a :class:`GameResult` or :meth:`GameResult.to_dict`'s form (an arena results
    line has the same keys): ``scores`` (the two game totals by seat), ``winner`` (0, 1 or ``None`` for a
    draw), ``sheets`` (per seat, one score sheet per set) and optionally ``totals``.
    Checked, with RULES.md 6: ``ruleset.sets`` sheets per seat, whole numbers; in each
    sheet ``bonus`` is ``2 x (intake - 20)`` above 20 and ``total`` is ``mulle + tabbe +
    bonus``; in each set no more than the cards can give (both seats' mulle points at
    most one card of each face, at most :data:`MAX_TABBE_PER_SET` tabbes each) and no
    less than every set hands out: the seats' intake points add up to exactly 40, since
    every card of the set ends in someone's intake (RULES.md 5.2: the last capturer takes
    the table). The one exception is a set in which nobody captured at all, whose sheets
    are all zero; it can only happen where a card that could capture may be discarded
    (``discard_only_if_no_capture=False``); under the default rules each of the 12
    capturing values can be discarded at most once before every later card of it
    captures. The scores are the sums of the set totals (and
    ``totals`` the sums of the sheets); the winner is the seat with the higher score.
    This is the engine's own check of a result, without replaying the game (a
    :class:`GameRecord` with its moves is checked by :meth:`GameRecord.replay`).

    >>> import mulle_env as me
    >>> st = me.new_game(seed=3, ruleset=me.Ruleset(sets=1))
    >>> while not st.is_over():
    ...     st = st.play(st.legal_moves()[0])
    >>> check_result(st.result().to_dict(), st.ruleset)
    >>> check_result({**st.result().to_dict(), "scores": [1000000, -5], "winner": 0}, st.ruleset)
    Traceback (most recent call last):
    ...
    mulle_env.engine.record.InvalidRecordError: scores [1000000, -5] are not the sums of the set totals in sheets ...
    """
    rules = _ruleset(ruleset, "ruleset")
    from .state import GameResult

    if isinstance(result, GameResult):  # what state.result() and play_out() hand over: checked as its JSON form
        result = result.to_dict()
    if not isinstance(result, dict):
        _fail(f"a result is a GameResult or a JSON object with scores, winner and sheets, not "
              f"{type(result).__name__}")
    missing = [k for k in ("scores", "winner", "sheets") if k not in result]
    if missing:
        _fail(f"a result needs scores, winner and sheets; missing: {', '.join(missing)}")
    scores, winner, sheets = result["scores"], result["winner"], result["sheets"]
    if not isinstance(scores, (list, tuple)) or len(scores) != 2:
        _fail(f"scores must be the two game totals by seat, not {scores!r}")
    scores = [_int(x, f"scores[{p}]") for p, x in enumerate(scores)]
    _seat(winner, "winner", allow_none=True)
    if not isinstance(sheets, (list, tuple)) or len(sheets) != 2:
        _fail(f"sheets must hold the score sheets of the two seats, not {sheets!r:.80}")
    for p, per_set in enumerate(sheets):
        if not isinstance(per_set, (list, tuple)) or len(per_set) != rules.sets:
            _fail(f"sheets[{p}] must hold one score sheet per set ({rules.sets} under these rules), "
                  f"not {per_set!r:.80}")
    read = [[_set_sheet(s, f"sheets[{p}][{k}]") for k, s in enumerate(per_set)] for p, per_set in enumerate(sheets)]
    most_mulle = sum(rules.mulle_values)  # a mulle banks one card of a pair: one of each face at most
    for k in range(rules.sets):
        both = (read[0][k], read[1][k])
        for key, most in (("mulle", most_mulle), ("intake", INTAKE_PER_SET)):
            if both[0][key] + both[1][key] > most:
                _fail(f"set {k + 1}: the seats' {key} points add up to {both[0][key] + both[1][key]}, more than "
                      f"the {most} a set's cards can give")
        intake = both[0]["intake"] + both[1]["intake"]
        no_capture = not rules.discard_only_if_no_capture and all(v == 0 for s in both for v in s.values())
        if intake != INTAKE_PER_SET and not no_capture:
            _fail(f"set {k + 1}: the seats' intake points add up to {intake}, not the {INTAKE_PER_SET} a set hands "
                  f"out (every card of a set ends in someone's intake: RULES.md 5.2 and 6.3)")
    sums = [sum(s["total"] for s in read[p]) for p in (0, 1)]
    if scores != sums:
        _fail(f"scores {scores} are not the sums of the set totals in sheets ({sums})")
    totals = result.get("totals")
    if totals is not None:
        added = [{key: sum(s[key] for s in read[p]) for key in _SHEET_KEYS} for p in (0, 1)]
        if not isinstance(totals, (list, tuple)) or [dict(t) if isinstance(t, dict) else t for t in totals] != added:
            _fail(f"totals {totals!r:.120} are not the sums of the sheets ({added})")
    expected = 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None
    if winner != expected:
        _fail(f"winner {winner!r} contradicts the scores {scores} (expected {expected!r})")


def _set_sheet(value: object, where: str) -> Sheet:
    """A set's score sheet, whole numbers that agree with each other and fit in one set."""
    s = _sheet(value, where)
    for key in _SHEET_KEYS:
        if s[key] < 0:
            _fail(f"{where}.{key} must be at least 0, not {s[key]}")
    if s["tabbe"] > MAX_TABBE_PER_SET:
        _fail(f"{where}.tabbe {s['tabbe']} is more than a seat can score in a set (one per card it plays: "
              f"{MAX_TABBE_PER_SET})")
    if s["bonus"] != intake_bonus(s["intake"]):
        _fail(f"{where}.bonus {s['bonus']} is not 2 x (intake - 20) above 20 ({intake_bonus(s['intake'])} "
              f"for intake {s['intake']})")
    if s["total"] != s["mulle"] + s["tabbe"] + s["bonus"]:
        _fail(f"{where}.total {s['total']} is not mulle + tabbe + bonus ({s['mulle'] + s['tabbe'] + s['bonus']})")
    return s


# ----- views --------------------------------------------------------------------------


def view_to_dict(view: PlayerView) -> dict[str, Any]:
    """The JSON form of a :class:`~mulle_env.engine.state.PlayerView` (see the module docstring)."""
    last = None
    if view.last_move is not None:
        last = [view.last_move[0], str(view.last_move[1])]
    return {
        "view_version": VIEW_VERSION,
        "player": view.player,
        "to_move": view.to_move,
        "hand": [CARD_NAMES[f] for f in view.hand],
        "opponent_hand_size": view.opponent_hand_size,
        "deck_size": view.deck_size,
        "loose": [CARD_NAMES[f] for f in view.loose],
        "builds": [
            {"value": b.value, "cards": [CARD_NAMES[f] for f in b.cards], "owner": b.owner, "locked": b.locked}
            for b in view.builds
        ],
        "mulle": [[CARD_NAMES[f] for f in pile] for pile in view.mulle],
        "intake": [[CARD_NAMES[f] for f in pile] for pile in view.intake],
        "tabbe": list(view.tabbe),
        "scores": [dict(s) for s in view.scores],
        "sheets": [[dict(a), dict(b)] for a, b in view.sheets],
        "set": view.set_no,
        "deal": view.deal_no,
        "last_capturer": view.last_capturer,
        "last_move": last,
        "last_taken": [CARD_NAMES[f] for f in view.last_taken],
        "ruleset": view.ruleset.to_dict(),
        "over": view.over,
    }


_VIEW_KEYS = (
    "view_version", "player", "to_move", "hand", "opponent_hand_size", "deck_size", "loose", "builds", "mulle",
    "intake", "tabbe", "scores", "sheets", "set", "deal", "last_capturer", "last_move", "last_taken", "ruleset", "over",
)


def view_from_dict(data: Any) -> PlayerView:
    """Read :func:`view_to_dict`'s form back into a :class:`PlayerView`; raise :class:`InvalidRecordError`."""
    from .state import Build, PlayerView

    if not isinstance(data, dict):
        _fail(f"a view is a JSON object, not {type(data).__name__}")
    missing = [k for k in _VIEW_KEYS if k not in data]
    unknown = sorted(set(data) - set(_VIEW_KEYS))
    if missing or unknown:
        _fail(f"a view has exactly the keys {', '.join(_VIEW_KEYS)}"
              + (f"; missing: {', '.join(missing)}" if missing else "")
              + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    if data["view_version"] != VIEW_VERSION:
        _fail(f"view_version {data['view_version']!r} is not supported (this code reads version {VIEW_VERSION})")

    def pair(key: str, read: Callable[[Any, str], _T]) -> tuple[_T, _T]:
        value = data[key]
        if not isinstance(value, list) or len(value) != 2:
            _fail(f"{key} must be a list of two entries (seat 0, seat 1), not {value!r}")
        return read(value[0], f"{key}[0]"), read(value[1], f"{key}[1]")

    builds = []
    if not isinstance(data["builds"], list):
        _fail(f"builds must be a list, not {data['builds']!r}")
    for i, b in enumerate(data["builds"]):
        if not isinstance(b, dict) or set(b) != {"value", "cards", "owner", "locked"}:
            _fail(f"builds[{i}] must be {{'value', 'cards', 'owner', 'locked'}}, not {b!r}")
        if not isinstance(b["locked"], bool):
            _fail(f"builds[{i}].locked must be true or false, not {b['locked']!r}")
        builds.append(Build(_int(b["value"], f"builds[{i}].value", 2), _cards(b["cards"], f"builds[{i}].cards"),
                            _seat(b["owner"], f"builds[{i}].owner", True), b["locked"]))
    last = data["last_move"]
    if last is not None:
        if not isinstance(last, list) or len(last) != 2 or not isinstance(last[1], str):
            _fail(f"last_move must be [player, 'move text'] or null, not {last!r}")
        try:
            last = (_seat(last[0], "last_move[0]"), Move.from_str(last[1]))
        except InvalidMoveError as exc:
            raise InvalidRecordError(f"last_move: {exc}") from None
    if not isinstance(data["sheets"], list):
        _fail(f"sheets must be a list of [sheet0, sheet1] per finished set, not {data['sheets']!r}")
    sheets = []
    for i, s in enumerate(data["sheets"]):
        if not isinstance(s, list) or len(s) != 2:
            _fail(f"sheets[{i}] must be [sheet of seat 0, sheet of seat 1], not {s!r}")
        sheets.append((_sheet(s[0], f"sheets[{i}][0]"), _sheet(s[1], f"sheets[{i}][1]")))
    if not isinstance(data["over"], bool):
        _fail(f"over must be true or false, not {data['over']!r}")
    return PlayerView(
        player=_seat(data["player"], "player"),
        to_move=_seat(data["to_move"], "to_move"),
        hand=_cards(data["hand"], "hand"),
        opponent_hand_size=_int(data["opponent_hand_size"], "opponent_hand_size", 0),
        deck_size=_int(data["deck_size"], "deck_size", 0),
        loose=_cards(data["loose"], "loose"),
        builds=tuple(builds),
        mulle=pair("mulle", _cards),
        intake=pair("intake", _cards),
        tabbe=pair("tabbe", lambda v, w: _int(v, w, 0)),
        scores=pair("scores", _sheet),
        sheets=tuple(sheets),
        set_no=_int(data["set"], "set", 1),
        deal_no=_int(data["deal"], "deal", 1),
        last_capturer=_seat(data["last_capturer"], "last_capturer", True),
        last_move=last,
        ruleset=_ruleset(data["ruleset"], "ruleset"),
        over=data["over"],
        last_taken=_cards(data["last_taken"], "last_taken"),
    )
