"""Arena results lines across code changes and as game records.

The fixtures in ``tests/data/arena_pre_match_*.jsonl`` were written by the arena before
the game loops were unified (``Plan`` as in :data:`PLANS`): a resume with today's code
must play nothing, and a fresh run must give the same games, id for id. A line saved
with ``--save-games`` is a game record for the engine and for ``mulle-play --replay``.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import mulle_env as me
from agents.play import main as play_main
from arena import Plan, ProcessBackend, run
from arena.results import comparable

DATA = Path(__file__).parent / "data"

PLANS = {
    "arena_pre_match_ok.jsonl": Plan(("random", "heuristic", "greedy"), 2, seed=11, ruleset={"sets": 1},
                                     save_games=True, worker_init="arena_agents:register"),
    "arena_pre_match_forfeits.jsonl": Plan(("random", "crasher:at=3", "illegal", "hanger:at=2"), 1, seed=12,
                                           ruleset={"sets": 1}, save_games=True, worker_init="arena_agents:register",
                                           move_timeout=0.3),
}


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]


@pytest.mark.parametrize("name", sorted(PLANS))
def test_an_old_results_file_resumes_with_no_game_replayed(tmp_path, name):
    out = tmp_path / name
    shutil.copy(DATA / name, out)
    before = out.read_text()
    outcome = run(PLANS[name], str(out), ProcessBackend(1), progress=False)
    assert outcome.played == 0
    assert out.read_text() == before


@pytest.mark.parametrize("name", sorted(PLANS))
def test_a_fresh_run_plays_the_same_games_as_the_old_loop(tmp_path, name):
    out = tmp_path / name
    run(PLANS[name], str(out), ProcessBackend(1), progress=False)
    old = sorted((comparable(x) for x in _lines(DATA / name)), key=lambda x: x["game_id"])
    new = sorted((comparable(x) for x in _lines(out)), key=lambda x: x["game_id"])
    assert [x["game_id"] for x in new] == [x["game_id"] for x in old]
    # Keys added to result lines since (e.g. move_timeout) are new information, not a change.
    assert [{k: x[k] for k in o} for x, o in zip(new, old)] == old


def test_saved_arena_lines_are_game_records():
    for line in _lines(DATA / "arena_pre_match_ok.jsonl"):
        match = me.GameRecord.from_dict(line).replay()
        assert match.over and list(match.result().scores) == line["scores"]
        assert match.result().to_dict()["sheets"] == line["sheets"]
        assert match.record().specs == tuple(line["specs"])
    for line in _lines(DATA / "arena_pre_match_forfeits.jsonl"):
        match = me.GameRecord.from_dict(line).replay()  # the moves up to the forfeit
        assert not match.over and len(match.history) == line["moves"]


def test_mulle_play_replays_an_arena_results_file():
    path = DATA / "arena_pre_match_ok.jsonl"
    line = _lines(path)[3]
    out = io.StringIO()
    assert play_main(["--replay", str(path), "--game", "3"], input_fn=lambda p: "", out=out) == 0
    text = out.getvalue()
    a, b = line["specs"]
    assert f"(P0 ({a}) vs P1 ({b}))" in text and f"Move {line['moves']}: " in text
    w = line["winner"]
    assert f"wins {line['scores'][w]} to {line['scores'][1 - w]}" in text
    path = DATA / "arena_pre_match_forfeits.jsonl"
    k, line = next((k, x) for k, x in enumerate(_lines(path)) if x["moves"] > 0)
    out = io.StringIO()
    assert play_main(["--replay", str(path), "--game", str(k)], input_fn=lambda p: "", out=out) == 0
    assert f"The arena recorded this game as forfeit: {line['error']}" in " ".join(out.getvalue().split())


def test_the_game_loops_have_distinct_names_and_keep_the_old_ones():
    import agents.match
    import agents.play
    from arena import worker

    assert worker.play_game is worker.play_task
    assert agents.play.play_game is agents.play.play_interactive
    assert agents.match.play_game is not agents.match.play_agents  # the old one returns the state
