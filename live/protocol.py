"""The live mode's wire protocol: JSON messages ``{"type": ..., "payload": {...}}`` over WebSocket.

Standard library only, so the protocol can be read, built and checked without aiohttp.
See docs/live.md for every message with an example. In short:

* client to server: ``join``, ``leave``, ``ping``, ``response``, ``drop`` (Casino), ``lobby_action``,
  ``watch``, ``set_speed``;
* server to client: ``joined_confirmation``, ``watch_confirmation``, ``pong``, ``request``,
  ``drop_choices`` (Casino), ``notification``, ``error``.

Errors carry the platform's codes (:class:`ErrorCode`): 1xxx general, 2xxx session and table,
3xxx game actions, 4xxx lobby.
"""

from __future__ import annotations

import unicodedata
from enum import IntEnum
from typing import Any

from mulle_env.casino.drops import pile_of
from mulle_env.engine.rng import seed_problem
from mulle_env.files import JSONInputError, parse_json

__all__ = [
    "CLIENT_TYPES", "JS_SAFE_INT", "MAX_SETS", "PROTOCOL_VERSION", "ErrorCode", "ProtocolError", "check_name",
    "error_message", "js_safe", "message", "parse",
]

#: The games a table may play (``join``'s and ``watch``'s ``game``; :mod:`live.games` has each one's object).
GAMES = ("mulle", "casino")

#: Version of the message set; sent in ``joined_confirmation`` and ``watch_confirmation``.
PROTOCOL_VERSION = 1

#: Largest integer a JavaScript number holds exactly (2**53): larger ones go out as decimal strings (issue 33, 10).
JS_SAFE_INT = 2**53

#: Unicode categories a name may not contain: control (Cc), format (Cf: bidi overrides, zero-width joiners),
#: surrogates, private use, unassigned, and line/paragraph separators (issue 33, defect 5).
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "a formatting character (bidi override, zero-width...)",
                       "Cs": "a surrogate", "Co": "a private-use character", "Cn": "an unassigned code point",
                       "Zl": "a line separator", "Zp": "a paragraph separator"}

#: Code points that draw nothing though Unicode files them as letters or symbols (so the categories above miss
#: them): the Hangul fillers, the blank Braille pattern, the combining grapheme joiner, Khmer's inherent vowels,
#: and the Mongolian vowel separator. A name of them looks empty or copies another's (issue 52, item 6).
INVISIBLE = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x034F, 0x17B4, 0x17B5, 0x180E, 0x1D159, 0x1D173,
                       0x1D174, 0x1D175, 0x1D176, 0x1D177, 0x1D178, 0x1D179, 0x1D17A})

#: Most sets a live game (``join``/``watch`` ``sets``) or a replayed record may have.
MAX_SETS = 10


class ErrorCode(IntEnum):
    """The error codes of the platform's protocol (seed section 7.2.4)."""

    UNKNOWN_ERROR = 1000
    INVALID_MESSAGE = 1001
    UNAUTHORIZED = 1002
    SERVER_BUSY = 1003
    SESSION_EXPIRED = 2000
    SESSION_NOT_FOUND = 2001
    TABLE_NOT_FOUND = 2002
    TABLE_FULL = 2003
    NAME_TAKEN = 2004
    ALREADY_ON_TABLE = 2005
    INVALID_ACTION = 3000
    INVALID_CARDS = 3001
    NOT_YOUR_TURN = 3002
    ACTION_TIMEOUT = 3006
    GAME_ALREADY_STARTED = 4000
    NOT_LOBBY_HOST = 4001


class ProtocolError(ValueError):
    """A message the server refuses; becomes an ``error`` message with ``code`` and ``details``.

    Args:
        code: The :class:`ErrorCode`.
        message: What was wrong and what is allowed, for people.
        details: Extra JSON-able facts (the field, the value received...).
        request_id: The ``request_id`` of the response that caused it, if any.
    """

    def __init__(self, code: ErrorCode, message: str, details: dict | None = None,
                 request_id: str | None = None) -> None:
        super().__init__(message)
        self.code = ErrorCode(code)
        self.details = details or {}
        self.request_id = request_id

    def to_message(self) -> dict:
        """The ``error`` message for this error."""
        return error_message(self.code, str(self), self.details, self.request_id)


def message(type_: str, payload: dict | None = None) -> dict:
    """A message ``{"type": type_, "payload": payload}`` (payload ``{}`` when omitted)."""
    return {"type": type_, "payload": payload if payload is not None else {}}


def error_message(code: ErrorCode, text: str, details: dict | None = None, request_id: str | None = None) -> dict:
    """An ``error`` message: ``{message, code, details, original_request_id?}``."""
    payload = {"message": text, "code": int(code), "details": details or {}}
    if request_id is not None:
        payload["original_request_id"] = request_id
    return message("error", payload)


