"""The heuristic's priority order and the greedy agent, on hand-made positions."""

from __future__ import annotations

import random

import pytest
from engine_helpers import build, position

import agents
from agents.effects import move_effect, pile_points, twin_counts
from agents.greedy import hold_probability, reply_exposure
from agents.heuristic import CLASS_NAMES, classify, rank_moves
from agents.rollout import set_value
from mulle_env.engine.moves import CAPTURE_ID, MOVES


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


def test_greedy_exposure_term_avoids_leaving_a_mulle():
    # Both captures bank nothing now (HJ 6 and HJ K carry no intake points); the heuristic
    # and greedy without risk take the first in move order, KL 6, which leaves HJ K for
    # the opponent's HJ K (a 13-point mulle). Only the exposure term sees it.
    st = position("KL 6, KL K", "KL 3, SP 8", ["HJ 6", "HJ K"])
    assert choose("heuristic", st) == choose("greedy:risk=0", st) == "capture KL 6"
    assert choose("greedy", st) == "capture KL K"


def test_greedy_counts_its_own_build():
    # The heuristic ranks any capture above a build. Capturing RU 9 with KL 9 banks
    # nothing; building KL 2 on SP 7 to 9 gathers RU 9 and SP 7 (1 point) into a build
    # the KL 9 captures next turn, which greedy counts with and without risk.
    st = position("KL 2, KL 9", "KL 3, SP 8", ["SP 7", "RU 9"])
    assert choose("heuristic", st) == "capture KL 9"
    assert choose("greedy:risk=0", st) == choose("greedy", st) == "build KL 2 on SP 7 to 9"


def brute_exposure(st, opponent, counts, hand_size, unseen):
    """reply_exposure without pruning: every face the opponent may hold, by the engine."""
    before = st.mpts[opponent] + st.tabbe[opponent] + st.ipts[opponent]
    worst = 0.0
    for face, k in enumerate(counts):
        if not k:
            continue
        trial = st.copy()
        trial.set_hand(opponent, (face, face))
        if CAPTURE_ID[face] in trial.legal_move_ids():
            trial.play_unchecked(MOVES[CAPTURE_ID[face]])
            gain = trial.mpts[opponent] + trial.tabbe[opponent] + trial.ipts[opponent] - before
            worst = max(worst, hold_probability(k, hand_size, unseen) * gain)
    return worst


def test_exposure_pruning_keeps_captures_worth_more_than_40():
    # KL 10 (two unseen copies, p = 0.36) takes four 10s, two mulles: 26 points. KL K
    # (one copy, p = 0.2) takes P0's [13] build of three ace pairs: 51 points. A fixed
    # "at most 40 points" bound skipped KL K since 0.2 * 40 <= 0.36 * 26.
    st = position("KL 4, RU K", "HJ 4",
                  [build("KL A, KL A, SP A, SP A, HJ A, HJ A, SP 7", 13, owner=0), "SP 10", "SP 10", "RU 10", "RU 10"],
                  to_move=1)
    counts = [0] * 52
    counts[9], counts[12] = 2, 1  # KL 10, KL K
    want = brute_exposure(st, 1, counts, 8, 40)
    assert want == pytest.approx(hold_probability(1, 8, 40) * 51)
    assert reply_exposure(st.copy(), 1, counts, 8, 40) == pytest.approx(want)


def test_exposure_pruning_never_drops_the_maximum():
    import mulle_env as me

    for seed in range(3):
        st = me.new_game(seed=seed, ruleset=me.Ruleset(sets=1))
        rng = random.Random(seed)
        while not st.over:
            view = st.view(1 - st.to_move)
            counts = twin_counts(view)
            args = (st.to_move, counts, view.opponent_hand_size or 8, sum(counts))
            assert reply_exposure(st.copy(), *args) == pytest.approx(brute_exposure(st, *args))
            moves = st.legal_moves()
            st.play(moves[rng.randrange(len(moves))])
