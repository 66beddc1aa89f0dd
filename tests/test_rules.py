"""One focused test per rule of RULES.md, on hand-made positions in the card notation.

Section numbers in the test names are RULES.md's. Every flag is tested both ways.
"""

from __future__ import annotations

import pytest
from engine_helpers import after, build, builds, legal, loose, position

import mulle_env as me
from mulle_env.engine.cards import HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, TABLE_VALUE, parse_card

# Every test here runs on each engine backend (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine_backend")

# ---------------------------------------------------------------- 1. cards, deal


def test_1_1_two_decks_every_card_twice():
    st = me.new_game(1)
    st.check_invariants(complete=True)
    counts = {}
    for pile in (*st.hands, st.loose, st.deck):
        for f in pile:
            counts[f] = counts.get(f, 0) + 1
    assert len(counts) == 52 and set(counts.values()) == {2}


def test_1_1_canonical_card_order_is_suit_then_rank():
    names = ["RU A", "KL K", "SP 2", "KL A", "HJ 10", "KL 10", "KL 2"]
    assert sorted(names, key=parse_card) == ["KL A", "KL 2", "KL 10", "KL K", "SP 2", "HJ 10", "RU A"]


def test_1_2_first_deal_and_six_deals_per_set():
    st = me.new_game(3)
    assert [len(h) for h in st.hands] == [8, 8] and len(st.loose) == 8 and len(st.deck) == 80
    seen_deals = {(st.set_no, st.deal_no)}
    rng = __import__("random").Random(0)
    while not st.is_over():
        ms = st.legal_moves()
        st.play(ms[rng.randrange(len(ms))])
        if not st.is_over():
            seen_deals.add((st.set_no, st.deal_no))
    assert seen_deals == {(s, d) for s in (1, 2) for d in range(1, 7)}


@pytest.mark.parametrize("sets", [1, 2, 3])
def test_1_3_sets_per_game(sets):
    from engine_helpers import random_game

    st, _ = random_game(5, me.Ruleset(sets=sets))
    assert len(st.result().sheets[0]) == sets


def test_1_4_lead_alternates_every_deal_across_sets():
    st = me.new_game(11)
    leaders = {}
    rng = __import__("random").Random(1)
    while not st.is_over():
        key = (st.set_no, st.deal_no)
        if key not in leaders:
            leaders[key] = st.to_move
        ms = st.legal_moves()
        st.play(ms[rng.randrange(len(ms))])
    assert [leaders[(s, d)] for s in (1, 2) for d in range(1, 7)] == [0, 1] * 6


def test_1_5_one_seed_fixes_the_deal():
    assert me.new_game(42).key() == me.new_game(42).key()
    assert me.new_game(42).key() != me.new_game(43).key()


# ---------------------------------------------------------------- 2. values


@pytest.mark.parametrize(
    "card,table,hand",
    [("KL A", 1, 14), ("SP A", 1, 14), ("SP 2", 2, 15), ("HJ 2", 2, 2), ("RU 10", 10, 16),
     ("SP 10", 10, 10), ("KL J", 11, 11), ("HJ Q", 12, 12), ("RU K", 13, 13), ("HJ 7", 7, 7)],
)
def test_2_values(card, table, hand):
    f = parse_card(card)
    assert (TABLE_VALUE[f], HAND_VALUE[f]) == (table, hand)


def test_2_table_value_on_table_hand_value_in_hand():
    # SP 2 on the table is a 2: a 2 from the hand takes it (a mulle-free value match).
    st = position("KL 2, HJ 5", "KL 9", ["SP 2", "KL K"])
    assert after(st, "capture KL 2").intake[0] == [parse_card("KL 2"), parse_card("SP 2")]
    # ... but SP 2 in the hand is a 15: it takes nothing but a build of 15.
    st = position("SP 2, HJ 5", "KL 9", ["SP 2", "KL K"])
    assert "capture SP 2" not in legal(st)


# ---------------------------------------------------------------- 3. the table


