"""The observation encoder: a fixed-shape float32 vector of what one player may know.

Everything comes from :meth:`GameState.view` content: the own hand, the table, the
public piles, counts and score sheets. Nothing hidden (the opponent's hand, the deck
order) enters, so two states that differ only there encode identically.

Two entry points give the same vector:

* :func:`encode_view` reads a :class:`PlayerView` (what agents hold);
* :func:`encode_state` reads a :class:`GameState` for one player and is the hot path
  of the environments: it touches only the fields a view exposes, skipping the view's
  construction.

Both fill a preallocated array (``out``) from precomputed offsets. The layout is in
:data:`OBS_SLICES` and documented slice by slice in docs/environments.md.

>>> import mulle_env as me
>>> from mulle_env import observation as ob
>>> st = me.new_game(seed=7)
>>> x = ob.encode_state(st, 0)
>>> x.shape == (ob.OBS_SIZE,) and bool((x == ob.encode_view(st.view(0))).all())
True
>>> int(x[ob.OBS_SLICES["hand"]].sum())
8
"""

from __future__ import annotations

import numpy as np

from .engine.cards import COPIES, NUM_FACES
from .engine.moves import MAX_BUILD_VALUE, MIN_BUILD_VALUE
from .engine.rules import DEALS_PER_SET, HAND_SIZE, TABLE_DEAL, leader
from .engine.ruleset import Ruleset
from .engine.state import SHEET_KEYS, GameState, PlayerView, add_sheets, intake_bonus, sheet

__all__ = [
    "BUILD_FEATURES",
    "FACE_BLOCKS",
    "OBS_DTYPE",
    "OBS_SHAPE",
    "OBS_SIZE",
    "OBS_SLICES",
    "SCALAR_FEATURES",
    "SCORE_SCALE",
    "encode_into",
    "encode_state",
    "encode_view",
    "observation_bounds",
]

#: Per-face count blocks (52 entries each, values 0..2), in layout order. ``my_*``/``opp_*``
#: are relative to the observing player; ``unseen`` = 2 minus every copy visible to them.
FACE_BLOCKS: tuple[str, ...] = (
    "hand", "loose", "build_cards", "my_mulle", "my_intake", "opp_mulle", "opp_intake", "unseen",
)
#: Per build value 2..16, these features (``cards`` is the build's card count / 10).
BUILD_FEATURES: tuple[str, ...] = ("present", "mine", "opponents", "locked", "cards")
NUM_BUILD_VALUES = MAX_BUILD_VALUE - MIN_BUILD_VALUE + 1
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
_BUILD_CARDS_SCALE = 10.0
_DECK_AFTER_FIRST_DEAL = 2 * NUM_FACES - 2 * HAND_SIZE - TABLE_DEAL  # 80


def _slices() -> dict[str, slice]:
    out, at = {}, 0
    for name in FACE_BLOCKS:
        out[name] = slice(at, at + NUM_FACES)
        at += NUM_FACES
    out["builds"] = slice(at, at + NUM_BUILD_VALUES * len(BUILD_FEATURES))
    at = out["builds"].stop
    for name in ("my_score", "opp_score", "my_set_score", "opp_set_score"):
        out[name] = slice(at, at + len(SHEET_KEYS))
        at += len(SHEET_KEYS)
    out["scalars"] = slice(at, at + len(SCALAR_FEATURES))
    return out


#: Name -> slice of the observation vector.
OBS_SLICES: dict[str, slice] = _slices()
OBS_SIZE: int = OBS_SLICES["scalars"].stop
OBS_SHAPE: tuple[int] = (OBS_SIZE,)
OBS_DTYPE = np.float32

_NPILES = 7  # face blocks filled by counting (all but "unseen")
_UNSEEN = OBS_SLICES["unseen"]
_NF = len(BUILD_FEATURES)
_SCORES = slice(OBS_SLICES["my_score"].start, OBS_SLICES["opp_set_score"].stop)
_SCALARS = OBS_SLICES["scalars"]


