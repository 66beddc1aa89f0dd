"""One client connection as the hub sees it: an outgoing queue drained by a writer task, so ``send`` never blocks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .seats import Person
    from .table import Table

__all__ = ["Connection"]


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
        #: The account this connection is logged in as (the login cookie of its upgrade request), or ``None``.
        self.account: str | None = None
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

