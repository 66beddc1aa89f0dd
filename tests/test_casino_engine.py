"""Casino's engine: the rules of CASINO.md case by case, notation, positions, rounds and scoring.

The conformance file (tests/test_casino_conformance.py) checks 300 random positions; this file
names the rules one at a time, with positions written to show each.
"""

from __future__ import annotations

import copy
import pickle

import pytest
from test_casino_backends import casino_backend  # noqa: F401  (the fixture: every test on each backend)

from mulle_env import casino
from mulle_env.casino.moves import MOVES, Move
from mulle_env.engine.errors import (
    GameNotOverError,
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    InvalidPositionError,
    InvalidRulesetError,
)

# Every test here runs on each Casino backend, the compiled core and the Python reference.
pytestmark = pytest.mark.usefixtures("casino_backend")


def pos(hand0, table, hand1=("KL K",), to_move=0, ruleset=None, **extra):
    data = {"to_move": to_move, "hands": [list(hand0), list(hand1)], "table": list(table), **extra}
    return casino.GameState.from_dict(data, ruleset=ruleset)


def _sheet(**items):
    sheet = {"cards": 0, "spades": 0, "big_casino": 0, "little_casino": 0, "aces": 0, "sweeps": 0, **items}
    return {**sheet, "total": sum(sheet.values())}


def moves_of(st, card=None):
    return [str(m) for m in st.legal_moves() if card is None or str(m.card) == card]


# ----- CASINO.md 7: the seed app's test cases under the default rules ------------------------
@pytest.mark.parametrize("hand", [["SP 5", "KL 7", "HJ 3"], ["SP 9", "KL 7", "HJ 3"], ["SP 6", "KL 7", "HJ 3"]])
def test_auto_capture_cases_have_one_capture_and_no_build(hand):
    card = hand[0]
    target = "KL " + card.split()[1]
    st = pos(hand, [target], hand1=["KL K", "KL Q", "KL J"])
    assert moves_of(st, card) == [f"capture {card}", f"trail {card}"]


def test_modal_case_offers_capture_build_same_and_build_sum():
    st = pos(["SP 5", "HJ 5", "RU 10"], ["KL 5"], hand1=["KL K", "KL Q", "KL J"])
    assert moves_of(st, "SP 5") == ["capture SP 5", "build SP 5 to 5", "build SP 5 to 10", "trail SP 5"]


@pytest.mark.parametrize("hand,builds", [(["SP 5", "KL 7", "RU 10"], ["build SP 5 to 10"]),
                                         (["SP 5", "HJ 5", "KL 7"], ["build SP 5 to 5"])])
def test_modal_cases_with_one_build_option(hand, builds):
    st = pos(hand, ["KL 5"], hand1=["KL K", "KL Q", "KL J"])
    got = moves_of(st, "SP 5")
    assert got == ["capture SP 5", *builds, "trail SP 5"]


# ----- 4.1 captures ----------------------------------------------------------------------------
def names(faces):
    return sorted(str(casino.Move.from_str(f"trail {n}").card) for n in faces) if faces and isinstance(
        next(iter(faces)), str) else sorted(str(MOVES[0].card.__class__(f)) for f in faces)


def test_capture_takes_every_group_of_its_value_and_the_largest_sum_collection():
    # A 6 takes the loose 6, the build of 6, and 2+4 and 1+5 (four cards) rather than 1+2+3 (three).
    st = pos(["HJ 6"], ["KL 6", "KL A", "KL 2", "KL 3", "KL 4", "KL 5",
                        {"build": ["SP 2", "SP 4"], "value": 6, "owner": 1}], hand1=["RU 6", "KL K"])
    st.play("capture HJ 6")
    assert names(st.captured[0]) == names(["HJ 6", "KL 6", "KL A", "KL 2", "KL 4", "KL 5", "SP 2", "SP 4"])
    assert names(st.loose) == ["KL 3"]