def _str(payload: dict, key: str, max_len: int = 64, required: bool = True) -> str | None:
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > max_len:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            f"'{key}' must be a non-empty string of at most {max_len} characters, not {value!r:.80}",
                            {"field": key})
    return value.strip()


def check_name(value: object, key: str, max_len: int) -> str:
    """A person's or a table's name as the server keeps it: NFC, stripped, at most ``max_len`` characters, and
    without control or formatting characters (``"\u202elraC"`` would show as "Carl"); ProtocolError 1001 naming
    the character and its position otherwise."""
    if not isinstance(value, str):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            f"'{key}' must be a string of at most {max_len} characters, not {value!r:.80}",
                            {"field": key})
    text = unicodedata.normalize("NFC", value).strip()
    if not text or len(text) > max_len:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"'{key}' must be 1 to {max_len} characters (after Unicode "
                            f"normalisation, spaces at the ends removed), not {len(text)}", {"field": key})
    for i, ch in enumerate(text):
        category = unicodedata.category(ch)
        what = _REFUSED_CATEGORIES.get(category)
        if what is None and (ord(ch) in INVISIBLE or (category == "Zs" and ch != " ")):
            what = "an invisible or blank character" if ord(ch) in INVISIBLE else "a space other than the plain space"
        if what is not None:
            name = unicodedata.name(ch, "")
            raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                                f"'{key}' may not contain {what}: U+{ord(ch):04X}{' ' + name if name else ''} at "
                                f"position {i + 1}; use letters, digits, spaces and punctuation",
                                {"field": key, "code_point": f"U+{ord(ch):04X}", "position": i + 1})
    if all(unicodedata.category(ch)[0] in "MZ" for ch in text):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"'{key}' shows nothing (only spaces and combining marks); "
                            "use letters, digits, spaces and punctuation", {"field": key})
    return text


