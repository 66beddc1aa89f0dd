"""Ratings that follow results (issue 52, item 3): Glicko-2 from Glickman's paper, per game, for claimed names and
the agents, updated with each rated game in the store, and served by the API and the player page."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
import urllib.error
import urllib.request

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from live.ratings import PROVISIONAL_GAMES, START_RD, Rating, agent_key, glicko2_update, inflate, person_key, rate_game


def test_glickmans_worked_example():
    """The example of "Example of the Glicko-2 system" (Glickman, 2013): 1500/200/0.06 beats 1400/30, loses to
    1550/100 and 1700/300 with tau 0.5: 1464.06, 151.52, 0.05999."""
    player = Rating(1500, 200, 0.06)
    new = glicko2_update(player, [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)],
                         tau=0.5)
    assert round(new.rating, 2) == 1464.05 or round(new.rating, 2) == 1464.06
    assert abs(new.rating - 1464.06) < 0.02 and abs(new.rd - 151.52) < 0.01
    assert abs(new.volatility - 0.05999) < 1e-5 and new.games == 3


ratings = st.builds(Rating, st.floats(0, 3000), st.floats(30, 350), st.floats(0.01, 0.2), st.integers(0, 500))


@settings(max_examples=400, deadline=None)
@given(ratings, ratings)
def test_a_win_never_lowers_a_rating_and_a_loss_never_raises_it(a, b):
    win_a, loss_b = rate_game(a, b, 1.0)
    assert win_a.rating >= a.rating and loss_b.rating <= b.rating
    loss_a, win_b = rate_game(a, b, 0.0)
    assert loss_a.rating <= a.rating and win_b.rating >= b.rating
    for new in (win_a, loss_b, loss_a, win_b):
        assert 0 < new.rd <= START_RD + 1e-9 and new.games in (a.games + 1, b.games + 1)


@settings(max_examples=100, deadline=None)
@given(ratings, st.floats(0, 10 * 86400 * 365))
def test_time_away_only_widens_the_deviation(a, idle):
    later = inflate(a, idle)
    assert later.rating == a.rating and a.rd <= later.rd <= max(a.rd, START_RD)


def test_a_score_must_be_a_result():
    with pytest.raises(ValueError, match="1 \\(a win\\), 0.5"):
        rate_game(Rating(), Rating(), 0.7)


# ----- through the store --------------------------------------------------------------------------


def _game(seed: int, winner: int | None, keys, names, status="finished", game="mulle"):
    import agents
    from live.store import FinishedGame
    from mulle_env.engine.match import Match
    from mulle_env.engine.record import GameRecord

    m = Match(seed, {"sets": 1}, ["x", "y"])
    m.play_out([agents.make("random")] * 2, [random.Random(seed), random.Random(seed + 1)])
    rec = m.record()
    result = dict(rec.result)
    result["winner"] = winner
    rec = GameRecord(rec.seed, rec.moves, rec.ruleset, rec.specs, result if status == "finished" else None)
    kinds = [k.split(":", 1)[0] for k in keys] if keys else ["person", "agent"]
    players = (((1, names[0], kinds[0]),), ((1, names[1], kinds[1]),))
    return FinishedGame("t", rec, players, time.time(), status=status, game=game, rated=keys,
                        winner=winner if status == "forfeit" else None,
                        scores=(0, 0) if status != "finished" else None)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from([0, 1, None]), min_size=1, max_size=12))
def test_every_stored_rating_change_follows_its_result(tmp_path_factory, winners):
    """Issue 52: a player read 435, 0, -59, 0, -35 after W L L W L (ratings moving against results); each game's
    change in the store now has the sign of its result."""
    from live.store import GameStore

    store = GameStore(tmp_path_factory.mktemp("r") / "g.db")
    keys = (person_key("Anna"), agent_key("heuristic"))
    for i, w in enumerate(winners):
        store.add(_game(i, w, keys, ("Anna", "heuristic")))
    history = store.rating_history(keys[0])
    assert [h["result"] for h in history] == [{0: "win", 1: "loss", None: "draw"}[w] for w in winners]
    for h in history:
        if h["result"] == "win":
            assert h["rating"] >= h["before"]
        elif h["result"] == "loss":
            assert h["rating"] <= h["before"]
    (anna,) = [r for r in store.ratings("mulle") if r["key"] == keys[0]]
    assert anna["games"] == len(winners) and (anna["wins"], anna["draws"], anna["losses"]) == (
        winners.count(0), winners.count(None), winners.count(1))
    assert store.ratings("casino") == []  # per game
    store.close()


def test_only_rated_games_move_ratings_and_forfeits_count(tmp_path):
    from live.store import GameStore

    store = GameStore(tmp_path / "g.db")
    keys = (person_key("Anna"), person_key("Bert"))
    store.add(_game(1, 0, None, ("Guest", "random")))  # a guest's game: nobody's rating
    store.add(_game(2, None, keys, ("Anna", "Bert"), status="abandoned"))  # no result
    assert store.ratings("mulle") == []
    store.add(_game(3, 1, keys, ("Anna", "Bert"), status="forfeit"))  # Anna forfeited
    store.add(_game(4, 0, keys, ("Anna", "Bert"), game="casino"))
    by = {r["key"]: r for r in store.ratings("mulle")}
    assert by[keys[1]]["rating"] > 1500 > by[keys[0]]["rating"] and by[keys[0]]["losses"] == 1
    assert [r["key"] for r in store.ratings("casino")] == [keys[0], keys[1]]  # Anna won at Casino
    store.close()


# ----- the API and the page ----------------------------------------------------------------------


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read().decode()
            return r.status, (json.loads(body) if r.headers.get_content_type() == "application/json" else body)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read().decode())


def test_a_logged_in_players_game_against_an_agent_is_rated_and_shown(tmp_path):
    pytest.importorskip("aiohttp")
    import aiohttp

    from live.hub import LiveConfig
    from live.server import ServerThread
    from tests.live_helpers import Client, play_to_end

    cfg = LiveConfig(opponent="random", trust_loopback=True, db=str(tmp_path / "g.db"))
    with ServerThread(cfg) as srv:
        async def go():
            http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
            try:
                body = {"name": "Rut", "password": "a long enough password"}
                async with http.post(srv.url + "/api/accounts", json=body) as r:
                    assert r.status == 201
                async with http.post(srv.url + "/api/session", json=body) as r:
                    assert r.status == 200
                me = Client(http, await http.ws_connect(srv.url + "/ws"))
                await me.join("rated-1", "Rut", sets=1, seed=5)
                await me.send("lobby_action", {"action": "start_game"})
                over = (await play_to_end(me))["payload"]["data"]
                guest = await Client.open(srv.url)
                await guest.join("unrated-1", "Gast", sets=1, seed=6)
                await guest.send("lobby_action", {"action": "start_game"})
                unrated = (await play_to_end(guest))["payload"]["data"]
                await guest.close()
                await me.ws.close()
                return over, unrated
            finally:
                await http.close()
        over, unrated = asyncio.run(asyncio.wait_for(go(), 60))
        assert "ratings" not in unrated  # a guest plays unrated
        mine, agent = over["ratings"]
        won = over["winner"] == 0
        assert mine["key"] == "person:rut" and agent["key"] == "agent:random" and mine["provisional"]
        assert (mine["change"] > 0) == won and (agent["change"] > 0) == (not won) or over["winner"] is None
        status, body = _get(srv.url + "/api/ratings?game=mulle")
        assert status == 200 and body["game"] == "mulle"
        assert {p["name"] for p in body["players"]} == {"Rut", "random"}
        rut = next(p for p in body["players"] if p["key"] == "person:rut")
        assert set(rut) >= {"name", "rating", "rd", "games", "provisional"} and rut["games"] == 1
        assert rut["provisional"] and PROVISIONAL_GAMES > 1 and 0 < rut["rd"] < 350
        assert _get(srv.url + "/api/ratings?game=casino")[1]["players"] == []
        status, body = _get(srv.url + "/api/ratings?game=chess")
        assert status == 400 and "mulle, casino" in body["error"]
        status, listed = _get(srv.url + "/api/ratings?player=rut")  # issue 33's form still answers
        assert status == 200 and [h["opponent"] for h in listed["history"]] == ["random"]
        status, player = _get(srv.url + "/api/players/RUT")
        assert status == 200 and player["name"] == "Rut" and len(player["history"]["mulle"]) == 1
        assert player["history"]["mulle"][0]["opponent"] == "random"
        assert _get(srv.url + "/api/players/agent:random")[0] == 200
        assert _get(srv.url + "/api/players/Gast")[0] == 404  # a guest has no rating
        status, page = _get(srv.url + "/players/Rut")
        assert status == 200 and "player.js" in page
        status, script = _get(srv.url + "/static/player.js")
        assert status == 200 and "createElementNS" in script  # the chart is drawn as SVG by the page itself
        # No CDN: nothing loaded from another site (the SVG namespace is a name, not a download).
        assert not re.search(r"""(src|href)\s*=\s*["']https?:|fetch\(\s*["'`]https?:""", script + page)


def test_the_first_ratings_request_loads_no_heavy_module():
    """Issue 52: the first /api/ratings doubled the server's memory (58.9 -> 123.8 MB): it imported scipy for a
    Bradley-Terry refit of every game. Ratings are kept in the store now; nothing heavy is imported for them."""
    import subprocess
    import sys

    code = ("import sys, live.server, live.ratings, live.store, live.accounts, live.recovery; "
            "print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
