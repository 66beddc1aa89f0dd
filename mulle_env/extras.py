"""Extra inputs for afterstate nets: what the position a move leaves offers the next capture.

A discard's worth is what the opponent can then take: the twin of a card left loose
(a mulle of up to 13 points), or every loose card of some value plus the pairs that sum
to it. The observation holds all of this, but only as separate card bits (``loose``,
``unseen``, ``hand``), and a one-pass MLP fitted to search values did not learn the
products and sums from them: ``mulle-expert regret`` found ``learned`` no better than
the one-ply ``greedy`` on discards (docs/learning.md, "Where the net loses").

:func:`afterstate_extras` computes those sums from an afterstate's encoding alone, so
the environments' observation (and every data set of encoded afterstates) is unchanged:
a net that reads them appends them to the encoding it is given. The block is
versioned by name (:data:`EXTRAS`); a policy file records the name it was fitted with
and :mod:`agents.learned.policy` refuses a name it does not know.

Block ``capture-v1`` (:data:`EXTRA_SIZE` = 182 floats), in this order:

=================  ====  ===============================================================
name               size  content
=================  ====  ===============================================================
``twin_threat``    52    per face: a copy lies loose and the other copy is unseen
                         (the opponent may hold it and take the mulle)
``twin_mine``      52    per face: a copy lies loose and the observer holds the other
``take``           15    per hand value 2..16: cards a card of that value would take
                         (loose cards of that table value, disjoint *pairs* summing to it,
                         the build of that value; 14..16 take only a build) / 10
``unseen_value``   15    per hand value: unseen cards of that hand value / 8
``held_value``     15    per hand value: the observer's cards of that hand value / 8
``threat``         15    ``take`` x ``unseen_value``
``clears``         15    1 if that capture would take every card on the table (a tabbe)
``mulle_exposed``  1     sum of the mulle values of ``twin_threat`` faces / 14
``mulle_mine``     1     sum of the mulle values of ``twin_mine`` faces / 14
``table_cards``    1     cards on the table (loose and in builds) / 10
=================  ====  ===============================================================

Block ``capture-v2`` (225 floats) is ``capture-v1`` followed by:

=================  ====  ===============================================================
``intake_take``    15    per hand value: intake points (the bonus's cards) of the loose
                         cards of that table value / 10 (pairs left out)
``own_take``       15    ``take`` x ``held_value``: what the observer's own cards take next
``mulle_loose``    13    per table value 1..13: mulle values of the faces whose two copies
                         both lie loose (whoever takes that value takes the mulle) / 14
=================  ====  ===============================================================

Block ``capture-v3`` (289 floats) is ``capture-v2`` followed by what the opponent, who moves
next, can actually reach: ``capture-v1`` and ``capture-v2`` count what a card of each value
*would* take, not how likely the opponent is to hold one, and that likelihood falls as their
hand empties. ``p_holds`` takes the opponent's ``h`` cards as a uniform draw from the ``U``
unseen ones, of which ``k`` have hand value ``v``, so P(none) = C(U - k, h) / C(U, h).

===================  ====  =============================================================
``p_holds``          15    per hand value: P(the opponent holds at least one card of it)
``exp_take``         15    ``take`` x ``p_holds``: cards the opponent can take by that value
``exp_intake``       15    ``intake_take`` x ``p_holds``
``build_at_risk``    15    per build value: the mover owns that build x ``p_holds`` (the
                           chance the opponent can capture it before the mover takes
                           it in; building on it instead is not counted)
``twin_exposed``     1     as ``mulle_exposed``, faces of hand value 14..16 left out (their
                           twins cannot be mulle-captured, RULES.md 4.1.1)
``exp_mulle``        1     ``twin_exposed`` x h / U: each unseen card is the opponent's with
                           probability h / U
``exp_mulle_loose``  1     ``mulle_loose`` x ``p_holds`` summed over table values 2..13
``p_tabbe``          1     the largest ``clears`` x ``p_holds``: a chance of a tabbe
===================  ====  =============================================================

Block ``capture-v4`` (308 floats) is ``capture-v3`` followed by the best capture each player
can make next on the table the move leaves, in points: a capture's *worth* is its mulle points
(both copies of a face taken together), the intake points of its cards (the loose ones exactly,
cards in pairs and builds at the mean, 40 / 104; the bonus pays for them) and a tabbe. A card
whose twin lies loose takes the twin alone (RULES.md 4.1.1, unless its player owns the build of
its value); any other card takes by value (``take``) or not at all. ``capture-v3`` gives the
parts per value; which of them the opponent will take is a maximum over the cards they may hold,
and generation 6's values, against fresh search labels, were too low by about 2.3 points per
14 points of the capture the move leaves the mover (a linear probe of its residuals; the
block's fits are measured in benchmarks/records/generations.md, "What was tried": no gain in play yet).

================  ====  ==============================================================
``reply_best``    1     E[the worth of the opponent's best capture] / 14: their ``h``
                        cards a uniform draw from the ``U`` unseen ones (faces sorted by
                        worth, each the best held with P(none before it) - P(none up to
                        it)), at least the worth of taking a build they own (4.5 proves
                        they hold its value)
``reply_mulle``   1     the same for the mulle points alone (no build floor)
``reply_none``    1     P(the opponent holds no card that captures); 0 if they own a build
``my_best``       1     the worth of the mover's best capture on this table / 14
``my_worth``      15    per hand value, the worth of the mover's best card of it / 14
================  ====  ==============================================================

Each block begins with the one before it, so a net fitted with one can grow into the
next (:func:`extends`; ``mulle-expert fit --init-from``).

The features are hints, not the rules: the net still has the card bits for the rest.
Known simplifications, kept because the shipped net was fitted with them:

* ``take`` leaves out groups of three or more cards (the pairs are the common case and
  cost one table lookup), and the rule that a card whose twin lies loose takes only
  the twin (RULES.md 4.1.1).
* ``twin_threat``, ``twin_mine`` and the two mulle sums include the six faces played
  with hand values 14 to 16 (the aces, SP 2, RU 10), whose twins cannot be taken by a
  mulle capture (4.1.1 applies up to 13); such a pair is still a mulle when both
  copies are taken some other way.
* ``intake_take`` counts loose cards only, not build cards; ``mulle_loose``'s column
  for table value 1 (aces) is taken by pairs, not by the aces themselves.
* The ruleset's flags (``mulle_hand_values``, ``forced_capture``) are not read.
* ``p_holds`` (``capture-v3``) draws the opponent's hand uniformly from the unseen cards,
  so it ignores what the position proves: an opponent who owns the build of value V
  holds a card of V (RULES.md 4.5), where ``p_holds`` gives the hypergeometric chance.

A later block that drops these simplifications is a new name; these stay as they are.
``capture-v3`` adds ``twin_exposed`` without the six faces and keeps the rest. Its ``h``
is the encoding's opponent hand size, which an afterstate of a deal's last card gives as
1, not 0 (agents/learned/afterstate.py keeps the opponent a placeholder card).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from .engine.cards import HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, NUM_FACES, TABLE_VALUE
from .engine.moves import MIN_BUILD_VALUE
from .engine.rules import HAND_SIZE
from .observation import (
    BUILD_FEATURES,
    FACE_BLOCKS,
    NUM_BUILD_VALUES,
    OBS_SIZE,
    OBS_SLICES,
    SCALAR_FEATURES,
    face_symmetry_columns,
)

__all__ = ["BACKEND", "EXTRAS", "EXTRA_SIZE", "EXTRA_SIZES", "FACE_FIELDS", "FIELDS", "FIELD_OFFSETS",
           "afterstate_extras", "afterstate_extras_numpy", "extends", "extras_size", "symmetry_columns",
           "with_extras"]

_NV = NUM_BUILD_VALUES  # hand values 2..16, as the encoding's build values
#: The blocks' layout, written once: every field in order as ``(name, floats)`` (the tables of the
#: module docstring), and the last field of each block; a block is its fields from the first
#: on, so each begins with the one before it. The sizes, the offsets below and the compiled
#: module's writer (mulle_env/csrc/extras.c, configured with :data:`FIELD_OFFSETS`) all come
#: from here.
FIELDS: tuple[tuple[str, int], ...] = (
    ("twin_threat", NUM_FACES), ("twin_mine", NUM_FACES), ("take", _NV), ("unseen_value", _NV),
    ("held_value", _NV), ("threat", _NV), ("clears", _NV), ("mulle_exposed", 1), ("mulle_mine", 1),
    ("table_cards", 1),
    ("intake_take", _NV), ("own_take", _NV), ("mulle_loose", 13),
    ("p_holds", _NV), ("exp_take", _NV), ("exp_intake", _NV), ("build_at_risk", _NV), ("twin_exposed", 1),
    ("exp_mulle", 1), ("exp_mulle_loose", 1), ("p_tabbe", 1),
    ("reply_best", 1), ("reply_mulle", 1), ("reply_none", 1), ("my_best", 1), ("my_worth", _NV),
)
_LAST_FIELD = {"capture-v1": "table_cards", "capture-v2": "mulle_loose", "capture-v3": "p_tabbe",
               "capture-v4": "my_worth"}
#: Each field's ``(offset, floats)`` in the blocks.
FIELD_OFFSETS: dict[str, tuple[int, int]] = {}
_at = 0
for _name, _size in FIELDS:
    FIELD_OFFSETS[_name] = (_at, _size)
    _at += _size
#: Floats of each block; every block begins with the one before it (a net grows into the next).
EXTRA_SIZES: dict[str, int] = {block: sum(FIELD_OFFSETS[last]) for block, last in _LAST_FIELD.items()}
#: Floats of block ``capture-v1``.
EXTRA_SIZE = EXTRA_SIZES["capture-v1"]
#: Names of the extra-input blocks this code computes, in the order each grows into the next.
EXTRAS: tuple[str, ...] = tuple(EXTRA_SIZES)

_HAND, _LOOSE, _UNSEEN = OBS_SLICES["hand"], OBS_SLICES["loose"], OBS_SLICES["unseen"]
_BUILD_CARDS = slice(OBS_SLICES["builds"].start + BUILD_FEATURES.index("cards"), OBS_SLICES["builds"].stop,
                     len(BUILD_FEATURES))

# face -> hand value column (one-hot), face -> table value 1..13 column.
_BY_HAND = np.zeros((NUM_FACES, _NV), np.float32)
_BY_HAND[np.arange(NUM_FACES), np.array(HAND_VALUE) - MIN_BUILD_VALUE] = 1
_BY_TABLE = np.zeros((NUM_FACES, 13), np.float32)
_BY_TABLE[np.arange(NUM_FACES), np.array(TABLE_VALUE) - 1] = 1
_MULLE = np.array(MULLE_VALUE, np.float32) / 14.0
# v2: intake points of the loose cards a value takes by value; mulles lying loose (both copies) per table value.
_INTAKE_SAME = np.zeros((NUM_FACES, _NV), np.float32)
for _f in range(NUM_FACES):
    if TABLE_VALUE[_f] >= MIN_BUILD_VALUE:
        _INTAKE_SAME[_f, TABLE_VALUE[_f] - MIN_BUILD_VALUE] = INTAKE_POINTS[_f] / 10.0
_PAIR_MULLE = _BY_TABLE * _MULLE[:, None]
# v3: the opponent's hand size (the first scalar, / HAND_SIZE); who owns each build; twins a mulle capture can take.
_OPP_HAND = OBS_SLICES["scalars"].start + SCALAR_FEATURES.index("opponent_hand_size")
_BUILD_MINE = slice(OBS_SLICES["builds"].start + BUILD_FEATURES.index("mine"), OBS_SLICES["builds"].stop,
                    len(BUILD_FEATURES))
_MULLE13 = _MULLE * (np.array(HAND_VALUE) <= 13)
_MAX_UNSEEN = 2 * NUM_FACES


def _miss_table() -> NDArray[np.float32]:
    """P(none of ``k`` cards among ``h`` drawn from ``U``) by ``[U, k, h]``, for every ``U`` and ``k`` up to 104.

    The one home of the probability is the engine's knowledge module
    (:func:`mulle_env.engine.knowledge.miss_probability`); this is its product, term for term
    in the same order, for all arguments at once (equal to it entry for entry; tested), since
    its 99,000 calls would cost a quarter of a second at import. A table, because a decision's
    few rows would otherwise pay many small numpy calls; ``capture-v3`` looks up ``k`` up to 8
    (a hand value's copies), ``capture-v4`` up to 104, and the compiled extras read the same table.
    """
    u = np.arange(_MAX_UNSEEN + 1, dtype=np.float64)[:, None]
    k = np.arange(_MAX_UNSEEN + 1, dtype=np.float64)[None, :]
    table = np.ones((_MAX_UNSEEN + 1, _MAX_UNSEEN + 1, HAND_SIZE + 1))
    for i in range(HAND_SIZE):
        table[:, :, i + 1] = table[:, :, i] * (np.maximum(u - k - i, 0) / np.maximum(u - i, 1))
    out: NDArray[np.float32] = table.astype(np.float32)
    return out


_MISS = _miss_table()

# v4: what a card takes is worth (mulle points + intake points + a tabbe), per face. A face's hand
# value column; its table value's column (2..13) among the hand values, for loose same-value counts.
_FACE_COL = np.array(HAND_VALUE) - MIN_BUILD_VALUE
_SAME_V = np.zeros((NUM_FACES, _NV), np.float32)
for _f in range(NUM_FACES):
    if TABLE_VALUE[_f] >= MIN_BUILD_VALUE:
        _SAME_V[_f, TABLE_VALUE[_f] - MIN_BUILD_VALUE] = 1
_MULLE_PTS = np.array(MULLE_VALUE, np.float32)
_FACE_INTAKE = np.array(INTAKE_POINTS, np.float32)
_MULLE_MOVE = np.array(HAND_VALUE) <= 13  # faces that take a loose twin alone (RULES.md 4.1.1)
# A card whose intake points the encoding does not show (in a pair or a build): the mean, 40 / 104.
_CARD_INTAKE = float(sum(INTAKE_POINTS)) / NUM_FACES
# Faces ordered by hand value, and where each value's run starts: one reduceat gives a max per value.
_BY_VALUE = np.argsort(_FACE_COL, kind="stable")
_VALUE_STARTS = np.searchsorted(_FACE_COL[_BY_VALUE], np.arange(_NV))
_BUILD_OPP = slice(OBS_SLICES["builds"].start + BUILD_FEATURES.index("opponents"), OBS_SLICES["builds"].stop,
                   len(BUILD_FEATURES))

# Loose cards a card of hand value v takes by value: every loose card of table value v (v <= 13)...
_SAME = np.zeros((13, _NV), np.float32)
for _t in range(MIN_BUILD_VALUE, 14):
    _SAME[_t - 1, _t - MIN_BUILD_VALUE] = 1
# ...and the disjoint pairs a + b = v (a < b: min of the two counts; a == b: half the count).
_pair_a: list[int] = []
_pair_b: list[int] = []
_PAIR_V: list[int] = []
for _v in range(MIN_BUILD_VALUE, 14):
    for _a in range(1, (_v + 1) // 2):
        _pair_a.append(_a - 1)
        _pair_b.append(_v - _a - 1)
        _PAIR_V.append(_v - MIN_BUILD_VALUE)
_PAIR_A, _PAIR_B = np.array(_pair_a), np.array(_pair_b)
_PAIRS = np.zeros((len(_PAIR_V), _NV), np.float32)
_PAIRS[np.arange(len(_PAIR_V)), _PAIR_V] = 2  # two cards a pair
_HALF = np.zeros((13, _NV), np.float32)  # equal pairs: table value t pairs with itself for v = 2t
for _t in range(1, 7):
    _HALF[_t - 1, 2 * _t - MIN_BUILD_VALUE] = 2
# All three in one product, in tens of cards, plus a 16th column: every loose card (for `table`).
_TAKE = np.zeros((13 + len(_PAIR_V) + 13, _NV + 1), np.float32)
_TAKE[:, :_NV] = np.concatenate([_SAME, _PAIRS, _HALF]) / 10.0
_TAKE[:13, _NV] = 0.1
# Hand and unseen blocks (hand first) -> held and unseen counts per hand value, / 8, unseen first.
_UNSEEN_HAND = np.r_[np.arange(_HAND.start, _HAND.stop), np.arange(_UNSEEN.start, _UNSEEN.stop)]
_BY_HAND2 = np.zeros((2 * NUM_FACES, 2 * _NV), np.float32)
_BY_HAND2[NUM_FACES:, :_NV] = _BY_HAND / 8.0
_BY_HAND2[:NUM_FACES, _NV:] = _BY_HAND / 8.0
_MULLE2 = np.zeros((2 * NUM_FACES, 2), np.float32)
_MULLE2[:NUM_FACES, 0] = _MULLE
_MULLE2[NUM_FACES:, 1] = _MULLE

# Where each block goes in the output.
def _field(first: str, last: str | None = None) -> slice:
    """The columns of fields ``first`` to ``last`` (adjacent in :data:`FIELDS`)."""
    end = FIELD_OFFSETS[last or first]
    return slice(FIELD_OFFSETS[first][0], end[0] + end[1])


_O_THREAT = _field("twin_threat")
_O_MINE = _field("twin_mine")
_O_TWINS = _field("twin_threat", "twin_mine")
_O_TAKE = _field("take")
_O_UNSEEN = _field("unseen_value")
_O_VALUE = _field("unseen_value", "held_value")
_O_PRODUCT = _field("threat")
_O_CLEARS = _field("clears")
_O_MULLE = _field("mulle_exposed", "mulle_mine")
_O_TWIN_EXPOSED = FIELD_OFFSETS["twin_exposed"][0]
#: Each block's level: 1 for ``capture-v1``; a block holds every field of the levels up to its own.
_LEVEL = {name: i + 1 for i, name in enumerate(EXTRAS)}


def extras_size(name: str | None) -> int:
    """Floats the block ``name`` adds (0 for ``None``); a ``ValueError`` names the known blocks."""
    if name is None:
        return 0
    if name not in EXTRA_SIZES:
        raise ValueError(f"unknown extra-input block {name!r}; known: {', '.join(EXTRAS)}")
    return EXTRA_SIZES[name]


def extends(name: str | None, base: str | None) -> bool:
    """True if block ``name`` begins with block ``base`` (``None``, no block, begins every one)."""
    extras_size(name)
    extras_size(base)
    return base is None or (name is not None and EXTRAS.index(base) <= EXTRAS.index(name))


def _checked(obs: NDArray[np.float32], out: NDArray[np.float32] | None, name: str
             ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"expected encodings of shape (n, {OBS_SIZE}), got {obs.shape}")
    size = extras_size(name)
    if out is None:
        out = np.empty((len(obs), size), np.float32)
    elif out.shape != (len(obs), size) or out.dtype != np.float32:
        raise ValueError(f"out must be a float32 array of shape {(len(obs), size)}, not {out.dtype} {out.shape}")
    return obs, out


def afterstate_extras(obs: NDArray[np.float32], out: NDArray[np.float32] | None = None,
                      name: str = "capture-v1") -> NDArray[np.float32]:
    """Block ``name`` for a batch of encodings ``(n, OBS_SIZE)``: ``(n, EXTRA_SIZES[name])`` float32.

    Reads only the encoding (any position, from its observer's seat; for an afterstate
    the observer is the mover and the opponent is to move next). Written into ``out``
    (``(n, EXTRA_SIZES[name])`` float32, e.g. the tail of the net's input) when it is given.
    Computed by the compiled module when it is built (:data:`BACKEND`), else by
    :func:`afterstate_extras_numpy`; the two agree to float rounding (tested).
    """
    obs, out = _checked(obs, out, name)
    if _C is None:
        return afterstate_extras_numpy(obs, out, name)
    if out.flags.c_contiguous:
        _compiled(np.ascontiguousarray(obs), out, out, 0, name)
    else:
        out[...] = afterstate_extras(obs, None, name)
    return out


def _compiled(obs: NDArray[np.float32], rows: NDArray[np.float32], out: NDArray[np.float32], offset: int,
              name: str) -> None:
    """The block by the compiled module into ``out`` = ``rows[:, offset:offset + size]`` (``rows`` C-contiguous).

    The module leaves the mulle sums, which numpy makes with products whose summation
    order it cannot repeat; they are made here with the reference's own calls. On this
    project's machine the block equals :func:`afterstate_extras_numpy` bit for bit for
    batches of a decision's size (numpy's own sums may differ by an ulp between a one-row
    and a many-row batch); the tests ask for 2e-6 and the shipped net's moves.
    """
    assert _C is not None  # called only when the compiled core computes the blocks
    _C.write_extras(obs, rows, _LEVEL[name], rows.shape[1], offset)
    _mulle_sums(obs, out, name)
    if _LEVEL[name] >= 3:
        _C.extras_exp_mulle(obs, rows, rows.shape[1], offset)


def _mulle_sums(obs: NDArray[np.float32], out: NDArray[np.float32], name: str) -> None:
    """The blocks' mulle sums (``mulle_exposed``, ``mulle_mine``; ``twin_exposed`` in ``capture-v3``).

    One place for both backends: these are numpy products whose summation order the
    compiled module cannot repeat, so it leaves them to the same calls as the reference.
    Needs ``out``'s twin blocks.
    """
    out[:, _O_MULLE] = out[:, _O_TWINS] @ _MULLE2
    if _LEVEL[name] >= 3:
        out[:, _O_TWIN_EXPOSED] = (obs[:, _LOOSE] * obs[:, _UNSEEN]) @ _MULLE13


def afterstate_extras_numpy(obs: NDArray[np.float32], out: NDArray[np.float32] | None = None,
                            name: str = "capture-v1") -> NDArray[np.float32]:
    """:func:`afterstate_extras` in numpy: the definition, and the reference the compiled module is tested against.

    Generations 5 and 6 were fitted, and measured, on these values.
    """
    obs, out = _checked(obs, out, name)
    # A few large numpy calls, not many small ones (the compiled module is faster still for a decision's few rows).
    loose = obs[:, _LOOSE]
    np.multiply(loose, obs[:, _UNSEEN], out=out[:, _O_THREAT])
    np.multiply(loose, obs[:, _HAND], out=out[:, _O_MINE])
    by_value = loose @ _BY_TABLE  # loose cards per table value 1..13
    pairs = np.minimum(by_value[:, _PAIR_A], by_value[:, _PAIR_B])
    take = np.concatenate([by_value, pairs, np.floor(by_value * 0.5)], axis=1) @ _TAKE
    # The encoding's build card counts are already in tens of cards, as `take` is.
    builds = obs[:, _BUILD_CARDS]
    take[:, :_NV] += builds
    table = take[:, _NV:]  # every loose card...
    table += builds.sum(axis=1, keepdims=True)  # ...and every build card
    out[:, _O_TAKE] = take[:, :_NV]
    out[:, _O_VALUE] = obs[:, _UNSEEN_HAND] @ _BY_HAND2  # unseen and held per hand value, / 8
    np.multiply(out[:, _O_TAKE], out[:, _O_UNSEEN], out=out[:, _O_PRODUCT])
    # Counts in tenths are not exact floats: equal within half a card.
    np.less(np.abs(take[:, :_NV] - table), 0.05, out=out[:, _O_CLEARS], casting="unsafe")
    out[:, _O_CLEARS] *= table > 0
    _mulle_sums(obs, out, name)
    out[:, EXTRA_SIZE - 1 : EXTRA_SIZE] = table
    if name != "capture-v1":
        at = EXTRA_SIZE
        out[:, at : at + _NV] = loose @ _INTAKE_SAME
        np.multiply(out[:, _O_TAKE], out[:, _O_VALUE.start + _NV : _O_VALUE.stop], out=out[:, at + _NV : at + 2 * _NV])
        # Both copies of a face loose: whoever takes that value by value takes a mulle.
        out[:, at + 2 * _NV : at + 2 * _NV + 13] = (loose > 1.5) @ _PAIR_MULLE
    if _LEVEL[name] >= 3:
        _reach(obs, out)
    if _LEVEL[name] >= 4:
        _replies(obs, out)
    return out


def _reach(obs: NDArray[np.float32], out: NDArray[np.float32]) -> None:
    """Block ``capture-v3``'s tail, from the encoding and the ``capture-v2`` block already in ``out``."""
    at = EXTRA_SIZES["capture-v2"]
    unseen = obs[:, _UNSEEN]
    total = unseen.sum(axis=1).astype(np.intp)  # U: the opponent's hand and the deck
    hand = np.rint(obs[:, _OPP_HAND] * HAND_SIZE).astype(np.intp)  # h
    k = np.rint(out[:, _O_UNSEEN] * 8).astype(np.intp)  # unseen cards of each hand value
    if not (total.max(initial=0) <= _MAX_UNSEEN and hand.max(initial=0) <= HAND_SIZE and (total >= 0).all()
            and (hand >= 0).all()):
        raise ValueError("not encodings: an unseen count or an opponent hand size is out of range (or NaN)")
    p = out[:, at : at + _NV]
    np.subtract(1, _MISS[total[:, None], k, hand[:, None]], out=p)
    np.multiply(out[:, _O_TAKE], p, out=out[:, at + _NV : at + 2 * _NV])
    v2 = EXTRA_SIZE  # capture-v2's own columns start here: intake_take, own_take, mulle_loose
    np.multiply(out[:, v2 : v2 + _NV], p, out=out[:, at + 2 * _NV : at + 3 * _NV])
    np.multiply(obs[:, _BUILD_MINE], p, out=out[:, at + 3 * _NV : at + 4 * _NV])
    tail = _O_TWIN_EXPOSED  # twin_exposed, by _mulle_sums; then exp_mulle, exp_mulle_loose, p_tabbe
    out[:, tail + 1] = out[:, tail] * hand / np.maximum(total, 1)
    # mulle_loose's columns are table values 1..13; p's are hand values 2..16, so value t is p's column t - 2.
    out[:, tail + 2] = (out[:, v2 + 2 * _NV + 1 : v2 + 2 * _NV + 13] * p[:, :12]).sum(axis=1)
    out[:, tail + 3] = (out[:, _O_CLEARS] * p).max(axis=1)


def _expected_best(worth: NDArray[np.float32], copies: NDArray[np.intp], total: NDArray[np.intp],
                   hand: NDArray[np.intp], floor: NDArray[np.float32]) -> NDArray[np.float32]:
    """E[max(floor, the best ``worth`` among the faces an ``hand``-card draw from ``total`` unseen holds)], per row.

    Faces sorted by worth: the best held is face ``i`` when none of the faces before it is
    held and it is, P(none of the first i - 1) - P(none of the first i), each a miss chance
    of their copies taken together.
    """
    worth = np.maximum(worth, floor[:, None])
    # Row-major flat indices: one gather each, not take_along_axis (several times slower on a decision's rows).
    flat = np.argsort(-worth, axis=1, kind="stable") + (np.arange(len(worth)) * worth.shape[1])[:, None]
    ranked = worth.ravel()[flat]
    held = np.cumsum(copies.ravel()[flat], axis=1)
    np.minimum(held, _MAX_UNSEEN, out=held)
    miss = _MISS[total[:, None], held, hand[:, None]]
    step = np.empty_like(miss)
    step[:, 0] = 1 - miss[:, 0]
    np.subtract(miss[:, :-1], miss[:, 1:], out=step[:, 1:])
    # Summed one product after another (cumsum's order, which the compiled module repeats).
    best: NDArray[np.float32] = np.cumsum(ranked * step, axis=1)[:, -1] + floor * miss[:, -1]
    return best


def _replies(obs: NDArray[np.float32], out: NDArray[np.float32]) -> None:
    """Block ``capture-v4``'s tail: the best capture each player can make next, from the block before it in ``out``."""
    at = EXTRA_SIZES["capture-v3"]
    loose, unseen = obs[:, _LOOSE], obs[:, _UNSEEN]
    take = out[:, _O_TAKE] * 10
    v2 = EXTRA_SIZE  # intake_take, own_take, mulle_loose
    mulle_v = np.zeros_like(take)
    mulle_v[:, : 13 - 1] = out[:, v2 + 2 * _NV + 1 : v2 + 2 * _NV + 13] * 14  # table values 2..13 = hand values
    # A value's capture: its loose mulle pairs, the loose cards' intake, the other cards at the mean, a tabbe.
    worth_v = mulle_v + out[:, v2 : v2 + _NV] * 10 + _CARD_INTAKE * np.maximum(take - loose @ _SAME_V, 0)
    worth_v += out[:, _O_CLEARS]
    worth_v *= take > 0
    takes = take[:, _FACE_COL] > 0
    twin = loose > 0.5
    # Played by value: the card's own intake, and a mulle with its twin if that is taken with the rest.
    forced_mulle = np.where(takes, mulle_v[:, _FACE_COL] + twin * _MULLE_PTS, 0)
    forced = np.where(takes, worth_v[:, _FACE_COL] + _FACE_INTAKE + twin * _MULLE_PTS, 0)
    alone = np.abs(out[:, EXTRA_SIZE - 1 : EXTRA_SIZE] * 10 - 1) < 0.05  # the twin is the only card on the table
    twin_worth = _MULLE_PTS + 2 * _FACE_INTAKE + alone
    total = np.rint(unseen.sum(axis=1)).astype(np.intp)
    hand = np.rint(obs[:, _OPP_HAND] * HAND_SIZE).astype(np.intp)
    copies = np.rint(unseen).astype(np.intp)
    # A twin lying loose is taken alone, unless the player owns the build of the card's value (4.1.1): the
    # opponent (who moves next) and the mover differ only in whose builds count.
    alone_opp, alone_mine = (twin & _MULLE_MOVE & (obs[:, owns][:, _FACE_COL] < 0.5)
                             for owns in (_BUILD_OPP, _BUILD_MINE))
    opp = np.where(alone_opp, twin_worth, forced)
    opp_mulle = np.where(alone_opp, _MULLE_PTS, forced_mulle)  # the mover's mulle points are not a field
    mine = np.where(alone_mine, twin_worth, forced)
    # Each build the opponent owns proves a card of its value in their hand (4.5): at least that capture.
    floor = (worth_v * (obs[:, _BUILD_OPP] > 0.5)).max(axis=1, initial=0)
    possible = unseen > 0.5
    # Both expectations in one pass over twice the rows: the worth, then the mulle points (no floor).
    n = len(obs)
    both = _expected_best(np.concatenate([opp * possible, opp_mulle * possible]), np.concatenate([copies, copies]),
                          np.concatenate([total, total]), np.concatenate([hand, hand]),
                          np.concatenate([floor, np.zeros_like(floor)]))
    out[:, at] = both[:n] / 14
    out[:, at + 1] = both[n:] / 14
    capturing = (copies * (possible & (opp > 0))).sum(axis=1)
    out[:, at + 2] = np.where(floor > 0, 0, _MISS[total, np.minimum(capturing, _MAX_UNSEEN), hand])
    by_value = np.maximum.reduceat(np.where(obs[:, _HAND] > 0.5, mine, 0)[:, _BY_VALUE], _VALUE_STARTS, axis=1) / 14
    out[:, at + 4 : at + 4 + _NV] = by_value
    out[:, at + 3] = by_value.max(axis=1)


#: The fields indexed by face: a face symmetry permutes them as it permutes the encoding's face
#: blocks. Every other field reads values and counts only, which no face symmetry changes (tested).
FACE_FIELDS: tuple[str, ...] = ("twin_threat", "twin_mine")


def symmetry_columns(name: str | None, count: int) -> NDArray[np.intp]:
    """:func:`mulle_env.observation.face_symmetry_columns` over an encoding with block ``name`` appended.

    ``with_extras(obs[:, c], name)`` equals ``with_extras(obs, name)[:, cols[k]]`` with ``c``
    the encoding's columns of symmetry ``k``: a symmetric position's extra inputs, without
    computing them again. ``(count, OBS_SIZE + extras_size(name))``.
    """
    base = face_symmetry_columns(count)
    size = extras_size(name)
    cols = np.concatenate([base, np.tile(np.arange(OBS_SIZE, OBS_SIZE + size, dtype=np.intp), (count, 1))], axis=1)
    first = OBS_SLICES[FACE_BLOCKS[0]].start
    for field in FACE_FIELDS:
        at, floats = FIELD_OFFSETS[field]
        if at + floats <= size:  # the face maps of block 0 apply to every per-face field
            cols[:, OBS_SIZE + at:OBS_SIZE + at + floats] = OBS_SIZE + at + (base[:, first:first + floats] - first)
    return cols


def with_extras(obs: NDArray[np.float32], name: str | None) -> NDArray[np.float32]:
    """``obs`` with the block ``name`` appended (``obs`` itself, as float32, for ``None``)."""
    obs = np.asarray(obs, dtype=np.float32)
    if name is None:
        return obs
    size = extras_size(name)
    batch = obs[None] if obs.ndim == 1 else obs
    if batch.ndim != 2 or batch.shape[1] != OBS_SIZE:
        raise ValueError(f"expected encodings of shape (n, {OBS_SIZE}), got {obs.shape}")
    full = np.empty((len(batch), OBS_SIZE + size), np.float32)
    full[:, :OBS_SIZE] = batch
    if _C is None:
        afterstate_extras_numpy(batch, full[:, OBS_SIZE:], name)
    else:  # straight into the tail of each row
        _compiled(np.ascontiguousarray(batch), full, full[:, OBS_SIZE:], OBS_SIZE, name)
    return full[0] if obs.ndim == 1 else full


def _load_compiled() -> ModuleType | None:
    """The env layer's compiled blocks, configured with this file's tables, or ``None`` on the Python engine.

    They follow the engine's one backend switch (:data:`mulle_env.engine.BACKEND`): on the
    compiled core ``mulle_env._native`` computes them (mulle_env/csrc/extras.c), on the
    Python engine this file's numpy code does. A module that refuses these tables is a
    stale build: refused, saying to rebuild, never replaced by numpy behind the user's back.
    """
    from .native import NATIVE

    if NATIVE is None:
        return None
    builds = OBS_SLICES["builds"].start
    try:
        NATIVE.configure_extras(
            [int(v) for v in HAND_VALUE], [int(v) for v in TABLE_VALUE], [float(v) for v in _MULLE],
            [float(v) for v in _MULLE13], [INTAKE_POINTS[f] / 10.0 for f in range(NUM_FACES)], OBS_SIZE,
            _HAND.start, _LOOSE.start, _UNSEEN.start, builds, len(BUILD_FEATURES), BUILD_FEATURES.index("cards"),
            BUILD_FEATURES.index("mine"), BUILD_FEATURES.index("opponents"), _OPP_HAND, HAND_SIZE, _MISS.tobytes(),
            dict(FIELD_OFFSETS), tuple(EXTRA_SIZES[name] for name in EXTRAS))
    except ValueError as exc:
        raise ImportError(f"mulle_env._native refuses the extra-input tables of mulle_env/extras.py ({exc}): "
                          "a stale build; rebuild it with pip install -e .") from exc
    return NATIVE


_C = _load_compiled()
#: ``"c"`` when the engine core computes the blocks, ``"numpy"`` on the Python engine.
BACKEND = "numpy" if _C is None else "c"
