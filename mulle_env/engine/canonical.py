"""One canonical JSON form, a stable hash and equality by that form: what every game's state shares.

A game state that can say its position as a plain dict (``to_dict``) and read one back
(``from_dict``) gets the rest here, once for Mulle's two backends and Casino alike: the canonical
JSON text (sorted keys, no spaces), its SHA-256 as :meth:`~CanonicalForm.key`, equality by the
canonical form, and :meth:`~CanonicalForm.from_json` through the project's one bounded reader of
outside JSON. Standard library only, like the engines that use it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Self

from .errors import InvalidPositionError

__all__ = ["CanonicalForm"]


class CanonicalForm:
    """Mixin: ``to_json``, ``key``, ``==`` and ``from_json`` from a class's ``to_dict`` and ``from_dict``.

    A state is mutable, so it has no ``hash()``: use :meth:`key`, which is equal in every
    process and on every machine for equal positions.
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The canonical form as a plain dict (each game's own)."""
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: dict[str, Any], ruleset: Any = None) -> Self:
        """Read a position from its dict form (each game's own, validating every field)."""
        raise NotImplementedError

    def to_json(self) -> str:
        """Canonical JSON text (sorted keys, no spaces): what :meth:`key` hashes."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def key(self) -> str:
        """Stable hash of the canonical form: equal in every process and on every machine."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CanonicalForm):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable: use key()

    @classmethod
    def from_json(cls, text: str | bytes | bytearray, ruleset: Any = None) -> Self:
        """Read a position from JSON text (the bounded reader: size, depth, UTF-8, long numbers refused by name)."""
        from .jsontext import JSONInputError, parse_json

        if not isinstance(text, (str, bytes, bytearray)):
            raise InvalidPositionError(f"a position's JSON is text (str or bytes), not {type(text).__name__}")
        try:
            data = parse_json(text, "the position")
        except JSONInputError as exc:
            raise InvalidPositionError(str(exc)) from None
        return cls.from_dict(data, ruleset)
