"""A table's games into the server's game history (:class:`~live.store.GameStore`).

:class:`GameRecorder` is the one home of storage at a table: a finished game is written in the
store's thread (never on the event loop) and ``game_over`` is sent only once the transaction has
committed (a crash after ``game_over`` loses nothing); a game whose table closes before its end
(everyone gone past the grace period, or the server stopping) is kept as ``abandoned`` with the
moves played and the scores so far (issue 33, defect 1).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .protocol import js_safe
from .store import FinishedGame

if TYPE_CHECKING:
    from .table import Table

__all__ = ["GameRecorder"]

log = logging.getLogger("live")


class GameRecorder:
    """Writes the games of ``table`` (see the module docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def _game(self, status: str = "finished") -> FinishedGame:
        t = self.table
        record = t.match.record()
        scores = tuple(t.match.state.scores()) if status == "abandoned" else None
        return FinishedGame(t.name, record, (tuple(t.seating.holders[0]), tuple(t.seating.holders[1])), time.time(),
                            status=status, scores=scores)  # type: ignore[arg-type]

    def game_over(self, send: Callable[[dict], None]) -> None:
        """The running game ended: build ``game_over``'s data, store the game, then ``send(data)`` (at once without a
        store; with ``game_id`` once committed; with ``store_error`` when the write failed)."""
        t = self.table
        match = t.match
        result = match.result()
        record = match.record()
        data = {
            "scores": list(result.scores), "winner": result.winner,
            "sheets": [[a, b] for a, b in match.state.sheets], "totals": list(result.totals),
            # Integers beyond 2**53 (the seed) as strings: a JavaScript page reads this with JSON.parse.
            "record": js_safe(record.to_dict()),
            # The record's exact JSON and its seed as text: a 63-bit seed does not survive a JavaScript number.
            "record_text": json.dumps(record.to_dict(), separators=(",", ":")), "seed": str(record.seed),
            "players": [[{"from_move": f, "name": n, "kind": k} for f, n, k in seat] for seat in t.seating.holders],
            "game_id": None,
        }
        store = t.hub.store
        if store is None:
            send(data)
            return
        future = asyncio.get_running_loop().run_in_executor(t.hub.store_pool, store.add, self._game())
        # The game is on disk before anyone is told it ended (issue 24): a crash after game_over loses nothing.
        future.add_done_callback(lambda f: self._stored(f, data, send))

    def _stored(self, future: asyncio.Future, data: dict, send: Callable[[dict], None]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            log.error("table %r: the finished game could not be stored: %s", self.table.name, exc)
            data["store_error"] = f"the game could not be stored: {exc}"
        else:
            data["game_id"] = future.result()
        send(data)

    def abandoned(self) -> None:
        """The table closes with its game unfinished: keep it as ``abandoned`` when a person played in it (an agents'
        table that lost its last spectator is nobody's game). Written in the store's thread; nobody waits for it."""
        t = self.table
        store = t.hub.store
        if store is None or t.match is None or t.phase != "playing" or not t.seating.had_person():
            return
        game = self._game("abandoned")
        try:
            job = t.hub.store_pool.submit(store.add, game)
        except RuntimeError:  # the pool has shut down (the server stops): write it here, it is the last one
            job = None
            try:
                store.add(game)
            except Exception as exc:  # noqa: BLE001 - a failed write is logged, the close goes on
                log.error("table %r: the abandoned game could not be stored: %s", t.name, exc)
        if job is not None:
            job.add_done_callback(lambda f: f.exception() and log.error(
                "table %r: the abandoned game could not be stored: %s", t.name, f.exception()))