def test_3_one_build_per_value_merge_owned_by_mover_and_locked():
    st = position("HJ 3, KL 9", "SP 9, RU 2", ["KL 6", build("HJ 4, HJ 5", 9, owner=1)])
    nxt = after(st, "build HJ 3 on KL 6 to 9")
    assert loose(nxt) == []
    assert builds(nxt) == {9: {"build": ["KL 6", "HJ 3", "HJ 4", "HJ 5"], "value": 9, "owner": 0, "locked": True}}


def test_3_no_merge_into_opponents_locked_build():
    st = position("HJ 3, KL 9", "SP 9, RU 2", ["KL 6", build("HJ 4, HJ 5", 9, owner=1, locked=True)])
    assert "build HJ 3 on KL 6 to 9" not in legal(st)
    with pytest.raises(me.IllegalMoveError, match="merge into the opponent's locked build"):
        st.play("build HJ 3 on KL 6 to 9")


def test_3_gathering_takes_singles_and_largest_disjoint_pairs():
    # build to 9: takes the loose 9, pairs 4+5 and 6+3 (7+2 would need a 2 twice).
    st = position("KL 2, SP 9", "RU K", ["KL 7", "HJ 9", "SP 4", "RU 5", "HJ 6", "KL 3", "HJ 8"])
    nxt = after(st, "build KL 2 on KL 7 to 9")
    assert builds(nxt)[9]["build"] == ["KL 2", "KL 3", "KL 7", "SP 4", "HJ 6", "HJ 9", "RU 5"]
    assert builds(nxt)[9]["locked"] is True and loose(nxt) == ["HJ 8"]


# ---------------------------------------------------------------- 4.1 capture


def test_4_1_1_mulle_capture_takes_only_the_twin():
    st = position("KL 9, HJ 2", "SP K", ["KL 9", "HJ 4", "SP 5", "RU 9"])
    nxt = after(st, "capture KL 9")
    assert loose(nxt) == ["SP 5", "HJ 4", "RU 9"]
    assert nxt.mulle[0] == [parse_card("KL 9")] and nxt.score(0)["mulle"] == 9


def test_4_1_1_exception_own_build_makes_it_the_forced_capture():
    st = position("KL 9, RU 9", "SP K", ["KL 9", "HJ 4", "SP 5", build("HJ 6, KL 3", 9, owner=0)])
    nxt = after(st, "capture KL 9")
    assert loose(nxt) == [] and builds(nxt) == {}
    assert nxt.mulle[0] == [parse_card("KL 9")]  # the twin still makes a mulle
    assert nxt.tabbe[0] == 1


def test_4_1_2_special_cards_capture_only_their_build():
    st = position("HJ A, SP 2, RU 10", "KL K", ["KL A", "HJ A", "SP 2", "RU 10", "KL 4"])
    assert [m for m in legal(st) if m.startswith("capture")] == []
    st = position("HJ A, SP 2", "KL K, RU A", ["KL 4", build("KL 9, HJ 5", 14, owner=1)])
    assert [m for m in legal(st) if m.startswith("capture")] == ["capture HJ A"]


def test_4_1_3_forced_capture_overview_example_takes_all_four():
    st = position("KL 7, HJ K", "SP K", ["HJ 3", "HJ 4", "HJ 5", "HJ 2"])
    nxt = after(st, "capture KL 7")
    assert loose(nxt) == [] and len(nxt.intake[0]) == 5 and nxt.tabbe[0] == 1


def test_4_1_3_forced_capture_takes_singles_and_the_build_of_anyone():
    table = ["HJ 7", "SP 7", "KL 3", "RU 4", "KL K", build("HJ 2, HJ 5", 7, owner=1, locked=True)]
    st = position("KL 7, HJ K", "SP 7", table)
    nxt = after(st, "capture KL 7")
    assert loose(nxt) == ["KL K"] and builds(nxt) == {}


def test_4_1_3_largest_means_most_cards():
    # 6 = A + A + 4 (three cards) beats 4 + 2 (two cards); only one 4 exists here.
    st = position("KL 6, HJ K", "SP K", ["HJ A", "RU A", "SP 4", "KL 2"])
    assert loose(after(st, "capture KL 6")) == ["KL 2"]


