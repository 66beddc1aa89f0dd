"""The action codec: a fixed index per move, a bijection with the legal moves, clear errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
from engine_helpers import random_states

import mulle_env as me
from mulle_env import codec
from mulle_env.engine.moves import MOVES

RULESETS = [
    me.Ruleset(),
    me.Ruleset(lock_every_build=True),
    me.Ruleset(discard_only_if_no_capture=False, mulle_hand_values=True),
    me.Ruleset(sets=1),
]


def test_constants_and_layout():
    assert codec.NUM_ACTIONS == me.NUM_MOVE_IDS == len(me.MOVES) == 2812
    assert [m.id for m in MOVES] == list(range(codec.NUM_ACTIONS))
    covered = []
    for name, lo, hi in codec.ACTION_LAYOUT:
        kind = name.split()[0]
        assert all(MOVES[i].kind == kind for i in range(lo, hi + 1)), name
        covered.extend(range(lo, hi + 1))
    assert covered == list(range(codec.NUM_ACTIONS))
    assert codec.ACTION_LAYOUT[0][1:] == (0, 51)
    assert codec.MAX_GAME_LENGTH == 192 and codec.MAX_DECISIONS_PER_PLAYER == 96
    assert codec.max_game_length(me.Ruleset(sets=3)) == 288


@pytest.mark.parametrize("k", range(len(RULESETS)), ids=lambda k: str(RULESETS[k].changes() or "default"))
def test_mask_is_exactly_the_legal_set_and_codec_is_a_bijection(k):
    ruleset = RULESETS[k]
    checked = 0
    for st in random_states(8, seed=100 + k, ruleset=ruleset):
        legal = st.legal_moves()
        mask = codec.legal_mask(st)
        assert mask.dtype == np.int8 and mask.shape == (codec.NUM_ACTIONS,)
        indices = [codec.encode(st, m) for m in legal]
        assert len(set(indices)) == len(legal)  # no two legal moves share an index
        assert set(np.flatnonzero(mask).tolist()) == set(indices)
        assert codec.legal_indices(st) == sorted(indices)
        for m, i in zip(legal, indices):
            assert codec.decode(st, i) == m
            assert codec.action_to_move(i) == m
        checked += 1
    assert checked > 700


def test_many_random_states_masks_match_engine():
    # Thousands of states; the cheap check only (the full round trip is above).
    rng = random.Random(5)
    n = 0
    for st in random_states(40, seed=11):
        mask = codec.legal_mask(st, dtype=bool)
        ids = [m.id for m in st.legal_moves()]
        assert mask.sum() == len(ids) and mask[ids].all()
        if not st.is_over():
            illegal = rng.randrange(codec.NUM_ACTIONS)
            if not mask[illegal]:
                with pytest.raises(codec.IllegalActionError):
                    codec.decode(st, illegal)
        n += 1
    assert n >= 7000


def test_target_is_part_of_the_index():
    """Builds with the same hand card and new value but different targets get different indices."""
    found = 0
    for st in random_states(20, seed=3):
        seen = {}
        for m in st.legal_moves():
            if m.kind == "build":
                key = (m.card, m.to)
                if key in seen:
                    assert seen[key] != codec.encode(st, m)
                    found += 1
                seen[key] = codec.encode(st, m)
    assert found > 0


def test_every_game_has_exactly_max_game_length_moves():
    for ruleset in (me.Ruleset(), me.Ruleset(sets=1)):
        rng = random.Random(1)
        st = me.new_game(seed=9, ruleset=ruleset)
        moves = 0
        while not st.is_over():
            ids = codec.legal_indices(st)
            st.play_unchecked(codec.decode(st, ids[rng.randrange(len(ids))]))
            moves += 1
        assert moves == codec.max_game_length(ruleset)


def test_errors_name_the_action_the_move_and_the_legal_ones():
    st = me.new_game(seed=7)
    legal = codec.legal_indices(st)
    bad = next(i for i in range(codec.NUM_ACTIONS) if i not in legal)
    with pytest.raises(codec.IllegalActionError) as exc:
        codec.decode(st, bad)
    text = str(exc.value)
    assert f"action {bad} ({MOVES[bad]})" in text and "legal actions:" in text
    assert f"{legal[0]} ({MOVES[legal[0]]})" in text
    assert isinstance(exc.value, ValueError)
    for wrong in (-1, codec.NUM_ACTIONS, 2.5, "7", None):
        with pytest.raises(codec.IllegalActionError, match="actions are ints|must be an int"):
            codec.decode(st, wrong)
    assert codec.decode(st, np.int64(legal[0])) == MOVES[legal[0]]
    move = MOVES[bad]
    with pytest.raises(codec.IllegalActionError, match="not legal"):
        codec.encode(st, move)
    assert codec.encode(st, str(MOVES[legal[0]])) == legal[0]
    assert codec.describe(legal[0]) == str(MOVES[legal[0]])


def test_game_over():
    st = next(s for s in random_states(1, seed=2) if s.is_over())
    assert codec.legal_mask(st).sum() == 0
    with pytest.raises(me.GameOverError):
        codec.decode(st, 0)


def test_non_forced_capture_is_rejected():
    rules = me.Ruleset(forced_capture=False)
    st = me.new_game(seed=1, ruleset=rules)
    for call in (lambda: codec.legal_mask(st), lambda: codec.decode(st, 0), lambda: codec.check_ruleset(rules)):
        with pytest.raises(codec.UnsupportedRulesetError, match="forced_capture=True"):
            call()
    assert issubclass(codec.UnsupportedRulesetError, me.InvalidRulesetError)


def test_mask_indices_reads_int8_and_bool_masks():
    st = me.new_game(seed=9)
    mask = codec.legal_mask(st)
    assert codec.mask_indices(mask).tolist() == st.legal_move_ids()
    assert codec.mask_indices(mask.astype(bool)).tolist() == st.legal_move_ids()
    assert codec.mask_indices(np.zeros(codec.NUM_ACTIONS, np.int8)).tolist() == []
    with pytest.raises(ValueError, match="shape"):
        codec.mask_indices(np.zeros((2, codec.NUM_ACTIONS), np.int8))


@pytest.mark.parametrize("k", [1, 3, 8])
def test_batch_mask_indices_equals_nonzero(k):
    rng = np.random.default_rng(k)
    masks = (rng.random((k, codec.NUM_ACTIONS)) < 0.01).astype(np.int8)
    masks[0, [0, 7, 8, codec.NUM_ACTIONS - 1]] = 1
    want = np.nonzero(masks)
    for m in (masks, masks.astype(bool), masks.view(np.uint8)):
        rows, actions = codec.batch_mask_indices(m)
        assert np.array_equal(rows, want[0]) and np.array_equal(actions, want[1])
    with pytest.raises(ValueError, match="shape"):
        codec.batch_mask_indices(np.zeros(codec.NUM_ACTIONS, np.int8))


def test_batch_mask_indices_splits_rows_by_the_masks_own_width():
    # Any game's masks (Casino-v0's are 504 wide): the numpy path split rows by Mulle's 2812 and found row 0's
    # actions in row 0 only, leaving later rows empty (seen on the pure-Python engine).
    masks = np.zeros((3, 504), np.int8)
    masks[0, 5] = masks[1, 0] = masks[2, 503] = 1
    rows, actions = codec.batch_mask_indices(masks)
    assert rows.tolist() == [0, 1, 2] and actions.tolist() == [5, 0, 503]
    assert codec.sample_masks(masks, 0).tolist() == [5, 0, 503]
