"""The live server's game history: the SQLite store, its HTTP API, the export, and what survives a crash."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from live.hub import LiveConfig
from live.server import ServerThread
from live.store import SCHEMA_VERSION, FinishedGame, GameStore, StoreError
from mulle_env.engine.match import Match
from mulle_env.engine.record import GameRecord
from tests.live_helpers import Client, play_to_end

ROOT = Path(__file__).resolve().parents[1]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def finished(seed: int, table: str = "t", names=("Anna", "random")) -> FinishedGame:
    import random

    import agents

    m = Match(seed, {"sets": 1}, [f"person:{names[0]}", names[1]])
    m.play_out([agents.make("random"), agents.make("random")], [random.Random(seed), random.Random(seed + 1)])
    players = (((1, names[0], "person"),), ((1, names[1], "agent"),))
    return FinishedGame(table, m.record(), players, time.time())


def get(url: str) -> tuple[int, dict | str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read().decode()
            return r.status, json.loads(body) if r.headers.get_content_type() == "application/json" else body
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read().decode())


# ----- the store itself ----------------------------------------------------------------------------


def test_a_game_is_stored_exactly_and_found_by_table_and_player(tmp_path):
    store = GameStore(tmp_path / "g.db")
    big = finished(4120793319716435830 % 2**63, "seeded-table")  # a 63-bit seed, as the server deals
    gid = store.add(big)
    store.add(finished(7, "other", ("Bert", "heuristic")))
    assert store.schema_version() == SCHEMA_VERSION and store.count() == 2
    game = store.game(gid)
    assert game["seed"] == str(big.record.seed) and game["table"] == "seeded-table"
    assert GameRecord.from_dict(game["record"]) == big.record
    assert json.loads(store.record_text(gid)) == big.record.to_dict()
    assert game["players"] == [[{"from_move": 1, "name": "Anna", "kind": "person"}],
                               [{"from_move": 1, "name": "random", "kind": "agent"}]]
    assert [g["table"] for g in store.games()] == ["other", "seeded-table"]  # newest first
    assert [g["id"] for g in store.games(player="anna")] == [gid]  # any case
    assert [g["table"] for g in store.games(table="other")] == ["other"]
    assert store.count(player="BERT") == 1 and store.count(table="none") == 0
    assert [g["table"] for g in store.games(limit=1, offset=1)] == ["seeded-table"]
    store.close()


def test_journal_and_durability_settings(tmp_path):
    store = GameStore(tmp_path / "g.db")
    store.add(finished(1))
    con = sqlite3.connect(tmp_path / "g.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    con.close()
    store.close()


def test_files_that_are_not_a_game_store_are_refused(tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="another program's SQLite file"):
        GameStore(other)
    text = tmp_path / "text.db"
    text.write_text("hello, this is not SQLite at all" * 100)
    with pytest.raises(StoreError, match="not a Mulle game store"):
        GameStore(text)
    with pytest.raises(StoreError, match="is a directory"):
        GameStore(tmp_path)
    with pytest.raises(StoreError, match="character device"):
        GameStore("/dev/null")
    with pytest.raises(StoreError, match="does not exist"):
        GameStore(tmp_path / "nowhere" / "g.db")


def test_a_newer_schema_is_refused_and_an_older_one_is_upgraded(tmp_path):
    path = tmp_path / "g.db"
    GameStore(path).close()
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}, newer"):
        GameStore(path)
    fresh = tmp_path / "new.db"
    sqlite3.connect(fresh).close()  # an empty SQLite file (version 0) is set up from scratch
    store = GameStore(fresh)
    assert store.schema_version() == SCHEMA_VERSION
    store.close()


# ----- the server: stored before game_over, the API, a restart -----------------------------------


def test_games_survive_a_restart_and_the_api_serves_them(tmp_path):
    db = str(tmp_path / "g.db")
    cfg = LiveConfig(opponent="random", db=db, trust_loopback=True)

    async def play(url, table):
        c = await Client.open(url)
        await c.join(table, "Anna", sets=1)
        await c.send("lobby_action", {"action": "start_game"})
        data = (await play_to_end(c))["payload"]["data"]
        await c.close()
        return data

    with ServerThread(cfg) as srv:
        first = run(play(srv.url, "alpha"))
        # Committed before game_over was sent: a second connection finds it at once.
        stored = GameStore(db).game(first["game_id"])["record"]
        # game_over's record gives the 63-bit seed as a string (issue 33, defect 10): JSON.parse would round it.
        assert stored == {**first["record"], "seed": int(first["record"]["seed"])}
        assert first["record"]["seed"] == first["seed"] == str(stored["seed"]) and stored["seed"] > 2**53
    with ServerThread(cfg) as srv:
        second = run(play(srv.url, "beta"))
        status, page = get(srv.url + "/api/games")
        assert status == 200 and page["total"] == 2 and [g["table"] for g in page["games"]] == ["beta", "alpha"]
        assert page["games"][1]["id"] == first["game_id"] and page["games"][1]["seed"] == first["seed"]
        assert get(srv.url + "/api/games?table=alpha")[1]["total"] == 1
        assert get(srv.url + "/api/games?player=ANNA&limit=1&offset=1")[1]["games"][0]["table"] == "alpha"
        status, game = get(srv.url + f"/api/games/{second['game_id']}")
        assert status == 200 and game["record"] == second["record"] and game["scores"] == second["scores"]
        with urllib.request.urlopen(srv.url + f"/api/games/{second['game_id']}/record", timeout=10) as r:
            assert r.read().decode() == second["record_text"]  # byte for byte: the seed's exact digits
            assert "attachment" in r.headers["Content-Disposition"]
        assert get(srv.url + "/api/games/999")[0] == 404
        assert get(srv.url + "/api/games/abc")[0] == 404
        status, err = get(srv.url + "/api/games?limit=1000")
        assert status == 400 and "limit" in err["error"]
    with ServerThread(LiveConfig(opponent="random")) as srv:
        status, err = get(srv.url + "/api/games")
        assert status == 404 and "no game history" in err["error"]


def test_a_seat_that_changed_hands_is_stored_with_who_played_from_when(tmp_path):
    db = str(tmp_path / "g.db")

    async def go(url):
        a, b = await Client.open(url), await Client.open(url)
        await a.join("shared", "Anna", sets=1)
        await a.send("lobby_action", {"action": "start_game"})
        await a.play_first(await a.expect("request"))
        req = await a.expect("request")
        await b.join("shared", "Bert")
        await a.play_first(req)
        over_a, _ = await asyncio.gather(play_to_end(a), play_to_end(b))
        for x in (a, b):
            await x.close()
        return over_a["payload"]["data"]

    with ServerThread(LiveConfig(opponent="random", db=db, trust_loopback=True)) as srv:
        data = run(go(srv.url))
    players = GameStore(db).game(data["game_id"])["players"]
    assert players[0] == [{"from_move": 1, "name": "Anna", "kind": "person"}]
    assert players[1] == [{"from_move": 1, "name": "random", "kind": "agent"},
                          {"from_move": 3, "name": "Bert", "kind": "person"}]
    assert data["players"] == players


# ----- the export --------------------------------------------------------------------------------


def test_export_then_replay_equals_the_game(tmp_path, capsys):
    from live.cli import main as serve
    from terminal.cli import main as play

    db = tmp_path / "g.db"
    store = GameStore(db)
    games = [finished(s, f"t{s}", ("Anna" if s % 2 else "Bert", "random")) for s in (1, 2, 3)]
    ids = [store.add(g) for g in games]
    store.close()
    out = tmp_path / "games.jsonl"
    assert serve(["--db", str(db), "--export", str(out)]) == 0
    assert "exported 3 games" in capsys.readouterr().out
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["game_id"] for x in lines] == ids
    for line, game in zip(lines, games):
        record = GameRecord.from_dict(line)  # the training readers' and mulle-play's reader
        assert record == game.record
        assert record.replay().state == game.record.replay().state
    # mulle-play replays an exported game to the same final score.
    text = io.StringIO()
    assert play(["--replay", str(out), "--game", "1"], input_fn=lambda p: "", out=text) == 0
    result = games[1].record.result
    assert f"wins {max(result['scores'])} to {min(result['scores'])}" in text.getvalue() or "Draw." in text.getvalue()
    # Filters.
    assert serve(["--db", str(db), "--export", str(out), "--player", "anna"]) == 0
    assert [json.loads(x)["game_id"] for x in out.read_text().splitlines()] == [ids[0], ids[2]]
    assert serve(["--db", str(db), "--export", str(out), "--table", "t2"]) == 0
    assert [json.loads(x)["table"] for x in out.read_text().splitlines()] == ["t2"]


def test_export_refuses_bad_paths(tmp_path, capsys):
    from live.cli import main as serve

    db = tmp_path / "g.db"
    GameStore(db).close()
    for argv, words in (
        (["--db", str(tmp_path / "none.db"), "--export", str(tmp_path / "o.jsonl")], "does not exist"),
        (["--db", str(db), "--export", str(tmp_path)], "is a directory"),
        (["--db", str(db), "--export", "/dev/full"], "not a regular file"),
        (["--db", "/dev/zero"], "not a regular file"),
        (["--no-db", "--export", str(tmp_path / "o.jsonl")], "--no-db"),
        (["--table", "x"], "--export"),
    ):
        try:
            code = serve(argv)
        except SystemExit as exc:
            code = exc.code
        assert code == 2, argv
        assert words in capsys.readouterr().err, argv
    assert not (tmp_path / "none.db").exists()  # an export never makes an empty store


# ----- kill -9 in the middle of busy play ----------------------------------------------------------


def test_kill_9_mid_play_loses_no_finished_game_and_never_corrupts_the_store(tmp_path):
    db = tmp_path / "g.db"
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "mulle-serve"), "--port", "0", "--db", str(db),
                             "--opponent", "random", "--agent-delay", "0", "--trust-loopback"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    told: list[int] = []
    try:
        url = re.search(r"open (http://[\d.]+:\d+)/", proc.stdout.readline()).group(1)

        async def player(i: int, stop: asyncio.Event):
            c = await Client.open(url)
            await c.join(f"busy-{i}", f"P{i}", sets=1)
            try:
                while not stop.is_set():
                    await c.send("lobby_action", {"action": "start_game"})
                    over = await play_to_end(c, timeout=20)
                    told.append(over["payload"]["data"]["game_id"])
            except (ConnectionError, asyncio.TimeoutError, TimeoutError, OSError):
                pass  # the server died under us
            finally:
                await c.session.close()

        async def go():
            stop = asyncio.Event()
            tasks = [asyncio.create_task(player(i, stop)) for i in range(6)]
            deadline = time.monotonic() + 30
            while len(told) < 8 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.13)  # somewhere in the middle of moves and commits
            os.kill(proc.pid, signal.SIGKILL)
            stop.set()
            await asyncio.gather(*tasks)
        run(go())
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and len(told) >= 8
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    store = GameStore(db)  # opens (and recovers the write-ahead log) as the next server would
    stored = {g["id"] for g in store.games(limit=100)}
    assert set(told) <= stored, f"games told finished but lost: {set(told) - stored}"
    for gid in stored:
        record = GameRecord.from_dict(store.game(gid)["record"])
        assert record.replay().over  # every stored game is whole
    store.close()