def observation_bounds(ruleset: Ruleset | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise ``(low, high)`` of the observation under ``ruleset`` (game scores grow with ``sets``)."""
    sets = (ruleset or Ruleset()).sets
    low = np.zeros(OBS_SIZE, dtype=OBS_DTYPE)
    high = np.ones(OBS_SIZE, dtype=OBS_DTYPE)
    high[: len(FACE_BLOCKS) * NUM_FACES] = COPIES
    high[OBS_SLICES["builds"]][_NF - 1 :: _NF] = 2 * NUM_FACES / _BUILD_CARDS_SCALE
    for name in ("my_score", "opp_score"):
        high[OBS_SLICES[name]] = sets * SHEET_BOUND_PER_SET / SCORE_SCALE
    for name in ("my_set_score", "opp_set_score"):
        high[OBS_SLICES[name]] = SHEET_BOUND_PER_SET / SCORE_SCALE
    return low, high


_TAIL = OBS_SLICES["builds"].start  # everything from here on is built as one Python list
_TAIL_SIZE = OBS_SIZE - _TAIL
_SCORE_AT = _SCORES.start - _TAIL
_SCALAR_AT = _SCALARS.start - _TAIL
_BASE8 = np.arange(_NPILES + 1, dtype=np.intp) * NUM_FACES


def _fill(out, player, to_move, piles, builds, sheets4, set_no, deal_no, last_capturer, opp_hand, deck, ruleset, over):
    """Write one observation into ``out`` from plain ints and lists (the hot path of both encoders)."""
    lens = [len(p) for p in piles]
    flat = [*piles[0], *piles[1], *piles[2], *piles[3], *piles[4], *piles[5], *piles[6]]
    lens.append(len(flat))
    # Each card is counted in its pile's block and once more in the "unseen" block, which
    # then becomes 2 minus the count: every face exists twice.
    # bytes() converts the list of small ints in one C loop, several times faster than np.array().
    idx = np.repeat(_BASE8, lens)
    idx += np.frombuffer(bytes(flat + flat), dtype=np.uint8)
    out[: _UNSEEN.stop] = np.bincount(idx, minlength=_UNSEEN.stop)
    unseen = out[_UNSEEN]
    np.subtract(COPIES, unseen, out=unseen)
    tail = [0.0] * _TAIL_SIZE
    opp = 1 - player
    for value, n, owner, locked in builds:
        at = (value - MIN_BUILD_VALUE) * _NF
        tail[at] = 1.0
        if owner == player:
            tail[at + 1] = 1.0
        elif owner == opp:
            tail[at + 2] = 1.0
        if locked:
            tail[at + 3] = 1.0
        tail[at + 4] = n / _BUILD_CARDS_SCALE
    tail[_SCORE_AT:_SCALAR_AT] = [x / SCORE_SCALE for x in sheets4]
    tail[_SCALAR_AT:] = (
        opp_hand / HAND_SIZE,
        deck / _DECK_AFTER_FIRST_DEAL,
        set_no / ruleset.sets,
        deal_no / DEALS_PER_SET,
        to_move == player,
        leader(set_no, deal_no) == player,
        player,
        last_capturer == player,
        last_capturer == opp,
        over,
        ruleset.lock_every_build,
        ruleset.discard_only_if_no_capture,
        ruleset.mulle_hand_values,
    )
    out[_TAIL:] = tail
    return out


def _prepare(out):
    if out is None:
        return np.empty(OBS_SIZE, dtype=OBS_DTYPE)
    return out


def _sheet_values(s: dict) -> list[int]:
    return [s[k] for k in SHEET_KEYS]


def _set_values(mulle: int, tabbe: int, intake: int) -> list[int]:
    """The set sheet of :func:`mulle_env.engine.state.sheet` as a list in ``SHEET_KEYS`` order."""
    bonus = intake_bonus(intake)
    return [mulle, tabbe, intake, bonus, mulle + tabbe + bonus]


def encode_state(state: GameState, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``player`` in ``state``; equal to ``encode_view(state.view(player))``.

    Reads only what :meth:`GameState.view` exposes. ``out`` (float32, length
    :data:`OBS_SIZE`) is overwritten and returned; without it a new array is made.
    """
    out = _prepare(out)
    st = state
    opp = 1 - player
    bcards: list[int] = []
    builds = []
    for v, (cards, owner, locked) in st.builds.items():
        bcards.extend(cards)
        builds.append((v, len(cards), owner, locked))
    piles = (st.hands[player], st.loose, bcards, st.mulle[player], st.intake[player], st.mulle[opp], st.intake[opp])
    if st.over:
        cur = [[0] * 5, [0] * 5]
    else:
        cur = [_set_values(st.mpts[q], st.tabbe[q], st.ipts[q]) for q in (player, opp)]
    game = [cur[0][:], cur[1][:]]
    for done in st.sheets:
        for i, q in ((0, player), (1, opp)):
            s = done[q]
            g = game[i]
            for j, k in enumerate(SHEET_KEYS):
                g[j] += s[k]
    sheets4 = [*game[0], *game[1], *cur[0], *cur[1]]
    return _fill(
        out, player, st.to_move, piles, builds, sheets4, st.set_no, st.deal_no, st.last_capturer,
        len(st.hands[opp]), len(st.deck), st.ruleset, st.over,
    )


def encode_view(view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``view.player`` from their :class:`PlayerView`."""
    out = _prepare(out)
    p = view.player
    opp = 1 - p
    bcards = [f for b in view.builds for f in b.cards]
    builds = [(b.value, len(b.cards), b.owner, b.locked) for b in view.builds]
    piles = (view.hand, view.loose, bcards, view.mulle[p], view.intake[p], view.mulle[opp], view.intake[opp])
    done = [add_sheets(s[q] for s in view.sheets) for q in (p, opp)]
    game = (view.scores[p], view.scores[opp])
    # The view carries game totals and finished sets; the set in play is their difference.
    current = [sheet(0, 0, 0) if view.over else {k: game[i][k] - done[i][k] for k in SHEET_KEYS} for i in (0, 1)]
    sheets4 = [*_sheet_values(game[0]), *_sheet_values(game[1]), *_sheet_values(current[0]), *_sheet_values(current[1])]
    return _fill(
        out, p, view.to_move, piles, builds, sheets4, view.set_no, view.deal_no, view.last_capturer,
        view.opponent_hand_size, view.deck_size, view.ruleset, view.over,
    )


def encode_into(state: GameState, player: int, out: np.ndarray) -> np.ndarray:
    """:func:`encode_state` into ``out`` (float32, C-contiguous), by the compiled core's own writer for its states.

    The environments call this: a state of the compiled core (``mulle_env.engine.BACKEND
    == "c"``) writes its observation in C (``GameState.write_observation``, equal to
    :func:`encode_state`, tested in tests/test_engines_agree.py); a Python engine state
    goes through :func:`encode_state`.
    """
    write = getattr(state, "write_observation", None)
    if write is None:
        return encode_state(state, player, out)
    write(player, out)
    return out


# ----- versioning: what a saved network was trained on ------------------------------
# Kept apart from the encoder above: files that store networks (agents/learned/policy.py)
# record these so that a network made for another layout is refused, not misread.

#: Version of the observation encoding; raised whenever the meaning of an entry changes.
OBS_VERSION = 1


def layout_description() -> dict:
    """The observation layout as plain JSON data: every slice's offsets and every scale.

    Two encoders with equal descriptions fill equal vectors from equal views (as far as
    a description can tell: it holds the slice names and offsets, the feature names in
    order, and the divisors the encoder applies).
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
            "build_cards": _BUILD_CARDS_SCALE,
            "deck": _DECK_AFTER_FIRST_DEAL,
            "hand": HAND_SIZE,
            "deals_per_set": DEALS_PER_SET,
        },
    }