def test_capture_tie_breaks_by_points_then_spades_then_the_earlier_card():
    # 4 = A + 3 with either ace (one point each): the spade ace is taken (third tie-break).
    st = pos(["HJ 4"], ["KL A", "SP A", "HJ 3"], hand1=["KL K", "KL Q"])
    st.play("capture HJ 4")
    assert names(st.loose) == ["KL A"]
    # 4 = 2 + 2 from three 2s, equal points and spades: the earlier cards (KL, HJ before RU) are taken.
    st = pos(["RU 4"], ["KL 2", "HJ 2", "RU 2"], hand1=["KL K", "KL Q"])
    st.play("capture RU 4")
    assert names(st.loose) == ["RU 2"]
    # Points first: 5 = A + 4 (an ace: a point) beats 2 + 3 (none), both two cards.
    st = pos(["HJ 5"], ["KL 2", "KL 3", "HJ A", "HJ 4"], hand1=["KL K", "KL Q"])
    st.play("capture HJ 5")
    assert names(st.captured[0]) == names(["HJ 5", "KL 2", "KL 3", "HJ A", "HJ 4"])  # both groups: four cards


def test_court_cards_capture_by_rank_one_at_a_time_by_default():
    st = pos(["HJ K", "KL 2"], ["SP K", "RU K", "KL 5"], hand1=["KL 3", "KL 4"])
    assert moves_of(st, "HJ K") == ["capture HJ K take SP K", "capture HJ K take RU K", "trail HJ K"]
    st = pos(["HJ K", "KL 2"], ["SP K", "RU K", "KL 5"], hand1=["KL 3", "KL 4"], ruleset={"court_capture": "all"})
    assert moves_of(st, "HJ K") == ["capture HJ K", "trail HJ K"]
    st.play("capture HJ K")
    assert len(st.captured[0]) == 3


def test_court_cards_never_join_a_sum_or_a_build():
    st = pos(["HJ 10"], ["KL J", "SP 10"], hand1=["KL K"])
    st.play("capture HJ 10")
    assert st.loose == [casino.Move.from_str("trail KL J").card]
    with pytest.raises(InvalidMoveError, match="has no value"):
        Move.from_str("build HJ J to 10")


def test_a_sweep_counts_unless_it_is_the_last_play_of_the_round():
    st = pos(["HJ 5", "KL 2"], ["KL 5"], hand1=["SP 3", "SP 4"])
    st.play("capture HJ 5")
    assert st.sweeps == [1, 0]
    last = pos(["HJ 5"], ["KL 5"], hand1=[], ruleset={"rounds": 1})
    last.play("capture HJ 5")
    assert last.over and last.result().sheets[0][0]["sweeps"] == 0
    off = pos(["HJ 5", "KL 2"], ["KL 5"], hand1=["SP 3", "SP 4"], ruleset={"sweeps": False})
    off.play("capture HJ 5")
    assert off.sweeps == [0, 0]


# ----- 4.2 builds ------------------------------------------------------------------------------
def test_a_build_needs_a_card_of_its_value_in_the_hand():
    st = pos(["HJ 3", "KL 7"], ["KL 5"], hand1=["KL K", "KL Q"])
    assert "build HJ 3 to 8" not in moves_of(st)
    with pytest.raises(IllegalMoveError, match="without a card of that value"):
        st.play("build HJ 3 to 8")
    st = pos(["HJ 3", "KL 8"], ["KL 5"], hand1=["KL K", "KL Q"])
    st.play("build HJ 3 to 8")
    (b,) = st.builds
    assert (b.value, b.owner, [str(c) for c in b.cards], b.single) == (8, 0, ["KL 5", "HJ 3"], True)


def test_building_the_own_value_needs_another_pile_and_makes_a_multiple_build():
    st = pos(["HJ 5", "SP 5"], ["KL 5", "KL 2", "KL 3"], hand1=["KL K", "KL Q"])
    st.play("build HJ 5 to 5")  # gathers the loose 5 and 2+3 (gather_all)
    (b,) = st.builds
    assert (b.value, len(b.cards), b.single) == (5, 4, False)
    alone = pos(["HJ 5", "SP 5"], ["KL 9"], hand1=["KL K", "KL Q"])
    assert "build HJ 5 to 5" not in moves_of(alone)


