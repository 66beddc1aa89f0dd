"""Per-address limits for the live server's HTTP routes: a token bucket per address and route class.

Issue 33, defect 4: eight parallel posts of a 19 kB record to ``/api/replay`` (each answered with
1.7 MB) for 20 s raised another table's move latency from 22 ms to 732 ms. Every HTTP route now
belongs to a class with a burst and a steady rate per client address, and the expensive ones
(replays, analyses) also with a number of requests one address may have running at once. Beyond
either the answer is ``429 Too Many Requests`` with ``Retry-After`` (whole seconds) and a JSON
``{"error": ...}`` saying which limit and when to come back.

Standard library only: a bucket is two floats, and the table of addresses forgets idle ones, so a
crowd of addresses cannot grow it without end.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

__all__ = ["HTTP_LIMITS", "HttpLimit", "RateLimiter"]


@dataclass(frozen=True)
class HttpLimit:
    """One route class's limit per client address.

    Attributes:
        burst: Requests an address may make at once after a quiet spell (the bucket's size).
        per_second: Requests per second it may make steadily (the bucket's refill).
        concurrent: Requests of this class one address may have running at once (``0``: no bound).
        what: Words for the error message (``"replays"``).
    """

    burst: int
    per_second: float
    concurrent: int = 0
    what: str = "requests"


#: The route classes (:func:`live.server.make_app` files each route under one). A replay costs up to a second of a
#: worker and answers up to 1.7 MB; an analysis runs an agent over a whole game; a login or a new account costs a
#: password hash; the rest are cheap reads.
HTTP_LIMITS: dict[str, HttpLimit] = {
    "replay": HttpLimit(burst=6, per_second=0.5, concurrent=1, what="replays"),
    "analysis": HttpLimit(burst=4, per_second=0.1, concurrent=1, what="analyses"),
    "api": HttpLimit(burst=60, per_second=20.0, what="API requests"),
    # Logins: a password guess costs a scrypt hash (16 MiB, ~50 ms) and tries an account; per address, and per name
    # whatever the address (live.server._login), so a guesser spread over many addresses is slow too.
    "login": HttpLimit(burst=5, per_second=1 / 12, concurrent=1, what="login attempts"),
    "login_name": HttpLimit(burst=10, per_second=1 / 30, what="login attempts for this name"),
    "account": HttpLimit(burst=3, per_second=1 / 60, concurrent=1, what="new accounts"),
    "page": HttpLimit(burst=120, per_second=40.0, what="page requests"),
}


class RateLimiter:
    """Token buckets per ``(address, route class)`` plus counts of running requests (one event loop: no locks).

    Args:
        limits: The route classes (default :data:`HTTP_LIMITS`).
        clock: Seconds, monotonic (tests pass their own).
        max_addresses: Buckets kept before idle (full) ones are dropped.
    """

    def __init__(self, limits: dict[str, HttpLimit] | None = None, clock=time.monotonic,
                 max_addresses: int = 10_000) -> None:
        self.limits = dict(limits or HTTP_LIMITS)
        self._clock = clock
        self._max = max_addresses
        #: (address, class) -> [tokens, last refill time]
        self._buckets: dict[tuple[str, str], list[float]] = {}
        self._running: dict[tuple[str, str], int] = {}

    def acquire(self, address: str, kind: str) -> float | None:
        """Take one request of class ``kind`` for ``address``: ``None`` when allowed (then call :meth:`release`
        when it is done), else the seconds to wait before trying again."""
        limit = self.limits[kind]
        key = (address, kind)
        if limit.concurrent and self._running.get(key, 0) >= limit.concurrent:
            return 1.0
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max:
                self._forget(now)
            bucket = self._buckets[key] = [float(limit.burst), now]
        tokens = min(float(limit.burst), bucket[0] + (now - bucket[1]) * limit.per_second)
        bucket[1] = now
        if tokens < 1:
            bucket[0] = tokens
            return (1 - tokens) / limit.per_second
        bucket[0] = tokens - 1
        self._running[key] = self._running.get(key, 0) + 1
        return None

    def release(self, address: str, kind: str) -> None:
        """A request :meth:`acquire` allowed is done."""
        key = (address, kind)
        n = self._running.get(key, 0) - 1
        if n > 0:
            self._running[key] = n
        else:
            self._running.pop(key, None)

    def message(self, kind: str, wait: float) -> tuple[str, int]:
        """The 429 answer's text and its ``Retry-After`` seconds (at least 1)."""
        limit = self.limits[kind]
        seconds = max(1, math.ceil(wait))
        if limit.concurrent:
            bound = (f"{limit.burst} at once and one every {1 / limit.per_second:g} s after that, "
                     f"{limit.concurrent} running at a time")
        else:
            bound = f"{limit.burst} at once and {limit.per_second:g} a second after that"
        where = "" if kind.endswith("_name") else " from your address"  # per-name classes count every address
        return f"too many {limit.what}{where} (the limit is {bound}); try again in {seconds} s", seconds

    def _forget(self, now: float) -> None:
        # Drop the buckets that have refilled (their address has been quiet): they hold nothing a new one would not.
        full = [k for k, (tokens, t) in self._buckets.items() if k not in self._running
                and tokens + (now - t) * self.limits[k[1]].per_second >= self.limits[k[1]].burst]
        for k in full:
            del self._buckets[k]
        if len(self._buckets) >= self._max:  # everybody is busy: the oldest go (a fresh bucket is a full one)
            for k in sorted(self._buckets, key=lambda k: self._buckets[k][1])[: len(self._buckets) // 2]:
                del self._buckets[k]
