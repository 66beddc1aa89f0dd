"""Pieces of the live mode that need no server: message checks, views, small helpers."""

from __future__ import annotations

import json
import random

import pytest

import agents
from live.hub import LiveConfig, _RecentSet
from live.protocol import ErrorCode, ProtocolError, parse
from live.views import replay_frames, spectator_view
from mulle_env.engine.match import Match
from mulle_env.engine.record import GameRecord


@pytest.mark.parametrize("text, field", [
    ('{"type": "join", "payload": {"table_name": "t"}}', "player_name"),
    ('{"type": "join", "payload": {"table_name": "t", "player_name": "a", "seed": -1}}', "seed"),
    ('{"type": "join", "payload": {"table_name": "t", "player_name": "a", "sets": true}}', "sets"),
    ('{"type": "response", "payload": {"data": {"move": "discard KL 2"}}}', "request_id"),
    ('{"type": "response", "payload": {"request_id": "r", "data": {"move": 3}}}', "data"),
    ('{"type": "lobby_action", "payload": {"action": "assign_team"}}', "action"),
    ('{"type": "watch", "payload": {"agents": ["random"]}}', "agents"),
    ('{"type": "watch", "payload": {}}', "agents"),
    ('{"type": "set_speed", "payload": {}}', "delay_ms"),
])
def test_malformed_payloads_name_the_field(text, field):
    with pytest.raises(ProtocolError) as exc:
        parse(text, 4096)
    assert exc.value.code == ErrorCode.INVALID_MESSAGE and exc.value.details["field"] == field


def test_parse_accepts_the_documented_messages():
    assert parse('{"type": "leave"}', 100) == ("leave", {})
    assert parse('{"type": "ping", "payload": {"timestamp": "x"}}', 100) == ("ping", {"timestamp": "x"})
    kind, p = parse(json.dumps({"type": "join", "payload": {"session_id": "abc"}}), 100)
    assert (kind, p) == ("join", {"session_id": "abc"})
    with pytest.raises(ProtocolError, match="over the limit of 10"):
        parse('{"type": "leave", "payload": {}}', 10)


def test_config_checks_its_values():
    with pytest.raises(ValueError, match="grace"):
        LiveConfig(grace=-1)
    with pytest.raises(ValueError, match="unknown agent"):
        LiveConfig(opponent="nobody")
    with pytest.raises(ValueError, match="samples must be >= 1"):
        LiveConfig(fallback="pimc:samples=0")  # built, not just parsed
    with pytest.raises(ValueError, match="instant agents"):
        LiveConfig(fallback="pimc")  # the fallback plays on the event loop
    with pytest.raises(ValueError, match="no parameter 'depth'"):
        LiveConfig(agent_limits=("pimc:depth=3",))
    for name in ("grace", "close_after", "move_time", "agent_delay"):
        for bad in (float("nan"), float("inf")):
            with pytest.raises(ValueError, match=f"{name} must be a finite number"):
                LiveConfig(**{name: bad})


def test_recent_set_forgets_the_oldest():
    s = _RecentSet(2)
    for x in "abc":
        s.add(x)
    assert "a" not in s and "b" in s and "c" in s and len(s) == 2


def test_spectator_view_hides_hands_unless_asked():
    m = Match(3)
    hidden, shown = spectator_view(m.state, False), spectator_view(m.state, True)
    assert hidden["hand"] == [] and hidden["hands"] is None and hidden["hand_sizes"] == [8, 8]
    assert shown["hands"] == [m.view(0).to_dict()["hand"], m.view(1).to_dict()["hand"]]


def test_replay_frames_follow_the_record_and_name_a_bad_move():
    m = Match(4)
    for _ in range(5):
        m.play(m.legal_moves()[-1])
    frames = replay_frames(m.record())
    assert len(frames) == 6 and frames[-1]["view"]["loose"] == m.view(0).to_dict()["loose"]
    assert [f["event"]["move"] for f in frames[1:]] == m.moves
    with pytest.raises(ValueError, match="move 2 of the record"):
        replay_frames(GameRecord(4, (m.moves[0], "discard KL 2")))


def test_the_servers_own_opponent_is_recognized_however_it_is_written():
    from live.hub import Hub

    config = LiveConfig(opponent="pimc:samples=1500,rollout=heuristic")  # above the default limits, not canonical
    assert config.opponent == "pimc:samples=1500"
    assert Hub(config).checked_spec("pimc:rollout=heuristic,samples=1500", {}) == "pimc:samples=1500"


def test_several_limit_entries_of_one_agent_are_alternatives():
    from live.limits import AgentLimits

    limits = AgentLimits(["pimc:samples=1000,width=2", "pimc:samples=50"])
    limits.check("pimc:samples=1000,width=2")  # the first entry allows it whole
    limits.check("pimc:samples=50")
    with pytest.raises(ValueError, match="at most"):
        limits.check("pimc:samples=1000,width=3")  # no entry allows 1000 samples at width 3
    limits = AgentLimits(["pimc:rollout=random", "pimc:horizon=1|2"])
    with pytest.raises(ValueError, match="at its default"):
        limits.check("pimc:horizon=1,rollout=random")  # a combination no entry lists


