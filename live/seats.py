"""The two seats of a table: who holds each (a person or an agent), who held it when, the grace periods and the
move clock.

:class:`Seating` is the one home of the rules about people at a table: a new person takes a seat an
agent holds; a name is taken once per table (any case); nobody sits in a game dealt from a seed
another person chose; a dropped person keeps the seat for the grace period (the game waits for
them), and comes back by the seat's token (the session id, which the page also offers as a private
*seat link* that works from any device) or, with a claimed name, by logging in and joining under it.
A person who has not come back when the grace period ends, or whose move clock runs out, loses the
running game by forfeit (:meth:`GameRecorder.forfeit <live.recorder.GameRecorder.forfeit>`); on
``leave``, or at a grace period's end, an agent takes the seat. It tells the table what changed
(:meth:`Table.notify <live.table.Table.notify>`, the table's turn) and never plays a move itself.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from mulle_env.engine.rng import SEED_MAX

from .accounts import token_hash
from .protocol import PROTOCOL_VERSION, ErrorCode, ProtocolError, message

if TYPE_CHECKING:
    from .connection import Connection
    from .table import Table

__all__ = ["Person", "Seat", "Seating"]


class Person:
    """A person holding a seat (connected, or dropped and inside the grace period)."""

    def __init__(self, name: str, table: Table, seat: int, account: str | None = None,
                 session_hash: str | None = None) -> None:
        self.name = name
        self.table = table
        self.seat = seat
        #: The seat's secret token (sent only to this person); empty for a person restored after a crash until they
        #: come back with it (only its hash was stored).
        self.session_id = "" if session_hash else secrets.token_urlsafe(18)
        #: The token's SHA-256: what the store keeps (live.recovery) and how a restored seat is found.
        self.session_hash = session_hash or token_hash(self.session_id)
        #: The account this person sat down with (their name is claimed and they were logged in): rated games.
        self.account = account
        self.conn: Connection | None = None
        self.grace: asyncio.TimerHandle | None = None
        #: Request ids sent to this person that are no longer current (to tell "stale" from "unknown").
        self.old_requests: deque[str] = deque(maxlen=256)


class Seat:
    """One seat: its person (or ``None``), the agent spec that plays it otherwise, and that agent once built."""

    def __init__(self, index: int, spec: str) -> None:
        self.index = index
        self.person: Person | None = None
        self.spec = spec
        self.agent: Any = None
        self.rng: Any = None
        #: The agent plays on the event loop (the fallback after a failure), never in the pool.
        self.inline = False

    def public(self) -> dict:
        """The seat as everyone may see it."""
        p = self.person
        if p is None:
            return {"seat": self.index, "kind": "agent", "name": self.spec, "connected": True}
        return {"seat": self.index, "kind": "person", "name": p.name, "connected": p.conn is not None}


class Seating:
    """The seats of ``table``, their holders over the running game, its host, and the seed rules (module docstring).

    Args:
        table: The table the seats belong to.
        specs: The agent spec of each seat while no person holds it.
        seed: The seed the opener chose (``None``: fresh seeds).
    """

    def __init__(self, table: Table, specs: list[str], seed: int | None) -> None:
        self.table = table
        self.seats = [Seat(i, specs[i]) for i in (0, 1)]
        self.host: Person | None = None
        #: Per seat, who held it from which move on in the running game: ``[(from_move, name, kind), ...]``.
        self.holders: list[list[tuple[int, str, str]]] = [[], []]
        # A chosen seed deals this table's games (seed, seed+1, ...) only while at most one person can
        # know it: game_over publishes each game's seed, so with two people the next deal would be
        # computable by both (and the opener knew every deal). A second person switches to fresh seeds.
        # seed, seed + 1, ... wrapping at the top of the one seed domain (docs/engine.md, "Seeds").
        self.seeds = None if seed is None else (s % (SEED_MAX + 1) for s in itertools.count(seed))
        #: Whether the running game (or, in the lobby, the next one) deals from a chosen seed (table info).
        self.seeded = self.seeds is not None
        self._seated_before = False
        #: Seconds a person has for a move at this table (0: no clock); the opener may choose it.
        self.move_clock = table.hub.config.move_clock
        #: The running move clock: ``(request_id, seat, deadline on the loop's clock, wall-clock deadline, timer)``.
        self._clock: tuple[str, int, float, float, asyncio.TimerHandle] | None = None
        #: People who asked for a rematch after the last game (it starts when every person here has).
        self.rematch: set[Person] = set()

    # ----- who is here -----------------------------------------------------------------
    def people(self) -> list[Person]:
        """People holding seats (connected or within the grace period)."""
        return [s.person for s in self.seats if s.person is not None]

    def public(self) -> list[dict]:
        """The seats as everyone may see them."""
        return [s.public() for s in self.seats]

    def connected(self) -> bool:
        """Whether a person here has a connection."""
        return any(p.conn is not None for p in self.people())

    def next_seed(self) -> int | None:
        """The seed of the next game (``None``: a fresh one), and whether it is seeded for the table info."""
        self.seeded = self.seeds is not None
        return next(self.seeds) if self.seeds is not None else None

    # ----- who played what ---------------------------------------------------------------
    def played_by(self, seat: int, number: int) -> dict | None:
        """Who held ``seat`` when move ``number`` was played: ``{"name", "kind"}`` (``None`` before any game)."""
        held = None
        for frm, name, kind in self.holders[seat]:
            if frm > number:
                break
            held = {"name": name, "kind": kind}
        return held

    def holder_changed(self, seat: int) -> None:
        """A seat changed hands: from the next move on it is played by its new holder."""
        t = self.table
        if t.match is None or t.phase != "playing":
            return
        s = self.seats[seat]
        who = (s.person.name, "person") if s.person is not None else (s.spec, "agent")
        nxt = len(t.match.history) + 1
        entries = self.holders[seat]
        if entries and entries[-1][0] == nxt:
            entries.pop()  # nobody moved in between: only the last holder counts
        if not entries or entries[-1][1:] != who:
            entries.append((nxt, *who))
        t.recorder.seats_changed()

    def had_person(self) -> bool:
        """Whether a person held a seat at some point of the running game."""
        return any(kind == "person" for seat in self.holders for _, _, kind in seat)

    # ----- joining and leaving ---------------------------------------------------------
    def seat_person(self, name: str, conn: Connection, account: str | None = None) -> Person:
        """Put a new person in a free seat (one an agent holds); raise ProtocolError 2003/2004. ``account``: the
        claimed name the connection is logged in as, when ``name`` is it. A logged-in person whose name holds a seat
        here already (dropped, or in another browser) takes that seat back instead."""
        t = self.table
        mine = next((p for p in self.people() if p.name.casefold() == name.casefold()), None)
        if mine is not None and account is not None and mine.account is not None \
                and mine.account.casefold() == account.casefold():
            self.rejoin(mine, conn)
            return mine
        if mine is not None:
            raise ProtocolError(ErrorCode.NAME_TAKEN, f"the name {name!r} is taken at table {t.name!r}; "
                                "choose another (if it is your seat, open your seat link, or log in and join "
                                "under your name)", {"player_name": name})
        free = [s for s in self.seats if s.person is None]
        if not free:
            raise ProtocolError(ErrorCode.TABLE_FULL, f"table {t.name!r} has two people already; "
                                "pick another table name", {"table_name": t.name})
        seat = free[0]
        if self._seated_before and self.seeded and t.phase != "lobby":
            # Issue 24, defect 2: the opener chose (so knows) this game's seed; with it and the public moves
            # every hand can be computed. Nobody else may sit in it; watching shows no hand, so it is fine.
            raise ProtocolError(ErrorCode.TABLE_FULL, f"table {t.name!r} is playing a game dealt from a seed its "
                                "opener chose, so its cards are known to them: you may watch it, or sit down when "
                                "this game ends (the next one is dealt from a fresh seed)",
                                {"table_name": t.name, "reason": "seeded game running"})
        if self._seated_before and self.seeds is not None:
            # Anyone after the opener (even one who sits down after the opener left) must not be dealt
            # from a seed the opener chose: the next game's deal comes from a fresh seed.
            self.seeds = None
            if t.phase != "playing":
                self.seeded = False
        self._seated_before = True
        person = Person(name, t, seat.index, account=account)
        seat.person = person
        seat.agent = None
        if t.loop is not None:
            t.loop.seat(seat.index, None)
        self.holder_changed(seat.index)
        if self.host is None:
            self.host = person
        t.hub.sessions[person.session_id] = person
        t.cancel_close()
        self.attach(person, conn, rejoin=False)
        t.notify("player_joined", {"player_index": seat.index, "player_name": name, "replaced": seat.spec,
                                   "table": t.info()}, with_view=False)
        t.seat_taken(seat.index)
        return person

    def attach(self, person: Person, conn: Connection, rejoin: bool) -> None:
        """Give ``person`` the connection ``conn`` and confirm the seat with the position and the moves so far."""
        t = self.table
        person.conn = conn
        conn.person = person
        conn.send(message("joined_confirmation", {
            "protocol_version": PROTOCOL_VERSION, "session_id": person.session_id, "player_name": person.name,
            "seat": person.seat, "host": self.host is person, "rejoined": rejoin, "table": t.info(),
            "view": t.view_for_seat(person.seat),
            "history": t.history(), "last_game": t.last_game(),
        }))

    def rejoin(self, person: Person, conn: Connection) -> None:
        """Give a returning person their seat and the position back (the pending request too)."""
        t = self.table
        if person.grace is not None:
            person.grace.cancel()
            person.grace = None
        if not person.session_id:
            # A seat restored after a crash, taken back by logging in (its old token is unknown here: only its hash
            # was kept): it gets a new token, and the old one no longer opens it.
            t.hub.restored.pop(person.session_hash, None)
            person.session_id = secrets.token_urlsafe(18)
            person.session_hash = token_hash(person.session_id)
            t.hub.sessions[person.session_id] = person
            t.recorder.seats_changed()
        old = person.conn
        if old is not None and old is not conn:
            old.person = None
            old.send(ProtocolError(ErrorCode.ALREADY_ON_TABLE, "this session continued on another connection "
                                   "(another tab or window); take it back from there or here",
                                   {"player_index": person.seat, "reason": "continued elsewhere",
                                    "table_name": t.name}).to_message())
        t.cancel_close()
        self.attach(person, conn, rejoin=True)
        t.notify("player_reconnected", {"player_index": person.seat, "player_name": person.name,
                                        "table": t.info()}, with_view=False)
        t.person_back(person)

    def dropped(self, person: Person) -> None:
        """The person's connection closed without ``leave``: keep the seat for the grace period."""
        t = self.table
        person.conn = None
        t.notify("player_dropped", {"player_index": person.seat, "player_name": person.name,
                                    "grace": t.hub.config.grace, "table": t.info()}, with_view=False)
        person.grace = asyncio.get_running_loop().call_later(t.hub.config.grace, self.grace_over, person)
        t.maybe_close()

    def grace_over(self, person: Person) -> None:
        """The grace period ran out: a person who did not come back loses the running game by forfeit, and an agent
        takes the seat."""
        person.grace = None
        if self.seats[person.seat].person is person and person.conn is None:
            t = self.table
            t.hub.expired.add(person.session_id or person.session_hash)
            if t.phase == "playing" and t.match is not None and not t.match.over:
                grace = t.hub.config.grace
                span = f"{grace / 60:g} min" if grace >= 60 else f"{grace:g} s"
                t.recorder.forfeit(person.seat, f"did not come back within {span}")
            self.remove(person, "timeout")

    # ----- the move clock --------------------------------------------------------------------
    def clock_for(self, request_id: str, seat: int) -> dict | None:
        """The move clock of the request ``request_id`` to ``seat`` (started on its first sending; a request sent
        again, after a reconnect, keeps its deadline): ``{"seconds", "left", "deadline"}`` (``deadline`` in Unix
        milliseconds, for the page's countdown), or ``None`` at a table without a clock."""
        if not self.move_clock:
            return None
        loop = asyncio.get_running_loop()
        clock = self._clock
        if clock is None or clock[0] != request_id:
            if clock is not None:
                clock[4].cancel()
            handle = loop.call_later(self.move_clock, self._clock_over, request_id, seat)
            clock = self._clock = (request_id, seat, loop.time() + self.move_clock,
                                   time.time() + self.move_clock, handle)
        left = max(0.0, clock[2] - loop.time())
        return {"seconds": self.move_clock, "left": round(left, 1), "deadline": round(clock[3] * 1000)}

    def stop_clock(self) -> None:
        """No clock runs any more (the table closes)."""
        if self._clock is not None:
            self._clock[4].cancel()
            self._clock = None

    def _clock_over(self, request_id: str, seat: int) -> None:
        t = self.table
        if self._clock is not None and self._clock[0] == request_id:
            self._clock = None
        if t.closed or t.phase != "playing" or t.request is None or t.request[0] != request_id:
            return  # answered (or withdrawn) in time
        if self.seats[seat].person is None:
            return
        t.recorder.forfeit(seat, f"ran out of time (the move clock of {self.move_clock:g} s)")

    def remove(self, person: Person, reason: str) -> None:
        """The person leaves (``leave``, or the grace period ran out): an agent takes the seat at once."""
        t = self.table
        seat = self.seats[person.seat]
        if seat.person is not person:
            return
        if person.grace is not None:
            person.grace.cancel()
            person.grace = None
        if person.conn is not None:
            person.conn.person = None
            person.conn = None
        t.hub.sessions.pop(person.session_id, None)
        t.hub.restored.pop(person.session_hash, None)
        self.rematch.discard(person)
        seat.person = None
        seat.spec = t.opponent
        if self.host is person:
            others = self.people()
            self.host = others[0] if others else None
        t.seat_left(seat, person)
        t.notify("player_left", {"player_index": seat.index, "player_name": person.name, "reason": reason,
                                 "replaced_by_name": seat.spec, "table": t.info()}, with_view=False)
        t.maybe_close()
        t.advance()

    def forget(self) -> None:
        """The table closes: every session here expires and no grace timer is left running."""
        hub = self.table.hub
        self.stop_clock()
        for p in self.people():
            hub.sessions.pop(p.session_id, None)
            hub.restored.pop(p.session_hash, None)
            hub.expired.add(p.session_id or p.session_hash)
            if p.grace is not None:
                p.grace.cancel()

