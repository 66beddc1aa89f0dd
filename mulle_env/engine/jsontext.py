"""The one bounded reader of JSON from outside: a size limit, a depth limit, UTF-8, and a refusal naming the source.

Every reader of JSON the project did not write itself goes through :func:`parse_json`:
results files, game records, positions (``GameState.from_json``), policy metadata, the live
server's uploads and messages, the game store's rows and training's record files.
:mod:`mulle_env.util.files` offers it with the file reading around it (``read_json``). It lives in
the engine, which imports only the standard library, so that the engine's own readers use it
too.
"""

from __future__ import annotations

import json
import re
import sys
from itertools import accumulate
from typing import Any

__all__ = ["DEFAULT_JSON_BYTES", "MAX_JSON_DEPTH", "JSONInputError", "parse_json"]

#: The most bytes :func:`parse_json` reads unless told otherwise (the file reader's own limit).
DEFAULT_JSON_BYTES = 64 * 1024 * 1024

#: How deeply JSON from outside may nest. A game record, a results line or a policy's metadata
#: nests four or five levels; 64 leaves room for any honest document and stays far below the
#: depth where Python's own parser gives up with a ``RecursionError`` (about 1000).
MAX_JSON_DEPTH = 64

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"', re.DOTALL)
_NOT_STRUCTURE = re.compile(r'[^\[\]{}"\\]+')
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONInputError(ValueError):
    """JSON from outside that the bounded reader refuses: not JSON, not UTF-8, too large or nested too deeply.

    ``where`` names the source (a file, ``"the request body"``), ``line`` the line (``None``
    when unknown) and ``reason`` what is wrong; ``str()`` says all three in one line.
    """

    def __init__(self, where: str, line: int | None, reason: str) -> None:
        self.where, self.line, self.reason = where, line, reason
        super().__init__(f"{where}{'' if line is None else f', line {line}'}: {reason}")


def _line_of_depth(text: str, max_depth: int) -> int | None:
    """The line where ``text`` first nests deeper than ``max_depth`` (only run on refusal, so a plain loop)."""
    depth, line, in_string, escaped = 0, 1, False, False
    for ch in text:
        if ch == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > max_depth:
                return line
        elif ch in "]}":
            depth -= 1
    return None


def _depth(text: str) -> int:
    """How deeply valid JSON ``text`` nests (its strings are terminated, so the regex runs in linear time)."""
    # What is left once all but brackets, quotes and backslashes go is still valid to strip strings from.
    brackets = _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", _NOT_STRUCTURE.sub("", text)))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)


def parse_json(text: str | bytes | bytearray, where: str = "the input", *, line: int | None = None,
               max_bytes: int = DEFAULT_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The value of JSON ``text`` read from outside, or a :class:`JSONInputError` naming ``where`` and the line.

    Every reader of JSON the project did not write itself in this process goes through
    here (results files, game records, policy metadata, the live server's uploads and
    messages, the game store's rows, training's record files): ``text`` of more than
    ``max_bytes`` UTF-8 bytes, bytes that are not UTF-8, text that is not JSON and JSON
    nested more than ``max_depth`` levels are all refused with one line that says which.
    ``line`` is the line of a file that ``text`` is (a JSON-lines file); without it, a
    syntax error's own line is named.

    >>> parse_json('{"a": [1, 2]}')
    {'a': [1, 2]}
    >>> parse_json("[" * 100 + "]" * 100, "deep.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mulle_env.engine.jsontext.JSONInputError: deep.json, line 1: nested more than 64 levels deep (...)
    """
    size = len(text) if isinstance(text, (bytes, bytearray)) else None
    if size is not None and size > max_bytes:
        raise JSONInputError(where, line, f"{size:,} bytes of JSON; at most {max_bytes:,} are read")
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(where, line, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    elif len(text) > max_bytes // 4 and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise JSONInputError(where, line, f"more than {max_bytes:,} bytes of JSON; at most {max_bytes:,} are read")
    deep = f"nested more than {max_depth} levels deep (JSON from outside nests at most {max_depth})"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONInputError(where, line if line is not None else exc.lineno, f"not valid JSON ({exc})") from None
    except ValueError:  # Python's limit on the digits of an int it converts (4,300 by default)
        limit = sys.get_int_max_str_digits()
        found = re.search(rf"\d{{{limit + 1},}}", text)
        at = line if line is not None else (text.count("\n", 0, found.start()) + 1 if found else None)
        raise JSONInputError(where, at, f"a number of more than {limit:,} digits, which no field of the project's "
                                        "JSON holds (Python reads at most that many)") from None
    except RecursionError:  # deeper than Python's parser goes
        raise JSONInputError(where, line if line is not None else _line_of_depth(text, max_depth), deep) from None
    # Counting brackets is quick; only text that holds more openings than the limit is measured.
    if text.count("[") + text.count("{") > max_depth and _depth(text) > max_depth:
        raise JSONInputError(where, line if line is not None else _line_of_depth(text, max_depth), deep)
    return value

