"""Where each piece of what a player may know goes in the observation vector: the layout, as data.

The observation is part of the game's definition (as OpenSpiel's games define their
observation tensors): the environments, the learned agents and the compiled core all
read this one description. :mod:`mulle_env.observation` fills vectors by it with numpy
(the reference encoder); the compiled core is configured with its offsets when it loads
(:mod:`mulle_env.engine.cstate`) and writes the same vectors in C. Standard library only.

Layout (docs/environments.md describes every slice): eight per-face count blocks of 52
(``hand``, ``loose``, ``build_cards``, ``my_mulle``, ``my_intake``, ``opp_mulle``,
``opp_intake``, ``unseen``), per build value 2..16 five features, four score sheets of
five entries (game and set, mine and the opponent's), thirteen scalars.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .cards import NUM_FACES
from .moves import MAX_BUILD_VALUE, MIN_BUILD_VALUE
from .rules import DEALS_PER_SET, HAND_SIZE, TABLE_DEAL
from .state import SHEET_KEYS

__all__ = [
    "BUILD_FEATURES",
    "FACE_BLOCKS",
    "NUM_BUILD_VALUES",
    "OBS_SHAPE",
    "OBS_SIZE",
    "OBS_SLICES",
    "OBS_VERSION",
    "SCALAR_FEATURES",
    "SCALES",
    "SCORE_SCALE",
    "SHEETS",
    "SHEET_BOUND_PER_SET",
    "layout_description",
    "layout_differences",
    "layout_fingerprint",
]

#: Version of the observation encoding; raised whenever the meaning of an entry changes.
OBS_VERSION = 1

#: Per-face count blocks (52 entries each, values 0..2), in layout order. ``my_*``/``opp_*``
#: are relative to the observing player; ``unseen`` = 2 minus every copy visible to them.
FACE_BLOCKS: tuple[str, ...] = (
    "hand", "loose", "build_cards", "my_mulle", "my_intake", "opp_mulle", "opp_intake", "unseen",
)
#: Per build value 2..16, these features (``cards`` is the build's card count / 10).
BUILD_FEATURES: tuple[str, ...] = ("present", "mine", "opponents", "locked", "cards")
NUM_BUILD_VALUES = MAX_BUILD_VALUE - MIN_BUILD_VALUE + 1
#: The four score slices (each the five :data:`~mulle_env.engine.state.SHEET_KEYS`), in order.
SHEETS: tuple[str, ...] = ("my_score", "opp_score", "my_set_score", "opp_set_score")
#: The trailing scalars, in order (see docs/environments.md for scales).
SCALAR_FEATURES: tuple[str, ...] = (
    "opponent_hand_size", "deck_size", "set", "deal", "my_turn", "i_lead", "seat",
    "last_capturer_me", "last_capturer_opponent", "over",
    "lock_every_build", "discard_only_if_no_capture", "mulle_hand_values",
)
#: Score sheets (mulle, tabbe, intake, bonus, total) are divided by this.
SCORE_SCALE = 100.0
#: Bound on any sheet entry of one set: mulle <= 435, tabbe <= 48, intake and bonus <= 40.
#: More than any one set's total can reach (435 mulle + 48 tabbe + 40 bonus with every flag).
SHEET_BOUND_PER_SET = 600
#: The divisors of the scaled entries, by name (``set`` is divided by the ruleset's sets).
SCALES: dict[str, float] = {
    "score": SCORE_SCALE,
    "build_cards": 10.0,
    "deck": float(2 * NUM_FACES - 2 * HAND_SIZE - TABLE_DEAL),  # 80: the deck after a first deal
    "hand": float(HAND_SIZE),
    "deals_per_set": float(DEALS_PER_SET),
}


def _slices() -> dict[str, slice]:
    out, at = {}, 0
    for name in FACE_BLOCKS:
        out[name] = slice(at, at + NUM_FACES)
        at += NUM_FACES
    out["builds"] = slice(at, at + NUM_BUILD_VALUES * len(BUILD_FEATURES))
    at = out["builds"].stop
    for name in SHEETS:
        out[name] = slice(at, at + len(SHEET_KEYS))
        at += len(SHEET_KEYS)
    out["scalars"] = slice(at, at + len(SCALAR_FEATURES))
    return out


#: Name -> slice of the observation vector.
OBS_SLICES: dict[str, slice] = _slices()
OBS_SIZE: int = OBS_SLICES["scalars"].stop
OBS_SHAPE: tuple[int] = (OBS_SIZE,)


def layout_description() -> dict[str, Any]:
    """The observation layout as plain JSON data: every slice's offsets and every scale.

    Two encoders with equal descriptions fill equal vectors from equal views (as far as
    a description can tell: it holds the slice names and offsets, the feature names in
    order, and the divisors the encoder applies). Policy files record it.
    """
    return {
        "version": OBS_VERSION,
        "size": OBS_SIZE,
        "slices": [[name, s.start, s.stop] for name, s in OBS_SLICES.items()],
        "face_blocks": list(FACE_BLOCKS),
        "build_features": list(BUILD_FEATURES),
        "build_values": [MIN_BUILD_VALUE, MAX_BUILD_VALUE],
        "scalar_features": list(SCALAR_FEATURES),
        "sheet_keys": list(SHEET_KEYS),
        "scales": {
            "score": SCORE_SCALE,
            "build_cards": SCALES["build_cards"],
            "deck": int(SCALES["deck"]),
            "hand": HAND_SIZE,
            "deals_per_set": DEALS_PER_SET,
        },
    }


def layout_fingerprint(description: dict[str, Any] | None = None) -> str:
    """A short stable hash (16 hex digits) of :func:`layout_description` (or of ``description``)."""
    text = json.dumps(layout_description() if description is None else description, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def layout_differences(other: dict[str, Any], limit: int = 6) -> list[str]:
    """What differs between the layout description ``other`` and today's, in words (at most ``limit`` lines)."""
    mine = layout_description()
    out: list[str] = []
    for key in sorted(set(mine) | set(other)):
        a, b = other.get(key), mine.get(key)
        if a == b:
            continue
        if key == "slices" and isinstance(a, list):
            theirs = {row[0]: tuple(row[1:]) for row in a if isinstance(row, list) and row}
            ours = {row[0]: tuple(row[1:]) for row in mine["slices"]}
            for name in [*ours, *(n for n in theirs if n not in ours)]:
                if theirs.get(name) != ours.get(name):
                    out.append(f"slice {name!r}: {_span(theirs.get(name))} in the file, {_span(ours.get(name))} here")
        else:
            out.append(f"{key}: {a!r} in the file, {b!r} here")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])


def _span(s: tuple[int, ...] | None) -> str:
    return "absent" if s is None else f"[{s[0]}:{s[1]}]"