def test_4_1_3_tie_break_most_mulle_points():
    # 7 = 3 + 4; two 3s could go, but SP 3 pairs with the SP 3 inside the build [7].
    st = position("HJ 7, HJ K", "SP K, RU 7", ["KL 3", "SP 3", "KL 4", build("SP 3, SP 4", 7, owner=1)])
    nxt = after(st, "capture HJ 7")
    assert loose(nxt) == ["KL 3"]
    assert nxt.mulle[0] == [parse_card("SP 3")] and nxt.score(0)["mulle"] == 3


def test_4_1_3_tie_break_canonical_order():
    st = position("HJ 7, HJ K", "SP K", ["RU 3", "SP 3", "KL 4"])
    assert loose(after(st, "capture HJ 7")) == ["RU 3"]  # SP 3 comes before RU 3


def test_4_1_3_exact_on_a_crowded_table():
    # 22 loose cards: the search must still be exact. 13 can be made many ways.
    table = ["KL A", "SP A", "HJ A", "RU A", "KL 2", "HJ 2", "KL 3", "SP 3", "HJ 4", "RU 4", "KL 5",
             "SP 5", "HJ 6", "RU 6", "KL 7", "SP 8", "HJ 9", "RU 10", "KL J", "SP Q", "HJ A", "RU 2"]
    st = position("KL K, HJ K", "SP K", table)
    nxt = after(st, "capture KL K")
    taken = 22 - len(loose(nxt))
    # The values add up to 104 = 8 x 13 and do split into eight groups of 13
    # (J+2, Q+A, 10+3, 9+4, 8+5, 7+6, 6+4+3, 5+2+2+A+A+A+A): all 22 cards go.
    assert sum(TABLE_VALUE[parse_card(c)] for c in table) == 104
    assert taken == 22 and nxt.tabbe[0] == 1
    # Swap RU 2 for RU K: the K goes as a single, the other 21 cards add up to 102 = 7 x 13
    # + 11, so the most that can go leaves exactly one card of value 11 behind.
    st = position("KL K, HJ K", "SP K", table[:-1] + ["RU K"])
    assert loose(after(st, "capture KL K")) == ["KL J"]


def test_4_1_3_flag_forced_capture_false_every_maximal_collection():
    rules = me.Ruleset(forced_capture=False)
    st = position("KL 7, HJ K", "SP K", ["HJ 3", "SP 4", "RU 5", "HJ 2", "KL A", "SP 6", "HJ 7"], ruleset=rules)
    caps = [m for m in legal(st) if m.startswith("capture KL 7")]
    # Exact: groups summing to 7 are {A,6}, {2,5}, {3,4}, {A,2,4}; maximal disjoint collections:
    # {A,6}+{2,5}+{3,4} (all six), {A,2,4}+... leaves 3,5,6 (no group) -> {A,2,4}.
    assert caps == [
        "capture KL 7 taking KL A, SP 4, HJ 2, HJ 7",
        "capture KL 7 taking KL A, SP 4, SP 6, HJ 2, HJ 3, HJ 7, RU 5",
    ]
    nxt = after(st, "capture KL 7 taking KL A, SP 4, HJ 2, HJ 7")
    assert loose(nxt) == ["SP 6", "HJ 3", "RU 5"]
    default = position("KL 7, HJ K", "SP K", ["HJ 3", "SP 4", "RU 5", "HJ 2", "KL A", "SP 6", "HJ 7"])
    assert loose(after(default, "capture KL 7")) == []
    with pytest.raises(me.IllegalMoveError):
        default.play("capture KL 7 taking KL A, SP 4, HJ 2, HJ 7")
    with pytest.raises(me.IllegalMoveError, match="names what it takes"):
        st.copy().play("capture KL 7")


def test_4_1_4_capture_must_take_a_pile():
    st = position("KL 9, HJ K", "SP K", ["HJ 3", "SP 4"])
    assert "capture KL 9" not in legal(st)
    with pytest.raises(me.IllegalMoveError, match="captures nothing"):
        st.play("capture KL 9")