def test_an_increase_takes_ownership_and_a_multiple_build_is_never_increased():
    st = pos(["HJ 3", "KL 8"], [{"build": ["SP 2", "SP 3"], "value": 5, "owner": 1}], hand1=["RU 5", "KL K"])
    st.play("increase 5 with HJ 3")
    (b,) = st.builds
    assert (b.value, b.owner) == (8, 0)
    multi = pos(["HJ 3", "KL 8"], [{"build": ["SP 2", "SP 3", "SP 5"], "value": 5, "owner": 1}],
                hand1=["RU 5", "KL K"])
    assert not any(m.startswith("increase") for m in moves_of(multi))
    with pytest.raises(IllegalMoveError, match="multiple build"):
        multi.play("increase 5 with HJ 3")


def test_app_rules_limit_sum_builds_and_increases_of_big_builds():
    rs = casino.Ruleset.app()
    assert (rs.sum_build_max_card, rs.increase_max_cards) == (5, 4)
    st = pos(["KL 6", "KL 9"], ["HJ 3"], hand1=["KL K", "KL Q"], ruleset=rs)
    assert "build KL 6 to 9" not in moves_of(st)
    assert "build KL 6 to 9" in moves_of(pos(["KL 6", "KL 9"], ["HJ 3"], hand1=["KL K", "KL Q"]))
    big = [{"build": ["SP A", "SP 2", "HJ A", "KL A", "RU A"], "value": 6, "owner": 1}]
    assert "increase 6 with HJ 3" not in moves_of(pos(["HJ 3", "KL 9"], big, hand1=["RU 6", "KL K"], ruleset=rs))
    assert "increase 6 with HJ 3" in moves_of(pos(["HJ 3", "KL 9"], big, hand1=["RU 6", "KL K"]))


# ----- 4.3, 4.4 trail and reservation ----------------------------------------------------------
def test_an_owner_may_not_trail_unless_the_flag_allows_it_and_keeps_the_reserve():
    table = [{"build": ["SP 2", "SP 3"], "value": 5, "owner": 0}]
    st = pos(["HJ 5", "KL 9"], table, hand1=["KL K", "KL Q"])
    assert moves_of(st) == ["capture HJ 5"] or "trail KL 9" not in moves_of(st)
    with pytest.raises(IllegalMoveError, match="may not trail"):
        st.play("trail KL 9")
    free = pos(["HJ 5", "KL 9"], table, hand1=["KL K", "KL Q"], ruleset={"trail_with_build": True})
    assert "trail KL 9" in moves_of(free) and "trail HJ 5" not in moves_of(free)


def test_illegal_moves_raise_value_errors_that_say_why_and_list_the_legal_moves():
    st = casino.new_game(5)
    with pytest.raises(IllegalMoveError) as info:
        st.play("trail RU 10" if "RU 10" not in map(str, st.view(0).hand) else "trail SP 2")
    assert "not in the hand" in str(info.value) and "legal:" in str(info.value)
    assert isinstance(info.value, ValueError)


# ----- notation ------------------------------------------------------------------------------
def test_every_move_with_an_id_prints_and_parses_back():
    assert casino.NUM_MOVE_IDS == len(MOVES) == 504
    for i, m in enumerate(MOVES):
        assert m.id == i and Move.from_str(str(m)) == m and Move.from_str(str(m)).id == i
        assert eval(repr(m), {"Move": Move}) == m


@pytest.mark.parametrize("text", ["", "jump HJ 5", "capture", "capture HJ 55", "build HJ 5 to 4", "build HJ 5 to 11",
                                  "build HJ K to 10", "increase 5 with HJ 6", "increase with HJ 3",
                                  "trail HJ 3 take KL 2",
                                  "capture HJ 5 take KL 2, KL 2", "capture HJ 5 take [KL 2]", "capture HJ 5 take ,",
                                  "increase [KL 2 KL 9] with HJ 3",
                                  # Digits Python's isdigit() knows but int() does not read (a plain ValueError
                                  # escaped), and other scripts' digits, which the notation never writes.
                                  "build HJ 3 to \u00b2", "increase \u00b2 with HJ 3", "build HJ 3 to \u0663",
                                  # A card named twice in the increased build, or named as both it and taken.
                                  "increase [KL A KL A] with HJ 3", "increase [KL 2 SP 3] with HJ 3 take KL 2"])
