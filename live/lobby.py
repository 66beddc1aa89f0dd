"""The server's lobby: every open table by name, the per-address limits, and the list of open tables.

:class:`Lobby` is the one home of which tables exist: it opens a table (within ``--max-tables``
and ``--max-tables-per-address``), forgets it when it closes, counts connections per client
address (``--max-connections-per-address``), and lists the open tables for ``GET /api/tables``
and the start page's *Open tables* (name, seats, spectators, state).
"""

from __future__ import annotations

import ipaddress
import itertools
import secrets
from typing import TYPE_CHECKING, Any

from .config import WATCH_PREFIX, LiveConfig
from .protocol import ErrorCode, ProtocolError

if TYPE_CHECKING:
    from .connection import Connection
    from .hub import Hub
    from .table import Table

__all__ = ["Lobby"]


class Lobby:
    """The open tables of ``hub`` and the counts per client address (see the module docstring)."""

    def __init__(self, hub: Hub, config: LiveConfig) -> None:
        self.hub = hub
        self.config = config
        self.tables: dict[str, Table] = {}
        #: Open tables and connections per client address (the per-address limits).
        self.tables_by_address: dict[str, int] = {}
        self.connections_by_address: dict[str, int] = {}
        self._watch_ids = itertools.count(1)

    # ----- limits per client address ---------------------------------------------------
    def limited(self, address: str) -> bool:
        """Whether the per-address limits apply to ``address`` (all but loopback under ``trust_loopback``)."""
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
        if n >= limit and self.limited(conn.address):
            raise ProtocolError(ErrorCode.SERVER_BUSY, f"your address holds {limit} connections to this server "
                                "already, its limit; close some tabs and try again",
                                {"max_connections_per_address": limit})
        self.connections_by_address[conn.address] = n + 1

    def release(self, conn: Connection) -> None:
        """Forget an admitted connection (see :meth:`admit`)."""
        _count_down(self.connections_by_address, conn.address)

    # ----- opening and closing tables ----------------------------------------------------
    def open(self, name: str, address: str = "", **kw: Any) -> Table:
        """Open the table ``name`` for a client at ``address`` (``kw``: :class:`~live.table.Table`'s arguments);
        ProtocolError 1003 beyond ``--max-tables`` or the address's ``--max-tables-per-address``."""
        from .table import Table

        if len(self.tables) >= self.config.max_tables:
            raise ProtocolError(ErrorCode.SERVER_BUSY, f"the server holds its limit of {self.config.max_tables} "
                                "tables; try again later", {"max_tables": self.config.max_tables})
        mine = self.tables_by_address.get(address, 0)
        limit = self.config.max_tables_per_address
        if mine >= limit and self.limited(address):
            raise ProtocolError(ErrorCode.SERVER_BUSY, f"your address has {limit} tables open, its limit; leave one "
                                "(it closes when nobody is there) or join an existing table",
                                {"max_tables_per_address": limit})
        table = Table(self.hub, name, address=address, **kw)
        self.tables[name] = table
        self.tables_by_address[address] = mine + 1
        return table

    def watch_name(self) -> str:
        """A fresh name for an agents' table made by ``watch``."""
        return f"{WATCH_PREFIX}{next(self._watch_ids)}-{secrets.token_hex(3)}"

    def closed(self, table: Table) -> None:
        """``table`` closed: it leaves the lobby and no longer counts against its opener's address."""
        if self.tables.get(table.name) is table:
            del self.tables[table.name]
            _count_down(self.tables_by_address, table.address)

    # ----- the list of open tables --------------------------------------------------------
    def listing(self) -> list[dict]:
        """The open tables, people's tables first (name order), then agents' tables: what ``GET /api/tables``
        answers. Each: ``name``, ``game`` (``mulle`` or ``casino``), ``phase`` (``lobby``/``playing``/``saving``),
        ``seats`` (public seats), ``spectators``, ``max_spectators``, ``free_seats`` (seats an agent holds, which a
        person may take), ``watch`` (an agents' table), ``seeded``, ``games``, and ``joinable`` (a person may sit
        down now)."""
        rows = []
        for t in self.tables.values():
            if t.closed:
                continue
            seats = t.seating.public()
            free = sum(1 for s in seats if s["kind"] == "agent")
            rows.append({
                "name": t.name, "game": t.game.name, "phase": t.phase, "seats": seats, "spectators": len(t.watchers),
                "max_spectators": self.config.max_watchers, "free_seats": 0 if t.watch else free,
                "watch": t.watch, "seeded": t.seating.seeded, "games": t.games,
                "joinable": not t.watch and free > 0 and not (t.seating.seeded and t.phase != "lobby"),
            })
        rows.sort(key=lambda r: (r["watch"], r["name"]))
        return rows


def _count_down(counts: dict[str, int], key: str) -> None:
    """One less of ``key`` in a per-address count; an address that holds nothing leaves the dict."""
    n = counts.get(key, 0) - 1
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)
