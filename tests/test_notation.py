"""Cards and moves print and parse in the seeds' notation, round-trip, and fail clearly."""

from __future__ import annotations

import pickle

import pytest

import mulle_env as me
from mulle_env.engine.cards import CARD_NAMES

# Every test here runs on each engine backend (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine_backend")


@pytest.mark.parametrize("face", range(52))
def test_card_round_trip(face):
    card = me.CARDS[face]
    assert me.Card.from_str(str(card)) == card and eval(repr(card), {"Card": me.Card}) == card


def test_card_parse_is_forgiving_about_case_and_spaces():
    assert me.Card.from_str("  sp   2 ") == me.Card.from_str("SP 2") == me.Card.from_str("SP2")


@pytest.mark.parametrize("bad", ["XX 9", "SP 1", "SP 11", "", "KL", 7, None, "SP 2 3"])
def test_card_errors_name_input_and_allowed(bad):
    with pytest.raises(me.InvalidCardError, match="expected '<SUIT> <RANK>'") as err:
        me.Card.from_str(bad)
    assert repr(bad) in str(err.value) and isinstance(err.value, ValueError)


def test_every_move_id_round_trips():
    assert len(me.MOVES) == me.NUM_MOVE_IDS
    for i, move in enumerate(me.MOVES):
        assert move.id == i
        again = me.Move.from_str(str(move))
        assert again == move and again.id == i and hash(again) == hash(move)
        assert eval(repr(move), {"Move": me.Move}) == move


def test_taking_capture_round_trips_and_sorts():
    m = me.Move.from_str("capture KL 9 taking HJ 4, SP 5")
    assert str(m) == "capture KL 9 taking SP 5, HJ 4" and m.id is None
    assert me.Move.from_str(str(m)) == m


def test_moves_are_frozen_and_pickle():
    m = me.Move.from_str("trotta SP 5")
    with pytest.raises(AttributeError):
        m.card = me.CARDS[0]
    assert pickle.loads(pickle.dumps(m)) == m


@pytest.mark.parametrize(
    "bad,fragment",
    [
        ("", "empty move"),
        ("steal KL 9", "unknown kind"),
        ("capture XX 9", "unknown card"),
        ("build HJ 6 on RU 10", "build reads"),
        ("build HJ 6 on RU 10 to 17", "makes 16, not 17"),
        ("build HJ 6 on RU 10 to x", "must be a number"),
        ("build HJ 6 on [20] to 26", "values 2 to 16"),
        ("build HJ 8 on [10] to 5", "makes 18 up or 2 down"),
        ("build RU K on SP K to 26", "above 16"),
        ("capture KL 9 taking", "at least one card"),
    ],
)
def test_malformed_moves(bad, fragment):
    with pytest.raises(me.InvalidMoveError, match=fragment):
        me.Move.from_str(bad)


def test_card_names_cover_52_faces_in_canonical_order():
    assert CARD_NAMES[0] == "KL A" and CARD_NAMES[13] == "SP A" and CARD_NAMES[51] == "RU K"


def test_a_move_kind_without_a_card_says_so():
    for kind in ("capture", "discard", "trotta", "build"):
        with pytest.raises(me.InvalidMoveError, match=f"'{kind}': it names no card; e.g. '{kind} SP 2'"):
            me.Move.from_str(kind)
