"""The aiohttp server of the live mode: the page, the WebSocket endpoint ``/ws`` and two small HTTP APIs.

Routes:

* ``GET /`` the page (static HTML, CSS and JavaScript shipped in ``live/static``; no build step);
* ``GET /ws`` the WebSocket endpoint speaking :mod:`live.protocol`;
* ``GET /api/agents`` the agent names the server can seat, with the default opponent;
* ``GET /api/tables`` the open tables (name, seats, spectators, state) to join or watch;
* ``GET /api/games/{id}/analysis`` the post-game analysis (:mod:`live.analysis`), its progress while it runs;
  ``POST`` the same address starts it in the background;
* ``POST /api/accounts`` claims a name with a password (:mod:`live.accounts`; 201, 409 when taken);
  ``POST /api/session`` logs in (the ``mulle_session`` cookie), ``DELETE /api/session`` logs out,
  ``GET /api/session`` says who is logged in;
* ``GET /api/ratings?game=mulle|casino`` the Glicko-2 ratings (:mod:`live.ratings`); ``GET /ratings`` the
  page showing them; ``GET /api/players/{name}`` a player's ratings and history, ``GET /players/{name}`` the
  page with its chart;
* ``POST /api/replay`` a game record or one arena results line (JSON) in, every position out
  (:func:`live.views.replay_frames`);
* ``GET /api/games`` the stored games, newest first, paged (``limit``, ``offset``) and filtered
  (``table``, ``player``); ``GET /api/games/{id}`` one game with its record;
  ``GET /api/games/{id}/record`` the bare game record, byte for byte as stored (a download, or a
  body for ``/api/replay``). 404 when the server keeps no history (:class:`~live.store.GameStore`).

Every HTTP route has per-address limits (:mod:`live.ratelimit`: ``429`` with ``Retry-After``), and
integers beyond 2**53 go out as strings (:func:`live.protocol.js_safe`).

Needs the ``web`` extra (``pip install -e ".[web]"``); the rest of the package does not.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Self

from aiohttp import WSMsgType, web

import agents
from mulle_env.engine.errors import MulleError
from mulle_env.files import JSONInputError, parse_json

from .accounts import COOKIE, SESSION_SECONDS, AccountError
from .games import record_from_dict
from .hub import Connection, Hub, LiveConfig
from .protocol import MAX_SETS, ProtocolError, js_safe, parse
from .ratelimit import RateLimiter
from .store import MAX_PAGE, GameStore
from .views import replay_frames

__all__ = ["ServerThread", "make_app", "start"]

log = logging.getLogger("live")

_HUB = web.AppKey("hub", Hub)
_SOCKETS = web.AppKey("sockets", weakref.WeakSet)
_REPLAY_POOL = web.AppKey("replay_pool", ThreadPoolExecutor)
_RATES = web.AppKey("rates", RateLimiter)
#: Largest replay upload (a record of a long game is a few kB).
MAX_REPLAY_BYTES = 1 << 20
#: Most moves a set can have: every card of the two decks played once (96 after the 8 first loose cards).
MOVES_PER_SET = 104


def _static_dir():
    return resources.files("live") / "static"


async def _index(request: web.Request) -> web.StreamResponse:
    # A seat link carries its token in the address (?seat=...): no other site may see it in a Referer header.
    return web.FileResponse(str(_static_dir() / "index.html"),
                            headers={"Cache-Control": "no-cache", "Referrer-Policy": "same-origin"})


async def _agents(request: web.Request) -> web.Response:
    hub = request.app[_HUB]
    return _json({"default": hub.config.opponent, "agents": agents.available(),
                              "allowed": hub.limits.describe()})


def _json(data, status: int = 200, headers: dict | None = None) -> web.Response:
    """A JSON answer whose integers beyond 2**53 are strings (a JavaScript page's ``res.json()`` keeps them exact)."""
    return web.json_response(js_safe(data), status=status, headers=headers)


def _replay_body(body: bytes) -> tuple[int, str]:
    """Check and replay one upload (in a worker thread: a 10-set game takes a good fraction of a second).

    ``body`` is the request's bytes: one that is not UTF-8, not JSON or nested too deeply is a 400
    that says which in a person's words (the bounded reader), never a 500 or Python's internals.
    """
    try:
        data = parse_json(body, "the request body", max_bytes=MAX_REPLAY_BYTES)
    except JSONInputError as exc:
        return 400, json.dumps({"error": f"not a game record: {exc} (a record is an object with seed, moves and "
                                "optionally ruleset, specs and result)"})
    seed = data.get("seed") if isinstance(data, dict) else None
    if isinstance(seed, str) and seed.isdigit() and len(seed) < 21:
        # The server's own JSON APIs give seeds beyond 2**53 as strings (defect 10): take them back.
        data["seed"] = int(seed)
    try:
        record = record_from_dict(data)  # either game's (live.games: "game": "casino", else Mulle's)
    except MulleError as exc:
        return 400, json.dumps({"error": str(exc)})
    # A Casino round is at most 48 moves and cheap to replay: its bound is the rounds the rules allow.
    sets = getattr(record.ruleset, "sets", 1)
    if sets > MAX_SETS:
        return 413, json.dumps({"error": f"the record's game has {sets} sets; the server replays games of at most "
                                f"{MAX_SETS} sets (as many as a live table plays)"})
    if getattr(record, "game", "mulle") == "casino" and len(record.moves) > 48 * record.ruleset.max_rounds:
        return 400, json.dumps({"error": f"the record has {len(record.moves)} moves; a Casino game of at most "
                                f"{record.ruleset.max_rounds} rounds has at most {48 * record.ruleset.max_rounds}"})
    if getattr(record, "game", "mulle") == "mulle" and len(record.moves) > MOVES_PER_SET * sets:
        return 400, json.dumps({"error": f"the record has {len(record.moves)} moves; a game of {sets} sets has "
                                f"at most {MOVES_PER_SET * sets}"})
    try:
        frames = replay_frames(record)
    except MulleError as exc:
        return 400, json.dumps({"error": str(exc)})
    return 200, json.dumps({"record": js_safe(record.to_dict()), "frames": frames}, separators=(",", ":"))


async def _replay(request: web.Request) -> web.Response:
    if request.content_length is not None and request.content_length > MAX_REPLAY_BYTES:
        return _json({"error": f"a replay upload is at most {MAX_REPLAY_BYTES} bytes"}, status=413)
    body = await request.read()
    # Replaying and encoding every frame is CPU work of up to a second: off the event loop, in a pool of its
    # own (two threads, so a crowd of uploads queues there and never takes the agents' threads).
    status, body = await asyncio.get_running_loop().run_in_executor(request.app[_REPLAY_POOL], _replay_body, body)
    return web.Response(text=body, status=status, content_type="application/json")


async def _ws(request: web.Request) -> web.WebSocketResponse:
    hub = request.app[_HUB]
    limit = hub.config.max_message
    # aiohttp closes the connection (1009) above its own cap; below it, oversized messages get error 1001
    # and the connection goes on. No per-message deflate: the messages are a few kB of JSON, and
    # compressing them cost a quarter of the server's CPU per move in bench_live.py.
    ws = web.WebSocketResponse(max_msg_size=max(limit * 16, 1 << 16), heartbeat=30, compress=False)
    await ws.prepare(request)
    conn = Connection(ws.send_str, request.remote or "")
    if hub.accounts is not None and request.cookies.get(COOKIE):
        # The login of this browser (the cookie came with the upgrade request): a claimed name sits only with it.
        conn.account = await _in_pool(request, hub.accounts.who, request.cookies.get(COOKIE))
    try:
        hub.admit(conn)
    except ProtocolError as exc:
        conn.send(exc.to_message())
        await conn.close()
        await ws.close(code=1008, message=b"too many connections from your address")
        return ws
    request.app[_SOCKETS].add(ws)
    try:
        async for msg in ws:
            if msg.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                try:
                    type_, payload = parse(msg.data, limit)
                except ProtocolError as exc:
                    conn.send(exc.to_message())
                    continue
                hub.handle(conn, type_, payload)
            elif msg.type == WSMsgType.ERROR:
                break
    finally:
        hub.disconnect(conn)
        hub.release(conn)
        await conn.close()
    return ws


def _page_arg(request: web.Request, key: str, default: int, low: int, high: int) -> int:
    text = request.query.get(key)
    if text is None:
        return default
    if not text.isdigit() or not low <= int(text) <= high:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"'{key}' must be a whole number from {low} to {high}, "
                                                  f"not {text[:40]!r}"}), content_type="application/json")
    return int(text)