def test_4_1_5_mulles_among_captured_cards_and_played_card():
    # RU 8 takes the build [8] (HJ 5 + HJ 3) and the loose group HJ 5 + SP 3: the two HJ 5
    # make a mulle, one copy to the mulle pile and the other to the intake pile.
    st = position("RU 8, KL K", "SP K, KL 8", ["HJ 5", "SP 3", build("HJ 5, HJ 3", 8, owner=1), "KL Q"])
    nxt = after(st, "capture RU 8")
    assert sorted(nxt.mulle[0]) == [parse_card("HJ 5")]
    assert nxt.score(0)["mulle"] == 5
    assert sorted(nxt.intake[0]) == sorted(map(parse_card, ["HJ 5", "HJ 3", "SP 3", "RU 8"]))


def test_4_1_6_tabbe_when_the_table_is_left_empty():
    st = position("KL 5, HJ K", "SP K", ["HJ 5"])
    assert after(st, "capture KL 5").tabbe == [1, 0]
    st = position("KL 5, HJ K", "SP K", ["HJ 5", "RU K"])
    assert after(st, "capture KL 5").tabbe == [0, 0]


def test_4_1_7_last_capturer():
    st = position("KL 5, HJ K", "SP K", ["HJ 5", "RU K"])
    assert after(st, "capture KL 5").last_capturer == 0


# ---------------------------------------------------------------- 4.2 build


def test_4_2_1_build_up_on_a_loose_card_needs_reservation():
    st = position("HJ 6, RU 10, KL 2", "SP K", ["RU 10"])
    assert "build HJ 6 on RU 10 to 16" in legal(st)
    st = position("HJ 6, SP 10, KL 2", "SP K", ["RU 10"])  # SP 10 is a 10 in the hand, not 16
    assert "build HJ 6 on RU 10 to 16" not in legal(st)
    with pytest.raises(me.IllegalMoveError, match="no card of hand value 16"):
        st.play("build HJ 6 on RU 10 to 16")


def test_4_2_1_identical_loose_cards_are_one_target():
    st = position("HJ 2, KL 9", "SP K", ["SP 7", "SP 7"])
    assert legal(st).count("build HJ 2 on SP 7 to 9") == 1


def test_4_2_2_build_down_only_on_opponents_unlocked_build():
    st = position("HJ 3, KL 7, RU K", "SP J, SP 10", [build("HJ 6, HJ 4", 10, owner=1)])
    assert "build HJ 3 on [10] to 7" in legal(st) and "build HJ 3 on [10] to 13" in legal(st)
    nxt = after(st, "build HJ 3 on [10] to 7")
    assert builds(nxt)[7]["owner"] == 0 and builds(nxt)[7]["locked"] is False
    locked = position("HJ 3, KL 7, RU K", "SP J, SP 10", [build("HJ 6, HJ 4", 10, owner=1, locked=True)])
    assert not [m for m in legal(locked) if "[10]" in m]
    with pytest.raises(me.IllegalMoveError, match="locked"):
        locked.play("build HJ 3 on [10] to 7")
    nobody = position("HJ 3, KL 7, RU K", "SP J", [build("HJ 6, HJ 4", 10)])
    assert "build HJ 3 on [10] to 7" not in legal(nobody) and "build HJ 3 on [10] to 13" in legal(nobody)


def test_4_2_3_no_change_to_own_build():
    st = position("HJ 3, KL 7, SP 10, RU K", "SP J", [build("HJ 6, HJ 4", 10, owner=0)])
    assert not [m for m in legal(st) if "[10]" in m]
    with pytest.raises(me.IllegalMoveError, match="you own the build"):
        st.play("build HJ 3 on [10] to 13")


def test_4_2_5_build_that_gathers_is_locked_otherwise_not():
    st = position("HJ 2, KL 9", "SP K", ["SP 7", "RU 4", "HJ 5"])
    assert builds(after(st, "build HJ 2 on SP 7 to 9"))[9]["locked"] is True
    st = position("HJ 2, KL 9", "SP K", ["SP 7", "RU 4"])
    assert builds(after(st, "build HJ 2 on SP 7 to 9"))[9]["locked"] is False