def test_a_cancelled_think_does_not_run_its_queued_move_later():
    import asyncio
    import time
    import types

    from live.hub import Hub

    class Marker:
        ran = False

        def act(self, view, legal, rng):
            Marker.ran = True
            return legal[0]

    async def main():
        hub = Hub(LiveConfig(workers=1))
        table = hub._new_table("t", opponent="heuristic", seed=None, sets=None, agent_delay=0)
        hub.executor.submit(time.sleep, 0.3)  # the only worker is busy: the move waits in the queue
        task = asyncio.create_task(table._think(types.SimpleNamespace(agent=Marker(), rng=None), None, ["m"], 5.0))
        await asyncio.sleep(0.05)
        task.cancel()  # what closing the table does to its agent's task
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)
        hub.executor.shutdown(wait=True)

    asyncio.run(main())
    assert not Marker.ran


def test_replay_upload_nested_too_deep_is_a_clear_400():
    from live.server import _replay_body

    status, body = _replay_body(b"[" * 100_000 + b"]" * 100_000)
    error = json.loads(body)["error"]
    # Issue 33, defect 12: it said "not valid JSON: RecursionError: maximum recursion depth exceeded while decoding a
    # JSON array from a unicode string": Python's internals, not what a person sent wrong.
    assert status == 400 and "nested more than" in error
    assert "RecursionError" not in error and "recursion" not in error and "unicode" not in error
    status, body = _replay_body(b'{"seed": 1, "moves": ["\xff"]}')
    assert status == 400 and "the request body: not UTF-8 text" in json.loads(body)["error"]


def test_move_previews_say_what_each_move_takes_and_builds_on():
    import random

    from live.views import move_previews
    from mulle_env.engine.match import Match

    rng = random.Random(5)
    seen = set()
    for seed in range(40):
        m = Match(seed, {"sets": 1})
        for _ in range(rng.randrange(40)):
            m.play(rng.choice(m.legal_moves()))
        legal = m.legal_moves()
        previews = move_previews(m.state, legal)
        assert list(previews) == [str(x) for x in legal]
        view = m.view(m.to_move)
        table = [*view.loose, *(f for b in view.builds for f in b.cards)]
        for move in legal:
            pv = previews[str(move)]
            event = m.preview(move)
            cards = [*pv["loose"], *(c for b in view.builds if b.value in pv["builds"] for c in b.cards)]
            if move.kind == "capture":
                # Exactly what the engine's capture takes, loose cards and whole builds.
                assert sorted(map(str, cards)) == sorted(map(_name, event.taken))
                assert pv["mulles"] == event.mulles and pv["tabbe"] == event.tabbe and pv["value"] is None
                seen.add("capture-build" if pv["builds"] else "capture")
            elif move.kind == "build":
                assert pv["value"] == move.to and (_name(move.on) in pv["loose"] if move.on is not None
                                                   else move.on_build in pv["builds"])
                seen.add("gathers" if len(cards) > 1 else "build")
            elif move.kind == "discard":
                assert pv == {"loose": [], "builds": [], "mulles": 0, "tabbe": False, "value": None}
            assert all(c in map(_name, table) for c in pv["loose"])
    assert {"capture", "capture-build", "build", "gathers"} <= seen


def _name(face):
    from mulle_env.engine.cards import CARD_NAMES

    return str(CARD_NAMES[face])


def test_the_engine_event_names_what_the_end_of_a_set_left_and_who_got_it():
    import random

    import agents
    from mulle_env.engine.match import Match

    m = Match(1, {"sets": 1})
    rng = random.Random(3)
    bot = agents.make("random")
    while not m.over:
        before = m.view(m.to_move)
        event = m.step(bot, rng)
    cards, taker = list(event.swept), event.swept_to
    # This game ends on a discard: everything on the table, and the discarded card, goes to the last capturer.
    assert event.move.kind == "discard" and taker == before.last_capturer
    table = [*before.loose, *(f for b in before.builds for f in b.cards), int(event.move.card)]
    assert cards == sorted(table)


def test_names_are_nfc_bounded_and_free_of_control_and_format_characters():
    from live.protocol import check_name

    assert check_name("  A\u030ase ", "player_name", 32) == "\u00c5se"
    assert check_name("Zoë 🂡", "player_name", 32) == "Zoë 🂡"
    with pytest.raises(ProtocolError, match="1 to 32 characters"):
        check_name("x" * 33, "player_name", 32)
    with pytest.raises(ProtocolError, match="U\\+202E RIGHT-TO-LEFT OVERRIDE at position 1"):
        check_name("\u202elraC", "player_name", 32)
    with pytest.raises(ProtocolError, match="must be a string"):
        check_name(7, "player_name", 32)


def test_js_safe_turns_only_integers_beyond_2_53_into_strings():
    from live.protocol import js_safe

    assert js_safe({"a": [2**53, 2**53 + 1, -(2**60)], "b": True, "c": 1.5, "d": None}) == {
        "a": [2**53, str(2**53 + 1), str(-(2**60))], "b": True, "c": 1.5, "d": None}


