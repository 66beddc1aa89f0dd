"""Tables, seats, sessions and the game loop of the live mode, independent of the web framework.

The :class:`Hub` owns every :class:`Table` by name and every person's session. A transport
(the aiohttp server in :mod:`live.server`, or anything else) hands it each checked client
message with :meth:`Hub.handle` and tells it when a connection closes with
:meth:`Hub.disconnect`; the hub answers through :class:`Connection` objects, whose
``send`` never blocks (each connection has its own writer task).

A table runs one :class:`~mulle_env.engine.match.Match` at a time, advanced by the engine's one
game loop (:class:`~mulle_env.engine.loop.GameLoop`). Seats are held by a person or by an agent
(built by spec with ``agents.make``). For an agent's move the table asks the loop
(:meth:`GameLoop.ask <mulle_env.engine.loop.GameLoop.ask>`), runs ``act`` in a thread pool with
a time limit so no table ever waits on another, and hands the answer to
:meth:`GameLoop.commit <mulle_env.engine.loop.GameLoop.commit>`; an agent that crashes, overruns,
or that the loop refuses (``IllegalMoveError``, ``AgentError``) is replaced by the fallback agent
for the rest of the game. A person's move goes through the loop's ``play``. Everything on the
event loop is cheap: building views and sending JSON.

A finished game is written to the :class:`~live.store.GameStore` (when the server has one) in a
thread of its own, and ``game_over`` is sent only once it is committed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import json
import logging
import math
import random
import secrets
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import agents
from mulle_env.engine.cards import CARD_NAMES
from mulle_env.engine.errors import AgentError, IllegalMoveError, MulleError
from mulle_env.engine.loop import GameLoop, ruleset_refusal
from mulle_env.engine.match import Match, MoveEvent
from mulle_env.engine.moves import Move
from mulle_env.engine.rng import SEED_MAX
from mulle_env.engine.ruleset import Ruleset

from .limits import DEFAULT_AGENT_LIMITS, AgentLimits
from .protocol import PROTOCOL_VERSION, ErrorCode, ProtocolError, message
from .store import FinishedGame, GameStore
from .views import move_previews, seat_view, spectator_view

__all__ = ["Connection", "Hub", "LiveConfig", "Person", "Table"]

log = logging.getLogger("live")

#: Agents fast enough (microseconds a move) to play on the event loop: the fallback must be one of them.
INLINE_AGENTS = ("random", "heuristic", "greedy")

#: Table names starting with this are agents' tables made by ``watch``; people cannot sit there.
WATCH_PREFIX = "watch-"


@dataclass(frozen=True)
class LiveConfig:
    """Server settings (the ``mulle-serve`` flags).

    Attributes:
        opponent: Default agent spec for empty seats.
        grace: Seconds a dropped person keeps the seat before an agent takes it.
        close_after: Seconds a table without people stays open (for a reconnect) before it closes.
        max_tables: Tables (people's and agents') the server holds at once.
        max_watchers: Spectator connections per table.
        max_message: Largest client message accepted, in bytes (larger ones get error 1001).
        move_time: Seconds an agent may think about one move before the fallback replaces it.
        agent_delay: Default seconds an agent waits before moving (so people see each move).
        fallback: Agent spec that replaces a crashed or slow agent; it plays on the event loop, so it must
            be one of the instant agents (:data:`INLINE_AGENTS`).
        workers: Threads agents think in.
        agent_limits: The agent specs people may choose (see :mod:`live.limits`); ``opponent`` is always allowed.
            Checked when the config is made; ``limits`` holds them as an :class:`~live.limits.AgentLimits`.
        db: Path of the game store (:class:`~live.store.GameStore`); ``None`` keeps no history.
        max_tables_per_address: Tables (people's and agents') one client address may have open at once.
        max_connections_per_address: WebSocket connections one client address may hold at once.
        trust_loopback: Exempt loopback addresses (127.0.0.0/8, ::1) from the per-address limits (a reverse
            proxy on the same machine, a benchmark); off by default, so a local client is limited like any other.
    """

    opponent: str = "heuristic"
    grace: float = 20.0
    close_after: float = 2.0
    max_tables: int = 1000
    max_watchers: int = 8
    max_message: int = 4096
    move_time: float = 10.0
    agent_delay: float = 0.0
    fallback: str = "random"
    workers: int = 4
    agent_limits: tuple[str, ...] = DEFAULT_AGENT_LIMITS
    db: str | None = None
    max_tables_per_address: int = 4
    max_connections_per_address: int = 16
    trust_loopback: bool = False

    def __post_init__(self) -> None:
        for name in ("grace", "close_after", "move_time", "agent_delay"):
            value = getattr(self, name)
            # not (value >= 0) also refuses NaN, which every comparison lets through and which
            # loop.call_later turns into "never" or "at once".
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of seconds, at least 0, not {value!r}")
        for name in ("max_tables", "max_watchers", "max_message", "workers", "max_tables_per_address",
                     "max_connections_per_address"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)!r}")
        # make, not just canonical: a spec the agent refuses (pimc:samples=0) must fail here, not at a game's start.
        agents.make(self.opponent)
        agents.make(self.fallback)
        # Canonical, so the server's own opponent is recognized however it was written (it is exempt from the limits).
        object.__setattr__(self, "opponent", agents.canonical(self.opponent))
        if agents.parse_spec(self.fallback)[0] not in INLINE_AGENTS:
            raise ValueError(f"fallback must be one of the instant agents {', '.join(INLINE_AGENTS)} (it plays on "
                             f"the event loop), not {self.fallback!r}")
        object.__setattr__(self, "agent_limits", tuple(self.agent_limits))
        object.__setattr__(self, "limits", AgentLimits(self.agent_limits))


class Connection:
    """One client connection as the hub sees it: an outgoing queue drained by a writer task.

    Args:
        send_text: Coroutine function that sends one text frame (e.g. ``ws.send_str``).
        address: The client's address (the per-address limits count by it).
    """

    def __init__(self, send_text: Callable[[str], Awaitable], address: str = "") -> None:
        self._send_text = send_text
        self.address = address
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.person: Person | None = None
        self.watching: Table | None = None
        self.closed = False
        self._writer = asyncio.get_running_loop().create_task(self._write())

    def send(self, msg: dict) -> None:
        """Queue ``msg`` (a protocol message dict); never blocks, dropped once the connection is closed."""
        if not self.closed:
            self._queue.put_nowait(json.dumps(msg, separators=(",", ":")))

    async def _write(self) -> None:
        while True:
            text = await self._queue.get()
            if text is None:
                return
            try:
                await self._send_text(text)
            except Exception:  # noqa: BLE001 - the peer went away; the reader side reports the close
                self.closed = True
                return

    async def close(self) -> None:
        """Stop the writer after the queued messages are sent."""
        if not self._writer.done():
            self._queue.put_nowait(None)
            try:
                await asyncio.wait_for(self._writer, 2)
            except (TimeoutError, asyncio.CancelledError):
                self._writer.cancel()
        self.closed = True


class Person:
    """A person holding a seat (connected, or dropped and inside the grace period)."""

    def __init__(self, name: str, table: Table, seat: int) -> None:
        self.name = name
        self.table = table
        self.seat = seat
        self.session_id = secrets.token_urlsafe(18)
        self.conn: Connection | None = None
        self.grace: asyncio.TimerHandle | None = None
        #: Request ids sent to this person that are no longer current (to tell "stale" from "unknown").
        self.old_requests: deque[str] = deque(maxlen=256)


class _Seat:
    def __init__(self, index: int, spec: str) -> None:
        self.index = index
        self.person: Person | None = None
        self.spec = spec
        self.agent = None
        self.rng: random.Random | None = None
        #: The agent plays on the event loop (the fallback after a failure), never in the pool.
        self.inline = False

    def public(self) -> dict:
        p = self.person
        if p is None:
            return {"seat": self.index, "kind": "agent", "name": self.spec, "connected": True}
        return {"seat": self.index, "kind": "person", "name": p.name, "connected": p.conn is not None}


class Table:
    """A named table: two seats, a lobby, and at most one running game (see the module docstring)."""

    def __init__(self, hub: Hub, name: str, opponent: str, seed: int | None, sets: int | None,
                 agent_delay: float, watch: bool = False, specs: list[str] | None = None, address: str = "") -> None:
        self.hub = hub
        self.name = name
        #: The client address that opened the table (the per-address table limit counts by it).
        self.address = address
        self.watch = watch
        self.opponent = opponent
        self.seats = [_Seat(i, specs[i] if specs else opponent) for i in (0, 1)]
        self.watchers: set[Connection] = set()
        self.host: Person | None = None
        self.ruleset = Ruleset(sets=sets) if sets else Ruleset()
        # A chosen seed deals this table's games (seed, seed+1, ...) only while at most one person can
        # know it: game_over publishes each game's seed, so with two people the next deal would be
        # computable by both (and the opener knew every deal). A second person switches to fresh seeds.
        # seed, seed + 1, ... wrapping at the top of the one seed domain (docs/engine.md, "Seeds").
        self._seeds = (s % (SEED_MAX + 1) for s in itertools.count(seed)) if seed is not None else None
        #: Whether the running game (or, in the lobby, the next one) deals from a chosen seed (table info).
        self.seeded = self._seeds is not None
        self._seated_before = False
        #: A move still running in a worker past its time limit (at most one per table holds a thread).
        self._overrun = None
        self.agent_delay = agent_delay
        self.match: Match | None = None
        #: The one game loop advancing :attr:`match` (a person's seat holds ``None`` there).
        self.loop: GameLoop | None = None
        #: Per seat, who held it from which move on in the running game: ``[(from_move, name, kind), ...]``.
        self.holders: list[list[tuple[int, str, str]]] = [[], []]
        #: The last game's ``game_over`` data, sent again to a page that (re)joins in the lobby after it.
        self.last_over: dict | None = None
        #: "lobby", "playing", or "saving" (the finished game is being committed to the store).
        self.phase = "lobby"
        self.games = 0
        self.request: tuple[str, int] | None = None
        self._token = 0
        self._agent_token = -1
        self._agent_task: asyncio.Task | None = None
        self._close_handle: asyncio.TimerHandle | None = None
        self.closed = False

    # ----- who is here -----------------------------------------------------------------
    def people(self) -> list[Person]:
        """People holding seats (connected or within the grace period)."""
        return [s.person for s in self.seats if s.person is not None]

    def seats_public(self) -> list[dict]:
        """The seats as everyone may see them."""
        return [s.public() for s in self.seats]

    def _audience(self) -> bool:
        return bool(self.watchers) or any(p.conn is not None for p in self.people())

    def info(self) -> dict:
        """Table facts for confirmations and lobby notifications."""
        return {
            "table_name": self.name, "phase": self.phase, "seats": self.seats_public(),
            "host": self.host.name if self.host else None, "opponent": self.opponent, "games": self.games,
            "watch": self.watch, "agent_delay_ms": round(self.agent_delay * 1000), "seeded": self.seeded,
        }

    # ----- sending ---------------------------------------------------------------------
    def _view_for_seat(self, seat: int) -> dict | None:
        return seat_view(self.match.state, seat) if self.match is not None else None

    def _spectator(self) -> dict | None:
        return spectator_view(self.match.state, self.watch) if self.match is not None else None

    def notify(self, event: str, data: dict, with_view: bool = True) -> None:
        """Send the notification ``event`` to everyone here; game events carry each one's own view."""
        for p in self.people():
            if p.conn is not None:
                payload = {"event": event, "data": data}
                if with_view:
                    payload["view"] = self._view_for_seat(p.seat)
                p.conn.send(message("notification", payload))
        if self.watchers:
            payload = {"event": event, "data": data}
            if with_view:
                payload["view"] = self._spectator()
            msg = message("notification", payload)
            for w in self.watchers:
                w.send(msg)

    def _history(self) -> list[dict]:
        # Every move so far is public: a (re)joining page rebuilds its move list from it, each move
        # credited to whoever held the seat then (not to whoever holds it now).
        return [self._event_dict(e) for e in self.match.history] if self.match is not None else []

    def _event_dict(self, event: MoveEvent) -> dict:
        data = event.to_dict()
        data["by"] = self.played_by(event.player, event.number)
        return data

    def played_by(self, seat: int, number: int) -> dict | None:
        """Who held ``seat`` when move ``number`` was played: ``{"name", "kind"}`` (``None`` before any game)."""
        held = None
        for frm, name, kind in self.holders[seat]:
            if frm > number:
                break
            held = {"name": name, "kind": kind}
        return held

    def _holder_changed(self, seat: int) -> None:
        # Called after a seat changes hands: from the next move on it is played by its new holder.
        if self.match is None or self.phase != "playing":
            return
        s = self.seats[seat]
        who = (s.person.name, "person") if s.person is not None else (s.spec, "agent")
        nxt = len(self.match.history) + 1
        entries = self.holders[seat]
        if entries and entries[-1][0] == nxt:
            entries.pop()  # nobody moved in between: only the last holder counts
        if not entries or entries[-1][1:] != who:
            entries.append((nxt, *who))

    def _send_request(self, person: Person) -> None:
        request_id, seat = self.request
        legal = self.match.legal_moves()
        person.conn.send(message("request", {
            "request_id": request_id, "action": "play", "view": self._view_for_seat(seat),
            "context": {"legal_moves": [str(m) for m in legal], "previews": move_previews(self.match.state, legal)},
        }))

    # ----- joining and leaving ---------------------------------------------------------
    def seat_person(self, name: str, conn: Connection) -> Person:
        """Put a new person in a free seat (one an agent holds); raise ProtocolError 2003/2004."""
        if any(p.name.casefold() == name.casefold() for p in self.people()):
            raise ProtocolError(ErrorCode.NAME_TAKEN, f"the name {name!r} is taken at table {self.name!r}; "
                                "choose another", {"player_name": name})
        free = [s for s in self.seats if s.person is None]
        if not free:
            raise ProtocolError(ErrorCode.TABLE_FULL, f"table {self.name!r} has two people already; "
                                "pick another table name", {"table_name": self.name})
        seat = free[0]
        if self._seated_before and self.seeded and self.phase != "lobby":
            # Issue 24, defect 2: the opener chose (so knows) this game's seed; with it and the public moves
            # every hand can be computed. Nobody else may sit in it; watching shows no hand, so it is fine.
            raise ProtocolError(ErrorCode.TABLE_FULL, f"table {self.name!r} is playing a game dealt from a seed its "
                                "opener chose, so its cards are known to them: you may watch it, or sit down when "
                                "this game ends (the next one is dealt from a fresh seed)",
                                {"table_name": self.name, "reason": "seeded game running"})
        if self._seated_before and self._seeds is not None:
            # Anyone after the opener (even one who sits down after the opener left) must not be dealt
            # from a seed the opener chose: the next game's deal comes from a fresh seed.
            self._seeds = None
            if self.phase != "playing":
                self.seeded = False
        self._seated_before = True
        person = Person(name, self, seat.index)
        seat.person = person
        seat.agent = None
        if self.loop is not None:
            self.loop.seat(seat.index, None)
        self._holder_changed(seat.index)
        if self.host is None:
            self.host = person
        self.hub.sessions[person.session_id] = person
        self._cancel_close()
        self._attach(person, conn, rejoin=False)
        self.notify("player_joined", {"player_index": seat.index, "player_name": name, "replaced": seat.spec,
                                      "table": self.info()}, with_view=False)
        self._turn_changed_for_seat(seat.index)
        return person

    def _attach(self, person: Person, conn: Connection, rejoin: bool) -> None:
        person.conn = conn
        conn.person = person
        conn.send(message("joined_confirmation", {
            "protocol_version": PROTOCOL_VERSION, "session_id": person.session_id, "player_name": person.name,
            "seat": person.seat, "host": self.host is person, "rejoined": rejoin, "table": self.info(),
            "view": self._view_for_seat(person.seat),
            "history": self._history(), "last_game": self._last_game(),
        }))

    def rejoin(self, person: Person, conn: Connection) -> None:
        """Give a returning person their seat and the position back (the pending request too)."""
        if person.grace is not None:
            person.grace.cancel()
            person.grace = None
        old = person.conn
        if old is not None and old is not conn:
            old.person = None
            old.send(ProtocolError(ErrorCode.ALREADY_ON_TABLE, "this session continued on another connection "
                                   "(another tab or window); take it back from there or here",
                                   {"player_index": person.seat, "reason": "continued elsewhere",
                                    "table_name": self.name}).to_message())
        self._cancel_close()
        self._attach(person, conn, rejoin=True)
        self.notify("player_reconnected", {"player_index": person.seat, "player_name": person.name,
                                           "table": self.info()}, with_view=False)
        if self.request is not None and self.request[1] == person.seat:
            self._send_request(person)
        else:
            self._advance()

    def dropped(self, person: Person) -> None:
        """The person's connection closed without ``leave``: keep the seat for the grace period."""
        person.conn = None
        self.notify("player_dropped", {"player_index": person.seat, "player_name": person.name,
                                       "grace": self.hub.config.grace, "table": self.info()}, with_view=False)
        loop = asyncio.get_running_loop()
        person.grace = loop.call_later(self.hub.config.grace, self._grace_over, person)
        self._maybe_close()

    def _grace_over(self, person: Person) -> None:
        person.grace = None
        if self.seats[person.seat].person is person and person.conn is None:
            self.hub.expired.add(person.session_id)
            self.remove(person, "timeout")

    def remove(self, person: Person, reason: str) -> None:
        """The person leaves (``leave``, or the grace period ran out): an agent takes the seat at once."""
        seat = self.seats[person.seat]
        if seat.person is not person:
            return
        if person.grace is not None:
            person.grace.cancel()
            person.grace = None
        if person.conn is not None:
            person.conn.person = None
            person.conn = None
        self.hub.sessions.pop(person.session_id, None)
        seat.person = None
        seat.spec = self.opponent
        if self.host is person:
            others = self.people()
            self.host = others[0] if others else None
        if self.request is not None and self.request[1] == seat.index:
            person.old_requests.append(self.request[0])
            self.request = None
        self._token += 1
        if self.match is not None and self.phase == "playing":
            self._new_agent(seat)
            self._holder_changed(seat.index)
        self.notify("player_left", {"player_index": seat.index, "player_name": person.name, "reason": reason,
                                    "replaced_by_name": seat.spec, "table": self.info()}, with_view=False)
        self._maybe_close()
        self._advance()

    def add_watcher(self, conn: Connection) -> None:
        """A spectator connection; both hands are shown only at agents' tables."""
        if len(self.watchers) >= self.hub.config.max_watchers:
            raise ProtocolError(ErrorCode.TABLE_FULL, f"table {self.name!r} has its {self.hub.config.max_watchers} "
                                "spectators already", {"table_name": self.name})
        self.watchers.add(conn)
        conn.watching = self
        self._cancel_close()
        conn.send(message("watch_confirmation", {
            "protocol_version": PROTOCOL_VERSION, "table": self.info(), "view": self._spectator(),
            "history": self._history(), "last_game": self._last_game(),
        }))
        self._advance()

    def remove_watcher(self, conn: Connection) -> None:
        """A spectator leaves; an agents' table with nobody watching closes at once."""
        self.watchers.discard(conn)
        conn.watching = None
        if self.watch and not self.watchers:
            self.close()
        else:
            self._maybe_close()

    # ----- closing ---------------------------------------------------------------------
    def _maybe_close(self) -> None:
        if self.people() or self.watchers or self.closed:
            return
        if self._close_handle is None:
            loop = asyncio.get_running_loop()
            self._close_handle = loop.call_later(self.hub.config.close_after, self.close)

    def _cancel_close(self) -> None:
        if self._close_handle is not None:
            self._close_handle.cancel()
            self._close_handle = None

    def close(self) -> None:
        """Close the table now: stop its agent, drop it from the hub."""
        self._close_handle = None
        if self.people() and any(p.conn is not None for p in self.people()):
            return  # someone came back in time
        self.closed = True
        self._token += 1
        if self._agent_task is not None:
            self._agent_task.cancel()
        for p in self.people():
            self.hub.sessions.pop(p.session_id, None)
            self.hub.expired.add(p.session_id)
            if p.grace is not None:
                p.grace.cancel()
        for w in list(self.watchers):
            w.watching = None
        self.watchers.clear()
        if self.hub.tables.get(self.name) is self:
            del self.hub.tables[self.name]
            self.hub.table_closed(self)

    # ----- the lobby ---------------------------------------------------------------------
    def lobby_action(self, person: Person, action: str, opponent: str | None) -> None:
        """``start_game`` or ``set_opponent`` by the host (4001 otherwise; 4000 while a game runs)."""
        if self.phase != "lobby":
            raise ProtocolError(ErrorCode.GAME_ALREADY_STARTED,
                                f"the game at table {self.name!r} has started; lobby actions wait for its end",
                                {"action": action})
        if self.host is not person:
            raise ProtocolError(ErrorCode.NOT_LOBBY_HOST, f"only the host ({self.host.name if self.host else '-'}) "
                                f"may {action.replace('_', ' ')}", {"action": action})
        if action == "set_opponent":
            spec = self.hub.checked_spec(opponent, {"action": action, "opponent": opponent}, self.ruleset)
            self.opponent = spec
            for s in self.seats:
                if s.person is None:
                    s.spec = spec
            self.notify("lobby_update", {"action": "set_opponent", "table": self.info()}, with_view=False)
            return
        self.start_game()

    def start_game(self) -> None:
        """Deal a new game and start the loop."""
        self.seeded = self._seeds is not None
        seed = next(self._seeds) if self._seeds is not None else secrets.randbits(63)
        specs = [f"person:{s.person.name}" if s.person else s.spec for s in self.seats]
        self.match = Match(seed, self.ruleset, specs)
        self.loop = GameLoop(self.match, [None, None])
        self.phase = "playing"
        self.games += 1
        self.last_over = None
        self.request = None
        self._token += 1
        self.holders = [[], []]
        for s in self.seats:
            if s.person is None:
                self._new_agent(s)
            self._holder_changed(s.index)
        self.notify("lobby_update", {"action": "start_game", "table": self.info()}, with_view=False)
        self.notify("game_started", {"game": self.games, "seats": self.seats_public()})
        self.notify("deal", self._deal_data())
        self.notify("player_turn_changed", {"current_turn_index": self.match.to_move}, with_view=False)
        self._advance()

    def _new_agent(self, seat: _Seat, spec: str | None = None, inline: bool = False) -> None:
        spec = spec or seat.spec
        seat.inline = inline
        try:
            seat.agent = agents.make(spec)
        except ValueError:  # a spec that built once fails no more, but a table must never stop
            log.exception("agent %r could not be built; seat %d falls back to %r", spec, seat.index,
                          self.hub.config.fallback)
            spec = self.hub.config.fallback
            seat.agent = agents.make(spec)
            seat.inline = True
        seat.spec = spec
        seat.rng = random.Random(f"{self.match.seed}:{seat.index}:{spec}:{len(self.match.history)}")
        # An agent taking over mid-game is reset and hears the moves so far (agents that track history need
        # them); the loop tells it every move from here on.
        reset = getattr(seat.agent, "reset", None)
        if reset is not None:
            reset()
        observe = getattr(seat.agent, "observe", None)
        if observe is not None:
            for e in self.match.history:
                observe((e.player, e.move))
        self.loop.seat(seat.index, seat.agent, seat.rng, spec)

    def _deal_data(self) -> dict:
        st = self.match.state
        return {"set": st.set_no, "deal": st.deal_no, "deck_size": len(st.deck), "leader": st.to_move}

    # ----- moves -----------------------------------------------------------------------
    def respond(self, person: Person, request_id: str, text: str) -> None:
        """A person's move: checked (3002 not their turn, 3000 stale or illegal, 3001 card not held) and played."""
        if self.phase != "playing" or self.match is None:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, "no game is running at this table", {}, request_id)
        if self.match.to_move != person.seat:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, f"it is seat {self.match.to_move}'s turn, not yours "
                                f"(seat {person.seat})", {"current_turn_index": self.match.to_move}, request_id)
        if self.request is None or request_id != self.request[0]:
            stale = request_id in person.old_requests
            raise ProtocolError(ErrorCode.INVALID_ACTION,
                                ("that request was already answered or withdrawn; answer the current one"
                                 if stale else "no request with that id was sent to you"),
                                {"reason": "stale request" if stale else "unknown request",
                                 "current_request_id": self.request[0] if self.request else None}, request_id)
        try:
            move = Move.from_str(text)
        except MulleError as exc:
            raise ProtocolError(ErrorCode.INVALID_ACTION, str(exc), {"move": text[:200]}, request_id) from None
        hand = self.match.state.hands[person.seat]
        if move.card not in hand:
            raise ProtocolError(ErrorCode.INVALID_CARDS, f"you do not hold {CARD_NAMES[move.card]}; your hand: "
                                f"{', '.join(CARD_NAMES[f] for f in hand)}",
                                {"card": CARD_NAMES[move.card], "move": text[:200]}, request_id)
        try:
            event, failed = self._through_loop(lambda: self.loop.play(move))
        except MulleError as exc:
            raise ProtocolError(ErrorCode.INVALID_ACTION, str(exc),
                                {"move": text[:200], "legal_moves": [str(m) for m in self.match.legal_moves()]},
                                request_id) from None
        person.old_requests.append(request_id)
        self.request = None
        self._after_move(event, failed)

    def _through_loop(self, play: Callable[[], MoveEvent]) -> tuple[MoveEvent, AgentError | None]:
        """Run one of the loop's moves; an agent failing in ``observe`` after the move was played does not lose it.

        Returns the move's event and the :class:`AgentError` of an agent that failed to hear it (or ``None``).
        """
        played = len(self.match.history)
        try:
            return play(), None
        except AgentError as exc:
            if len(self.match.history) == played:
                raise
            return self.match.history[-1], exc

    def _after_move(self, event: MoveEvent, failed: AgentError | None = None) -> None:
        self._token += 1
        self.notify("moved", self._moved_data(event))
        st = self.match.state
        if event.set_over:
            a, b = st.sheets[-1]
            self.notify("set_over", {"set": event.set_no, "sheets": [a, b], "scores": list(st.scores())})
        if event.game_over:
            self._game_over()
            return
        if event.deal_over:
            self.notify("deal", self._deal_data())
        self.notify("player_turn_changed", {"current_turn_index": st.to_move}, with_view=False)
        if failed is not None and failed.seat is not None and self.seats[failed.seat].person is None:
            self._replace(self.seats[failed.seat], str(failed), 0.0)
            return
        self._advance()

    def _moved_data(self, event: MoveEvent) -> dict:
        data = self._event_dict(event)
        data["text"] = event.describe()
        if event.set_over:
            # The end of a set sweeps the cards left on the table to the last capturer: say so, with the cards.
            data["sweep"] = self._sweep(event)
        return data

    @staticmethod
    def _sweep(event: MoveEvent) -> dict | None:
        """The cards a set's last move left on the table and the seat they went to, or ``None`` (the engine's event)."""
        return {"cards": [CARD_NAMES[f] for f in event.swept], "to": event.swept_to} if event.swept else None

    def _game_over(self) -> None:
        result = self.match.result()
        self.phase = "saving"
        self.seeded = self._seeds is not None
        self.request = None
        record = self.match.record()
        data = {
            "scores": list(result.scores), "winner": result.winner,
            "sheets": [[a, b] for a, b in self.match.state.sheets], "totals": list(result.totals),
            "record": record.to_dict(),
            # The record's exact JSON and its seed as text: a 63-bit seed does not survive a JavaScript number.
            "record_text": json.dumps(record.to_dict(), separators=(",", ":")), "seed": str(record.seed),
            "players": [[{"from_move": f, "name": n, "kind": k} for f, n, k in seat] for seat in self.holders],
            "game_id": None,
        }
        store = self.hub.store
        if store is None:
            self._send_game_over(data)
            return
        game = FinishedGame(self.name, record, (tuple(self.holders[0]), tuple(self.holders[1])), time.time())
        future = asyncio.get_running_loop().run_in_executor(self.hub.store_pool, store.add, game)
        # The game is on disk before anyone is told it ended (issue 24): a crash after game_over loses nothing.
        future.add_done_callback(lambda f: self._stored(f, data))

    def _stored(self, future: asyncio.Future, data: dict) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            log.error("table %r: the finished game could not be stored: %s", self.name, exc)
            data["store_error"] = f"the game could not be stored: {exc}"
        else:
            data["game_id"] = future.result()
        self._send_game_over(data)

    def _send_game_over(self, data: dict) -> None:
        self.phase = "lobby"
        data["table"] = self.info()
        self.last_over = data
        if not self.closed:
            self.notify("game_over", data)
            self._maybe_close()

    def _last_game(self) -> dict | None:
        return self.last_over if self.phase == "lobby" else None

    def _turn_changed_for_seat(self, seat: int) -> None:
        # A person took an agent's seat: any move the agent is thinking about no longer counts.
        self._token += 1
        if self.request is not None and self.request[1] == seat:
            self.request = None
        self._advance()

    def _advance(self) -> None:
        """Ask whoever is to move: send a person the request, or let the agent think."""
        if self.phase != "playing" or self.match is None or self.closed:
            return
        if self.match.over:
            return
        seat = self.seats[self.match.to_move]
        if seat.person is not None:
            if self.request is None or self.request[1] != seat.index:
                self.request = (uuid.uuid4().hex, seat.index)
                if seat.person.conn is not None:
                    self._send_request(seat.person)
            return
        if not self._audience():
            return  # nobody to play for: the table waits (and closes after a while)
        if self._agent_task is not None and not self._agent_task.done() and self._agent_token == self._token:
            return
        self._agent_token = self._token
        self._agent_task = asyncio.get_running_loop().create_task(self._agent_move(seat, self._token))

    async def _agent_move(self, seat: _Seat, token: int) -> None:
        if self.agent_delay:
            await asyncio.sleep(self.agent_delay)
        if token != self._token or self.closed:
            return
        if seat.inline:
            # The fallback plays on the loop: it takes microseconds, and a table whose agent failed must not
            # wait for a worker that other tables' (or its own overrunning) moves may be holding.
            return self._inline_move(seat)
        limit = self.hub.config.move_time
        if self._overrun is not None and not self._overrun.done():
            return self._replace(seat, "could not think: this table's previous agent move still runs past the "
                                 f"time limit of {limit:g} s", 0.0)
        index, view, legal = self.loop.ask()
        move, failure, seconds = await self._think(seat, view, legal, limit)
        if token != self._token or self.closed:
            return  # a person took the seat, or the table closed, while the agent thought
        if failure is not None:
            return self._replace(seat, failure, seconds)
        if move is None:
            # Every worker was busy for a whole move time (not this agent's fault): the fallback plays this move.
            log.warning("table %r: no agent thread free for %g s; %r plays seat %d's move", self.name, limit,
                        self.hub.config.fallback, seat.index)
            move = agents.make(self.hub.config.fallback).act(view, legal, seat.rng)
        try:
            event, failed = self._through_loop(lambda: self.loop.commit(index, move, legal))
        except (IllegalMoveError, AgentError) as exc:
            return self._replace(seat, _failure_text(exc, seat.spec), seconds)
        self._after_move(event, failed)

    async def _think(self, seat: _Seat, view, legal: list[Move], limit: float
                     ) -> tuple[Move | None, str | None, float]:
        """Run the seat's ``act`` in the pool: ``(answer, None, s)``, ``(None, failure, s)``, or ``(None, None, 0)``
        when no worker started it within ``limit``. The clock runs from the moment a thread starts the move.
        The answer is not checked here: :meth:`GameLoop.commit` does that."""
        loop = asyncio.get_running_loop()
        started = asyncio.Event()
        start_time = [0.0]
        agent, rng = seat.agent, seat.rng

        def think():
            start_time[0] = time.perf_counter()
            loop.call_soon_threadsafe(started.set)
            return agent.act(view, legal, rng)

        job = self.hub.executor.submit(think)
        try:
            await asyncio.wait_for(started.wait(), limit)
        except TimeoutError:
            if job.cancel():
                return None, None, 0.0
        except asyncio.CancelledError:
            job.cancel()  # the table is closing: a move still queued must not hold a worker later
            raise
        if not start_time[0]:  # the thread took it just as the wait ended and has not read the clock yet
            start_time[0] = time.perf_counter()
        left = max(0.0, limit - (time.perf_counter() - start_time[0]))
        try:
            move = await asyncio.wait_for(asyncio.wrap_future(job), left)
        except TimeoutError:
            self._overrun = job  # its thread runs on until the agent returns; no second one for this table
            return None, f"took longer than the move time limit of {limit:g} s", time.perf_counter() - start_time[0]
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - an agent's bug must not stop the table
            return None, f"crashed: {type(exc).__name__}: {exc}", time.perf_counter() - start_time[0]
        if move is None:
            return None, "chose an illegal move: it returned no move (None)", time.perf_counter() - start_time[0]
        return move, None, time.perf_counter() - start_time[0]

    def _inline_move(self, seat: _Seat) -> None:
        """The fallback's move, on the event loop through the game loop; a random legal move if even it fails."""
        try:
            event, failed = self._through_loop(self.loop.step)
        except (IllegalMoveError, AgentError):
            log.exception("table %r: the fallback agent failed; seat %d plays a random legal move", self.name,
                          seat.index)
            event, failed = self._through_loop(lambda: self.loop.play(seat.rng.choice(self.match.legal_moves())))
        self._after_move(event, None if failed is not None and failed.seat == seat.index else failed)

    def _replace(self, seat: _Seat, failure: str, seconds: float) -> None:
        """The seat's agent failed: the fallback (on the loop) plays for it for the rest of the game."""
        log.warning("table %r: agent %r in seat %d %s; %r takes over", self.name, seat.spec, seat.index, failure,
                    self.hub.config.fallback)
        old = seat.spec
        self._new_agent(seat, self.hub.config.fallback, inline=True)
        self._holder_changed(seat.index)
        self.notify("agent_replaced", {"player_index": seat.index, "agent": old, "replaced_by_name": seat.spec,
                                       "reason": failure, "seconds": round(seconds, 3),
                                       "table": self.info()}, with_view=False)
        self._token += 1
        self._advance()