@pytest.mark.parametrize("flag", [False, True])
def test_4_2_6_flag_lock_every_build(flag):
    st = position("HJ 2, KL 9", "SP K", ["SP 7", "RU 4"], ruleset=me.Ruleset(lock_every_build=flag))
    assert builds(after(st, "build HJ 2 on SP 7 to 9"))[9]["locked"] is flag


# ---------------------------------------------------------------- 4.3 trotta / feed


def test_4_3_trotta_gathers_into_locked_build():
    st = position("KL 9, HJ 9, RU K", "SP K", ["SP 9", "HJ 4", "RU 5", "KL Q"])
    nxt = after(st, "trotta KL 9")
    assert builds(nxt) == {9: {"build": ["KL 9", "SP 9", "HJ 4", "RU 5"], "value": 9, "owner": 0, "locked": True}}
    assert loose(nxt) == ["KL Q"]


def test_4_3_trotta_needs_a_second_card_and_something_to_gather():
    assert "trotta KL 9" not in legal(position("KL 9, RU K", "SP K", ["SP 9"]))
    assert "trotta KL 9" not in legal(position("KL 9, HJ 9", "SP K", ["SP 8"]))


def test_4_3_feed_own_build_even_locked():
    st = position("KL 9, HJ 9, RU K", "SP K", ["KL Q", build("SP 4, SP 5", 9, owner=0, locked=True)])
    nxt = after(st, "trotta KL 9")
    assert builds(nxt)[9]["build"] == ["KL 9", "SP 4", "SP 5"] and builds(nxt)[9]["locked"] is True


def test_4_3_no_trotta_against_opponents_locked_build():
    st = position("KL 9, HJ 9, RU K", "SP K, SP 9", ["HJ 4", "RU 5", build("SP 4, SP 5", 9, owner=1, locked=True)])
    assert "trotta KL 9" not in legal(st)
    with pytest.raises(me.IllegalMoveError, match="locked build"):
        st.play("trotta KL 9")


# ---------------------------------------------------------------- 4.4 discard


def test_4_4_1_no_discard_while_owning_a_build():
    st = position("HJ 9, KL 2, RU K", "SP K", [build("SP 4, SP 5", 9, owner=0)])
    assert not [m for m in legal(st) if m.startswith("discard")]
    with pytest.raises(me.IllegalMoveError, match=r"you own the build \[9\]"):
        st.play("discard KL 2")


@pytest.mark.parametrize("flag", [True, False])
def test_4_4_2_flag_discard_only_if_no_capture(flag):
    st = position("KL 5, RU K", "SP K", ["HJ 5"], ruleset=me.Ruleset(discard_only_if_no_capture=flag))
    assert ("discard KL 5" in legal(st)) is (not flag)
    assert "discard RU K" in legal(st)


# ---------------------------------------------------------------- 4.5 / 4.6


def test_4_5_reserved_card_may_only_capture():
    st = position("HJ 9, HJ 2, RU K", "SP K", ["KL 7", build("SP 4, SP 5", 9, owner=0)])
    assert [m for m in legal(st) if m.startswith(("build HJ 9", "trotta HJ 9", "discard HJ 9"))] == []
    assert "capture HJ 9" in legal(st)
    with pytest.raises(me.IllegalMoveError, match="reserved"):
        st.play("build HJ 9 on KL 7 to 16")


def test_4_6_always_a_move_over_random_games():
    from engine_helpers import random_game

    def check(st):
        if not st.is_over():
            assert st.legal_moves()

    for seed in range(30):
        random_game(seed, each=check)


# ---------------------------------------------------------------- 5. deals and sets


