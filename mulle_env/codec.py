"""The action codec: one fixed ``Discrete(NUM_ACTIONS)`` space shared by the envs and agents.

An action index is the engine's dense move id (:attr:`Move.id`), so an index always
means the same kind of move with the same hand card and the same target, in every
state: ``capture KL 9`` is always 8, ``build HJ 6 on RU 10 to 16`` always the same
index. The target is part of the index (a loose card's face, or a build's value and
the direction), so two different legal moves never share one. Layout (exact ranges in
:data:`ACTION_LAYOUT` and docs/environments.md):

======================  ==========================================================
indices                 moves
======================  ==========================================================
``0 .. 51``             ``capture <card>``, by card
``52 .. 2707``          ``build <card> on <loose face> to V`` then ``on [V0]`` up,
                        down; grouped by card (canonical card order)
``2708 .. 2759``        ``trotta <card>``, by card
``2760 .. 2811``        ``discard <card>``, by card
======================  ==========================================================

Only ``forced_capture=True`` (the default) fits a fixed space: with
``forced_capture=False`` a capture also names the cards it takes, and those choices
have no id. :func:`check_ruleset` rejects such rulesets with
:class:`UnsupportedRulesetError`.

>>> import mulle_env as me
>>> from mulle_env import codec
>>> st = me.new_game(seed=7)
>>> i = codec.encode(st, st.legal_moves()[0])
>>> codec.decode(st, i) == st.legal_moves()[0]
True
>>> int(codec.legal_mask(st).sum()) == len(st.legal_moves())
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

from .engine import GameState, rules
from .engine.cards import CARD_NAMES, NUM_FACES
from .engine.errors import GameOverError, InvalidMoveError, InvalidRulesetError
from .engine.moves import (
    BUILD_DOWN_ID,
    BUILD_LOOSE_ID,
    BUILD_UP_ID,
    CAPTURE_ID,
    DISCARD_ID,
    MOVES,
    NUM_MOVE_IDS,
    TROTTA_ID,
    Move,
)
from .engine.ruleset import Ruleset
from .games import IllegalActionError, action_index, action_int, shown  # the generic codec, re-exported
from .native import NATIVE as _NATIVE

__all__ = [
    "NUM_ACTIONS", "ACTION_LAYOUT", "MOVES_PER_SET", "MAX_GAME_LENGTH", "MAX_DECISIONS_PER_PLAYER",
    "UnsupportedRulesetError", "IllegalActionError", "check_ruleset", "max_game_length",
    "encode", "decode", "legal_mask", "legal_indices", "mask_indices", "batch_mask_indices", "describe",
    "action_to_move",
    "action_int", "sample_csr", "sample_masks", "shown",
]

_INT32 = np.dtype(np.int32)  # the native int32 dtype: an array's dtype is this object when it is native int32

#: Size of the action space: one index per move id.
NUM_ACTIONS: int = NUM_MOVE_IDS

#: Card plays per set: 104 cards, 8 of them dealt face up to the table.
MOVES_PER_SET: int = 104 - 8


def max_game_length(ruleset: Ruleset | None = None) -> int:
    """Moves in a game under ``ruleset``: every move plays one card, so exactly 96 per set."""
    return MOVES_PER_SET * (ruleset or Ruleset()).sets


#: Moves (both players) in a game under the default ruleset (2 sets). Exact, not a bound.
MAX_GAME_LENGTH: int = max_game_length()

#: Decisions one seat makes in a default game: half the card plays (48 per set).
MAX_DECISIONS_PER_PLAYER: int = MAX_GAME_LENGTH // 2


def _layout() -> tuple[tuple[str, int, int], ...]:
    rows = [("capture <card>", min(CAPTURE_ID), max(CAPTURE_ID))]
    build_ids = [i for row in BUILD_LOOSE_ID for i in row if i >= 0]
    build_ids += [i for row in (*BUILD_UP_ID, *BUILD_DOWN_ID) for i in row if i >= 0]
    rows.append(("build <card> on <face>|[<value>] to <value>", min(build_ids), max(build_ids)))
    rows.append(("trotta <card>", min(TROTTA_ID), max(TROTTA_ID)))
    rows.append(("discard <card>", min(DISCARD_ID), max(DISCARD_ID)))
    return tuple(rows)


#: ``(moves, first index, last index)`` per block of the action space, inclusive.
ACTION_LAYOUT: tuple[tuple[str, int, int], ...] = _layout()


class UnsupportedRulesetError(InvalidRulesetError):
    """A ruleset the fixed action space cannot express (``forced_capture=False``)."""


def check_ruleset(ruleset: Ruleset) -> Ruleset:
    """Return ``ruleset`` if the action space can express it, else raise :class:`UnsupportedRulesetError`."""
    if not ruleset.forced_capture:
        raise UnsupportedRulesetError(
            "the fixed action space supports only Ruleset(forced_capture=True): with forced_capture=False "
            "a capture names the cards it takes, and those choices have no fixed action index"
        )
    return ruleset


def legal_indices(state: GameState) -> list[int]:
    """Indices of the legal moves of the player to move, ascending (empty when the game is over)."""
    if not state.ruleset.forced_capture:
        check_ruleset(state.ruleset)
    return state.legal_move_ids()


def legal_mask(state: GameState, dtype: DTypeLike = np.int8, out: NDArray[Any] | None = None) -> NDArray[Any]:
    """Length-:data:`NUM_ACTIONS` mask, 1 exactly at :func:`legal_indices` (all 0 once the game is over).

    ``dtype=np.int8`` is what Gymnasium's ``Discrete.sample(mask=...)`` and PettingZoo
    expect; pass ``bool`` for sb3-contrib. ``out`` (zeroed here) avoids an allocation.
    """
    if out is None:
        out = np.zeros(NUM_ACTIONS, dtype=dtype)
    else:
        out[:] = 0
    out[legal_indices(state)] = 1
    return out


def mask_indices(mask: NDArray[Any]) -> NDArray[np.intp]:
    """The actions a 1-D mask allows (``info["action_mask"]``, PettingZoo's ``obs["action_mask"]``), ascending.

    An int8/uint8 0/1 mask is read as bool without a copy: numpy scans a bool array
    several times faster than an int8 one (about 2 against 10 µs for 2812 entries).
    """
    m = np.asarray(mask)
    if m.ndim != 1:
        raise ValueError(f"mask_indices reads one mask of shape ({NUM_ACTIONS},), not shape {m.shape}")
    if m.dtype == np.int8 or m.dtype == np.uint8:
        m = m.view(bool)
    return m.nonzero()[0]


def batch_mask_indices(masks: NDArray[Any]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Every allowed ``(row, action)`` of a batch of masks (``(K, A)``, int8/uint8/bool), row by row.

    ``A`` is the env's action count: :data:`NUM_ACTIONS` for Mulle, 504 for ``Casino-v0``; any game's
    masks read the same way.

    For drivers of the vector env: ``rows, actions = batch_mask_indices(info["action_mask"])``.
    About 8 of 2812 entries are set per row, so the scan reads the masks 8 bytes at a
    time and looks inside only the words that are not zero (several times faster than
    ``np.nonzero`` on the bytes).
    """
    m = np.asarray(masks)
    if m.ndim != 2 or m.shape[1] < 1 or m.dtype.itemsize != 1:
        raise ValueError(f"batch_mask_indices reads int8/uint8/bool masks of shape (K, A), e.g. (K, {NUM_ACTIONS}) "
                         f"for Mulle, not {m.dtype} of shape {m.shape}")
    flat = m.reshape(-1)
    if flat.size % 8 or not m.flags.c_contiguous:
        hits = np.flatnonzero(flat.view(bool) if flat.dtype != bool else flat)
    else:
        words = flat.view(np.uint64)
        nz = np.flatnonzero(words != 0)  # compare then scan bools: numpy's nonzero is slow on uint64
        inside = np.flatnonzero(words[nz].view(np.uint8))  # the set bytes of the non-zero words, in order
        hits = nz[inside >> 3] * 8 + (inside & 7)
    width = m.shape[1]  # the env's action count: rows are split by it, not by Mulle's
    rows = hits // width
    return rows, hits - rows * width


def _generator(rng: np.random.Generator | random.Random | int | None) -> np.random.Generator | None:
    """The numpy generator the samplers draw from: ``rng`` itself, a new one seeded by it, or ``None`` for a
    ``random.Random`` (drawn from as it is)."""
    if type(rng) is np.random.Generator:  # the usual case first, without the isinstance checks
        return rng
    if isinstance(rng, random.Random):
        return None
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def sample_csr(ids: NDArray[np.integer[Any]], offsets: NDArray[np.integer[Any]],
               rng: np.random.Generator | random.Random | int | None = None) -> NDArray[np.int64]:
    """One uniformly random legal action per row of sparse legal ids in CSR form.

    Row ``i``'s legal actions are ``ids[offsets[i]:offsets[i + 1]]`` (what the vector env's
    ``legal_ids()`` returns); the result holds one of them per row, each equally likely, drawn
    from ``rng`` (a numpy ``Generator``, a ``random.Random``, or a seed for
    ``numpy.random.default_rng``). No dense mask is read or made. A row without a legal
    action is refused (a ``ValueError`` naming it): it has nothing to sample.
    """
    gen = _generator(rng)
    if _NATIVE is not None and gen is not None and type(ids) is np.ndarray and type(offsets) is np.ndarray \
            and ids.dtype is _INT32 and offsets.dtype is _INT32 and offsets.ndim == 1 and len(offsets):
        # The vector env's own arrays: one pass in C (mulle_env/csrc/module.c), the same arithmetic as below.
        n = len(offsets) - 1
        out = np.empty(n, dtype=np.int64)
        _NATIVE.sample_csr(ids, offsets, gen.random(n), out)
        return out
    ids = np.asarray(ids)
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or len(offsets) < 1 or offsets.dtype.kind not in "iu" or ids.ndim != 1:
        raise ValueError(f"expected 1-D integer ids and offsets of n + 1 entries, not shapes {ids.shape} and "
                         f"{offsets.shape}")
    counts = offsets[1:] - offsets[:-1]
    if len(counts) and counts.min() <= 0:
        row = int(np.flatnonzero(counts <= 0)[0])
        raise ValueError(f"row {row} has no legal action (offsets[{row}] = {int(offsets[row])}, "
                         f"offsets[{row + 1}] = {int(offsets[row + 1])}): nothing to sample")
    if int(offsets[0]) < 0 or int(offsets[-1]) > len(ids):
        raise ValueError(f"offsets run from {int(offsets[0])} to {int(offsets[-1])}, outside ids' {len(ids)} entries")
    if gen is None:
        assert isinstance(rng, random.Random)
        draws = np.fromiter((rng.randrange(int(c)) for c in counts), dtype=np.int64, count=len(counts))
    else:
        # floor(u * count), u uniform in [0, 1): a third of Generator.integers' cost with an array bound
        # (the clamp guards the last ulp of rounding).
        draws = np.minimum((gen.random(len(counts)) * counts).astype(np.int64), counts - 1)
    picked: NDArray[np.int64] = ids[offsets[:-1] + draws].astype(np.int64)
    return picked


def sample_masks(masks: NDArray[Any], rng: np.random.Generator | random.Random | int | None = None
                 ) -> NDArray[np.int64]:
    """One uniformly random legal action per row of a batch of dense masks (``(K, A)``, int8/uint8/bool).

    For drivers of the vector env's dense mask what :func:`sample_csr` is for its sparse
    ids: ``envs.step(sample_masks(info["action_mask"], rng))``. Draws as :func:`sample_csr`
    does (``rng`` a numpy ``Generator``, a ``random.Random`` or a seed), so the same
    legal actions and draws give the same picks from either form. Compiled, the scan
    tests each row 32 bytes at a time; a row without a legal action is refused (a
    ``ValueError`` naming it).
    """
    gen = _generator(rng)
    m = np.asarray(masks)
    if m.ndim != 2 or m.shape[1] < 1 or m.dtype.itemsize != 1 or m.dtype.kind not in "biu":
        raise ValueError(f"sample_masks reads int8/uint8/bool masks of shape (K, A) (A the env's actions: "
                         f"{NUM_ACTIONS} for Mulle, 504 for Casino-v0), not {m.dtype} of shape {m.shape}")
    k = len(m)
    if _NATIVE is not None and gen is not None and m.flags.c_contiguous:
        out = np.empty(k, dtype=np.int64)
        _NATIVE.sample_mask(m, gen.random(k), out)  # mulle_env/csrc/module.c: the arithmetic below, one pass
        return out
    rows, actions = batch_mask_indices(m)
    counts = np.bincount(rows, minlength=k)
    if k and counts.min() == 0:
        row = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"row {row} has no legal action (its mask is all zeros): nothing to sample")
    # The same legal actions in CSR form, drawn by sample_csr's own arithmetic (its numpy path: intp arrays).
    return sample_csr(actions, np.concatenate([[0], np.cumsum(counts)]), rng if gen is None else gen)