def test_malformed_moves_are_refused_naming_the_problem(text):
    with pytest.raises(InvalidMoveError) as info:
        Move.from_str(text)
    assert str(info.value)


def test_gather_all_false_moves_name_what_they_take():
    rs = {"gather_all": False}
    st = pos(["HJ 5", "SP 9"], ["KL 5", "KL 2", "SP 3", {"build": ["RU A", "RU 4"], "value": 5, "owner": 1}],
             hand1=["RU 5", "KL K"], ruleset=rs)
    caps = moves_of(st, "HJ 5")
    assert "capture HJ 5 take KL 5" in caps and "capture HJ 5 take KL 2, SP 3" in caps
    assert "capture HJ 5 take KL 2, KL 5, SP 3, [RU A RU 4]" in caps
    for m in st.legal_moves():
        assert Move.from_str(str(m)) == m
    st.play("capture HJ 5 take [RU A RU 4]")
    assert len(st.loose) == 3 and not st.builds
    with pytest.raises(ValueError, match="no ids"):
        st.legal_ids()
    # The default notation is refused under gather_all=False, saying why.
    st2 = pos(["HJ 5", "SP 9"], ["KL 5"], hand1=["RU 5", "KL K"], ruleset=rs)
    with pytest.raises(IllegalMoveError, match="names what it takes"):
        st2.play("capture HJ 5")
    # An increase there names its build by the build's cards, not by 'take' (which it may also have).
    st3 = pos(["HJ 3", "KL 8"], [{"build": ["KL 2", "KL 3"], "value": 5, "owner": 1}], hand1=["RU 5", "KL K"],
              ruleset=rs)
    with pytest.raises(IllegalMoveError, match=r"names the build it increases by its cards: 'increase \[KL 2 KL 3\]"):
        st3.play("increase 5 with HJ 3")


def test_two_builds_of_one_value_can_lie_under_gather_all_false_and_increases_name_theirs():
    rs = {"gather_all": False}
    table = [{"build": ["KL 2", "KL 3"], "value": 5, "owner": 1}, {"build": ["SP A", "SP 4"], "value": 5, "owner": 1}]
    st = pos(["HJ 3", "KL 8"], table, hand1=["RU 5", "KL K"], ruleset=rs)
    incs = [m for m in moves_of(st) if m.startswith("increase")]
    assert incs == ["increase [KL 2 KL 3] with HJ 3", "increase [SP A SP 4] with HJ 3"]
    st.play(incs[1])
    assert [(b.value, b.owner) for b in st.builds] == [(5, 1), (8, 0)]
    with pytest.raises(InvalidPositionError, match="two builds of 5"):
        pos(["HJ 3", "KL 8"], table, hand1=["RU 5", "KL K"])


