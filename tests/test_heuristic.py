"""The heuristic's priority order and the greedy agent, on hand-made positions."""

from __future__ import annotations

import random

import pytest
from engine_helpers import build, position

import agents
from agents.evaluation import move_effect, pile_points, set_value
from agents.greedy import hold_probability
from agents.heuristic import CLASS_NAMES, classify, rank_moves


def choose(spec: str, st) -> str:
    return str(agents.make(spec).act(st.view(st.to_move), st.legal_moves(), random.Random(0)))


def classes(st) -> dict[str, str]:
    """Move text -> class name for every legal move."""
    view = st.view(st.to_move)
    return {str(eff.move): CLASS_NAMES[key[0]] for key, eff in rank_moves(view, st.legal_moves())}


@pytest.mark.parametrize(
    "hand, table, best, other, best_class, other_class",
    [
        # 2 + 2 with HJ 4 is a capture with a mulle (the two KL 2); HJ K takes 6 + 7 twice, more cards, no mulle.
        ("HJ 4, HJ K", ["KL 2", "KL 2", "SP 6", "RU 7", "HJ 6", "SP 7"], "capture HJ 4", "capture HJ K",
         "mulle capture", "capture"),
        # Seed order: a capture of several cards beats the mulle single.
        ("KL 5, HJ 5", ["KL 5", "HJ 2", "SP 3"], "capture HJ 5", "capture KL 5", "capture", "mulle single"),
        ("KL 7, SP 9", ["KL 7", "HJ 9"], "capture KL 7", "capture SP 9", "mulle single", "value match"),
        ("SP 9, RU 7", ["HJ 9", "KL 2"], "capture SP 9", "build RU 7 on KL 2 to 9", "value match", "build"),
        ("HJ A, KL A, RU 8", ["KL 7", "SP 7"], "build KL A on SP 7 to 8", "trotta HJ A", "build", "trotta"),
        ("HJ A, KL A", ["KL 7", "SP 7"], "trotta KL A", "discard HJ A", "trotta", "discard"),
    ],
)
def test_priority_order(hand, table, best, other, best_class, other_class):
    st = position(hand, "KL 6, KL 8", table)
    cls = classes(st)
    assert cls[best] == best_class and cls[other] == other_class
    assert choose("heuristic", st) == best


def test_mulle_captures_rank_by_mulles_then_cards():
    # HJ 9: 3 + 3 + 3 with a KL 3 pair; HJ Q and KL K also make one mulle: more cards wins.
    st = position("HJ 9, HJ Q, KL K", "KL 6", ["KL 3", "KL 3", "SP 3", "HJ 4", "RU 4", "SP 4", "HJ 2", "RU 2"])
    view = st.view(0)
    ranked = rank_moves(view, st.legal_moves())
    caps = [(len(e.taken), e.mulles) for _, e in ranked if e.move.kind == "capture"]
    assert caps == sorted(caps, key=lambda c: (-c[1], -c[0]))
    assert choose("heuristic", st) == str(ranked[0][1].move)


@pytest.mark.parametrize(
    "hand, table, discard",
    [
        ("SP A, HJ 4", ["KL K"], "discard HJ 4"),  # SP A is worth 2 intake points
        ("HJ 4, HJ 4, SP 3", ["KL K"], "discard HJ 4"),  # own twin: bait only we can mull
        ("HJ 5, SP 7", ["KL K"], "discard HJ 5"),  # SP 7 is worth an intake point
    ],
)
def test_discards_the_least_valuable_card(hand, table, discard):
    st = position(hand, "KL 6", table)
    assert all(m.kind == "discard" for m in st.legal_moves())
    assert choose("heuristic", st) == discard


def test_move_effect_uses_the_engine():
    st = position("HJ 4, HJ K", "KL 6", ["KL 2", "KL 2", "SP 6", "RU 7", "HJ 6", "SP 7"])
    view = st.view(0)
    eff = move_effect(view, st.legal_moves()[0])
    assert str(eff.move) == "capture HJ 4"
    assert eff.taken == (1, 1) and eff.mulles == 1 and eff.mulle_points == 2
    eff = move_effect(view, next(m for m in st.legal_moves() if str(m) == "capture HJ K"))
    assert len(eff.taken) == 4 and eff.mulles == 0 and eff.intake_points == 2  # SP 6, SP 7
    assert classify(eff) == 1


def test_move_effect_of_the_last_card_does_not_end_the_deal():
    st = position("KL 7", "", ["HJ 7"])
    eff = move_effect(st.view(0), st.legal_moves()[0])
    assert eff.taken == (32,) and eff.tabbe  # HJ 7


def test_build_effect_and_pile_points():
    st = position("SP 9, RU 7", "KL 9", ["HJ 9", "KL 2", build("SP 5, SP 4", 9, owner=1)])
    eff = move_effect(st.view(0), next(m for m in st.legal_moves() if m.kind == "build"))
    # RU 7 on KL 2 makes 9, which gathers the loose HJ 9 and merges with the opponent's [9].
    assert eff.build_value == 9 and eff.build_cards == 5
    assert eff.build_points == 2  # SP 5, SP 4
    assert pile_points([14, 14, 15]) == 2 + 2 + 1 + 2  # SP 2 pair: 2 intake each + mulle 2, SP 3: 1


def test_set_value_is_the_score_difference_at_the_end():
    import mulle_env as me

    st = me.new_game(seed=2, ruleset=me.Ruleset(sets=1))
    rng = random.Random(2)
    while not st.over:
        moves = st.legal_moves()
        st.play(moves[rng.randrange(len(moves))])
    a, b = st.scores()
    assert set_value(st, 0) == a - b == -set_value(st, 1)


def test_hold_probability():
    assert hold_probability(0, 8, 40) == 0
    assert hold_probability(1, 8, 8) == 1
    assert hold_probability(1, 1, 4) == pytest.approx(0.25)
    assert hold_probability(2, 2, 4) == pytest.approx(1 - (2 / 4) * (1 / 3))


def test_greedy_takes_the_richer_capture():
    # SP 9 takes HJ 9 only; KL 7 makes a mulle worth 7 points.
    st = position("KL 7, SP 9", "KL 6", ["KL 7", "HJ 9"])
    assert choose("greedy", st) == "capture KL 7"


def test_greedy_avoids_leaving_a_mulle_to_the_opponent():
    # Both discards bank nothing; the SP A (2 intake points) would be the opponent's best capture.
    st = position("SP A, HJ 4", "KL 6", ["KL K"])
    assert choose("greedy", st) == "discard HJ 4"