def _store(request: web.Request) -> GameStore:
    store = request.app[_HUB].store
    if store is None:
        raise web.HTTPNotFound(text=json.dumps({"error": "this server keeps no game history (started without a "
                                                "database)"}), content_type="application/json")
    return store


def _game_id(request: web.Request) -> int:
    text = request.match_info["id"]
    if not text.isdigit() or len(text) > 18:
        why = "a game id is a whole number" if not text.isdigit() else "game ids have at most 18 digits"
        raise web.HTTPNotFound(text=json.dumps({"error": f"no game {text[:40]!r}: {why}"}),
                               content_type="application/json")
    return int(text)


async def _in_pool(request: web.Request, fn, *args):
    # SQLite reads are off the event loop, in the replay pool (not the agents' threads).
    return await asyncio.get_running_loop().run_in_executor(request.app[_REPLAY_POOL], fn, *args)


async def _games(request: web.Request) -> web.Response:
    store = _store(request)
    limit = _page_arg(request, "limit", 20, 1, MAX_PAGE)
    offset = _page_arg(request, "offset", 0, 0, 10**9)
    table = request.query.get("table") or None
    player = request.query.get("player") or None

    def read():
        return {"games": store.games(table, player, limit, offset), "total": store.count(table, player),
                "limit": limit, "offset": offset}
    return _json(await _in_pool(request, read))


