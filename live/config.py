"""The live server's settings (the ``mulle-serve`` flags), checked when made."""

from __future__ import annotations

import math
from dataclasses import dataclass

import agents

from .limits import DEFAULT_AGENT_LIMITS, AgentLimits

__all__ = ["COOKIE_SECURE", "INLINE_AGENTS", "MAX_MOVE_CLOCK", "MIN_MOVE_CLOCK", "WATCH_PREFIX", "LiveConfig"]

#: Agents fast enough (microseconds a move) to play on the event loop: the fallback must be one of them.
INLINE_AGENTS = ("random", "heuristic", "greedy")

#: A table's move clock for people is 0 (none) or within these bounds, in seconds.
MIN_MOVE_CLOCK, MAX_MOVE_CLOCK = 10, 3600

#: The choices of ``cookie_secure``.
COOKIE_SECURE = ("auto", "always", "never")

#: Table names starting with this are agents' tables made by ``watch``; people cannot sit there.
WATCH_PREFIX = "watch-"


@dataclass(frozen=True)
class LiveConfig:
    """Server settings (the ``mulle-serve`` flags).

    Attributes:
        opponent: Default agent spec for empty seats.
        grace: Seconds a dropped person keeps the seat (the game waits for them; long enough for a phone to switch
            apps and back); a person who has not come back by then loses a running game by forfeit.
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
        analysis_time: Seconds the post-game analyser (:mod:`live.analysis`) searches per decision.
        move_clock: Seconds a person has for each move (the table's opener may choose another, from
            :data:`MIN_MOVE_CLOCK` to :data:`MAX_MOVE_CLOCK`); when it runs out the person loses the game by forfeit,
            so nobody holds a table forever. ``0``: no clock at this server's tables unless a table asks for one.
        cookie_secure: Whether the login cookie is marked ``Secure`` (sent only over https): ``"auto"`` marks it when
            the request came over https (as seen by the server: behind a proxy that ends TLS give ``"always"``),
            ``"always"``, or ``"never"`` (plain http on a private network; browsers treat ``localhost`` as secure,
            so ``"always"`` also works there).
        isolate: Each agent seat's agent plays in a process of its own (:mod:`arena.isolate`, as ``mulle-arena
            --isolate``): it sees only its seat's view, and any way out of its turn (an exception of any kind, an
            exit, a crash, a hang past ``move_time``) replaces it with the fallback, as a crash does.
    """

    opponent: str = "heuristic"
    grace: float = 300.0
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
    analysis_time: float = 0.25
    move_clock: float = 300.0
    cookie_secure: str = "auto"
    isolate: bool = False

    def __post_init__(self) -> None:
        for name in ("grace", "close_after", "move_time", "agent_delay", "analysis_time", "move_clock"):
            value = getattr(self, name)
            # not (value >= 0) also refuses NaN, which every comparison lets through and which
            # loop.call_later turns into "never" or "at once".
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of seconds, at least 0, not {value!r}")
        if self.move_clock and not MIN_MOVE_CLOCK <= self.move_clock <= MAX_MOVE_CLOCK:
            raise ValueError(f"move_clock must be 0 (none) or {MIN_MOVE_CLOCK} to {MAX_MOVE_CLOCK} seconds, not "
                             f"{self.move_clock!r}")
        if self.cookie_secure not in COOKIE_SECURE:
            raise ValueError(f"cookie_secure must be one of {', '.join(COOKIE_SECURE)}, not {self.cookie_secure!r}")
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