def layout_fingerprint(description: dict | None = None) -> str:
    """A short stable hash (16 hex digits) of :func:`layout_description` (or of ``description``)."""
    import hashlib
    import json

    text = json.dumps(layout_description() if description is None else description, sort_keys=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def layout_differences(other: dict, limit: int = 6) -> list[str]:
    """What differs between the layout description ``other`` and today's, in words (at most ``limit`` lines)."""
    mine = layout_description()
    out: list[str] = []
    for key in sorted(set(mine) | set(other)):
        a, b = other.get(key), mine.get(key)
        if a == b:
            continue
        if key == "slices" and isinstance(a, list):
            theirs = {row[0]: tuple(row[1:]) for row in a if isinstance(row, list) and row}
            ours = {row[0]: tuple(row[1:]) for row in b}
            for name in [*ours, *(n for n in theirs if n not in ours)]:
                if theirs.get(name) != ours.get(name):
                    out.append(f"slice {name!r}: {_span(theirs.get(name))} in the file, {_span(ours.get(name))} here")
        else:
            out.append(f"{key}: {a!r} in the file, {b!r} here")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])


def _span(s) -> str:
    return "absent" if s is None else f"[{s[0]}:{s[1]}]"


__all__ += ["OBS_VERSION", "layout_description", "layout_differences", "layout_fingerprint"]
