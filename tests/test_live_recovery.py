"""Games in progress survive a killed server (issue 53, item 4): the moves are in the store as they are played, a
restarted server restores the game, the person rejoins with the seat's token, and one who never does loses by
forfeit; a game that cannot be restored is stored as abandoned, with the moves that replay."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from live.store import GameStore
from mulle_env.engine.record import GameRecord
from tests.live_helpers import Client, play_to_end

ROOT = Path(__file__).resolve().parents[1]


def serve(db: Path, *flags: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "mulle-serve"), "--port", "0", "--db", str(db),
                             "--opponent", "random", "--agent-delay", "0", "--trust-loopback", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    found = re.search(r"open (http://[\d.]+:\d+)/", line)
    if found is None:
        proc.kill()
        raise AssertionError(f"the server did not start: {line!r} {proc.stderr.read()[:2000]}")
    return proc, found.group(1)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 90))


def test_kill_9_mid_game_restores_the_game_and_the_seat_and_a_person_who_never_returns_forfeits(tmp_path):
    db = tmp_path / "g.db"
    proc, url = serve(db, "--grace", "60")
    try:
        async def before():
            seen = {}
            for table, name, seed, game in (("crash-back", "Anna", 11, "mulle"), ("crash-gone", "Bert", 12, "mulle"),
                                            ("crash-casino", "Cleo", 13, "casino")):
                c = await Client.open(url)
                conf = await c.join(table, name, sets=1, seed=seed, game=game)
                await c.send("lobby_action", {"action": "start_game"})
                for _ in range(4):
                    await c.play_first(await c.expect("request"))
                req = await c.expect("request")
                seen[table] = (conf["session_id"], req["payload"]["request_id"],
                               [m["payload"]["data"]["move"] for m in c.log
                                if m["type"] == "notification" and m["payload"]["event"] == "moved"])
                await c.session.close()  # the page stays "open": no leave, the server just dies under it
            await asyncio.sleep(0.5)  # the store's thread writes the last moves
            return seen
        seen = run(before())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert {g["table"] for g in GameStore(db).live_games()} == {"crash-back", "crash-gone", "crash-casino"}

    proc, url = serve(db, "--grace", "4")
    try:
        async def after():
            c = await Client.open(url)
            sid, _, moves = seen["crash-back"]
            await c.send("join", {"session_id": sid})
            back = (await c.expect("joined_confirmation"))["payload"]
            assert back["rejoined"] and back["player_name"] == "Anna" and back["seat"] == 0
            assert [h["move"] for h in back["history"]] == moves  # the game as it was
            assert back["table"]["phase"] == "playing"
            over = (await play_to_end(c))["payload"]["data"]
            await c.close()
            # A Casino game comes back the same way.
            c = await Client.open(url)
            sid, _, moves = seen["crash-casino"]
            await c.send("join", {"session_id": sid})
            back = (await c.expect("joined_confirmation"))["payload"]
            assert back["rejoined"] and back["table"]["game"] == "casino"
            assert [h["move"] for h in back["history"]] == moves
            casino_over = (await play_to_end(c))["payload"]["data"]
            assert casino_over["game_id"] is not None
            await c.close()
            return over
        over = run(after())
        assert over["game_id"] is not None and "forfeit" not in over
        # Bert never comes back: after the grace period his game is his loss by forfeit.
        deadline = time.monotonic() + 20
        store = GameStore(db)
        while time.monotonic() < deadline and not store.games(table="crash-gone"):
            time.sleep(0.2)
        gone = store.games(table="crash-gone")
        assert len(gone) == 1 and gone[0]["status"] == "forfeit" and gone[0]["winner"] == 1
        assert gone[0]["forfeit"]["name"] == "Bert" and "did not come back" in gone[0]["forfeit"]["reason"]
        assert gone[0]["moves"] >= len(seen["crash-gone"][2])
        assert gone[0]["players"] == [[{"from_move": 1, "name": "Bert", "kind": "person"}],
                                      [{"from_move": 1, "name": "random", "kind": "agent"}]]
        finished = store.game(over["game_id"])
        assert finished["status"] == "finished" and GameRecord.from_dict(finished["record"]).replay().over
        assert finished["record"]["moves"][: len(seen["crash-back"][2])] == seen["crash-back"][2]
        assert store.games(table="crash-casino")[0]["game"] == "casino"
        assert store.live_games() == []  # nothing left in progress
        store.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


def test_a_game_in_progress_that_no_longer_replays_is_stored_as_abandoned(tmp_path):
    from live.hub import LiveConfig
    from live.server import ServerThread
    from mulle_env.engine.match import Match
    from mulle_env.engine.ruleset import Ruleset

    db = tmp_path / "g.db"
    store = GameStore(db)
    m = Match(7, Ruleset(sets=1), ["person:Zed", "random"])
    first = [str(m.legal_moves()[0])]
    m.play(first[0])
    first.append(str(m.legal_moves()[0]))
    meta = {"game": "mulle", "seed": "7", "ruleset": Ruleset(sets=1).to_dict(), "specs": ["person:Zed", "random"],
            "holders": [[[1, "Zed", "person"]], [[1, "random", "agent"]]],
            "seats": [{"kind": "person", "name": "Zed", "session_hash": "0" * 64, "account": None},
                      {"kind": "agent", "spec": "random"}],
            "opponent": "random", "agent_delay": 0, "host": 0, "move_clock": 300, "games": 1}
    lid = store.start_live("broken", meta)
    for i, text in enumerate([*first, "capture KL 99"], 1):
        store.add_move(lid, i, text)
    store.start_live("unreadable", {"game": "no such game"})
    store.close()
    with ServerThread(LiveConfig(opponent="random", trust_loopback=True, db=str(db))) as srv:
        assert srv.call(lambda: sorted(srv.hub.tables)) == []
        srv.call(lambda: srv.hub.store_pool.submit(lambda: None).result(5))
        games = srv.hub.store.games(table="broken")
        assert len(games) == 1 and games[0]["status"] == "abandoned" and games[0]["moves"] == 2
        assert srv.hub.store.live_games() == []


def test_after_kill_9_a_logged_in_player_takes_the_restored_seat_back_by_name(tmp_path):
    """A claimed name's login (kept in the store as a hash, like the seat's token) survives the restart: logging in
    and joining the table under the name takes the restored seat back and gives it a new token."""
    import aiohttp

    db = tmp_path / "g.db"
    body = {"name": "Dana", "password": "a long enough password"}
    proc, url = serve(db, "--grace", "60")
    try:
        async def before():
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
                async with http.post(url + "/api/accounts", json=body) as r:
                    assert r.status == 201
                async with http.post(url + "/api/session", json=body) as r:
                    assert r.status == 200
                    cookie = f"mulle_session={r.cookies['mulle_session'].value}"
                c = Client(http, await http.ws_connect(url + "/ws"))
                await c.join("crash-login", "Dana", sets=1, seed=21)
                await c.send("lobby_action", {"action": "start_game"})
                for _ in range(2):
                    await c.play_first(await c.expect("request"))
                await c.expect("request")
                await asyncio.sleep(0.5)
                return cookie
        cookie = run(before())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    proc, url = serve(db, "--grace", "60")
    try:
        async def after():
            async with aiohttp.ClientSession() as http:  # the same browser: its login cookie
                c = Client(http, await http.ws_connect(url + "/ws", headers={"Cookie": cookie}))
                back = await c.join("crash-login", "Dana")
                assert back["rejoined"] and back["session_id"] and back["table"]["phase"] == "playing"
                await c.ws.close()
            d = await Client.open(url)  # the new token works from anywhere (a seat link)
            await d.send("join", {"session_id": back["session_id"]})
            again = (await d.expect("joined_confirmation"))["payload"]
            assert again["rejoined"] and again["player_name"] == "Dana"
            over = (await play_to_end(d))["payload"]["data"]
            await d.close()
            return over
        over = run(after())
        assert over["ratings"][0]["key"] == "person:dana"  # still her rated game
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