async def _game(request: web.Request) -> web.Response:
    gid = _game_id(request)
    game = await _in_pool(request, _store(request).game, gid)
    if game is None:
        return _json({"error": f"no game {gid}"}, status=404)
    return _json(game)


async def _game_record(request: web.Request) -> web.Response:
    gid = _game_id(request)
    text = await _in_pool(request, _store(request).record_text, gid)
    if text is None:
        return _json({"error": f"no game {gid}"}, status=404)
    return web.Response(text=text, content_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="mulle-game-{gid}.json"'})


async def _ratings(request: web.Request) -> web.Response:
    """The Glicko-2 ratings of one game (``?game=mulle``, the default, or ``casino``), best first: ``name``,
    ``rating``, ``rd``, ``games``, ``provisional`` and more (see :mod:`live.ratings`)."""
    from .ratings import GAMES

    store = _store(request)
    game = request.query.get("game", "mulle")
    if game not in GAMES:
        return _json({"error": f"'game' must be one of {', '.join(GAMES)}, not {game[:40]!r}"}, status=400)
    rows = await _in_pool(request, store.ratings, game)
    out: dict = {"game": game, "players": [_rating_out(r) for r in rows]}
    player = request.query.get("player")
    if player:  # issue 33's form: one player's history beside the list (GET /api/players/NAME has all of it)
        from .ratings import person_key

        changes = await _in_pool(request, store.rating_history, person_key(player[:64]))
        out["player"] = player[:64]
        out["history"] = [{"game_id": h["game_id"], "at": _iso(h["at"]), "rating": round(h["rating"], 1),
                           "rd": round(h["rd"], 1), "result": h["result"], "opponent": h["opponent"]}
                          for h in reversed(changes) if h["game"] == game]
    return _json(out)


def _rating_out(r: dict) -> dict:
    from .ratings import PROVISIONAL_GAMES, PROVISIONAL_RD

    return {"key": r["key"], "name": r["name"], "kind": r["kind"], "rating": round(r["rating"], 1),
            "rd": round(r["rd"], 1), "games": r["games"], "wins": r["wins"], "draws": r["draws"],
            "losses": r["losses"], "provisional": r["games"] < PROVISIONAL_GAMES or r["rd"] > PROVISIONAL_RD,
            "last_played": _iso(r["last_at"])}


def _iso(t: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


async def _player(request: web.Request) -> web.Response:
    """A player's ratings in each game and every rated game's change, oldest first (``/api/players/{name}``; an
    agent by ``agent:SPEC``). 404 for a name with no rated game."""
    from .ratings import GAMES, agent_key, person_key

    store = _store(request)
    name = request.match_info["name"]
    if len(name) > 240:
        return _json({"error": "a player's name has at most 32 characters (an agent's spec at most 200)"}, 404)
    key = agent_key(name[6:]) if name.startswith("agent:") else person_key(name)

    def read() -> dict | None:
        ratings = {g: next((r for r in store.ratings(g) if r["key"] == key), None) for g in GAMES}
        if not any(ratings.values()):
            return None
        history = store.rating_history(key)
        shown = next(r["name"] for r in ratings.values() if r)
        return {"name": shown, "key": key, "kind": key.split(":", 1)[0],
                "ratings": {g: (_rating_out(r) if r else None) for g, r in ratings.items()},
                "history": {g: [{"game_id": h["game_id"], "at": _iso(h["at"]), "before": round(h["before"], 1),
                                 "rating": round(h["rating"], 1), "rd": round(h["rd"], 1), "result": h["result"],
                                 "opponent": h["opponent"], "opponent_key": h["opponent_key"]}
                                for h in history if h["game"] == g] for g in GAMES}}
    out = await _in_pool(request, read)
    if out is None:
        return _json({"error": f"no rated games for {name[:40]!r} (ratings are for claimed names and the agents)"},
                     status=404)
    return _json(out)


async def _ratings_page(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(str(_static_dir() / "ratings.html"), headers={"Cache-Control": "no-cache"})


async def _player_page(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(str(_static_dir() / "player.html"), headers={"Cache-Control": "no-cache"})


async def _account_body(request: web.Request) -> tuple[object, object]:
    if request.content_length is not None and request.content_length > 4096:
        raise AccountError("the request body is at most 4096 bytes", 413)
    body = await request.read()
    try:
        data = parse_json(body, "the request body", max_bytes=4096)
    except JSONInputError as exc:
        raise AccountError(f"{exc}; send JSON {{\"name\": \"...\", \"password\": \"...\"}}") from None
    if not isinstance(data, dict):
        raise AccountError('send JSON {"name": "...", "password": "..."}')
    return data.get("name"), data.get("password")


def _accounts(request: web.Request):
    accounts = request.app[_HUB].accounts
    if accounts is None:
        raise web.HTTPNotFound(text=json.dumps({"error": "this server keeps no accounts (started without a "
                                                "database)"}), content_type="application/json")
    return accounts


async def _create_account(request: web.Request) -> web.Response:
    """``POST /api/accounts`` ``{"name", "password"}``: claim the name (201), 409 when it is claimed already."""
    accounts = _accounts(request)
    try:
        name, password = await _account_body(request)
        kept = await _in_pool(request, accounts.create, name, password)
    except AccountError as exc:
        return _json({"error": str(exc)}, status=exc.status)
    log.info("account claimed: %r", kept)
    return _json({"name": kept}, status=201)


async def _login(request: web.Request) -> web.Response:
    """``POST /api/session`` ``{"name", "password"}``: log in (the login cookie), 401 for a wrong pair. Limited per
    address (the middleware) and per name (here, whatever the address: guessing one account's password from many
    addresses is slow too)."""
    accounts = _accounts(request)
    rates = request.app[_RATES]
    try:
        name, password = await _account_body(request)
        if isinstance(name, str):
            key = "name:" + name.strip().casefold()[:64]
            wait = rates.acquire(key, "login_name")
            if wait is not None:
                text, seconds = rates.message("login_name", wait)
                return _json({"error": text}, status=429, headers={"Retry-After": str(seconds)})
            rates.release(key, "login_name")
        token, kept = await _in_pool(request, accounts.login, name, password)
    except AccountError as exc:
        return _json({"error": str(exc)}, status=exc.status)
    config = request.app[_HUB].config
    secure = config.cookie_secure == "always" or (config.cookie_secure == "auto" and request.secure)
    response = _json({"name": kept})
    response.set_cookie(COOKIE, token, max_age=SESSION_SECONDS, path="/", httponly=True, samesite="Strict",
                        secure=secure)
    return response


async def _logout(request: web.Request) -> web.Response:
    """``DELETE /api/session``: log out (the session ends on the server and the cookie is removed)."""
    accounts = _accounts(request)
    token = request.cookies.get(COOKIE)
    if token:
        await _in_pool(request, accounts.logout, token)
    response = web.Response(status=204)
    response.del_cookie(COOKIE, path="/")
    return response


async def _whoami(request: web.Request) -> web.Response:
    """``GET /api/session``: ``{"name": the account logged in, or null}`` (the cookie is HttpOnly: the page asks)."""
    accounts = request.app[_HUB].accounts
    token = request.cookies.get(COOKIE)
    name = await _in_pool(request, accounts.who, token) if accounts is not None and token else None
    return _json({"name": name, "accounts": accounts is not None})


async def _tables(request: web.Request) -> web.Response:
    """The open tables (:meth:`live.lobby.Lobby.listing`): the start page lists them with Join and Watch."""
    return _json({"tables": request.app[_HUB].lobby.listing()})


async def _analysis(request: web.Request) -> web.Response:
    """``GET``: the game's analysis (200, ``status`` ``done``), its progress (202), or 404 when none was asked for;
    ``POST``: start it in the background (202 with the progress; 200 when it is kept already)."""
    gid = _game_id(request)
    store = _store(request)
    analyses = request.app[_HUB].analyses
    assert analyses is not None  # there is a store
    game = await _in_pool(request, store.game, gid)
    if game is None:
        return _json({"error": f"no game {gid}"}, status=404)
    # The job's status before the store: a job that ends in between is in the store when it is read (the job
    # writes the store, then leaves the list). The other order answered 404 "none" for a finished analysis.
    job = analyses.status(gid)
    kept = await _in_pool(request, store.analysis, gid)
    if kept is not None:
        return _json({"status": "done", "game_id": gid, **kept})
    if request.method == "POST" and (job is None or job["status"] == "failed"):
        try:
            job = analyses.start(gid)
        except OverflowError as exc:
            return _json({"error": str(exc)}, status=429, headers={"Retry-After": "30"})
    if job is None:
        return _json({"status": "none", "game_id": gid,
                      "error": f"game {gid} has not been analysed; POST to this address to start"}, status=404)
    if job["status"] == "failed":
        return _json({"game_id": gid, **job}, status=500)
    return _json({"game_id": gid, **job}, status=202)


async def _on_shutdown(app: web.Application) -> None:
    for ws in list(app[_SOCKETS]):
        await ws.close(code=1001, message=b"server shutting down")
    app[_HUB].shutdown()
    app[_REPLAY_POOL].shutdown(wait=False, cancel_futures=True)


def _route_class(request: web.Request) -> str | None:
    """Which :data:`~live.ratelimit.HTTP_LIMITS` class a request counts against (``None``: ``/ws``, which has its
    own per-address limits)."""
    path = request.path
    if path == "/ws":
        return None
    if path == "/api/replay":
        return "replay"
    if path.endswith("/analysis") and request.method == "POST":
        return "analysis"
    if path == "/api/session" and request.method == "POST":
        return "login"
    if path == "/api/accounts" and request.method == "POST":
        return "account"
    return "api" if path.startswith("/api/") else "page"


@web.middleware
async def _limit(request: web.Request, handler):
    """Per-address limits on every HTTP route (issue 33, defect 4): 429 with ``Retry-After`` beyond them."""
    kind = _route_class(request)
    address = request.remote or ""
    if kind is None or not request.app[_HUB].limited(address):
        return await handler(request)
    rates = request.app[_RATES]
    wait = rates.acquire(address, kind)
    if wait is not None:
        text, seconds = rates.message(kind, wait)
        return _json({"error": text}, status=429, headers={"Retry-After": str(seconds)})
    try:
        return await handler(request)
    finally:
        rates.release(address, kind)


def make_app(config: LiveConfig | None = None) -> web.Application:
    """The aiohttp application serving the page, ``/ws`` and the APIs with a fresh :class:`Hub`."""
    # Bodies: at most 1 MiB (a replay upload); every other route is a GET and reads none.
    app = web.Application(client_max_size=MAX_REPLAY_BYTES, middlewares=[_limit])
    app[_RATES] = RateLimiter()
    app[_HUB] = Hub(config)
    app[_SOCKETS] = weakref.WeakSet()
    app[_REPLAY_POOL] = ThreadPoolExecutor(2, thread_name_prefix="live-replay")
    app.router.add_get("/", _index)
    app.router.add_get("/ws", _ws)
    app.router.add_get("/api/agents", _agents)
    app.router.add_get("/api/tables", _tables)
    app.router.add_get("/api/ratings", _ratings)
    app.router.add_get("/ratings", _ratings_page)
    app.router.add_get("/api/players/{name}", _player)
    app.router.add_get("/players/{name}", _player_page)
    app.router.add_post("/api/accounts", _create_account)
    app.router.add_post("/api/session", _login)
    app.router.add_delete("/api/session", _logout)
    app.router.add_get("/api/session", _whoami)
    app.router.add_post("/api/replay", _replay)
    app.router.add_get("/api/games", _games)
    app.router.add_get("/api/games/{id}", _game)
    app.router.add_get("/api/games/{id}/record", _game_record)
    app.router.add_get("/api/games/{id}/analysis", _analysis)
    app.router.add_post("/api/games/{id}/analysis", _analysis)
    app.router.add_static("/static/", str(_static_dir()))
    app.on_shutdown.append(_on_shutdown)
    return app


def hub_of(app: web.Application) -> Hub:
    """The :class:`Hub` of an app made by :func:`make_app` (for tests and tools in the same process)."""
    return app[_HUB]


async def start(config: LiveConfig | None = None, host: str = "127.0.0.1", port: int = 8000
                ) -> tuple[web.AppRunner, str]:
    """Start serving on ``host:port`` (port 0 picks a free one); return the runner and the base URL."""
    app = make_app(config)
    restored = app[_HUB].restore()  # games in progress a killed server left (live.recovery)
    if restored:
        log.warning("restored %d game(s) in progress: %s", len(restored), ", ".join(map(repr, restored)))
    # No access log: a seat link carries its token in the address (?seat=...), and nothing secret is logged.
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0][1] if port == 0 else port
    return runner, f"http://{host}:{bound}"


class ServerThread:
    """A live server on its own event loop in a background thread (for tests, benchmarks and scripts).

    >>> with ServerThread(LiveConfig(grace=1)) as srv:  # doctest: +SKIP
    ...     print(srv.url)

    Attributes:
        url: ``http://host:port`` once started.
        hub: The server's :class:`Hub` (touch it only through ``call``).
    """

    def __init__(self, config: LiveConfig | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.config, self.host, self.port = config, host, port
        self.url: str = ""
        self.hub: Hub | None = None
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="live-server", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        self._runner, self.url = asyncio.run_coroutine_threadsafe(
            start(self.config, self.host, self.port), self._loop).result(30)
        self.hub = hub_of(self._runner.app)
        return self

    def call(self, fn, *args):
        """Run ``fn(*args)`` on the server's loop and return its result."""
        async def run():
            return fn(*args)
        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
