"""Agents' turns at a live table: building the seat's agent, thinking in the pool, and the arena's blame rules.

:class:`AgentTurns` is the one home of how an agent moves at a table. It asks the engine's one game
loop (:meth:`GameLoop.ask <mulle_env.engine.loop.GameLoop.ask>`), runs ``act`` in the hub's thread
pool with the move time limit (never on the event loop: a slow ``pimc`` delays no other table),
and hands the answer to :meth:`GameLoop.commit <mulle_env.engine.loop.GameLoop.commit>`.

What counts as an agent's failure, and the words for it, are the arena's (:mod:`arena.worker`):
over the time limit (``exceeded the move time limit of 10 s``), an exception (``raised
RuntimeError: boom``), an answer the loop refuses (``played an illegal move: ...``), or an
:class:`~mulle_env.engine.errors.AgentError` from the loop (an agent that raised in ``observe``).
Where the arena then scores a forfeit, a live table must go on for the people at it: the failed
agent is replaced by the fallback (``random``, which plays on the event loop) for the rest of the
game, and ``agent_replaced`` says why in those words.

Two rules are the live server's own, because its agents share one pool across tables: a move's
clock starts when a thread takes it, and a move that overran keeps its thread until it returns, so
a table holds at most one such thread (a second agent needing the pool meanwhile is replaced at
once). When every worker is busy for a whole move time before a move starts (other tables'
overruns, not this agent's fault), the fallback plays that one move and the agent keeps the seat.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import agents
from arena.worker import crash_text, illegal_text, timeout_text
from mulle_env.engine.errors import AgentError, IllegalMoveError
from mulle_env.engine.match import MoveEvent

if TYPE_CHECKING:
    from .seats import Seat
    from .table import Table

__all__ = ["AgentTurns", "failure_text"]

log = logging.getLogger("live")


def failure_text(exc: AgentError | IllegalMoveError) -> str:
    """The arena's words for an agent the game loop blamed (the notification names the agent itself)."""
    if isinstance(exc, IllegalMoveError):
        return illegal_text(exc)
    stage = getattr(exc, "stage", None) or "act"
    return crash_text(stage, exc.__cause__ or exc) if stage in ("act", "reset", "observe") else str(exc)