def test_the_rate_limiter_allows_a_burst_then_a_steady_rate_and_bounds_running_requests():
    from live.ratelimit import HttpLimit, RateLimiter

    now = [0.0]
    rates = RateLimiter({"x": HttpLimit(burst=3, per_second=1.0, concurrent=2, what="things")}, clock=lambda: now[0])
    assert rates.acquire("a", "x") is None and rates.acquire("a", "x") is None
    assert rates.acquire("a", "x") == 1.0  # two running already
    rates.release("a", "x")
    assert rates.acquire("a", "x") is None  # the third of the burst
    rates.release("a", "x")
    rates.release("a", "x")
    wait = rates.acquire("a", "x")
    assert wait is not None and 0.9 < wait <= 1.0  # the bucket is empty: one a second
    assert rates.acquire("b", "x") is None  # another address has its own bucket
    rates.release("b", "x")
    now[0] += 1.0
    assert rates.acquire("a", "x") is None
    text, seconds = rates.message("x", 0.2)
    assert seconds == 1 and "too many things" in text and "try again in 1 s" in text


# ----- issue 52: the games of a table (live.games) and the analysis on the board ---------------------------------


def test_names_that_draw_nothing_are_refused():
    from live.protocol import check_name

    for name, code in (("\u3164", "U+3164"), ("Anna\u2800", "U+2800"), ("\uffa0", "U+FFA0"), ("a\u3000b", "U+3000"),
                       ("\u115f\u1160", "U+115F")):
        with pytest.raises(ProtocolError, match=code.replace("+", "\\+")):
            check_name(name, "player_name", 32)
    with pytest.raises(ProtocolError, match="shows nothing"):
        check_name("\u0301\u0301", "player_name", 32)
    assert check_name("Anna Berg", "player_name", 32) == "Anna Berg"


def test_a_casino_match_records_replays_and_says_what_each_move_did():
    from live.games import CASINO, CasinoRecord, record_from_dict
    from mulle_env import casino

    m = CASINO.match(7, CASINO.ruleset(1), ["person:Anna", "random"])
    rng = random.Random(2)
    while not m.over:
        before = m.view(m.to_move)
        event = m.play(rng.choice(m.legal_moves()))
        if event.move.kind == "capture":
            plan = before.move_plans()[event.move]
            assert sorted(event.taken) == sorted(casino.rules.taken_cards(plan))
    assert event.game_over and event.set_over and m.history[-1] is event
    data = m.record().to_dict()
    assert data["game"] == "casino" and data["moves"] == m.moves
    record = record_from_dict(json.loads(json.dumps(data)))
    assert isinstance(record, CasinoRecord) and record.replay().state == m.state
    with pytest.raises(ValueError, match="differs"):
        CasinoRecord.from_dict({**data, "result": {**data["result"], "winner": 1 - (data["result"]["winner"] or 0)}
                                }).replay()
    # Every card is somewhere at the end: nothing the events said went missing (sweeps to the last capturer).
    assert sum(len(p) for p in m.state.captured) == 52


def test_analysis_flags_every_mistake_gives_accuracy_the_result_and_an_evaluation_for_both_games():
    from live.analysis import ACCURATE_POINTS, MISTAKE_POINTS, analyse
    from live.games import CASINO

    m = Match(41, {"sets": 2}, ["person:Anna", "heuristic"])
    m.play_out([agents.make("random"), agents.make("heuristic")], [random.Random(1), random.Random(2)])
    players = [[{"from_move": 1, "name": "Anna", "kind": "person"}], [{"from_move": 1, "name": "heuristic",
                                                                        "kind": "agent"}]]
    a = analyse(m.record(), players, seconds=0.0)
    ds = a["decisions"]
    assert ds and all(d["seat"] == 0 for d in ds)
    assert all(d["mistake"] == (d["points_lost"] >= MISTAKE_POINTS) for d in ds)
    assert a["mistakes"] == [d["number"] for d in ds if d["mistake"]] and len(a["mistakes"]) > 5  # not capped at 5
    accurate = sum(d["points_lost"] < ACCURATE_POINTS for d in ds)
    assert a["accuracy"][0] == round(100 * accurate / len(ds), 1) and a["accuracy"][1] is None
    assert a["result"] == {"scores": list(m.result().scores), "winner": m.result().winner}
    assert [e["number"] for e in a["evaluation"]] == [d["number"] for d in ds]
    assert all(abs(d["points_lost"] - max(0.0, d["value"] - d["played_value"])) <= 0.011 for d in ds)  # rounding
    # Casino: its own analyser, the same shape.
    c = CASINO.match(3, CASINO.ruleset(1), ["person:Bo", "random"])
    rng = random.Random(4)
    while not c.over:
        c.play(rng.choice(c.legal_moves()))
    players = [[{"from_move": 1, "name": "Bo", "kind": "person"}], [{"from_move": 1, "name": "random",
                                                                      "kind": "agent"}]]
    b = analyse(c.record(), players, seconds=0.0)
    assert b["game"] == "casino" and b["decisions"] and b["result"]["scores"] == list(c.result().scores)
    assert all(d["played"] in c.moves for d in b["decisions"])