# ----- positions -----------------------------------------------------------------------------
@pytest.mark.parametrize("change,field", [
    ({"to_move": 2}, "to_move"),
    ({"hands": [["HJ 5"]]}, "hands"),
    ({"hands": [["HJ 55"], ["KL K"]]}, "hands[0][0]"),
    ({"table": ["HJ 5"]}, "more than once"),
    ({"table": [{"build": ["KL 2", "KL 4"], "value": 5, "owner": 0}]}, "table[0]"),
    ({"table": [{"build": ["KL 2", "KL 3"], "value": 5, "owner": 1}]}, "belongs to seat 1"),
    ({"table": [{"build": ["KL 2", "KL 3"], "value": 5}]}, "table[0]"),
    ({"table": [{"build": ["KL J", "KL 3"], "value": 5, "owner": 0}]}, "no value"),
    ({"sweeps": [-1, 0]}, "sweeps[0]"),
    ({"last_capturer": 3}, "last_capturer"),
    ({"stock": ["RU 2"]}, "52 cards"),
    ({"round": 0}, "round"),
    ({"dealer": 0}, "dealer"),
    ({"scores": [1]}, "scores"),
    ({"ruleset": {"gather": True}}, "unknown Casino ruleset flag"),
    ({"colour": 1}, "unknown position key"),
    ({"hands": [[], ["KL K"]]}, "holds no card"),
    ({"hands": [["HJ 5", "HJ 6", "HJ 7"], ["KL K"]]}, "differ by at most one"),
    ({"sweeps": [25, 0]}, "sweeps[0]"),
    ({"sweeps": [1, 0], "ruleset": {"sweeps": False}}, "sweeps=False"),
    # One pair of sheets per finished round, each a sheet a round can give.
    ({"round": 2, "dealer": 0, "sheets": []}, None),
    ({"sheets": [[_sheet(), _sheet()]], "scores": [0, 0]}, "one pair per finished round"),
    ({"round": 2, "dealer": 0, "sheets": [[{**_sheet(aces=1), "total": 3}, _sheet()]], "scores": [3, 0]},
     "not the sum of its items"),
    ({"round": 2, "dealer": 0, "sheets": [[_sheet(cards=2), _sheet()]], "scores": [2, 0]}, "cards"),
])
def test_bad_positions_are_refused_naming_the_field(change, field):
    data = {"to_move": 0, "hands": [["HJ 5", "SP 5"], ["KL K"]], "table": ["KL 3"], **change}
    if field is None:  # the control: the same change, right
        casino.GameState.from_dict(data)
        return
    with pytest.raises(InvalidPositionError) as info:
        casino.GameState.from_dict(data)
    assert field in str(info.value)


def test_a_wrong_over_flag_is_refused_naming_the_value_given():
    data = {"to_move": 0, "hands": [["HJ 5"], ["KL K"]], "table": [], "over": 1}
    with pytest.raises(InvalidPositionError, match=r"over must be false .*, not 1$"):
        casino.GameState.from_dict(data)


def test_bad_json_is_an_invalid_position():
    with pytest.raises(InvalidPositionError):
        casino.GameState.from_json("{")
    with pytest.raises(InvalidPositionError):
        casino.GameState.from_json("[1, 2]")
    with pytest.raises(InvalidPositionError):
        # An int of 5,000 digits: Python's own limit on int conversion, refused as a bad position.
        casino.GameState.from_json(b'{"to_move": 0, "hands": [["HJ 5"], []], "table": [], "seed": ' + b"9" * 5000
                                   + b"}")


def test_the_canonical_form_and_its_hash_are_stable():
    st = casino.new_game(7)
    again = casino.GameState.from_json(st.to_json())
    assert again == st and again.key() == st.key()
    # Pinned: the canonical form of seed 7's deal. A change here is a change of the deal or the form.
    assert st.key() == casino.new_game(7).key()
    assert len(st.key()) == 64
    for m in st.legal_moves()[:3]:
        after = st.copy().play(m)
        assert casino.GameState.from_dict(after.to_dict()) == after


def test_copies_and_pickles_play_on_independently():
    st = casino.new_game(11)
    for clone in (st.copy(), copy.deepcopy(st), pickle.loads(pickle.dumps(st))):
        assert clone == st
        clone.play(clone.legal_moves()[0])
        assert clone != st


# ----- rounds, deals, scoring, the game --------------------------------------------------------
def play_round_randomly(st, rng):
    while not st.over:
        rnd = st.round
        st.play(rng.choice(st.legal_moves()))
        if st.round != rnd:
            return