def test_5_1_next_deal_keeps_the_table():
    deck = [f"HJ {r}" for r in "2345678"] + ["HJ 10"] + [f"RU {r}" for r in "2345678"] + ["RU 10"]
    st = position("KL 5", "HJ 9", ["SP K"], deck=deck)
    st.play("discard KL 5").play("discard HJ 9")
    assert st.deal_no == 6 and [len(h) for h in st.hands] == [8, 8] and loose(st) == ["KL 5", "SP K", "HJ 9"]


def test_5_2_leftovers_go_to_last_capturer_not_a_tabbe():
    st = position("KL 5", "HJ 2", ["SP 5", "RU K"], ruleset=me.Ruleset(sets=1))
    st.play("capture KL 5").play("discard HJ 2")
    assert st.is_over()
    r = st.result()
    assert r.sheets[0][0]["tabbe"] == 0
    assert r.sheets[0][0]["intake"] == INTAKE_POINTS[parse_card("SP 5")] == 1
    assert {parse_card("RU K"), parse_card("HJ 2")} <= set(st.intake[0])  # the leftovers


def test_5_3_new_set_fresh_deck():
    st = position("KL 5", "HJ 2", ["SP 5", "RU K"], seed=9)
    st.play("capture KL 5").play("discard HJ 2")
    assert not st.is_over() and st.set_no == 2 and st.deal_no == 1
    st.check_invariants(complete=True)
    assert st.mulle == [[], []] and len(st.sheets) == 1


# ---------------------------------------------------------------- 6. scoring


def test_6_scoring_sheet():
    intake = ["SP 3", "SP 4", "SP 5", "SP 6", "SP 7", "SP 8", "SP 9", "SP 10", "SP J", "SP Q", "SP K",
              "HJ A", "RU A", "KL A", "SP 2", "SP A", "RU 10", "KL 4"]  # 11 + 3 + 6 = 20 points
    st = position("KL 5, HJ 3", "HJ 2", ["SP 5", "RU K"], mulle=[["HJ A", "KL Q", "SP 2"], []], intake=[intake, []])
    s = st.score(0)
    assert s == {"mulle": 14 + 12 + 2, "tabbe": 0, "intake": 20 + 1 + 2, "bonus": 6, "total": 28 + 6}
    assert sum(INTAKE_POINTS) == 20


@pytest.mark.parametrize("flag,points", [(False, 2 + 10), (True, 15 + 16)])
def test_6_1_flag_mulle_hand_values(flag, points):
    st = position("KL 5", "HJ 2", ["SP 5"], mulle=[["SP 2", "RU 10"], []], ruleset=me.Ruleset(mulle_hand_values=flag))
    assert st.score(0)["mulle"] == points
    assert MULLE_VALUE[parse_card("KL A")] == 14


def test_6_5_winner_and_draw():
    st = position("KL 5", "HJ 2", ["SP 5", "RU K"], ruleset=me.Ruleset(sets=1), mulle=[[], ["KL 5"]])
    st.play("capture KL 5").play("discard HJ 2")
    r = st.result()
    assert r.scores == (r.totals[0]["total"], r.totals[1]["total"])
    assert r.winner == (0 if r.scores[0] > r.scores[1] else 1 if r.scores[1] > r.scores[0] else None)


# ---------------------------------------------------------------- 7. worked example

EXAMPLE_TABLE = ["SP 5", "SP 5", build("KL 9, RU 7", 16), "RU 10", "HJ A", "KL 5", "RU 3", "KL 2"]
ANNA = "KL 9, SP 6, SP 3, KL K, HJ 8, RU 4, KL 4, KL 7"
BO = "RU 10, HJ 6, HJ Q, SP 2, KL Q, RU 5, SP 7, HJ J"


def test_7_anna_plays_kl9_forced_capture_of_nine():
    st = position(ANNA, BO, EXAMPLE_TABLE)
    nxt = after(st, "capture KL 9")
    assert sorted(nxt.intake[0]) == sorted(map(parse_card, ["KL 9", "KL 5", "RU 3", "HJ A"]))
    assert loose(nxt) == ["KL 2", "SP 5", "SP 5", "RU 10"]


