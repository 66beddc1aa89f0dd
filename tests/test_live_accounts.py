"""Accounts (issue 52, item 2): claimed names, logins, the cookie, the rate limits, what is never revealed, and coming
back to a seat (item 5: seat links, logging in from another browser, rematch, the move clock)."""

from __future__ import annotations

import asyncio
import glob
import logging
import re
import time

import pytest

pytest.importorskip("aiohttp")

import aiohttp

from live.accounts import check_password, hash_password
from live.hub import LiveConfig
from live.protocol import ErrorCode
from live.server import ServerThread
from tests.live_helpers import Client

PASSWORD = "correct horse battery"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("accounts") / "g.db"
    cfg = LiveConfig(opponent="random", grace=30, close_after=0.3, trust_loopback=True, db=str(db))
    with ServerThread(cfg) as srv:
        yield srv


async def session() -> aiohttp.ClientSession:
    # unsafe: keep cookies from an IP address (the test server is 127.0.0.1)
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def claim(http: aiohttp.ClientSession, url: str, name: str, password: str = PASSWORD) -> int:
    async with http.post(url + "/api/accounts", json={"name": name, "password": password}) as r:
        return r.status


async def login(http: aiohttp.ClientSession, url: str, name: str, password: str = PASSWORD) -> aiohttp.ClientResponse:
    async with http.post(url + "/api/session", json={"name": name, "password": password}) as r:
        await r.read()
        return r


async def ws_client(http: aiohttp.ClientSession, url: str) -> Client:
    """A WebSocket client on ``http``'s cookies (a browser's login comes with the upgrade request)."""
    return Client(http, await http.ws_connect(url + "/ws"))


def test_passwords_are_hashed_with_scrypt_and_checked_in_constant_time():
    h = hash_password(PASSWORD)
    kind, n, r, p, salt, digest = h.split("$")
    assert (kind, int(n), int(r), int(p)) == ("scrypt", 2**14, 8, 1) and PASSWORD not in h
    assert check_password(PASSWORD, h) and not check_password(PASSWORD + "x", h)
    assert hash_password(PASSWORD) != h  # a fresh salt each time
    assert not check_password(PASSWORD, "md5$x") and not check_password(PASSWORD, "garbage")


def test_a_name_is_claimed_once_and_logged_in_with_a_cookie(server):
    async def go():
        http = await session()
        try:
            assert await claim(http, server.url, "Anna") == 201
            assert await claim(http, server.url, "ANNA") == 409  # any case: one name
            async with http.post(server.url + "/api/accounts", json={"name": "Bo", "password": "short"}) as r:
                assert r.status == 400 and "8 to 256" in (await r.json())["error"]
            async with http.post(server.url + "/api/accounts", json={"name": "\u3164", "password": PASSWORD}) as r:
                assert r.status == 400
            async with http.post(server.url + "/api/accounts", data=b"not json") as r:
                assert r.status == 400 and "JSON" in (await r.json())["error"]
            assert (await login(http, server.url, "Anna", "wrong password")).status == 401
            assert (await login(http, server.url, "Nobody", PASSWORD)).status == 401
            r = await login(http, server.url, "anna")
            assert r.status == 200
            cookie = r.headers["Set-Cookie"]
            assert "mulle_session=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            assert "Secure" not in cookie  # auto: plain http here
            async with http.get(server.url + "/api/session") as r:
                assert (await r.json())["name"] == "Anna"
            async with http.delete(server.url + "/api/session") as r:
                assert r.status == 204
            async with http.get(server.url + "/api/session") as r:
                assert (await r.json())["name"] is None
        finally:
            await http.close()
    run(go())


def test_the_cookie_is_secure_when_configured(tmp_path):
    cfg = LiveConfig(opponent="random", trust_loopback=True, db=str(tmp_path / "g.db"), cookie_secure="always")
    with ServerThread(cfg) as srv:
        async def go():
            http = await session()
            try:
                assert await claim(http, srv.url, "Sec") == 201
                r = await login(http, srv.url, "Sec")
                assert "Secure" in r.headers["Set-Cookie"]
            finally:
                await http.close()
        run(go())
    with pytest.raises(ValueError, match="cookie_secure"):
        LiveConfig(cookie_secure="sometimes")