def js_safe(value: Any) -> Any:
    """``value`` (JSON-able) with every integer beyond what a JavaScript number holds exactly (±2**53) as a decimal
    string: ``res.json()`` would round a 63-bit seed (issue 33, defect 10). Everything else is unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value) if abs(value) > JS_SAFE_INT else value
    if isinstance(value, dict):
        return {k: js_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [js_safe(v) for v in value]
    return value


def _int(payload: dict, key: str, low: int, high: int) -> int | None:
    value = payload.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            f"'{key}' must be a whole number from {low} to {high}, not {value!r:.40}", {"field": key})
    return value


def _seed(payload: dict) -> int | None:
    """The optional ``seed``: the one seed domain of every command (docs/engine.md, "Seeds")."""
    value = payload.get("seed")
    if value is None:
        return None
    why = seed_problem(value, "'seed'")
    if why is not None:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, why[:200], {"field": "seed"})
    return int(value)


def _check_join(p: dict) -> dict:
    if "session_id" in p:
        return {"session_id": _str(p, "session_id", 128)}
    out = {"table_name": check_name(p.get("table_name"), "table_name", 64),
           "player_name": check_name(p.get("player_name"), "player_name", 32)}
    out["opponent"] = _str(p, "opponent", 200, required=False)
    out["seed"] = _seed(p)
    out["sets"] = _int(p, "sets", 1, MAX_SETS)
    out["agent_delay_ms"] = _int(p, "agent_delay_ms", 0, 10_000)
    out["game"] = _game(p)
    # A new table's move clock for people (live.seats): 0 for none, else 10 s to an hour.
    clock = out["move_clock_s"] = _int(p, "move_clock_s", 0, 3600)
    if clock is not None and 0 < clock < 10:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"'move_clock_s' must be 0 (no clock) or 10 to 3600 seconds, "
                            f"not {clock}", {"field": "move_clock_s"})
    return out


def _game(p: dict) -> str | None:
    """The optional ``game`` of a new table: ``"mulle"`` (the default) or ``"casino"``."""
    value = p.get("game")
    if value is not None and value not in GAMES:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"'game' must be one of {', '.join(GAMES)}, not {value!r:.40}",
                            {"field": "game"})
    return value


def _pile(value: object, key: str, request_id: str) -> Any:
    try:
        return pile_of(value)
    except (ValueError, TypeError) as exc:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"'{key}' must be a card such as \"SP 5\" or a build as a list "
                            f"of its cards such as [\"KL 2\", \"HJ 3\"], not {value!r:.80} ({exc})",
                            {"field": key}, request_id) from None


def _check_drop(p: dict) -> dict:
    """A drop at a Casino table (CASINO.md 8): ``{request_id, card, target: card | [build cards] | null, staged}``."""
    request_id = p.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "a drop needs the 'request_id' of the request it answers",
                            {"field": "request_id"})
    card = p.get("card")
    if not isinstance(card, str):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "a drop names its hand 'card', e.g. \"SP 5\"", {"field": "card"},
                            request_id)
    staged = p.get("staged", [])
    if not isinstance(staged, list) or len(staged) > 40:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "'staged' must be a list of at most 40 table piles (cards, "
                            "or builds as lists of cards)", {"field": "staged"}, request_id)
    target = p.get("target")
    return {"request_id": request_id, "card": _pile(card, "card", request_id),
            "target": None if target is None else _pile(target, "target", request_id),
            "staged": [_pile(s, "staged", request_id) for s in staged]}


def _check_response(p: dict) -> dict:
    request_id = p.get("request_id")
    if not isinstance(request_id, str) or not request_id:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "a response needs the 'request_id' of the request it answers",
                            {"field": "request_id"})
    data = p.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("move"), str):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            "a response's data is {\"move\": \"<move text>\"}, e.g. {\"move\": \"capture KL 9\"}",
                            {"field": "data"}, request_id)
    return {"request_id": request_id, "move": data["move"]}


def _check_lobby(p: dict) -> dict:
    action = p.get("action")
    if action not in ("start_game", "set_opponent", "rematch"):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            f"unknown lobby action {action!r:.40}; actions: start_game, set_opponent, rematch",
                            {"field": "action"})
    out = {"action": action}
    if action == "set_opponent":
        data = p.get("data")
        if not isinstance(data, dict):
            raise ProtocolError(ErrorCode.INVALID_MESSAGE, "set_opponent needs data: {\"opponent\": \"<agent spec>\"}",
                                {"field": "data"})
        out["opponent"] = _str(data, "opponent", 200)
    return out


def _check_watch(p: dict) -> dict:
    name = p.get("table_name")
    out: dict = {"table_name": None if name is None else check_name(name, "table_name", 64),
                 "delay_ms": _int(p, "delay_ms", 0, 10_000)}
    agents = p.get("agents")
    if agents is not None:
        if (not isinstance(agents, list) or len(agents) != 2
                or not all(isinstance(a, str) and a.strip() and len(a) <= 200 for a in agents)):
            raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                                "'agents' must be two agent specs such as [\"heuristic\", \"pimc\"], "
                                f"not {agents!r:.80}",
                                {"field": "agents"})
        out["agents"] = [a.strip() for a in agents]
    elif out["table_name"] is None:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            "watch needs 'agents' (two specs, a new agents' table) or 'table_name' (an existing table)",
                            {"field": "agents"})
    out["seed"] = _seed(p)
    out["sets"] = _int(p, "sets", 1, MAX_SETS)
    out["game"] = _game(p)
    return out


def _check_speed(p: dict) -> dict:
    delay = _int(p, "delay_ms", 0, 10_000)
    if delay is None:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "set_speed needs 'delay_ms' (0 to 10000)", {"field": "delay_ms"})
    return {"delay_ms": delay}


def _check_ping(p: dict) -> dict:
    stamp = p.get("timestamp")
    if stamp is not None and (not isinstance(stamp, str) or len(stamp) > 64):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "'timestamp' must be a string of at most 64 characters "
                            "(echoed back as sent; an ISO 8601 time is the convention)", {"field": "timestamp"})
    return {"timestamp": stamp}


_CHECKS = {
    "join": _check_join,
    "leave": lambda p: {},
    "ping": _check_ping,
    "response": _check_response,
    "drop": _check_drop,
    "lobby_action": _check_lobby,
    "watch": _check_watch,
    "set_speed": _check_speed,
}

#: The message types a client may send.
CLIENT_TYPES: tuple[str, ...] = tuple(_CHECKS)


def parse(text: str | bytes, max_bytes: int) -> tuple[str, dict]:
    """Check one client message; return ``(type, checked payload)`` or raise :class:`ProtocolError` (1001).

    ``max_bytes`` bounds the message's size in UTF-8 bytes.
    """
    size = len(text.encode() if isinstance(text, str) else text)
    if size > max_bytes:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"message of {size} bytes is over the limit of {max_bytes}",
                            {"size": size, "limit": max_bytes})
    try:
        # The bounded reader: a few kB of [[[[...]]]] is a bad message, not a dropped connection.
        data = parse_json(text, "the message", max_bytes=max_bytes)
    except JSONInputError as exc:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"{exc.reason}; a message is a JSON object "
                            "{\"type\": \"...\", \"payload\": {...}}",
                            {"received_message": str(text)[:200]}) from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            "a message is a JSON object {\"type\": \"...\", \"payload\": {...}}",
                            {"received_message": str(text)[:200]})
    type_ = data["type"]
    payload = data.get("payload", {})
    if payload is None:
        payload = {}
    if not isinstance(payload, dict):
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, "'payload' must be a JSON object", {"type": type_[:40]})
    check = _CHECKS.get(type_)
    if check is None:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE,
                            f"unknown message type {type_[:40]!r}; types: {', '.join(CLIENT_TYPES)}",
                            {"type": type_[:40]})
    return type_, check(payload)
