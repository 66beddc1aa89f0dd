"""Casino's invariants over many random games (hypothesis picks seeds, rulesets and moves).

After every move: the 52 cards are all there exactly once, every build's owner keeps a card of
its value (the reservation, CASINO.md 4.4), the player to move has a move, every move prints
and parses back, the canonical form round-trips; each round hands out 11 points plus sweeps
(8 when the cards split 26-26) and the seed fixes the game. Long runs: ``-m slow``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mulle_env import casino
from mulle_env.casino.cards import VALUE

rulesets = st.builds(
    casino.Ruleset,
    gather_all=st.booleans(),
    court_capture=st.sampled_from(["one", "all"]),
    sweeps=st.booleans(),
    sum_build_max_card=st.sampled_from([5, 10]),
    increase_max_cards=st.sampled_from([None, 4]),
    trail_with_build=st.booleans(),
    target_score=st.sampled_from([11, 21]),
    rounds=st.sampled_from([None, 1, 2]),
)


def all_cards(s: casino.GameState) -> list[int]:
    out = [*s.hands[0], *s.hands[1], *s.loose, *s.captured[0], *s.captured[1], *s.stock]
    for b in s.builds:
        out.extend(b.cards)
    return out


def check_position(s: casino.GameState, complete: bool) -> None:
    cards = all_cards(s)
    assert len(set(cards)) == len(cards), "a card is in two places"
    if complete and not s.over:
        assert sorted(cards) == list(range(52)), "the 52 cards are not all in play"
    for b in s.builds:
        assert any(VALUE[c] == b.value for c in s.hands[b.owner]), f"the owner of {b} holds no card of its value"
        assert not s.ruleset.gather_all or sum(x.value == b.value for x in s.builds) == 1
    if not s.over:
        assert s.legal_moves(), "the player to move has no legal move"
        assert s.hands[s.to_move], "the player to move holds no card"


def play_checked(seed: int, rules: casino.Ruleset, move_seed: int, roundtrip_every: int = 5) -> casino.GameState:
    s = casino.new_game(seed, rules)
    rng = random.Random(move_seed)
    moves: list[str] = []
    rounds_seen = 0
    while not s.over:
        check_position(s, complete=True)
        legal = s.legal_moves()
        assert len(set(legal)) == len(legal)
        move = legal[rng.randrange(len(legal))]
        assert casino.Move.from_str(str(move)) == move
        if rules.gather_all:
            assert move.id is not None and s.legal_ids() == tuple(sorted(s.legal_ids()))
        before = len(s.sheets)
        s.play(str(move))
        moves.append(str(move))
        if len(s.sheets) > before:
            rounds_seen += 1
            a, b = s.sheets[-1]
            split = a["cards"] == b["cards"] == 0
            assert a["total"] + b["total"] - a["sweeps"] - b["sweeps"] == (8 if split else 11)
            if not rules.sweeps:
                assert a["sweeps"] == b["sweeps"] == 0
        if len(moves) % roundtrip_every == 0:
            again = casino.GameState.from_json(s.to_json())
            assert again == s and again.key() == s.key()
    check_position(s, complete=False)
    res = s.result()
    casino.check_result(res, rules)
    assert len(res.sheets) == rounds_seen
    if rules.rounds is not None:
        assert rounds_seen == rules.rounds
    # The seed fixes the game: replaying the moves from the seed reaches the same key.
    assert casino.replay(seed, moves, rules).key() == s.key()
    return s


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), rules=rulesets, move_seed=st.integers(0, 2**32))
def test_random_games_keep_every_invariant(seed, rules, move_seed):
    play_checked(seed, rules, move_seed)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), move_seed=st.integers(0, 2**32))
def test_the_seed_fixes_the_game(seed, move_seed):
    a = play_checked(seed, casino.Ruleset(rounds=1), move_seed, roundtrip_every=10**9)
    b = play_checked(seed, casino.Ruleset(rounds=1), move_seed, roundtrip_every=10**9)
    assert a.key() == b.key() and a.to_json() == b.to_json()


def test_thousands_of_random_games_end_with_a_legal_result():
    # Two thousand one-round games under the default rules and the app's: cheap enough for every run.
    for seed in range(2000):
        rules = casino.Ruleset(rounds=1) if seed % 2 else casino.Ruleset(rounds=1, sum_build_max_card=5,
                                                                          increase_max_cards=4)
        s = casino.new_game(seed, rules)
        rng = random.Random(seed)
        while not s.over:
            legal = s.legal_moves()
            assert legal
            s.play(legal[rng.randrange(len(legal))])
        casino.check_result(s.result(), rules)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), rules=rulesets, move_seed=st.integers(0, 2**32))
def test_random_games_keep_every_invariant_at_length(seed, rules, move_seed):
    play_checked(seed, rules, move_seed, roundtrip_every=1)
