"""The 400 conformance positions: exact legal-move lists and the position after each move.

The data file is a copy of ../shared/conformance/positions.jsonl (an independent
reading of RULES.md); the normal form ignores pile order, as that file's README says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mulle_env as me

# Every test here runs on each engine backend (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("engine_backend")

DATA = Path(__file__).parent / "data" / "conformance_positions.jsonl"
CASES = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]


def normal_form(st: me.GameState) -> dict:
    d = st.to_dict()
    builds = [
        [b["value"], b["owner"], b["locked"], sorted(b["build"])] for b in d["table"] if isinstance(b, dict)
    ]
    return {
        "to_move": d["to_move"],
        "hands": [sorted(h) for h in d["hands"]],
        "loose": sorted(c for c in d["table"] if isinstance(c, str)),
        "builds": sorted(builds, key=json.dumps),
        "mulle": [sorted(m) for m in d["mulle"]],
        "intake": [sorted(m) for m in d["intake"]],
        "tabbe": d["tabbe"],
    }


def test_file_has_all_positions():
    assert len(CASES) == 400


@pytest.mark.parametrize("case", CASES, ids=[f"pos{i}" for i in range(len(CASES))])
def test_position(case):
    st = me.GameState.from_dict(case["position"], ruleset=case["ruleset"])
    assert sorted(str(m) for m in st.legal_moves()) == case["legal"]
    for move in case["legal"]:
        got = normal_form(st.copy().play(move))
        want = dict(case["after"][move])
        want["builds"] = sorted(want["builds"], key=json.dumps)
        assert got == want, move