def test_a_claimed_name_sits_only_with_its_login_and_guests_still_play(server):
    async def go():
        http = await session()
        guest = await session()
        try:
            assert await claim(http, server.url, "Carla") == 201
            c = await ws_client(guest, server.url)
            await c.send("join", {"table_name": "claimed-1", "player_name": "carla"})
            err = await c.error()
            assert err["code"] == ErrorCode.UNAUTHORIZED and err["details"]["reason"] == "claimed name"
            assert "log in as carla" in err["message"]
            conf = await c.join("claimed-1", "Gus")  # a free name: a guest plays
            assert conf["player_name"] == "Gus"
            await c.close()
            assert (await login(http, server.url, "Carla")).status == 200
            me = await ws_client(http, server.url)
            conf = await me.join("claimed-2", "Carla")
            assert conf["player_name"] == "Carla"
            await me.close()
        finally:
            await http.close()
            await guest.close()
    run(go())


def test_logins_are_rate_limited_per_address_and_per_name(tmp_path):
    cfg = LiveConfig(opponent="random", db=str(tmp_path / "g.db"))  # loopback limited like any address
    with ServerThread(cfg) as srv:
        async def go():
            http = await session()
            try:
                assert await claim(http, srv.url, "Dora") == 201
                codes = [(await login(http, srv.url, "Dora", f"guess-{i:04d}")) for i in range(7)]
                assert [r.status for r in codes[:5]] == [401] * 5
                assert codes[5].status == 429 and int(codes[5].headers["Retry-After"]) >= 1
            finally:
                await http.close()
        run(go())
    # Per name, whatever the address: the limiter's own class.
    from live.ratelimit import HTTP_LIMITS, RateLimiter
    limiter = RateLimiter(clock=lambda: 0.0)
    burst = HTTP_LIMITS["login_name"].burst
    results = []
    for _ in range(burst + 1):
        wait = limiter.acquire("name:dora", "login_name")
        results.append(wait)
        if wait is None:
            limiter.release("name:dora", "login_name")
    assert results[:burst] == [None] * burst and results[burst] > 0


