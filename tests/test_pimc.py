"""PIMC: determinizations respect what the player knows; search choices on clear positions."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from engine_helpers import build, position

import agents
import mulle_env as me
from agents import rollout
from agents.pimc import PIMCAgent, determinize
from agents.rollout import best_index
from mulle_env.engine.cards import HAND_VALUE
from training.teacher import LabellingAgent


def test_determinizations_deal_exactly_the_unseen_cards():
    st = me.new_game(seed=8)
    st.play(st.legal_moves()[0])
    view = st.view(1)
    rng = random.Random(0)
    for _ in range(20):
        hand, deck = determinize(view, rng)
        assert len(hand) == view.opponent_hand_size and len(deck) == view.deck_size
        assert Counter(hand + deck) == Counter(int(c) for c in view.unseen())


def test_opponent_build_means_the_opponent_holds_its_value():
    # Opponent (seat 1) owns [9]: every sample gives seat 1 a card of hand value 9.
    st = position("SP 3, HJ 4", "KL 9, RU 2", [build("SP 5, SP 4", 9, owner=1), "KL K"])
    view = st.view(0)
    # Only 2 of the ~90 unseen cards... the constraint must be enforced, not left to luck.
    rng = random.Random(1)
    for _ in range(50):
        hand, _ = determinize(view, rng)
        assert any(HAND_VALUE[c] == 9 for c in hand)


def test_single_legal_move_is_returned_without_search():
    st = position("KL 7", "KL 6", ["HJ 7"])
    legal = st.legal_moves()
    assert len(legal) == 1
    assert PIMCAgent(samples=10**6).act(st.view(0), legal, random.Random(0)) is legal[0]


@pytest.mark.parametrize("seed", range(3))
def test_pimc_search_avoids_the_heuristics_trap(seed):
    # The heuristic ranks a capture of two cards above a mulle single, so it plays HJ 5
    # (taking HJ 2 + RU 3, no points) and leaves KL K loose for any king of the opponent.
    # The search sees the 13-point mulle of KL K now is worth more. If PIMC just followed
    # the heuristic's order (its tie-break) this fails.
    st = position("KL K, HJ 5, SP 9", "KL 6, HJ 8, RU 2", ["KL K", "HJ 2", "RU 3"])
    view, legal = st.view(0), st.legal_moves()
    assert str(agents.make("heuristic").act(view, legal, random.Random(seed))) == "capture HJ 5"
    assert str(agents.make("pimc").act(view, legal, random.Random(seed))) == "capture KL K"


@pytest.mark.parametrize("spec", ["pimc:samples=3,horizon=set", "pimc:samples=3,horizon=4,rollout=random",
                                  "pimc:samples=3,width=2"])
def test_pimc_variants_play_legal_moves(spec):
    bot = agents.make(spec)
    st = me.new_game(seed=3, ruleset=me.Ruleset(sets=1))
    rng = random.Random(3)
    for _ in range(30):
        legal = st.legal_moves()
        move = bot.act(st.view(st.to_move), legal, rng)
        assert move in legal
        st.play(move)


@pytest.mark.slow
def test_pimc_beats_heuristic():
    """Duplicate match over 20 seed pairs: PIMC's mean score difference is clearly positive."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from bench_agents import play_pair, summarize

    pairs = [play_pair(("pimc", "heuristic", 5000 + i)) for i in range(20)]
    result = summarize("pimc", "heuristic", pairs)
    assert result["ci95"][0] > 0, result


def _mid_game_states(n_games: int, seed: int, rules: me.Ruleset | None = None):
    rng = random.Random(seed)
    for g in range(n_games):
        rs = rules or me.Ruleset(sets=rng.choice([1, 2]), mulle_hand_values=g % 3 == 0, lock_every_build=g % 4 == 0)
        st = me.new_game(seed * 1000 + g, rs)
        for _ in range(rng.randrange(190 * rs.sets)):
            if st.over:
                break
            ids = st.legal_move_ids()
            st.play_id(ids[rng.randrange(len(ids))])
        if not st.over:
            yield st


compiled = pytest.mark.skipif(rollout.NATIVE is None, reason="agents._native runs on the compiled core only")


@compiled
@pytest.mark.parametrize("rules", [me.Ruleset(), me.Ruleset(mulle_hand_values=True, lock_every_build=True)])
def test_compiled_rollouts_equal_the_python_loop(rules):
    """agents._native's rollouts draw what the reference draws: the same value for every candidate."""
    rng = random.Random(4)
    checked = 0
    for st in _mid_game_states(30, 11, rules):
        cands = st.legal_moves() + [None]  # None: the root itself (a leaf value, as ismcts asks)
        for policy in rollout.POLICIES:
            for stop, plies in (("4", 4), ("deal", 10**6), ("set", 10**6), ("game", 10**6)):
                seed = rng.getrandbits(63)
                args = (st.to_move, policy, plies, stop, st.set_no, st.deal_no, seed)
                before = st.key()
                assert rollout.rollout_values(st, cands, *args) == rollout.reference_rollout_values(st, cands, *args)
                assert st.key() == before  # the root is not changed
                checked += 1
    assert checked > 100


@compiled
@pytest.mark.parametrize("spec", ["pimc:samples=6", "pimc:samples=4,rollout=random,horizon=deal"])
def test_pimc_on_the_core_chooses_as_the_python_path(spec, monkeypatch):
    for st in _mid_game_states(12, 5):
        view = st.view(st.to_move)
        legal = st.legal_moves()
        fast = agents.make(spec).act(view, legal, random.Random(7))
        with monkeypatch.context() as m:
            m.setattr(rollout, "NATIVE", None)  # the reference loop on the same (compiled) states
            slow = agents.make(spec).act(view, legal, random.Random(7))
        assert fast == slow


def test_best_index_keeps_the_earliest_of_near_equal_values():
    assert best_index([0.5]) == 0
    assert best_index([1.0, 1.0 + 1e-12, 0.9]) == 0  # rounding noise does not reorder
    assert best_index([1.0, 2.0, 2.0 + 1e-10, -3.0]) == 1
    assert best_index([-1.0, -0.5, 3.0]) == 2
    assert best_index([1.0, 1.5], tie=1.0) == 0


def near_tie_values(legal):
    a, b, c = legal[:3]
    return [(a, 1.0), (b, 1.0 + 1e-12), (c, 0.25)], [(a, 1.0), (b, 1.5), (c, 1.5 + 1e-10)]


def test_pimc_and_its_labeller_choose_the_best_value_earliest_on_a_tie(monkeypatch):
    st = me.new_game(seed=3)
    view, legal = st.view(st.to_move), st.legal_moves()
    tie, clear = near_tie_values(legal)
    pimc = PIMCAgent(samples=1)
    labeller = LabellingAgent(pimc, record_seats=())
    for values, expected in ((tie, legal[0]), (clear, legal[1])):
        monkeypatch.setattr(pimc, "move_values", lambda *a, values=values: values)
        assert pimc.act(view, legal, random.Random(0)) == expected
        assert labeller.act(view, legal, random.Random(0)) == expected
