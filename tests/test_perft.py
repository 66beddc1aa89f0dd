"""Perft-style table: hand-made positions and their exact legal-move lists.

Each list was worked out by hand from RULES.md (the reasoning is in the comment), not
taken from the engine. ``../shared/conformance`` adds 400 more positions of the same kind.
"""

from __future__ import annotations

import pytest
from engine_helpers import build, legal, position

import mulle_env as me

# Every test here runs on each engine backend (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine_backend")

PERFT = [
    pytest.param(
        # KL 5/HJ 5: take RU 5, build on SP 4 to 9 (SP 9 reserved), trotta with the other 5.
        # SP 9: takes SP 4 + RU 5; no second 9 to trotta. Nothing may be discarded: all capture.
        dict(hand0="KL 5, HJ 5, SP 9", hand1="RU K", table=["SP 4", "RU 5"]),
        ["build HJ 5 on SP 4 to 9", "build KL 5 on SP 4 to 9", "capture HJ 5", "capture KL 5",
         "capture SP 9", "trotta HJ 5", "trotta KL 5"],
        id="captures-builds-trottas",
    ),
    pytest.param(
        # Owner of [8] with two 8s: capture or feed it with either; KL 3 on HJ 5 merges into
        # the own [8]; no discard while owning a build; no change to the own build.
        dict(hand0="SP 8, HJ 8, KL 3", hand1="RU J", table=["HJ 5", "SP A", build("KL 6, KL 2", 8, owner=0)]),
        ["build KL 3 on HJ 5 to 8", "capture HJ 8", "capture SP 8", "trotta HJ 8", "trotta SP 8"],
        id="own-build-feed-merge",
    ),
    pytest.param(
        # SP 2 (15) and RU 10 (16) capture nothing and may be discarded; KL A (14) takes the
        # opponent's locked [14]; HJ 3 takes SP 2 + RU A; HJ 3 on KL J to 14 would merge into
        # the opponent's locked [14]; KL A on RU A makes 2, but SP 2 is no 2 in the hand.
        dict(hand0="HJ A, KL Q", hand1="SP 2, RU 10, KL A, HJ 3", to_move=1,
             table=["SP 2", "RU A", "KL J", build("HJ 9, HJ 5", 14, owner=0, locked=True)]),
        ["build KL A on SP 2 to 3", "build SP 2 on RU A to 3", "capture HJ 3", "capture KL A",
         "discard RU 10", "discard SP 2"],
        id="special-hand-values",
    ),
    pytest.param(
        # SP 6 is the last 6 for the own [6]: it may only capture. RU 2 builds the opponent's
        # [11] up to 13 (RU K) or down to 9 (HJ 9); HJ 9 builds it down to 2 (RU 2).
        dict(hand0="KL 4, SP 6, HJ 10, RU 2, HJ 9, RU K", hand1="SP J, KL K",
             table=[build("HJ 7, HJ 4", 11, owner=1), build("KL 5, KL A", 6, owner=0), "SP 5"]),
        ["build HJ 9 on [11] to 2", "build KL 4 on SP 5 to 9", "build RU 2 on [11] to 13",
         "build RU 2 on [11] to 9", "capture SP 6"],
        id="reserved-card-build-up-down",
    ),
    pytest.param(
        # Mulle capture of the loose twin; a card that can capture may not be discarded.
        dict(hand0="KL 7, SP 3", hand1="HJ K", table=["KL 7", "HJ 4"]),
        ["build SP 3 on HJ 4 to 7", "capture KL 7", "discard SP 3"],
        id="mulle-twin",
    ),
    pytest.param(
        # The same with discard_only_if_no_capture=False: KL 7 may be discarded too.
        dict(hand0="KL 7, SP 3", hand1="HJ K", table=["KL 7", "HJ 4"],
             ruleset=me.Ruleset(discard_only_if_no_capture=False)),
        ["build SP 3 on HJ 4 to 7", "capture KL 7", "discard KL 7", "discard SP 3"],
        id="mulle-twin-free-discard",
    ),
    pytest.param(
        # The opponent's locked [7] cannot be built on; only SP 5 on KL 4 to 9 builds.
        dict(hand0="HJ 2, KL 9, SP 5", hand1="RU Q, SP 7", ruleset=me.Ruleset(lock_every_build=True),
             table=[build("HJ 3, HJ 4", 7, owner=1, locked=True), "KL 4"]),
        ["build SP 5 on KL 4 to 9", "discard HJ 2", "discard KL 9", "discard SP 5"],
        id="lock-every-build",
    ),
]


@pytest.mark.parametrize("spec,expected", PERFT)
def test_perft(spec, expected):
    assert legal(position(**spec)) == expected


def test_legal_moves_come_in_canonical_order():
    st = position(**PERFT[0].values[0])
    moves = st.legal_moves()
    assert [m.id for m in moves] == sorted(m.id for m in moves)
    assert [m.kind for m in moves] == sorted((m.kind for m in moves), key=me.engine.moves.KINDS.index)