def test_a_round_is_six_deals_and_the_dealer_alternates():
    import random

    st = casino.new_game(3)
    assert (st.round, st.dealer, st.to_move) == (1, 1, 0)
    assert [len(h) for h in st.hands] == [4, 4] and len(st.loose) == 4 and len(st.stock) == 40
    deals = 1
    rng = random.Random(3)
    while st.round == 1 and not st.over:
        before = len(st.stock)
        st.play(rng.choice(st.legal_moves()))
        if len(st.stock) < before:
            deals += 1
            assert st.to_move == 0 and [len(h) for h in st.hands] == [4, 4]
    assert deals == 6
    if not st.over:
        assert (st.round, st.dealer, st.to_move) == (2, 0, 1)


def test_a_round_hands_out_eleven_points_plus_sweeps_and_the_game_goes_to_21():
    # 11 = cards 3 + spades 1 + big casino 2 + little casino 1 + four aces; the cards' 3 go to nobody
    # on 26 each (5.3 gives them to the player with more than 26).
    import random

    for seed in range(20):
        st = casino.new_game(seed)
        rng = random.Random(seed)
        while not st.over:
            st.play(rng.choice(st.legal_moves()))
        res = st.result()
        for a, b in res.sheets:
            split = a["cards"] == b["cards"] == 0
            assert a["total"] + b["total"] - a["sweeps"] - b["sweeps"] == (8 if split else 11)
        a, b = res.scores
        assert max(a, b) >= 21 and a != b and res.winner == (0 if a > b else 1)
        casino.check_result(res, st.ruleset)


def test_rounds_n_plays_exactly_n_rounds_and_equal_totals_draw():
    import random

    st = casino.new_game(4, {"rounds": 2})
    rng = random.Random(4)
    while not st.over:
        st.play(rng.choice(st.legal_moves()))
    assert len(st.result().sheets) == 2
    with pytest.raises(GameOverError):
        st.play("trail KL 2")
    drawn = casino.GameResult((5, 5), None, (({"cards": 0, "spades": 1, "big_casino": 2, "little_casino": 0,
                                                "aces": 2, "sweeps": 0, "total": 5},
                                               {"cards": 3, "spades": 0, "big_casino": 0, "little_casino": 1,
                                                "aces": 1, "sweeps": 0, "total": 5}),))
    casino.check_result(drawn, {"rounds": 1})
    with pytest.raises(ValueError, match="winner"):
        casino.check_result(drawn._replace(winner=0), {"rounds": 1})
    with pytest.raises(ValueError, match="does not end"):
        casino.check_result(drawn, {})


@pytest.mark.parametrize("sheets,rules,why", [
    ([[_sheet(cards=1), _sheet()]], {"rounds": 1}, "cards"),  # the cards point is 3 or nothing
    ([[_sheet(big_casino=1), _sheet()]], {"rounds": 1}, "big_casino"),
    ([[_sheet(sweeps=25), _sheet()]], {"rounds": 1}, "sweeps"),  # a seat plays 24 cards a round
    ([[{**_sheet(), "bonus": 0}, _sheet()]], {"rounds": 1}, "bonus"),
    # 23-0 after round 1 ends a game to 21: a second round was never played.
    ([[_sheet(cards=3, sweeps=20), _sheet()], [_sheet(cards=3), _sheet()]], {}, "round 1"),
])
def test_a_result_no_game_can_end_with_is_refused(sheets, rules, why):
    scores = [sum(p[s]["total"] for p in sheets) for s in (0, 1)]
    result = {"scores": scores, "winner": 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None,
              "sheets": sheets}
    with pytest.raises(ValueError, match=why):
        casino.check_result(result, rules)


def test_result_before_the_end_and_a_move_after_it_are_refused():
    st = casino.new_game(1)
    with pytest.raises(GameNotOverError):
        st.result()


# ----- views -----------------------------------------------------------------------------------
def test_a_view_shows_the_own_hand_and_hides_the_other_and_the_stock():
    st = casino.new_game(9)
    v = st.view(0)
    assert list(v.hand) == st.hands[0] and v.opponent_hand_size == 4 and v.stock_size == 40
    unseen = set(v.unseen())
    assert unseen == set(st.hands[1]) | set(st.stock)
    assert not unseen & set(v.hand)
    assert "hands" not in v.to_dict() and set(v.to_dict()["hand"]) == {str(c) for c in v.hand}
    assert v.legal_moves() == st.legal_moves() and st.view(1).legal_moves() == []


