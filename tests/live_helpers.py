"""A real WebSocket client for the live server's tests and benchmark (aiohttp's client)."""

from __future__ import annotations

import asyncio
import json

import aiohttp


class Client:
    """One WebSocket connection that records every message it receives.

    ``expect`` reads until a message matches; everything read stays in ``log`` so a
    test can inspect the whole conversation afterwards.
    """

    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.session, self.ws = session, ws
        self.log: list[dict] = []

    @classmethod
    async def open(cls, url: str) -> Client:
        session = aiohttp.ClientSession()
        ws = await session.ws_connect(url + "/ws")
        return cls(session, ws)

    async def send(self, type_: str, payload: dict | None = None) -> None:
        await self.ws.send_json({"type": type_, "payload": payload or {}})

    async def send_raw(self, text: str) -> None:
        await self.ws.send_str(text)

    async def recv(self, timeout: float = 5) -> dict:
        msg = await self.ws.receive(timeout)
        if msg.type != aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"connection closed: {msg.type} {msg.data!r}")
        data = json.loads(msg.data)
        self.log.append(data)
        return data

    async def expect(self, type_: str, event: str | None = None, timeout: float = 5, **match) -> dict:
        """Read until a message of ``type_`` (and notification ``event``) arrives; return it."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError(f"no {type_} {event or ''} {match or ''} within {timeout} s; last: {self.log[-3:]}")
            m = await self.recv(left)
            if m["type"] != type_:
                continue
            if event is not None and m["payload"].get("event") != event:
                continue
            if any(m["payload"].get(k) != v for k, v in match.items()):
                continue
            return m

    async def error(self, timeout: float = 5) -> dict:
        """The next ``error`` message's payload."""
        return (await self.expect("error", timeout=timeout))["payload"]

    async def join(self, table: str, name: str, **options) -> dict:
        await self.send("join", {"table_name": table, "player_name": name, **options})
        return (await self.expect("joined_confirmation"))["payload"]

    async def play_first(self, request: dict) -> str:
        """Answer ``request`` with its first legal move; return the move."""
        move = request["payload"]["context"]["legal_moves"][0]
        await self.send("response", {"request_id": request["payload"]["request_id"], "data": {"move": move}})
        return move

    async def close(self) -> None:
        await self.ws.close()
        await self.session.close()


async def play_to_end(client: Client, timeout: float = 30) -> dict:
    """Answer every request with the first legal move until ``game_over``; return that notification."""
    while True:
        m = await client.recv(timeout)
        if m["type"] == "request":
            await client.play_first(m)
        elif m["type"] == "notification" and m["payload"]["event"] == "game_over":
            return m
        elif m["type"] == "error":
            raise AssertionError(f"unexpected error: {m}")