def describe(index: int) -> str:
    """The move an index stands for, in the card notation (state-independent)."""
    return str(action_to_move(index))


def action_to_move(index: int) -> Move:
    """The :class:`Move` an index stands for, legal or not; raises for an index out of range."""
    i = _as_index(index)
    return MOVES[i]


def _as_index(index: object) -> int:
    return action_index(index, NUM_ACTIONS)


def _legal_list(state: GameState, ids: Sequence[int]) -> str:
    return ", ".join(f"{i} ({MOVES[i]})" for i in ids) or "none"


def decode(state: GameState, index: int) -> Move:
    """The legal :class:`Move` that ``index`` stands for in ``state``.

    Raises :class:`IllegalActionError` naming the index, the move it stands for, why
    that move is not legal here and the legal indices; :class:`GameOverError` once the
    game is over.
    """
    check_ruleset(state.ruleset)
    i = _as_index(index)
    ids = state.legal_ids()
    if i in ids:
        return MOVES[i]
    if state.over:
        raise GameOverError(f"action {i} ({MOVES[i]}): the game is over, no action is legal")
    raise IllegalActionError(
        f"action {i} ({MOVES[i]}) is not legal for player {state.to_move}: {rules.explain(state, MOVES[i])}; "
        f"legal actions: {_legal_list(state, ids)}"
    )


def encode(state: GameState, move: Move | str) -> int:
    """The action index of ``move`` (a :class:`Move` or its text), which must be legal in ``state``.

    Raises :class:`IllegalActionError` (saying why) for a move that is not legal here.
    """
    check_ruleset(state.ruleset)
    if isinstance(move, str):
        move = Move.from_str(move)
    elif not isinstance(move, Move):
        raise InvalidMoveError(f"a move must be a Move or its text, not {move!r}")
    if move.id is None:
        raise IllegalActionError(
            f"{move} names the cards it takes; under forced_capture=True write 'capture {CARD_NAMES[move.card]}'"
        )
    ids = state.legal_ids()
    if move.id in ids:
        return move.id
    if state.over:
        raise GameOverError(f"{move}: the game is over, no move is legal")
    raise IllegalActionError(
        f"{move} is not legal for player {state.to_move}: {rules.explain(state, move)}; "
        f"legal actions: {_legal_list(state, ids)}"
    )


assert NUM_FACES == 52 and ACTION_LAYOUT[-1][2] == NUM_ACTIONS - 1