class AgentTurns:
    """How the agents of ``table`` play (see the module docstring)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        #: A move still running in a worker past its time limit (at most one per table holds a thread).
        self.overrun: Any = None
        self.task: asyncio.Task | None = None
        self._token = -1

    # ----- the seat's agent ----------------------------------------------------------------
    def new_agent(self, seat: Seat, spec: str | None = None, inline: bool = False) -> None:
        """Build the agent of ``seat`` (its spec, or ``spec``) for the running game, tell it the moves so far and
        seat it in the game loop. A spec that fails to build (it built once, so it should not) gets the fallback."""
        t = self.table
        config = t.hub.config
        spec = spec or seat.spec
        seat.inline = inline
        try:
            seat.agent = self._make(spec, inline)
        except ValueError:  # a spec that built once fails no more, but a table must never stop
            log.exception("agent %r could not be built; seat %d falls back to %r", spec, seat.index, config.fallback)
            spec = config.fallback
            seat.agent = agents.make(spec, game=t.game.name)
            seat.inline = True
        seat.spec = spec
        seat.rng = random.Random(f"{t.match.seed}:{seat.index}:{spec}:{len(t.match.history)}")
        # An agent taking over mid-game is reset and hears the moves so far (agents that track history need
        # them); the loop tells it every move from here on.
        reset = getattr(seat.agent, "reset", None)
        if reset is not None:
            reset()
        observe = getattr(seat.agent, "observe", None)
        if observe is not None:
            for e in t.match.history:
                observe((e.player, e.move))
        t.loop.seat(seat.index, seat.agent, seat.rng, spec)

    def _make(self, spec: str, inline: bool) -> Any:
        """The agent ``spec``: in a process of its own under ``--isolate`` (the fallback, which plays on the event
        loop, never is); an agent that cannot start there is refused as a spec that does not build."""
        t = self.table
        config = t.hub.config
        if not config.isolate or inline:
            return agents.make(spec, game=t.game.name)
        from arena.isolate import AgentFailed, IsolatedAgent

        try:
            return IsolatedAgent(spec, t.game.name, seconds=config.move_time or 10.0)
        except AgentFailed as exc:
            raise ValueError(f"agent {spec!r} {exc.what}") from None

    # ----- a move ----------------------------------------------------------------------------
    def start(self, seat: Seat, token: int) -> None:
        """Let the agent of ``seat`` move (unless its move for this turn, ``token``, is already under way)."""
        if self.task is not None and not self.task.done() and self._token == token:
            return
        self._token = token
        self.task = asyncio.get_running_loop().create_task(self._move(seat, token))

    def cancel(self) -> None:
        """The table closes: stop the agent's move (one still queued in the pool never runs)."""
        if self.task is not None:
            self.task.cancel()

    async def _move(self, seat: Seat, token: int) -> None:
        t = self.table
        if t.agent_delay:
            await asyncio.sleep(t.agent_delay)
        if token != t.token or t.closed:
            return
        if seat.inline:
            # The fallback plays on the loop: it takes microseconds, and a table whose agent failed must not
            # wait for a worker that other tables' (or its own overrunning) moves may be holding.
            return self._inline_move(seat)
        limit = t.hub.config.move_time
        if self.overrun is not None and not self.overrun.done():
            return self.replace(seat, "could not think: this table's previous agent move still runs past the "
                                f"time limit of {limit:g} s", 0.0)
        index, view, legal = t.loop.ask()
        move, failure, seconds, started = await self.think(seat, view, legal, limit)
        if token != t.token or t.closed:
            return  # a person took the seat, or the table closed, while the agent thought
        if failure is not None:
            return self.replace(seat, failure, seconds)
        if not started:
            # Every worker was busy for a whole move time (not this agent's fault): the fallback plays this move.
            log.warning("table %r: no agent thread free for %g s; %r plays seat %d's move", t.name, limit,
                        t.hub.config.fallback, seat.index)
            move = agents.make(t.hub.config.fallback, game=t.game.name).act(view, legal, seat.rng)
        try:
            # The loop checks the answer (None, a non-move, an illegal move: IllegalMoveError naming the seat).
            event, failed = t.through_loop(lambda: t.loop.commit(index, move, legal))
        except (IllegalMoveError, AgentError) as exc:
            return self.replace(seat, failure_text(exc), seconds)
        t.after_move(event, failed)

    async def think(self, seat: Seat, view, legal: list, limit: float) -> tuple[Any, str | None, float, bool]:
        """Run the seat's ``act`` in the pool: ``(answer, None, s, True)``, ``(None, failure, s, True)`` (it raised
        or ran over ``limit``), or ``(None, None, 0, False)`` when no worker started it within ``limit``. The clock
        runs from the moment a thread starts the move. The answer is not checked here: :meth:`GameLoop.commit`
        does that."""
        t = self.table
        loop = asyncio.get_running_loop()
        started = asyncio.Event()
        start_time = [0.0]
        agent, rng = seat.agent, seat.rng

        def run():
            start_time[0] = time.perf_counter()
            loop.call_soon_threadsafe(started.set)
            return agent.act(view, legal, rng)

        job = t.hub.executor.submit(run)
        try:
            await asyncio.wait_for(started.wait(), limit)
        except TimeoutError:
            if job.cancel():
                return None, None, 0.0, False
        except asyncio.CancelledError:
            job.cancel()  # the table is closing: a move still queued must not hold a worker later
            raise
        if not start_time[0]:  # the thread took it just as the wait ended and has not read the clock yet
            start_time[0] = time.perf_counter()
        left = max(0.0, limit - (time.perf_counter() - start_time[0]))
        try:
            move = await asyncio.wait_for(asyncio.wrap_future(job), left)
        except TimeoutError:
            self.overrun = job  # its thread runs on until the agent returns; no second one for this table
            return None, timeout_text(limit, "act"), time.perf_counter() - start_time[0], True
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - an agent's bug must not stop the table
            what = getattr(exc, "what", None)  # an isolated agent's way out of its turn (arena.isolate.AgentFailed)
            text = what if isinstance(what, str) else crash_text("act", exc)
            return None, text, time.perf_counter() - start_time[0], True
        return move, None, time.perf_counter() - start_time[0], True

    def _inline_move(self, seat: Seat) -> None:
        """The fallback's move, on the event loop through the game loop; a random legal move if even it fails."""
        t = self.table
        play: Callable[[], MoveEvent] = t.loop.step
        try:
            event, failed = t.through_loop(play)
        except (IllegalMoveError, AgentError):
            log.exception("table %r: the fallback agent failed; seat %d plays a random legal move", t.name,
                          seat.index)
            event, failed = t.through_loop(lambda: t.loop.play(seat.rng.choice(t.match.legal_moves())))
        t.after_move(event, None if failed is not None and failed.seat == seat.index else failed)

    def replace(self, seat: Seat, failure: str, seconds: float) -> None:
        """The seat's agent failed: the fallback (on the loop) plays for it for the rest of the game."""
        t = self.table
        fallback = t.hub.config.fallback
        log.warning("table %r: agent %r in seat %d %s; %r takes over", t.name, seat.spec, seat.index, failure,
                    fallback)
        old = seat.spec
        self.new_agent(seat, fallback, inline=True)
        t.seating.holder_changed(seat.index)
        t.notify("agent_replaced", {"player_index": seat.index, "agent": old, "replaced_by_name": seat.spec,
                                    "reason": failure, "seconds": round(seconds, 3),
                                    "table": t.info()}, with_view=False)
        t.token += 1
        t.advance()
