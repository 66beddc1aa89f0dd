"""The observation encoder: fixed shape, within bounds, and blind to hidden information."""

from __future__ import annotations

import random

import numpy as np
import pytest
from engine_helpers import random_states

import mulle_env as me
from mulle_env import observation as ob
from mulle_env.engine.cards import NUM_FACES


def test_layout_constants():
    assert ob.OBS_SHAPE == (ob.OBS_SIZE,) == (524,)
    stops = sorted((s.start, s.stop) for s in ob.OBS_SLICES.values())
    assert stops[0][0] == 0 and stops[-1][1] == ob.OBS_SIZE
    assert all(a[1] == b[0] for a, b in zip(stops, stops[1:]))  # contiguous, no overlap
    assert ob.OBS_SLICES["scalars"].stop - ob.OBS_SLICES["scalars"].start == len(ob.SCALAR_FEATURES)


@pytest.mark.parametrize("ruleset", [me.Ruleset(), me.Ruleset(sets=3, lock_every_build=True)], ids=["default", "3sets"])
def test_state_and_view_encoders_agree_and_stay_in_bounds(ruleset):
    low, high = ob.observation_bounds(ruleset)
    n = 0
    for st in random_states(4, seed=1, ruleset=ruleset):
        for p in (0, 1):
            x = ob.encode_state(st, p)
            assert x.dtype == np.float32 and x.shape == ob.OBS_SHAPE
            np.testing.assert_array_equal(x, ob.encode_view(st.view(p)))
            assert (x >= low).all() and (x <= high).all()
            view = st.view(p)
            s = ob.OBS_SLICES
            assert x[s["hand"]].sum() == len(view.hand)
            assert x[s["unseen"]].sum() == view.opponent_hand_size + view.deck_size
            assert x[s["my_mulle"]].sum() == len(view.mulle[p])
            assert x[s["opp_intake"]].sum() == len(view.intake[1 - p])
            assert x[s["my_score"]][-1] * ob.SCORE_SCALE == pytest.approx(view.scores[p]["total"])
            face_total = x[: 8 * NUM_FACES].reshape(8, NUM_FACES).sum(axis=0)
            assert (face_total == 2).all()  # every copy of every face is somewhere
            n += 1
    assert n > 1000


def test_out_array_is_filled_in_place():
    st = me.new_game(seed=3)
    out = np.full(ob.OBS_SIZE, 7.0, dtype=np.float32)
    assert ob.encode_state(st, 1, out) is out
    np.testing.assert_array_equal(out, ob.encode_state(st, 1))


def test_hidden_information_does_not_change_the_observation():
    """States that differ only in the opponent's hand and the deck order encode identically."""
    rng = random.Random(0)
    checked = 0
    for i, st in enumerate(random_states(6, seed=4)):
        if i % 7 or st.is_over():
            continue
        for p in (0, 1):
            view = st.view(p)
            unseen = view.unseen()
            for _ in range(3):
                rng.shuffle(unseen)
                k = view.opponent_hand_size
                other = me.GameState.from_view(view, unseen[:k], unseen[k:], seed=rng.randrange(10**6))
                np.testing.assert_array_equal(ob.encode_state(other, p), ob.encode_state(st, p))
                # (in a set's last deal the unseen cards are exactly the opponent's hand: no difference)
                checked += sorted(other.hands[1 - p]) != sorted(st.hands[1 - p]) or other.deck != st.deck
            # ... while the opponent's own observation does see its hand.
            if view.opponent_hand_size:
                other = me.GameState.from_view(view, unseen[:k], unseen[k:])
                if sorted(other.hands[1 - p]) != sorted(st.hands[1 - p]):
                    assert not np.array_equal(ob.encode_state(other, 1 - p), ob.encode_state(st, 1 - p))
    assert checked > 100


def test_perspective_swaps_sides():
    st = next(s for i, s in enumerate(random_states(1, seed=8)) if i == 60)
    a, b = ob.encode_state(st, 0), ob.encode_state(st, 1)
    s = ob.OBS_SLICES
    np.testing.assert_array_equal(a[s["my_intake"]], b[s["opp_intake"]])
    np.testing.assert_array_equal(a[s["my_score"]], b[s["opp_score"]])
    np.testing.assert_array_equal(a[s["loose"]], b[s["loose"]])
    flags = dict(zip(ob.SCALAR_FEATURES, a[s["scalars"]]))
    assert flags["my_turn"] == (st.to_move == 0) and flags["seat"] == 0