def _failure_text(exc: Exception, spec: str) -> str:
    """What the loop's refusal says about the agent, without repeating its name (the notification names it)."""
    text = str(exc)
    prefix = f"agent {spec!r} "
    return text.split(") ", 1)[1] if text.startswith(prefix) and ") " in text else text


class _RecentSet:
    """A set that forgets its oldest entries beyond ``size`` (expired sessions must not grow without end)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: dict[str, None] = {}

    def add(self, item: str) -> None:
        self._items[item] = None
        if len(self._items) > self._size:
            del self._items[next(iter(self._items))]

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __len__(self) -> int:
        return len(self._items)


class Hub:
    """All tables and sessions of one server (see the module docstring).

    Args:
        config: The :class:`LiveConfig`.
    """

    def __init__(self, config: LiveConfig | None = None) -> None:
        self.config = config or LiveConfig()
        self.tables: dict[str, Table] = {}
        self.sessions: dict[str, Person] = {}
        #: Session ids whose seat went to an agent (a reconnect gets 2000 instead of 2001); the newest only.
        self.expired = _RecentSet(100_000)
        self.executor = ThreadPoolExecutor(self.config.workers, thread_name_prefix="live-agent")
        self.limits: AgentLimits = self.config.limits
        self._watch_ids = itertools.count(1)
        #: (canonical spec, ruleset) -> why the agent refuses (None: it builds and plays those rules); bounded.
        self._builds: dict[tuple[str, Ruleset], str | None] = {}
        #: The game history (``config.db``), written in a thread of its own; ``None`` keeps no history.
        self.store: GameStore | None = GameStore(self.config.db) if self.config.db else None
        self.store_pool = ThreadPoolExecutor(1, thread_name_prefix="live-store")
        #: Open tables and connections per client address (the per-address limits).
        self.tables_by_address: dict[str, int] = {}
        self.connections_by_address: dict[str, int] = {}

    def checked_spec(self, spec: str, details: dict, ruleset: Ruleset | None = None) -> str:
        """The canonical form of a spec a person chose, or ProtocolError 3000 saying why it is refused.

        Refused: bad syntax, a spec outside the server's :class:`~live.limits.AgentLimits` (the server's
        own ``opponent`` is always allowed), a spec the agent itself refuses when built
        (``pimc:samples=0``), and an agent that cannot play the table's ``ruleset`` (its
        ``check_ruleset``), so nothing chosen is silently replaced by the fallback at a game's start.
        """
        ruleset = ruleset or Ruleset()
        try:
            canon = agents.canonical(spec)
            if canon != self.config.opponent:
                self.limits.check(canon)
            key = (canon, ruleset)
            if key not in self._builds:
                if len(self._builds) >= 4096:
                    self._builds.clear()
                self._builds[key] = _refusal(canon, ruleset)
            if self._builds[key] is not None:
                raise ValueError(self._builds[key])
        except ValueError as exc:
            raise ProtocolError(ErrorCode.INVALID_ACTION, str(exc), details) from None
        return canon

    def shutdown(self) -> None:
        """Close every table, stop the agents' threads (a thinking agent finishes its move first), and finish
        writing the games that ended (the store's thread runs to the end of its queue)."""
        for t in list(self.tables.values()):
            for p in t.people():
                p.conn = None
            t.watchers.clear()
            t.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.store_pool.shutdown(wait=True)
        if self.store is not None:
            self.store.close()

    # ----- limits per client address ---------------------------------------------------
    def _limited(self, address: str) -> bool:
        if not self.config.trust_loopback:
            return True
        try:
            return not ipaddress.ip_address(address).is_loopback
        except ValueError:
            return True

    def admit(self, conn: Connection) -> None:
        """Count a new connection against its address; ProtocolError 1003 when the address holds its limit."""
        n = self.connections_by_address.get(conn.address, 0)
        limit = self.config.max_connections_per_address
        if n >= limit and self._limited(conn.address):
            raise ProtocolError(ErrorCode.SERVER_BUSY, f"your address holds {limit} connections to this server "
                                "already, its limit; close some tabs and try again",
                                {"max_connections_per_address": limit})
        self.connections_by_address[conn.address] = n + 1

    def release(self, conn: Connection) -> None:
        """Forget an admitted connection (see :meth:`admit`)."""
        _count_down(self.connections_by_address, conn.address)

    def table_closed(self, table: Table) -> None:
        """A table left the hub: it no longer counts against its opener's address."""
        _count_down(self.tables_by_address, table.address)

    def _new_table(self, name: str, address: str = "", **kw) -> Table:
        if len(self.tables) >= self.config.max_tables:
            raise ProtocolError(ErrorCode.SERVER_BUSY, f"the server holds its limit of {self.config.max_tables} "
                                "tables; try again later", {"max_tables": self.config.max_tables})
        mine = self.tables_by_address.get(address, 0)
        limit = self.config.max_tables_per_address
        if mine >= limit and self._limited(address):
            raise ProtocolError(ErrorCode.SERVER_BUSY, f"your address has {limit} tables open, its limit; leave one "
                                "(it closes when nobody is there) or join an existing table",
                                {"max_tables_per_address": limit})
        table = Table(self, name, address=address, **kw)
        self.tables[name] = table
        self.tables_by_address[address] = mine + 1
        return table

    def handle(self, conn: Connection, type_: str, p: dict) -> None:
        """Act on one checked client message (see :func:`live.protocol.parse`); errors go back as ``error``."""
        try:
            getattr(self, f"_on_{type_}")(conn, p)
        except ProtocolError as exc:
            conn.send(exc.to_message())
        except Exception as exc:  # a server bug answers 1000 and the connection goes on
            log.exception("handling %s", type_)
            conn.send(ProtocolError(ErrorCode.UNKNOWN_ERROR, "the server failed on this message",
                                    {"exception_type": type(exc).__name__}).to_message())

    def disconnect(self, conn: Connection) -> None:
        """The connection closed: a seated person keeps the seat for the grace period."""
        conn.closed = True
        if conn.person is not None:
            person, conn.person = conn.person, None
            if person.conn is conn:
                person.table.dropped(person)
        if conn.watching is not None:
            conn.watching.remove_watcher(conn)

    # ----- message handlers ------------------------------------------------------------
    def _on_ping(self, conn: Connection, p: dict) -> None:
        conn.send(message("pong", {"timestamp": p["timestamp"]}))

    def _busy(self, conn: Connection) -> None:
        if conn.person is not None:
            raise ProtocolError(ErrorCode.ALREADY_ON_TABLE, f"you sit at table {conn.person.table.name!r} already; "
                                "send leave first", {"player_index": conn.person.seat})
        if conn.watching is not None:
            raise ProtocolError(ErrorCode.ALREADY_ON_TABLE, f"you watch table {conn.watching.name!r}; send leave first",
                                {"table_name": conn.watching.name})

    def _on_join(self, conn: Connection, p: dict) -> None:
        if "session_id" in p:
            sid = p["session_id"]
            person = self.sessions.get(sid)
            if person is None:
                if sid in self.expired:
                    raise ProtocolError(ErrorCode.SESSION_EXPIRED, "your seat went to an agent when the grace period "
                                        "ran out (or the table closed); join again by table and player name",
                                        {"session_id": sid[:128]})
                raise ProtocolError(ErrorCode.SESSION_NOT_FOUND, "no session with that id; join by table and "
                                    "player name", {"session_id": sid[:128]})
            if conn.person is person:
                raise ProtocolError(ErrorCode.ALREADY_ON_TABLE, "this connection holds that session already",
                                    {"player_index": person.seat})
            self._busy(conn)
            person.table.rejoin(person, conn)
            return
        self._busy(conn)
        name = p["table_name"]
        if name.startswith(WATCH_PREFIX):
            raise ProtocolError(ErrorCode.INVALID_ACTION, f"table names starting with {WATCH_PREFIX!r} are agents' "
                                "tables to watch; pick another name", {"table_name": name})
        table = self.tables.get(name)
        if table is None:
            opponent = p.get("opponent") or self.config.opponent
            sets = p.get("sets")
            opponent = self.checked_spec(opponent, {"opponent": opponent[:200]}, Ruleset(sets=sets) if sets else None)
            delay = p.get("agent_delay_ms")
            table = self._new_table(name, conn.address, opponent=opponent, seed=p.get("seed"), sets=sets,
                                    agent_delay=self.config.agent_delay if delay is None else delay / 1000)
            try:
                table.seat_person(p["player_name"], conn)
            except ProtocolError:
                table.close()
                raise
            return
        table.seat_person(p["player_name"], conn)

    def _on_leave(self, conn: Connection, p: dict) -> None:
        if conn.person is not None:
            conn.person.table.remove(conn.person, "left")
        elif conn.watching is not None:
            conn.watching.remove_watcher(conn)
        else:
            raise ProtocolError(ErrorCode.INVALID_ACTION, "you are at no table", {"action": "leave"})

    def _person(self, conn: Connection, action: str) -> Person:
        if conn.person is None:
            raise ProtocolError(ErrorCode.UNAUTHORIZED, f"{action} needs a seat: send join first", {"action": action})
        return conn.person

    def _on_response(self, conn: Connection, p: dict) -> None:
        if conn.person is None:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, "you hold no seat, so it is never your turn: send join first",
                                {}, p["request_id"])
        conn.person.table.respond(conn.person, p["request_id"], p["move"])

    def _on_lobby_action(self, conn: Connection, p: dict) -> None:
        person = self._person(conn, p["action"])
        person.table.lobby_action(person, p["action"], p.get("opponent"))

    def _on_watch(self, conn: Connection, p: dict) -> None:
        self._busy(conn)
        if "agents" in p:
            rules = Ruleset(sets=p["sets"]) if p["sets"] else None
            specs = [self.checked_spec(spec, {"agents": p["agents"]}, rules) for spec in p["agents"]]
            delay = p["delay_ms"] / 1000 if p["delay_ms"] is not None else 0.5
            name = f"{WATCH_PREFIX}{next(self._watch_ids)}-{secrets.token_hex(3)}"
            table = self._new_table(name, conn.address, opponent=specs[1], seed=p["seed"], sets=p["sets"],
                                    agent_delay=delay, watch=True, specs=specs)
            table.start_game()  # nobody watches yet, so the agents wait for the watcher's confirmation
            table.add_watcher(conn)
            return
        table = self.tables.get(p["table_name"])
        if table is None:
            raise ProtocolError(ErrorCode.TABLE_NOT_FOUND, f"no table named {p['table_name']!r}",
                                {"table_name": p["table_name"]})
        table.add_watcher(conn)

    def _on_set_speed(self, conn: Connection, p: dict) -> None:
        table = conn.watching
        if table is None or not table.watch:
            raise ProtocolError(ErrorCode.UNAUTHORIZED, "set_speed is for watchers of an agents' table (see watch)",
                                {"action": "set_speed"})
        table.agent_delay = p["delay_ms"] / 1000
        table.notify("lobby_update", {"action": "set_speed", "table": table.info()}, with_view=False)


def _refusal(spec: str, ruleset: Ruleset) -> str | None:
    """Why the agent ``spec`` cannot sit at a table with ``ruleset`` (it does not build, or its ``check_ruleset``
    refuses the rules), or ``None``."""
    try:
        agent = agents.make(spec)
    except ValueError as exc:
        return str(exc)
    why = ruleset_refusal(agent, ruleset)
    return None if why is None else f"agent {spec!r} cannot play with this table's rules: {why}"


def _count_down(counts: dict[str, int], key: str) -> None:
    """One less of ``key`` in a per-address count; an address that holds nothing leaves the dict."""
    n = counts.get(key, 0) - 1
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)
