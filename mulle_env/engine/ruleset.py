"""The :class:`Ruleset`: every variant flag of RULES.md as one frozen value."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

from .cards import MULLE_VALUE, MULLE_VALUE_HAND
from .errors import InvalidRulesetError


class FlagSet:
    """What every game's ``Ruleset`` (a frozen dataclass of flags) shares: its flags as a dict, what differs from
    the defaults, and the two readers (command-line texts, JSON dicts), written once for Mulle and Casino."""

    __slots__ = ()
    #: How refusals name this game's flags (``"Casino ruleset flag"``).
    flag_word: ClassVar[str] = "ruleset flag"

    def to_dict(self) -> dict[str, Any]:
        """All flags as a plain dict (the canonical JSON form)."""
        # The flags are plain bools, ints and strings: no deep copy needed (views are built per message).
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]  # a dataclass

    def changes(self) -> dict[str, Any]:
        """Only the flags that differ from the defaults (``{}`` for default rules)."""
        default = type(self)()
        return {k: v for k, v in self.to_dict().items() if getattr(default, k) != v}

    @classmethod
    def from_strings(cls, items: Iterable[str]) -> Self:
        """Build from ``"key=value"`` texts, as command lines give them (``--rule sets=1``).

        Booleans read true/false, yes/no, on/off or 1/0 (any case); whole numbers for the int
        flags (``none`` too where a flag may be ``None``); a text flag its word
        (:func:`flags_from_strings`).
        """
        return cls(**flags_from_strings(cls, items, cls.flag_word))

    @classmethod
    def from_dict(cls, data: dict[str, Any] | Self | None) -> Self:
        """Build from a dict of flags (missing ones take their defaults); an unknown key is refused by name."""
        if data is None:
            return cls()
        if isinstance(data, cls):
            return data
        return cls(**flags_from_dict(cls, data, cls.flag_word))


@dataclass(frozen=True, slots=True)
class Ruleset(FlagSet):
    """The rules a game is played by; the defaults are RULES.md's.

    Attributes:
        sets: Sets (omgångar) per game (RULES.md 1.3).
        forced_capture: A capture takes the largest collection of groups (4.1.3). With
            ``False`` every maximal collection is a separate move that names its cards.
        lock_every_build: Every build is locked as soon as it is made (4.2.6).
        discard_only_if_no_capture: A card that could capture may not be discarded
            (4.4.2); ``False`` lifts that restriction.
        mulle_hand_values: SP 2 and RU 10 score their hand values 15 and 16 in the
            mulle pile instead of 2 and 10 (6.1).
    """

    sets: int = 2
    forced_capture: bool = True
    lock_every_build: bool = False
    discard_only_if_no_capture: bool = True
    mulle_hand_values: bool = False

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("bool", bool):
                if not isinstance(value, bool):
                    raise InvalidRulesetError(
                        f"Ruleset.{f.name} must be True or False, not {value!r}"
                    )
        if isinstance(self.sets, bool) or not isinstance(self.sets, int) or not 1 <= self.sets <= 100:
            raise InvalidRulesetError(f"Ruleset.sets must be an int from 1 to 100, not {self.sets!r}")

    @property
    def mulle_values(self) -> tuple[int, ...]:
        """Mulle points per face under these rules (RULES.md 6.1, ``mulle_hand_values``)."""
        return MULLE_VALUE_HAND if self.mulle_hand_values else MULLE_VALUE


_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def flags_from_strings(cls: type[Any], items: Iterable[str], what: str = "ruleset flag") -> dict[str, Any]:
    """The flags of the dataclass ``cls`` (a game's Ruleset) read from ``"key=value"`` texts, typed by each field.

    Both games' ``Ruleset.from_strings`` read command lines here: a ``bool`` field reads
    true/false, yes/no, on/off or 1/0; an ``int`` field a whole number; an ``int | None``
    field also ``none``; a ``str`` field its text in lower case (the dataclass checks the
    value). ``what`` names the flags in refusals (``"Casino ruleset flag"``).
    """
    known = {f.name: f for f in fields(cls)}
    if isinstance(items, str):  # iterating it would read one letter per rule
        raise InvalidRulesetError(
            f"rules are a list of 'key=value' texts, not a single string {items!r}; "
            f"write Ruleset.from_strings([{items!r}])"
        )
    data: dict[str, Any] = {}
    for item in items:
        key, eq, text = str(item).partition("=")
        key, text = key.strip(), text.strip()
        if not eq or not key:
            raise InvalidRulesetError(f"a rule reads key=value, not {item!r}; flags: {', '.join(known)}")
        if key not in known:
            raise InvalidRulesetError(f"unknown {what} {key!r}; known flags: {', '.join(known)}")
        kind, low = str(known[key].type), text.lower()
        if kind in ("bool", str(bool)):
            if low not in _TRUE + _FALSE:
                raise InvalidRulesetError(f"rule {key} takes true or false, not {text!r}")
            data[key] = low in _TRUE
        elif kind == "str":
            data[key] = low
        elif "None" in kind and low in ("none", "null", ""):
            data[key] = None
        else:
            try:
                data[key] = int(text)
            except ValueError:
                raise InvalidRulesetError(f"rule {key} takes a whole number, not {text!r}") from None
    return data


def flags_from_dict(cls: type[Any], data: Any, what: str = "ruleset flag") -> dict[str, Any]:
    """``data`` checked to be a dict of the dataclass ``cls``'s flags (the dataclass checks their values).

    Both games' ``Ruleset.from_dict`` ask here; an unknown key is an error listing the known ones.
    """
    if not isinstance(data, dict):
        raise InvalidRulesetError(f"a {what.rpartition(' flag')[0]} must be a dict of flags, not {data!r:.80}")
    known = [f.name for f in fields(cls)]
    unknown = sorted(set(map(str, data)) - set(known))
    if unknown:
        raise InvalidRulesetError(f"unknown {what}(s) {', '.join(unknown)}; known flags: {', '.join(known)}")
    return data