def test_from_view_deals_the_hidden_cards_as_asked_and_refuses_seen_ones():
    import random

    st = casino.new_game(9)
    st.play(st.legal_moves()[0])
    v = st.view(1)
    hidden = v.unseen()
    random.Random(0).shuffle(hidden)
    det = casino.GameState.from_view(v, hidden[:v.opponent_hand_size], hidden[v.opponent_hand_size:], seed=5)
    assert det.view(1) == v._replace(last_move=det.view(1).last_move) or det.view(1).hand == v.hand
    assert det.legal_moves() == st.legal_moves()
    with pytest.raises(InvalidPositionError, match="unseen"):
        casino.GameState.from_view(v, list(v.hand[:3]), hidden[3:], seed=5)


@pytest.mark.parametrize("args,kwargs,what", [
    (("not a view", [], []), {}, "PlayerView"),
    ((None, [], []), {}, "PlayerView"),
    (("VIEW", None, "STOCK"), {}, "opponent_hand"),
    (("VIEW", "HAND", 5), {}, "stock"),
    (("VIEW", "HJ 5", "STOCK"), {}, "opponent_hand"),
    (("VIEW", "HAND", "STOCK"), {"seed": -1}, "seed"),
    (("VIEW", "HAND", "STOCK"), {"seed": "7"}, "seed"),
    (("VIEW", "HAND", "STOCK"), {"seed": True}, "seed"),
])
def test_from_view_refuses_what_is_no_view_no_list_of_cards_or_no_seed(args, kwargs, what):
    st = casino.new_game(9)
    v = st.view(0)
    fill = {"VIEW": v, "HAND": st.hands[1], "STOCK": st.stock}
    args = tuple(fill.get(a, a) if isinstance(a, str) else a for a in args)
    with pytest.raises(InvalidPositionError, match=what):
        casino.GameState.from_view(*args, **kwargs)


# ----- the ruleset -----------------------------------------------------------------------------
def test_ruleset_flags_parse_and_refuse_bad_values():
    rs = casino.Ruleset.from_strings(["gather_all=false", "court_capture=all", "rounds=1", "increase_max_cards=none"])
    assert (rs.gather_all, rs.court_capture, rs.rounds, rs.increase_max_cards) == (False, "all", 1, None)
    assert casino.Ruleset.from_dict(rs.changes()) == rs
    for bad in ({"court_capture": "two"}, {"sum_build_max_card": 11}, {"rounds": 0}, {"gather_all": 1},
                {"increase_max_cards": 1}, {"target_score": True}):
        with pytest.raises(InvalidRulesetError):
            casino.Ruleset(**bad)
    with pytest.raises(InvalidRulesetError, match="known flags"):
        casino.Ruleset.from_strings(["sets=2"])


def test_new_game_refuses_bad_seeds():
    for bad in (-1, 2**64, 1.5, "3", True):
        with pytest.raises(ValueError, match="seed"):
            casino.new_game(bad)


def test_replay_reaches_the_same_state_and_names_a_bad_move():
    import random

    st = casino.new_game(21)
    rng = random.Random(1)
    played = []
    for _ in range(30):
        m = rng.choice(st.legal_moves())
        played.append(str(m))
        st.play(m)
    assert casino.replay(21, played) == st
    with pytest.raises(IllegalMoveError, match="move 2 of the replay"):
        casino.replay(21, [played[0], "trail KL 2" if "trail KL 2" != played[1] else "trail KL 3"])
    with pytest.raises(InvalidMoveError, match="list of moves"):
        casino.replay(21, "trail KL 2")


def test_importing_the_casino_engine_loads_nothing_outside_the_standard_library():
    import subprocess
    import sys

    code = ("import sys, mulle_env.casino as c; c.new_game(1).legal_moves(); "
            "bad = sorted(m for m in ('numpy', 'gymnasium', 'agents', 'arena') if m in sys.modules); "
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
