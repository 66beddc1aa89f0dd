"""The layout of Casino's observation vector: its slices, the names of their entries and their scales.

The environments' encoder (:mod:`mulle_env.games.casino`, ``encode_view``) writes it, and so does
the compiled core's writer (``csrc/rules.c``, configured from these names and offsets by
:mod:`mulle_env.casino.cstate`); both read the layout here, in the engine, which imports nothing of
the environments. Standard library only.
"""

from __future__ import annotations

from .ruleset import MAX_ROUNDS, MAX_TARGET

__all__ = [
    "BUILD_FEATURES", "BUILD_VALUES", "FACE_BLOCKS", "OBS_SIZE", "OBS_SLICES", "OBS_VERSION", "RACE_FEATURES",
    "RULE_FEATURES", "SCALAR_FEATURES", "SCALES", "SCORE_SCALE",
]

#: Version of the observation encoding; raised whenever the meaning of an entry changes.
OBS_VERSION = 1

#: Per-face blocks of 52 entries (0 or 1: one deck), in layout order; ``my_*``/``opp_*`` are relative to
#: the observing seat. ``my_builds``/``opp_builds``: the cards in builds that seat owns; ``unseen``: the
#: cards in no block before it (the opponent's hand and the stock).
FACE_BLOCKS: tuple[str, ...] = ("hand", "loose", "my_builds", "opp_builds", "my_captured", "opp_captured", "unseen")
#: Build values 1..10 (1 only for a multiple build of aces).
BUILD_VALUES: tuple[int, ...] = tuple(range(1, 11))
#: Per build value: how many builds of that value each seat owns (at most one in all under
#: ``gather_all=True``), their cards / 10, and whether one of them is single (can be increased).
BUILD_FEATURES: tuple[str, ...] = ("mine", "theirs", "my_cards", "their_cards", "my_single", "their_single")
#: Per seat, mine then the opponent's: what the round's points will be counted from (CASINO.md 5.3).
RACE_FEATURES: tuple[str, ...] = ("cards", "spades", "aces", "big_casino", "little_casino", "sweeps")
#: Scalars about the game and the turn.
SCALAR_FEATURES: tuple[str, ...] = (
    "my_score", "opp_score", "round", "hand_size", "opponent_hand_size", "stock_size", "my_turn", "seat",
    "i_deal", "last_capturer_me", "last_capturer_opponent", "over",
)
#: The ruleset's flags, as numbers (each in [0, 1]).
RULE_FEATURES: tuple[str, ...] = (
    "gather_all", "court_capture_all", "sweeps", "sum_build_max_card", "increase_max_cards", "trail_with_build",
    "target_score", "rounds",
)
#: Game totals are divided by this (the default target).
SCORE_SCALE = 21.0
#: The divisors of the scaled entries, by name.
SCALES: dict[str, float] = {
    "build_cards": 10.0, "cards": 52.0, "spades": 13.0, "aces": 4.0, "sweeps": 10.0, "score": SCORE_SCALE,
    "hand": 4.0, "stock": 40.0, "sum_build_max_card": 10.0, "increase_max_cards": 52.0,
    "target_score": float(MAX_TARGET), "rounds": float(MAX_ROUNDS),
}


def _slices() -> dict[str, slice]:
    out, at = {}, 0
    for name in FACE_BLOCKS:
        out[name] = slice(at, at + 52)
        at += 52
    for name, size in (("builds", len(BUILD_VALUES) * len(BUILD_FEATURES)), ("my_race", len(RACE_FEATURES)),
                       ("opp_race", len(RACE_FEATURES)), ("scalars", len(SCALAR_FEATURES)),
                       ("rules", len(RULE_FEATURES))):
        out[name] = slice(at, at + size)
        at += size
    return out


#: Name -> slice of the observation vector.
OBS_SLICES: dict[str, slice] = _slices()
#: Size of one observation.
OBS_SIZE: int = OBS_SLICES["rules"].stop
