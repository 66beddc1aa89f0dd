"""Casino's golden playthroughs (tests/playthroughs/casino/*.jsonl), replayed decision by decision.

The Python reference wrote them (tests/playthroughs/casino/generate.py). A change of the rules,
the move order, the ids or the canonical form fails here at the first decision that differs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_casino_backends import casino_backend  # noqa: F401  (the fixture: every test on each backend)

from mulle_env import casino

# Every test here runs on each Casino backend, the compiled core and the Python reference.
pytestmark = pytest.mark.usefixtures("casino_backend")

HERE = Path(__file__).parent / "playthroughs" / "casino"
GAMES = sorted(HERE.glob("*.jsonl"))


def test_there_are_playthroughs_for_every_flag():
    assert len(GAMES) >= 6
    flags = set()
    for path in GAMES:
        flags.update(json.loads(path.read_text().splitlines()[0])["ruleset"])
    assert {"gather_all", "court_capture", "sweeps", "sum_build_max_card", "increase_max_cards",
            "trail_with_build", "target_score", "rounds"} <= flags


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_playthrough_replays(path):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    head, steps, end = lines[0], lines[1:-1], lines[-1]
    assert head["playthrough"] == 1 and head["game"] == "casino"
    st = casino.new_game(head["seed"], head["ruleset"])
    for line in steps:
        where = f"{path.name} decision {line['n']}"
        assert st.key() == line["key"], f"{where}: the position differs"
        assert st.to_move == line["to_move"], where
        assert [str(m) for m in st.legal_moves()] == line["legal"], f"{where}: the legal moves differ"
        if "ids" in line:
            assert list(st.legal_ids()) == line["ids"], f"{where}: the move ids differ"
        st.play(line["move"])
    assert st.over and st.key() == end["key"] and list(st.scores()) == end["scores"]
    assert st.result().to_dict() == end["result"]
