"""Properties over many random seeded games (hypothesis picks seeds and rulesets).

After every move: the RULES.md invariants hold, the canonical form round-trips, and a
replay from the seed reaches the same key. Long fuzzing runs with ``-m slow``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mulle_env as me

# Every test here runs on each engine backend (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine_backend")

rulesets = st.builds(
    me.Ruleset,
    sets=st.integers(1, 2),
    forced_capture=st.booleans(),
    lock_every_build=st.booleans(),
    discard_only_if_no_capture=st.booleans(),
    mulle_hand_values=st.booleans(),
)


def play_checked(seed: int, rules: me.Ruleset, move_seed: int, roundtrip_every: int = 7):
    state = me.new_game(seed, rules)
    rng = random.Random(move_seed)
    moves = []
    while not state.is_over():
        legal = state.legal_moves()
        assert legal, "the player to move must have a legal move (RULES.md 4.6)"
        assert len(set(legal)) == len(legal)
        move = legal[rng.randrange(len(legal))]
        state.play(move)
        moves.append(str(move))
        state.check_invariants(complete=True)
        if len(moves) % roundtrip_every == 0:
            again = me.GameState.from_dict(state.to_dict())
            assert again.key() == state.key()
    assert me.replay(seed, moves, rules).key() == state.key()
    r = state.result()
    assert sum(s["intake"] for p in r.sheets for s in p) == 40 * rules.sets
    return state


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63), rules=rulesets, move_seed=st.integers(0, 2**32))
def test_random_games_keep_invariants(seed, rules, move_seed):
    play_checked(seed, rules, move_seed)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**63), rules=rulesets, move_seed=st.integers(0, 2**32))
def test_random_games_keep_invariants_long(seed, rules, move_seed):
    play_checked(seed, rules, move_seed, roundtrip_every=1)


def test_intake_points_total_forty_per_set_in_every_game():
    for seed in range(10):
        state = play_checked(seed, me.Ruleset(), seed + 1, roundtrip_every=50)
        assert state.result().totals[0]["intake"] + state.result().totals[1]["intake"] == 80
