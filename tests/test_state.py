"""The state: canonical JSON, stable hash, views, copies, replays and clear errors."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest
from engine_helpers import build, position, random_game

import mulle_env as me

# Every test here runs on each engine backend (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine_backend")


def mid_game(seed: int, plies: int) -> me.GameState:
    st = me.new_game(seed)
    rng = random.Random(seed)
    for _ in range(plies):
        ms = st.legal_moves()
        st.play(ms[rng.randrange(len(ms))])
    return st


@pytest.mark.parametrize("seed,plies", [(1, 0), (2, 17), (3, 95), (4, 130), (5, 191)])
def test_to_dict_from_dict_is_exact(seed, plies):
    st = mid_game(seed, plies)
    again = me.GameState.from_dict(json.loads(json.dumps(st.to_dict())))
    assert again.to_dict() == st.to_dict() and again.key() == st.key()
    assert [str(m) for m in again.legal_moves()] == [str(m) for m in st.legal_moves()]
    # and the games go on identically
    rng_a, rng_b = random.Random(9), random.Random(9)
    while not st.is_over():
        a, b = st.legal_moves(), again.legal_moves()
        assert a == b
        i = rng_a.randrange(len(a))
        assert i == rng_b.randrange(len(b))
        st.play(a[i])
        again.play(b[i])
    assert st.result() == again.result()


def test_key_ignores_hand_written_pile_order():
    a = position("KL 9, SP 2", "HJ 3", ["SP 5", "KL 2", build("HJ 4, KL 3", 7)])
    b = position("SP 2, KL 9", "HJ 3", [build("KL 3, HJ 4", 7), "KL 2", "SP 5"])
    assert a.key() == b.key() and a == b


def test_key_is_stable_across_processes_and_hash_seeds():
    code = (
        "import mulle_env as me, random\n"
        "st = me.new_game(77); r = random.Random(5)\n"
        "for _ in range(60):\n"
        "    ms = st.legal_moves(); st.play(ms[r.randrange(len(ms))])\n"
        "print(st.key())\n"
    )
    keys = set()
    for hash_seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        keys.add(done.stdout.strip())
    st = me.new_game(77)
    r = random.Random(5)
    for _ in range(60):
        ms = st.legal_moves()
        st.play(ms[r.randrange(len(ms))])
    assert keys == {st.key()}


def test_first_deal_is_pinned():
    # The deal is part of the public contract (seeds in results files must keep meaning).
    st = me.new_game(7)
    assert st.to_dict()["hands"][0] == ["KL 2", "KL 5", "KL 6", "KL 7", "HJ 6", "HJ K", "RU 8", "RU Q"]
    assert st.to_dict()["table"] == ["KL 7", "SP 7", "SP 8", "SP 10", "HJ A", "HJ 2", "HJ 4", "HJ 4"]


def test_replay_reaches_the_same_state():
    st, moves = random_game(21)
    again = me.replay(21, moves)
    assert again.key() == st.key() and again.result() == st.result()
    half = me.replay(21, moves[:100])
    assert half.key() == me.replay(21, [me.Move.from_str(m) for m in moves[:100]]).key()


def test_replay_names_the_bad_move():
    _, moves = random_game(22)
    moves[5] = "discard RU K" if moves[5] != "discard RU K" else "discard KL K"
    with pytest.raises(me.IllegalMoveError, match="move 6 of the replay"):
        me.replay(22, moves)


def test_copy_is_independent():
    st = mid_game(8, 40)
    c = st.copy()
    before = st.key()
    c.play(c.legal_moves()[0])
    assert st.key() == before and c.key() != before


def test_illegal_move_is_not_half_applied_and_says_why():
    st = position("HJ 9, KL 2, RU K", "SP K", ["KL 7", build("SP 4, SP 5", 9, owner=0)])
    before = st.key()
    with pytest.raises(me.IllegalMoveError, match=r"discard KL 2.*you own the build \[9\]"):
        st.play("discard KL 2")
    with pytest.raises(me.IllegalMoveError, match="not in your hand"):
        st.play("capture SP Q")
    with pytest.raises(me.InvalidMoveError):
        st.play("capture")
    with pytest.raises(me.InvalidMoveError, match="a Move or its text"):
        st.play(42)
    assert st.key() == before
    assert not st.is_legal("discard KL 2") and st.is_legal("capture HJ 9")


def test_game_over_and_result():
    st, _ = random_game(30, me.Ruleset(sets=1))
    with pytest.raises(me.GameOverError):
        st.play("discard KL 2")
    assert st.legal_moves() == []
    r = st.result()
    assert r.scores == tuple(t["total"] for t in r.totals) == st.scores()
    assert json.loads(json.dumps(r.to_dict()))["winner"] == r.winner
    with pytest.raises(me.GameNotOverError, match="not over.*scores"):
        me.new_game(1).result()


def test_score_sheet_keys_and_running_totals():
    st = mid_game(12, 150)
    s = st.score(0)
    assert set(s) == {"mulle", "tabbe", "intake", "bonus", "total"}
    assert s["total"] == s["mulle"] + s["tabbe"] + s["bonus"]
    with pytest.raises(ValueError):
        st.score(2)


def test_view_holds_only_what_the_player_may_know():
    st = mid_game(13, 11)
    v = st.view(st.to_move)
    assert list(v.hand) == st.hands[st.to_move]
    assert v.opponent_hand_size == len(st.hands[1 - st.to_move]) and v.deck_size == len(st.deck)
    fields = set(type(v)._fields)
    assert not fields & {"deck", "seed", "hands"}
    unseen = sorted(v.unseen())
    assert unseen == sorted(st.hands[1 - st.to_move] + st.deck)
    assert [str(m) for m in v.legal_moves()] == [str(m) for m in st.legal_moves()]
    # Another deal of the hidden cards: the same view.
    other = type(st).from_view(v, unseen[: v.opponent_hand_size], unseen[v.opponent_hand_size :], seed=st.seed)
    assert other.view(st.to_move) == v


def test_from_view_determinizes():
    st = mid_game(14, 20)
    v = st.view(st.to_move)
    # A guess must respect what the view implies (an owner holds its build's value):
    # the true hidden cards, with the deck reordered, are one such guess.
    hidden_hand = st.hands[1 - st.to_move]
    guess = me.GameState.from_view(v, [me.CARDS[f] for f in hidden_hand], st.deck[::-1], seed=3)
    guess.check_invariants(complete=True)
    assert guess.legal_moves() == st.legal_moves() and guess.view(st.to_move) == v
    with pytest.raises(me.InvalidCardError):
        me.GameState.from_view(v, ["XX 1"], [])


# ---------------------------------------------------------------- bad positions


def base():
    return {"to_move": 0, "hands": [["KL 5", "RU K"], ["HJ 2"]], "table": ["SP 5"]}


@pytest.mark.parametrize(
    "change,fragment",
    [
        (lambda d: d.pop("hands"), "lacks required key"),
        (lambda d: d.update(extra=1), "unknown position key"),
        (lambda d: d.update(to_move=2), "'to_move' must be 0 or 1"),
        (lambda d: d.update(to_move=True), "'to_move' must be 0 or 1"),
        (lambda d: d.update(hands=[["KL 5"]]), "two entries"),
        (lambda d: d.update(table=["ZZ 5"]), "unknown card"),
        (lambda d: d.update(table=["KL 5", "KL 5"]), "appear more than twice"),
        (lambda d: d.update(table=[{"build": ["KL 9", "HJ 2"], "value": 19, "owner": None, "locked": False}]),
         "impossible"),
        (lambda d: d.update(table=[{"build": ["KL 9"], "value": 9}]), "two or more cards"),
        (lambda d: d.update(table=[{"build": ["KL 9", "HJ 2"], "value": 9, "color": 1}]), "unknown key"),
        (lambda d: d.update(table=[{"build": ["KL 9", "HJ 4"], "value": 13, "owner": 1}]),
         "holds no card of hand value 13"),
        (lambda d: d.update(table=[{"build": ["KL 9", "HJ 4"], "value": 13}, {"build": ["HJ 9", "KL 4"], "value": 13}]),
         "second build"),
        (lambda d: d.update(deck=["KL 2"]), "multiple of 16"),
        (lambda d: d.update(tabbe=[0, -1]), "whole number"),
        (lambda d: d.update(ruleset={"forced": True}), "unknown ruleset flag"),
        (lambda d: d.update(hands=[[], ["HJ 2"]]), "holds no cards"),
        (lambda d: d.update(sheets=[[{"total": 1}, {}]]), "score sheet"),
    ],
)
def test_bad_positions_name_the_problem(change, fragment):
    d = base()
    change(d)
    with pytest.raises(me.InvalidPositionError, match=fragment):
        me.GameState.from_dict(d)


def test_bad_json_text():
    with pytest.raises(me.InvalidPositionError, match="not valid JSON"):
        me.GameState.from_json("{not json")
    with pytest.raises(me.InvalidPositionError, match="must be a dict"):
        me.GameState.from_dict([1, 2])


def test_ruleset_flags_validate():
    with pytest.raises(me.InvalidRulesetError, match="must be True or False"):
        me.Ruleset(forced_capture="yes")
    with pytest.raises(me.InvalidRulesetError, match="sets must be"):
        me.Ruleset(sets=0)
    r = me.Ruleset(mulle_hand_values=True)
    assert me.Ruleset.from_dict(r.to_dict()) == r and r.changes() == {"mulle_hand_values": True}
    with pytest.raises(ValueError, match="seed must be a whole number from 0 to"):
        me.new_game("7")


def test_set_hand_replaces_and_drops_cached_moves():
    st = position("KL 5, RU K", "HJ 2", ["SP 5"])
    assert "capture KL 5" in [str(m) for m in st.legal_moves()]
    st.set_hand(0, [me.Card.from_str("HJ 9")])
    assert [str(m) for m in st.legal_moves()] == ["discard HJ 9"]
    with pytest.raises(ValueError, match="player must be 0 or 1"):
        st.set_hand(2, [])
    with pytest.raises(ValueError, match="faces"):
        st.set_hand(0, [99])


def test_legal_move_ids_are_the_callers_own():
    st = me.new_game(3)
    ids = st.legal_move_ids()
    ids.clear()
    assert st.legal_move_ids() and [m.id for m in st.legal_moves()] == st.legal_move_ids()


def test_ruleset_from_strings():
    assert me.Ruleset.from_strings(["sets=1", "forced_capture=off", "mulle_hand_values=YES"]) == me.Ruleset(
        sets=1, forced_capture=False, mulle_hand_values=True
    )
    for bad, words in [("sets", "key=value"), ("colour=1", "unknown ruleset flag"),
                       ("lock_every_build=maybe", "true or false"), ("sets=two", "whole number")]:
        with pytest.raises(me.InvalidRulesetError, match=words):
            me.Ruleset.from_strings([bad])


def test_last_taken_names_the_captured_table_cards():
    st = position("KL 7, HJ K", "SP K", ["HJ 3", "HJ 4", "RU 5", build("KL 2, HJ 5", 7, owner=None)])
    st.play("capture KL 7")
    taken = sorted(me.Card.from_str(c) for c in ["HJ 3", "HJ 4", "KL 2", "HJ 5"])
    assert list(st.last_taken) == taken and st.view(1).last_taken == st.last_taken
    assert str(st.last_taken[0]) == "KL 2"
    st.play("discard SP K")
    assert st.last_taken == ()


# ----- bad input: every malformed position is refused with a message (issue 11) ------------
def _mid_dict():
    return mid_game(12, 150).to_dict()


@pytest.mark.parametrize("key, value, match", [
    ("to_move", 0.0, "to_move"),
    ("last_capturer", 1.0, "last_capturer"),
    ("deal", 6.0, "deal"),
    ("set", 2, "'set' is 2 but 'sheets' scores 0"),
])
def test_from_dict_numbers_are_ints_and_consistent(key, value, match):
    data = me.new_game(3).to_dict()
    data[key] = value
    with pytest.raises(me.InvalidPositionError, match=match):
        me.GameState.from_dict(data)


def test_from_dict_refuses_a_build_whose_cards_do_not_make_its_value():
    table = [{"build": ["KL 9", "RU 7"], "value": 15, "owner": None, "locked": False}]
    with pytest.raises(me.InvalidPositionError, match="cannot make a build of 15"):
        me.GameState.from_dict({"to_move": 0, "hands": [["KL A"], ["HJ 3"]], "table": table})
    # Built down (9 - 7) and gathered groups (9 + 7 and a fed RU 10) are real builds.
    real = ((["KL 9", "RU 7"], 2), (["KL 9", "RU 7", "RU 10"], 16), (["KL 9", "RU 7", "HJ 6", "SP 10"], 16))
    for cards, value in real:
        table = [{"build": cards, "value": value, "owner": None, "locked": True}]
        me.GameState.from_dict({"to_move": 0, "hands": [["KL A"], ["HJ 3"]], "table": table})


def test_from_dict_refuses_a_hand_of_more_than_eight_cards():
    hand = ["KL 2", "KL 3", "KL 4", "KL 5", "KL 6", "KL 7", "KL 8", "KL 9", "KL 10"]
    with pytest.raises(me.InvalidPositionError, match="hands\\[0\\] holds 9 cards"):
        me.GameState.from_dict({"to_move": 0, "hands": [hand, ["HJ 3"]], "table": []})


@pytest.mark.parametrize("change, match", [
    ({"mulle": -4, "total": -4}, ">= 0"),
    ({"bonus": 7}, "bonus and total"),
    ({"intake": 41}, "more than the 40"),
    ({"total": 2.0}, ">= 0"),
])
def test_from_dict_refuses_impossible_score_sheets(change, match):
    st, _ = random_game(30, me.Ruleset(sets=2))
    data = st.to_dict()
    data["sheets"][0][1].update(change)
    with pytest.raises(me.InvalidPositionError, match=match):
        me.GameState.from_dict(data)


def test_canonical_key_is_stable_for_every_accepted_position():
    data = _mid_dict()
    again = me.GameState.from_dict(json.loads(json.dumps(data)))
    assert again.key() == me.GameState.from_dict(data).key()


def test_card_faces_outside_0_to_51_are_refused():
    for bad in (-1, 52, 1.0, True, "3"):
        with pytest.raises(me.InvalidCardError, match="from 0 to 51"):
            me.Card(bad)
    assert str(me.Card(14)) == "SP 2" and me.Card(14) is not None


def test_replay_of_a_single_move_text_says_to_give_a_list():
    with pytest.raises(me.InvalidMoveError, match=r"list of moves.*replay\(seed, \['capture KL 2'\]\)"):
        me.replay(7, "capture KL 2")


@pytest.mark.parametrize("bad", [1.0, True, 2, "1", None])
def test_player_arguments_are_0_or_1(bad):
    import numpy as np

    st = me.new_game(1)
    for call in (st.view, st.score, lambda p: st.set_hand(p, [1])):
        with pytest.raises(ValueError, match="player must be 0 or 1"):
            call(bad)
    assert st.view(np.int64(1)).player == 1 and type(st.view(np.int64(1)).player) is int


def test_text_arguments_given_whole_where_a_list_is_expected_are_named():
    with pytest.raises(me.InvalidRulesetError, match=r"list of 'key=value' texts.*from_strings\(\['sets=1'\]\)"):
        me.Ruleset.from_strings("sets=1")
    with pytest.raises(me.InvalidPositionError, match="JSON is text"):
        me.GameState.from_json(5)
    with pytest.raises(me.InvalidPositionError, match="not UTF-8 text"):
        me.GameState.from_json(b"\xff")


def test_from_view_refuses_bools_as_cards_and_a_deck_no_deal_can_empty():
    # Issue 53, item 10: True was read as the card KL 2, and a 79-card deck left a player to move without a card.
    st = me.new_game(3)
    v = st.view(0)
    unseen = v.unseen()
    with pytest.raises(me.InvalidPositionError, match="not True"):
        me.GameState.from_view(v, [True, *unseen[1:8]], unseen[8:], seed=1)
    with pytest.raises(me.InvalidPositionError, match="multiple of 16 cards, not 79"):
        me.GameState.from_view(v, unseen[:8], unseen[8:-1], seed=1)
    me.GameState.from_view(v, unseen[:8], unseen[8:], seed=1).check_invariants()
