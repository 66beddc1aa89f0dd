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
from arena import Plan, ProcessBackend, run
from arena.results import comparable
from terminal.cli import main as play_main

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
    import terminal.cli
    from arena import worker

    assert worker.play_game is worker.play_task
    assert terminal.cli.play_game is terminal.cli.play_interactive
    assert agents.match.play_game is not agents.match.play_agents  # the old one returns the state


def test_the_kept_compatibility_names_are_the_new_ones_under_their_old_homes(monkeypatch):
    # Leftovers of the restructuring kept for 0.1.0 code, each listed in CHANGELOG.md (issue 31).
    import agents.effects
    import agents.evaluation
    import agents.netsearch
    import agents.pimc
    import agents.rollout
    import terminal.cli
    from arena import game, worker
    from mulle_env.util.threads import single_blas_thread

    assert agents.evaluation.move_effect is agents.effects.move_effect
    assert agents.evaluation.set_value is agents.rollout.set_value
    assert agents.pimc.rollout_value is agents.rollout.rollout_value
    assert worker.make_ruleset is game.make_ruleset
    calls = []
    monkeypatch.setattr(agents.netsearch, "single_blas_thread", lambda: calls.append(1) or True)
    assert agents.netsearch.limit_blas_threads() is True and calls == [1]
    assert single_blas_thread is not None
    st = me.new_game(seed=2, ruleset=me.Ruleset(sets=1))
    moves = []
    while not st.is_over():
        moves.append(str(st.legal_moves()[0]))
        st.play(st.legal_moves()[0])
    out = io.StringIO()
    assert terminal.cli.replay_game({"seed": 2, "ruleset": {"sets": 1}, "moves": moves}, input, out) == 0
    assert f"{len(moves)} moves" in out.getvalue()
    text = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text()
    for name in ("agents.evaluation", "agents.match.play_game", "arena.worker.play_game", "terminal.cli.play_game",
                 "agents.netsearch.limit_blas_threads", "agents.pimc.rollout_value", "terminal.cli.replay_game",
                 "arena.worker.make_ruleset"):
        assert f"`{name}`" in text, name


class _Recorded:
    """A backend that plays nothing: it hands back recorded lines for the games it is given."""

    name, workers = "recorded", 1

    def __init__(self, lines: list[dict]) -> None:
        self.by_id = {x["game_id"]: x for x in lines}
        self.dispatched: list[str] = []

    def run(self, tasks, on_result, stop=lambda: False) -> None:
        for t in tasks:
            self.dispatched.append(t["game_id"])
            on_result(dict(self.by_id[t["game_id"]], agent_versions=t["agent_versions"]))
            if stop():
                return


def test_the_fixtures_predate_agent_versions_and_their_agents_are_at_version_1():
    # What makes the resume above play nothing: a line without versions counts as version "1".
    assert all("agent_versions" not in x for name in PLANS for x in _lines(DATA / name))
    import agents

    assert {agents.make(s).version for s in ("random", "heuristic", "greedy")} == {"1"}


def test_lines_of_an_older_pimc_are_played_again_and_heuristic_lines_stand(tmp_path):
    plan = Plan(("heuristic", "pimc", "random"), 2, seed=21, ruleset={"sets": 1}, save_games=True)
    out = tmp_path / "r.jsonl"
    first = run(plan, str(out), ProcessBackend(1), progress=False)
    assert first.played == 6
    lines = _lines(out)
    for x in lines:
        assert x["agent_versions"] == [{"pimc": "2"}.get(s, "1") for s in x["specs"]]
    # The same file as an arena without agent versions would have written it: its "pimc"
    # was samples=40 without the public history, not today's agent of that spec.
    out.write_text("".join(json.dumps({k: v for k, v in x.items() if k != "agent_versions"}) + "\n"
                           for x in lines))
    backend = _Recorded(lines)
    again = run(plan, str(out), backend, progress=False)
    with_pimc = sorted(x["game_id"] for x in lines if "pimc" in x["specs"])
    assert sorted(backend.dispatched) == with_pimc and again.played == 4 and again.skipped == 2
    notes = [n for n in again.notes if "another version of an agent" in n]
    assert notes == ["4 game(s) were played by another version of an agent ('pimc' version '1', now '2' "
                     "(4 game(s): line 1, 3, 4, 6)); they are not counted and are played again"]
    # The replayed lines supersede the old ones; the next resume plays nothing.
    assert sorted(x["game_id"] for x in again.lines) == sorted(x["game_id"] for x in lines)
    assert all("agent_versions" in x for x in again.lines if "pimc" in x["specs"])
    third = run(plan, str(out), _Recorded(lines), progress=False)
    assert third.played == 0 and not [n for n in third.notes if "another version" in n]


def test_a_line_of_another_agent_version_is_played_again(tmp_path):
    plan = Plan(("random", "heuristic"), 2, seed=22, ruleset={"sets": 1})
    out = tmp_path / "r.jsonl"
    run(plan, str(out), ProcessBackend(1), progress=False)
    lines = _lines(out)
    lines[1]["agent_versions"] = ["0.9", "1"] if lines[1]["specs"][0] == "random" else ["1", "0.9"]
    out.write_text("".join(json.dumps(x) + "\n" for x in lines))
    backend = _Recorded(lines)
    again = run(plan, str(out), backend, progress=False)
    assert backend.dispatched == [lines[1]["game_id"]] and again.played == 1
    assert any("'random' version '0.9', now '1'" in n for n in again.notes)


@pytest.mark.parametrize("bad", [["1"], ["1", 2], "1", ["1", ""]])
def test_check_line_refuses_malformed_agent_versions(bad):
    from arena.results import check_line

    line = _lines(DATA / "arena_pre_match_ok.jsonl")[0]
    assert check_line(line) is None and check_line(dict(line, agent_versions=None)) is None
    assert check_line(dict(line, agent_versions=["1", "2+ab"])) is None
    assert "'agent_versions' must be" in check_line(dict(line, agent_versions=bad))
