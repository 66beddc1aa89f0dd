"""Casino's 300 conformance positions: exact legal-move lists and the position after each move.

The data file is a copy of ../shared/casino-conformance/positions.jsonl, written from an
independent reading of CASINO.md; its normal form ignores pile order, as that file's README says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_casino_backends import casino_backend  # noqa: F401  (the fixture: every test on each backend)

from mulle_env import casino

# Every test here runs on each Casino backend, the compiled core and the Python reference.
pytestmark = pytest.mark.usefixtures("casino_backend")

DATA = Path(__file__).parent / "data" / "casino_conformance_positions.jsonl"
CASES = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def normal_form(st: casino.GameState) -> dict:
    d = st.to_dict()
    return {
        "to_move": d["to_move"],
        "hands": [sorted(h) for h in d["hands"]],
        "loose": sorted(c for c in d["table"] if isinstance(c, str)),
        "builds": sorted(([b["value"], b["owner"], sorted(b["build"])] for b in d["table"] if isinstance(b, dict)),
                         key=json.dumps),
        "captured": [sorted(c) for c in d["captured"]],
        "sweeps": d["sweeps"],
        "last_capturer": d["last_capturer"],
    }


def test_file_has_all_positions():
    assert len(CASES) == 300


@pytest.mark.parametrize("case", CASES, ids=[f"pos{i}" for i in range(len(CASES))])
def test_position(case):
    st = casino.GameState.from_dict(case["position"], ruleset=case["ruleset"])
    assert sorted(str(m) for m in st.legal_moves()) == case["legal"]
    for move in case["legal"]:
        got = normal_form(st.copy().play(move))
        want = dict(case["after"][move])
        want["builds"] = sorted(want["builds"], key=json.dumps)
        assert got == want, move


@pytest.mark.parametrize("case", CASES[:60], ids=[f"pos{i}" for i in range(60)])
def test_canonical_form_round_trips(case):
    st = casino.GameState.from_dict(case["position"], ruleset=case["ruleset"])
    again = casino.GameState.from_json(st.to_json())
    assert again == st and again.key() == st.key()
    assert sorted(map(str, again.legal_moves())) == case["legal"]