def test_no_password_or_token_is_logged_stored_or_sent_to_another_client(server, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "Eve's very secret pass"

    async def go():
        http = await session()
        other = await session()
        try:
            assert await claim(http, server.url, "Eve", secret) == 201
            r = await login(http, server.url, "Eve", secret)
            token = r.cookies["mulle_session"].value
            me = await ws_client(http, server.url)
            conf = await me.join("secrets-1", "Eve")
            bert = await ws_client(other, server.url)
            await bert.join("secrets-1", "Bert")
            watcher = await Client.open(server.url)
            await watcher.send("watch", {"table_name": "secrets-1"})
            await watcher.expect("watch_confirmation")
            await me.send("lobby_action", {"action": "start_game"})
            await bert.expect("notification", "game_started")
            await watcher.expect("notification", "game_started")
            await asyncio.sleep(0.2)
            for c in (me, bert, watcher):
                await c.close()
            await watcher.session.close()
            return token, conf["session_id"], bert.log + watcher.log
        finally:
            await http.close()
            await other.close()
    token, seat_token, others = run(go())
    server.call(lambda: server.hub.store_pool.submit(lambda: None).result(5))  # every write has run
    text = caplog.text
    assert secret not in text and token not in text and seat_token not in text
    others_text = repr(others)
    assert token not in others_text and seat_token not in others_text and secret not in others_text
    db = server.hub.store.path
    for path in glob.glob(f"{db}*"):  # the database, its write-ahead log and shared memory
        data = open(path, "rb").read()
        for value in (secret, token, seat_token):
            assert value.encode() not in data, f"{value!r} stored in clear in {path}"


def test_a_seat_link_reclaims_the_seat_from_another_browser_within_the_grace(server):
    """Issue 52, item 5: another browser within the grace was told 'the name is taken'; the seat link (the seat's
    token) takes the seat back from any device, and so does logging in as the claimed name."""
    async def go():
        phone_http = await session()
        a = await Client.open(server.url)
        conf = await a.join("link-1", "Rita", sets=1)
        await a.send("lobby_action", {"action": "start_game"})
        await a.expect("request")
        await a.ws.close()  # the tab is gone; the seat is held for the grace period
        await a.session.close()
        await asyncio.sleep(0.1)
        async with phone_http.get(server.url + f"/?table=link-1&seat={conf['session_id']}") as r:
            assert r.headers["Referrer-Policy"] == "same-origin"  # the link's token never leaves in a Referer
        phone = await Client.open(server.url)
        await phone.send("join", {"table_name": "link-1", "player_name": "Rita"})
        err = await phone.error()
        assert err["code"] == ErrorCode.NAME_TAKEN and "seat link" in err["message"]
        await phone.send("join", {"session_id": conf["session_id"]})
        back = (await phone.expect("joined_confirmation"))["payload"]
        assert back["rejoined"] and back["seat"] == conf["seat"] and back["player_name"] == "Rita"
        await phone.expect("request")
        await phone.close()
        await phone_http.close()

        # A claimed name: logging in from another browser and joining under the name takes the seat back too.
        http, laptop = await session(), await session()
        try:
            assert await claim(http, server.url, "Sven") == 201
            await login(http, server.url, "Sven")
            await login(laptop, server.url, "Sven")
            first = await ws_client(http, server.url)
            conf = await first.join("link-2", "Sven", sets=1)
            await first.ws.close()
            await asyncio.sleep(0.1)
            second = await ws_client(laptop, server.url)
            back = await second.join("link-2", "Sven")
            assert back["rejoined"] and back["session_id"] == conf["session_id"]
            await second.ws.close()
        finally:
            await http.close()
            await laptop.close()
    run(go())


def test_rematch_starts_once_every_person_asked_and_the_move_clock_forfeits(tmp_path):
    cfg = LiveConfig(opponent="random", grace=30, close_after=0.3, trust_loopback=True, db=str(tmp_path / "g.db"))
    with ServerThread(cfg) as srv:
        async def go():
            a, b = await Client.open(srv.url), await Client.open(srv.url)
            await a.join("clock-1", "Ann", sets=1, move_clock_s=10)
            await b.join("clock-1", "Ben")
            await a.send("lobby_action", {"action": "rematch"})
            assert (await a.error())["code"] == ErrorCode.GAME_ALREADY_STARTED  # no game yet
            await a.send("lobby_action", {"action": "start_game"})
            started = time.time()
            req = None
            for c in (a, b):  # whoever is asked first sees the clock
                try:
                    req = await c.expect("request", timeout=1)
                    break
                except TimeoutError:
                    continue
            assert req is not None
            clock = req["payload"]["clock"]
            assert clock["seconds"] == 10 and 0 < clock["left"] <= 10
            assert abs(clock["deadline"] / 1000 - (started + 10)) < 2
            # Nobody moves: the clock runs out and the person to move loses by forfeit.
            over = (await a.expect("notification", "game_over", timeout=15))["payload"]["data"]
            assert over["forfeit"]["reason"] == "ran out of time (the move clock of 10 s)"
            assert over["winner"] == 1 - over["forfeit"]["seat"] and over["forfeit"]["name"] in ("Ann", "Ben")
            # Rematch: one asks (the other is told), then both have asked: the next game starts.
            await b.send("lobby_action", {"action": "rematch"})
            wants = await a.expect("notification", "lobby_update")
            assert wants["payload"]["data"]["action"] == "rematch" and wants["payload"]["data"]["wants"] == ["Ben"]
            await a.send("lobby_action", {"action": "rematch"})
            await a.expect("notification", "game_started")
            for c in (a, b):
                await c.close()
        run(go())


@pytest.mark.parametrize(("argv", "flag"), [(["--move-clock", "5"], "--move-clock"),
                                            (["--cookie-secure", "sometimes"], "--cookie-secure"),
                                            (["--grace", "nan"], "--grace")])
def test_the_new_flags_refuse_bad_values_by_name(argv, flag, capsys):
    from live.cli import parse_config

    with pytest.raises(SystemExit) as exc:
        parse_config([*argv, "--no-db"])
    assert exc.value.code == 2 and flag in capsys.readouterr().err


def test_the_defaults_give_a_phone_minutes_and_every_move_a_clock():
    from live.cli import parse_config

    _, config = parse_config(["--no-db"])
    assert config.grace == 300 and config.move_clock == 300 and config.cookie_secure == "auto"
    _, config = parse_config(["--no-db", "--move-clock", "0", "--cookie-secure", "always"])
    assert config.move_clock == 0 and config.cookie_secure == "always"


def test_in_the_browser_claim_play_on_the_clock_take_the_seat_elsewhere_resume_and_rematch(server):
    """The page's side of items 2 and 5: claim a name and log in, see the move clock, take the seat back in another
    browser by the seat link, see the rating change and Rematch in the result box, and Resume from /."""
    from tests.test_live_browser import MISSING, axe_violations, find_chromium

    if MISSING:
        pytest.skip(MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        args = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True, args=args)
        errors: list[str] = []
        try:
            first = browser.new_context().new_page()
            first.set_default_timeout(15_000)
            first.on("pageerror", lambda exc: errors.append(str(exc)))
            first.goto(server.url + "/?delay=0")
            first.wait_for_selector("#account-status:has-text('Not logged in')")
            first.fill("#account-name", "Ulla")
            first.fill("#account-password", PASSWORD)
            first.click("#claim-btn")
            first.wait_for_selector("#account-status:has-text('Logged in as Ulla')")
            assert first.input_value("#player-name") == "Ulla"
            assert axe_violations(first) == []
            first.fill("#table-name", "browser-clock")
            first.select_option("#sets", "1")
            first.select_option("#move-clock", "60")
            first.click("#join-btn")
            first.click("#start-btn")
            first.wait_for_selector("#clock:not([hidden])")
            assert re.match(r"Your move: [01]:\d\d left", first.inner_text("#clock"))
            assert first.is_visible("#seat-link") and axe_violations(first) == []
            token = first.evaluate("ui.session")
            first.context.close()  # the laptop is shut

            other = browser.new_context()  # the phone: another browser, no login
            phone = other.new_page()
            phone.set_default_timeout(15_000)
            phone.on("pageerror", lambda exc: errors.append(str(exc)))
            phone.goto(server.url + f"/?table=browser-clock&seat={token}&delay=0")
            phone.wait_for_selector("#game:not([hidden])")
            assert "seat=" not in phone.url  # the token leaves the address bar
            for _ in range(400):
                if phone.is_visible("#game-over"):
                    break
                move = phone.evaluate("ui.request && ui.request.moves[0]")
                if move:
                    phone.evaluate("m => play(m)", move)
                phone.wait_for_timeout(30)
            phone.wait_for_selector("#game-over:not([hidden])")
            result = phone.inner_text("#game-over")
            assert "Ratings: Ulla" in result and "random" in result and "provisional" in result
            assert phone.is_visible("button.rematch") and axe_violations(phone) == []
            start = other.new_page()  # a new tab of the phone's browser offers to resume
            start.goto(server.url + "/")
            start.wait_for_selector("#resume:not([hidden])")
            assert "browser-clock: Ulla" in start.inner_text("#resume-list")
            assert axe_violations(start) == []
            phone.click("button.rematch")  # against an agent the next game starts at once
            phone.wait_for_selector("#game-over", state="hidden")
        finally:
            browser.close()
    assert not errors, errors
