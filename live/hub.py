"""The hub of the live mode: every table by name and every person's session, independent of the web framework.

The :class:`Hub` owns the :class:`~live.lobby.Lobby` (the open tables and the per-address limits) and
every person's session. A transport (the aiohttp server in :mod:`live.server`, or anything else)
hands it each checked client message with :meth:`Hub.handle` and tells it when a connection closes
with :meth:`Hub.disconnect`; the hub answers through :class:`~live.connection.Connection` objects,
whose ``send`` never blocks (each connection has its own writer task).

Each concern of a table has one home (issue 33): the table itself and the order of its messages
(:mod:`live.table`), its seats and grace periods (:mod:`live.seats`), its agents' moves under the
arena's rules for timeouts and crashes (:mod:`live.turns`), and its games in the history
(:mod:`live.recorder`). Everything on the event loop is cheap: building views and sending JSON;
agents think in the hub's thread pool, the store writes in a thread of its own, and post-game analyses
run in a process of their own (:mod:`live.analysis`).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import agents
from mulle_env.engine.loop import ruleset_refusal

from .accounts import Accounts, token_hash
from .analysis import Analyses
from .config import INLINE_AGENTS, WATCH_PREFIX, LiveConfig
from .connection import Connection
from .games import MULLE, LiveGame, live_game
from .limits import AgentLimits
from .lobby import Lobby
from .protocol import ErrorCode, ProtocolError, message
from .seats import Person
from .store import GameStore
from .table import Table

__all__ = ["INLINE_AGENTS", "WATCH_PREFIX", "Connection", "Hub", "LiveConfig", "Person", "Table"]

log = logging.getLogger("live")


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
        #: The open tables and the per-address counts.
        self.lobby = Lobby(self, self.config)
        self.sessions: dict[str, Person] = {}
        #: People of games restored after a crash (live.recovery) by the hash of their seat token, until they come
        #: back with the token (only its hash was stored).
        self.restored: dict[str, Person] = {}
        #: Session ids whose seat went to an agent (a reconnect gets 2000 instead of 2001); the newest only.
        self.expired = _RecentSet(100_000)
        self.executor = ThreadPoolExecutor(self.config.workers, thread_name_prefix="live-agent")
        self.limits: AgentLimits = self.config.limits
        #: (canonical spec, ruleset) -> why the agent refuses (None: it builds and plays those rules); bounded.
        self._builds: dict[tuple[str, Any], str | None] = {}
        #: The game history (``config.db``), written in a thread of its own; ``None`` keeps no history.
        self.store: GameStore | None = GameStore(self.config.db) if self.config.db else None
        self.store_pool = ThreadPoolExecutor(1, thread_name_prefix="live-store")
        #: Post-game analyses, each in a process of its own (only with a store: that is where they are kept).
        self.analyses: Analyses | None = Analyses(self.store, self.config.analysis_time) if self.store else None
        #: The accounts (claimed names and logins; only with a store, where they are kept).
        self.accounts: Accounts | None = Accounts(self.store) if self.store else None

    def restore(self) -> list[str]:
        """Restore the games in progress a killed server left in the store (:mod:`live.recovery`); return the
        names of the tables reopened. Call on the running event loop, once, before serving."""
        if self.store is None:
            return []
        from .recovery import restore_games

        return restore_games(self)

    @property
    def tables(self) -> dict[str, Table]:
        """The open tables by name (the lobby's)."""
        return self.lobby.tables

    @property
    def tables_by_address(self) -> dict[str, int]:
        """Open tables per client address."""
        return self.lobby.tables_by_address

    @property
    def connections_by_address(self) -> dict[str, int]:
        """WebSocket connections per client address."""
        return self.lobby.connections_by_address

    def checked_spec(self, spec: str, details: dict, ruleset: Any = None, game: LiveGame = MULLE) -> str:
        """The canonical form of a spec a person chose, or ProtocolError 3000 saying why it is refused.

        Refused: bad syntax, a spec outside the server's :class:`~live.limits.AgentLimits` (the server's
        own ``opponent`` is always allowed), a spec the agent itself refuses when built
        (``pimc:samples=0``), and an agent that cannot play the table's ``ruleset`` (its
        ``check_ruleset``), so nothing chosen is silently replaced by the fallback at a game's start.
        """
        ruleset = ruleset or game.ruleset(None)
        try:
            canon = agents.canonical(spec, game.name)
            if canon != self.config.opponent:
                self.limits.check(canon)
            key = (canon, ruleset)
            if key not in self._builds:
                if len(self._builds) >= 4096:
                    self._builds.clear()
                self._builds[key] = _refusal(canon, ruleset, game.name)
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
        if self.analyses is not None:
            self.analyses.shutdown()
        self.store_pool.shutdown(wait=True)
        if self.store is not None:
            self.store.close()

    # ----- limits per client address (the lobby's) ---------------------------------------
    def limited(self, address: str) -> bool:
        """Whether the per-address limits apply to ``address`` (all but loopback under ``trust_loopback``)."""
        return self.lobby.limited(address)

    def admit(self, conn: Connection) -> None:
        """Count a new connection against its address; ProtocolError 1003 when the address holds its limit."""
        self.lobby.admit(conn)

    def release(self, conn: Connection) -> None:
        """Forget an admitted connection (see :meth:`admit`)."""
        self.lobby.release(conn)

    def table_closed(self, table: Table) -> None:
        """A table left the hub: it no longer counts against its opener's address."""
        self.lobby.closed(table)

    def _new_table(self, name: str, address: str = "", **kw) -> Table:
        return self.lobby.open(name, address, **kw)

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
            if person is None and self.restored:
                person = self.restored.pop(token_hash(sid), None)
                if person is not None:  # a seat restored after a crash: its token is known again
                    person.session_id = sid
                    self.sessions[sid] = person
            if person is None:
                if sid in self.expired or token_hash(sid) in self.expired:
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
        account = self._account_for(conn, p["player_name"])
        name = p["table_name"]
        if name.startswith(WATCH_PREFIX):
            raise ProtocolError(ErrorCode.INVALID_ACTION, f"table names starting with {WATCH_PREFIX!r} are agents' "
                                "tables to watch; pick another name", {"table_name": name})
        table = self.tables.get(name)
        if table is None:
            opponent = p.get("opponent") or self.config.opponent
            sets = p.get("sets")
            game = live_game(p.get("game"))
            opponent = self.checked_spec(opponent, {"opponent": opponent[:200]}, game.ruleset(sets), game)
            delay = p.get("agent_delay_ms")
            table = self._new_table(name, conn.address, opponent=opponent, seed=p.get("seed"), sets=sets,
                                    agent_delay=self.config.agent_delay if delay is None else delay / 1000, game=game)
            if p.get("move_clock_s") is not None:
                table.seating.move_clock = p["move_clock_s"]
            try:
                table.seating.seat_person(p["player_name"], conn, account)
            except ProtocolError:
                table.close()
                raise
            return
        table.seating.seat_person(p["player_name"], conn, account)

    def _account_for(self, conn: Connection, name: str) -> str | None:
        """The account a person sits down with under ``name``: ``None`` for a guest's free name; ProtocolError 1002
        when ``name`` is claimed and this connection is not logged in as it."""
        if self.accounts is None or not self.accounts.is_claimed(name):
            return None
        if conn.account is not None and conn.account.casefold() == name.casefold():
            return conn.account
        raise ProtocolError(ErrorCode.UNAUTHORIZED, f"the name {name!r} belongs to an account: log in as {name} to "
                            "play under it, or choose another name (guests play unrated)",
                            {"player_name": name, "reason": "claimed name"})

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

    def _on_drop(self, conn: Connection, p: dict) -> None:
        if conn.person is None:
            raise ProtocolError(ErrorCode.NOT_YOUR_TURN, "you hold no seat, so it is never your turn: send join first",
                                {}, p["request_id"])
        conn.person.table.drop(conn.person, p["request_id"], p["card"], p["target"], p["staged"])

    def _on_lobby_action(self, conn: Connection, p: dict) -> None:
        person = self._person(conn, p["action"])
        if p["action"] == "rematch":
            self._rematch(person)
            return
        person.table.lobby_action(person, p["action"], p.get("opponent"))
        if p["action"] == "start_game":
            person.table.seating.rematch.clear()

    def _rematch(self, person: Person) -> None:
        """``rematch`` from the result box: the next game starts once every person at the table has asked (at once
        against an agent), whoever the host is; until then the others are told who asked."""
        table = person.table
        seating = table.seating
        if table.phase != "lobby" or not table.games:
            raise ProtocolError(ErrorCode.GAME_ALREADY_STARTED, "a rematch is asked for after a game, from its "
                                "result", {"action": "rematch"})
        seating.rematch.add(person)
        if all(p in seating.rematch for p in table.people()):
            seating.rematch.clear()
            table.start_game()
            return
        table.notify("lobby_update", {"action": "rematch", "wants": sorted(p.name for p in seating.rematch),
                                      "table": table.info()}, with_view=False)

    def _on_watch(self, conn: Connection, p: dict) -> None:
        self._busy(conn)
        if "agents" in p:
            game = live_game(p.get("game"))
            rules = game.ruleset(p["sets"])
            specs = [self.checked_spec(spec, {"agents": p["agents"]}, rules, game) for spec in p["agents"]]
            delay = p["delay_ms"] / 1000 if p["delay_ms"] is not None else 0.5
            name = self.lobby.watch_name()
            table = self._new_table(name, conn.address, opponent=specs[1], seed=p["seed"], sets=p["sets"],
                                    agent_delay=delay, watch=True, specs=specs, game=game)
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


def _refusal(spec: str, ruleset: Any, game: str = "mulle") -> str | None:
    """Why the agent ``spec`` cannot sit at a table of ``game`` with ``ruleset`` (it does not build, or its
    ``check_ruleset`` refuses the rules), or ``None``."""
    try:
        agent = agents.make(spec, game)
    except ValueError as exc:
        return str(exc)
    why = ruleset_refusal(agent, ruleset)
    return None if why is None else f"agent {spec!r} cannot play with this table's rules: {why}"