def test_7_anna_takes_the_kl9_mulle_when_it_lies_loose():
    table = ["SP 5", "SP 5", "KL 9", "RU 7", "RU 10", "HJ A", "KL 5", "RU 3", "KL 2"]
    nxt = after(position(ANNA, BO, table), "capture KL 9")
    assert nxt.mulle[0] == [parse_card("KL 9")] and nxt.score(0)["mulle"] == 9


def test_7_bo_builds_sixteen_and_merges():
    st = position(ANNA, BO, EXAMPLE_TABLE, to_move=1)
    nxt = after(st, "build HJ 6 on RU 10 to 16")
    assert builds(nxt)[16] == {"build": ["KL 9", "HJ 6", "RU 7", "RU 10"], "value": 16, "owner": 1, "locked": True}
    table = EXAMPLE_TABLE + ["KL 7", "HJ 9"]
    nxt = after(position(ANNA.replace("KL 7", "HJ 2"), BO, table, to_move=1), "build HJ 6 on RU 10 to 16")
    assert builds(nxt)[16]["build"] == ["KL 7", "KL 9", "HJ 6", "HJ 9", "RU 7", "RU 10"]


# ----- rule knowledge agents ask the engine for (issue 11) -----------------------------------
def test_capture_takes_and_is_mulle_capture_agree_with_play():
    import random as _random

    checked = 0
    for seed in range(12):
        st = me.new_game(seed)
        rng = _random.Random(seed)
        for _ in range(60):
            if st.is_over():
                break
            for m in st.legal_moves():
                if m.kind != "capture":
                    continue
                taken = me.capture_takes(st, m)
                assert taken == st.copy().play(m).last_taken
                if me.is_mulle_capture(st, m.card):
                    assert taken == (m.card,)
                    checked += 1
            st.play(rng.choice(st.legal_moves()))
    assert checked > 5


def test_build_accessors_and_set_points():
    st = me.GameState.from_dict({
        "to_move": 0, "hands": [["RU 10", "KL 2"], ["HJ 3"]],
        "table": ["SP 5", {"build": ["KL 9", "RU 7"], "value": 16, "owner": 0, "locked": False}],
    })
    assert me.build_owner(st, 16) == 0 and me.build_owner(st, 9) is None
    assert [str(c) for c in me.build_cards(st, 16)] == ["KL 9", "RU 7"] and me.build_cards(st, 9) == ()
    assert me.build_at(st, 16) == st.view(0).builds[0] and me.build_at(st, 3) is None
    st.play("capture RU 10")
    pts = me.set_points(st, 0)
    sheet = st.score(0)
    assert pts.banked == pts.mulle + pts.tabbe + pts.intake == sheet["mulle"] + sheet["tabbe"] + sheet["intake"]
    assert me.intake_bonus(20) == 0 and me.intake_bonus(23) == 6


def test_mulle_hand_values_reach_the_rollout_estimate():
    from agents.rollout import quick_capture_gain

    # SP 2 (hand value 15) takes the build [SP 2 + KL K] of 15: a mulle of SP 2, worth 2 or 15.
    build = {"build": ["SP 2", "KL K"], "value": 15, "owner": None, "locked": False}
    data = {"to_move": 0, "hands": [["SP 2", "KL 5"], ["HJ 3"]], "table": [build, "HJ 9"]}
    plain = me.GameState.from_dict(data)
    hand = me.GameState.from_dict(data, ruleset=me.Ruleset(mulle_hand_values=True))
    sp2 = parse_card("SP 2")
    assert quick_capture_gain(plain, sp2) == 2 + 2 + 2 + 0 + 0.5 * 2
    assert quick_capture_gain(hand, sp2) == 2 + 2 + 15 + 0 + 0.5 * 2


def test_agents_and_arena_use_no_engine_internals():
    import pathlib
    import re as _re

    root = pathlib.Path(__file__).resolve().parents[1]
    pattern = _re.compile(r"\._ids\(\)|\.mpts\b|\.ipts\b")
    offenders = [f"{p.relative_to(root)}:{i}" for d in ("agents", "arena", "live") for p in (root / d).rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not offenders
