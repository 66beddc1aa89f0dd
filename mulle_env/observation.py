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

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .engine import GameState
from .engine.cards import COPIES, FACE_SYMMETRIES, NUM_FACES
from .engine.moves import MIN_BUILD_VALUE
from .engine.observation_layout import (
    BUILD_FEATURES,
    FACE_BLOCKS,
    NUM_BUILD_VALUES,
    OBS_SHAPE,
    OBS_SIZE,
    OBS_SLICES,
    OBS_VERSION,
    SCALAR_FEATURES,
    SCALES,
    SCORE_SCALE,
    SHEET_BOUND_PER_SET,
    layout_description,
    layout_differences,
    layout_fingerprint,
)
from .engine.rules import DEALS_PER_SET, HAND_SIZE, leader
from .engine.ruleset import Ruleset
from .engine.state import SHEET_KEYS, PlayerView, Sheet, add_sheets, intake_bonus, sheet

__all__ = [
    "BUILD_FEATURES",
    "FACE_BLOCKS",
    "NUM_BUILD_VALUES",
    "OBS_DTYPE",
    "OBS_SHAPE",
    "OBS_SIZE",
    "OBS_SLICES",
    "OBS_VERSION",
    "SCALAR_FEATURES",
    "SCORE_SCALE",
    "SHEET_BOUND_PER_SET",
    "encode_state",
    "encode_view",
    "face_symmetry_columns",
    "layout_description",
    "layout_differences",
    "layout_fingerprint",
    "observation_bounds",
]

OBS_DTYPE = np.float32
_BUILD_CARDS_SCALE = SCALES["build_cards"]
_DECK_AFTER_FIRST_DEAL = SCALES["deck"]

_NPILES = 7  # face blocks filled by counting (all but "unseen")
_UNSEEN = OBS_SLICES["unseen"]
_NF = len(BUILD_FEATURES)
_SCORES = slice(OBS_SLICES["my_score"].start, OBS_SLICES["opp_set_score"].stop)
_SCALARS = OBS_SLICES["scalars"]


def observation_bounds(ruleset: Ruleset | None = None) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
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


def _fill(out: NDArray[np.float32], player: int, to_move: int, piles: Sequence[Sequence[int]],
          builds: Iterable[tuple[int, int, int | None, bool]], sheets4: Sequence[int], set_no: int, deal_no: int,
          last_capturer: int | None, opp_hand: int, deck: int, ruleset: Ruleset, over: bool) -> NDArray[np.float32]:
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
    tail: list[Any] = [0.0] * _TAIL_SIZE  # floats, and bools the assignment to out turns into 0.0/1.0
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


def _prepare(out: NDArray[np.float32] | None) -> NDArray[np.float32]:
    if out is None:
        return np.empty(OBS_SIZE, dtype=OBS_DTYPE)
    return out


def _sheet_values(s: Sheet) -> list[int]:
    return [s[k] for k in SHEET_KEYS]


def _set_values(mulle: int, tabbe: int, intake: int) -> list[int]:
    """The set sheet of :func:`mulle_env.engine.state.sheet` as a list in ``SHEET_KEYS`` order."""
    bonus = intake_bonus(intake)
    return [mulle, tabbe, intake, bonus, mulle + tabbe + bonus]


def encode_state(state: GameState, player: int, out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
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


def encode_view(view: PlayerView, out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
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


def encode_into(state: GameState, player: int, out: NDArray[np.float32]) -> NDArray[np.float32]:
    """:func:`encode_state` into ``out`` (float32, C-contiguous), for code written before the env core.

    The environments write observations through their stepper (the compiled core writes
    them in C); this is the readable encoder on any state of either backend.
    """
    return encode_state(state, player, out)


def face_symmetry_columns(count: int = len(FACE_SYMMETRIES)) -> NDArray[np.intp]:
    """Column indices ``(count, OBS_SIZE)`` that turn an observation into the one of a symmetric position.

    Row ``k`` is for :data:`mulle_env.engine.cards.FACE_SYMMETRIES` ``[k]`` (row 0: the
    identity): ``obs[..., cols[k]]`` is the observation of the same position with every face
    ``f`` replaced by ``perm[f]``, which the rules cannot tell from it. Only the per-face
    blocks move; builds, sheets and scalars read no face. ``count`` takes the first ones.
    """
    if not 1 <= count <= len(FACE_SYMMETRIES):
        raise ValueError(f"count must be from 1 to {len(FACE_SYMMETRIES)} (the face symmetries), not {count!r}")
    cols = np.tile(np.arange(OBS_SIZE, dtype=np.intp), (count, 1))
    for k, perm in enumerate(FACE_SYMMETRIES[:count]):
        inverse = np.argsort(np.asarray(perm))  # the new position's face g was face inverse[g]
        for name in FACE_BLOCKS:
            start = OBS_SLICES[name].start
            cols[k, start:start + NUM_FACES] = start + inverse
    return cols
