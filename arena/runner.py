"""The process-pool backend: runs game tasks on local worker processes, with a watchdog.

Why not ``concurrent.futures.ProcessPoolExecutor``: when one of its workers dies the
whole pool is marked broken and every in-flight game fails with it, without saying
which game killed it; and a game stuck in C code cannot be stopped without killing the
pool. Here each worker is a ``multiprocessing.Process`` with its own pipe, so the parent
always knows which game each worker is playing:

* a worker that dies while idle (between games) is replaced when its next game is
  dispatched, before or as the send fails; no game is lost or charged an attempt;
* a worker that dies (``kill -9``, segfault, out of memory) is replaced, and its game
  is played again on a fresh worker, up to ``max_attempts`` times in all, then recorded
  as ``aborted`` (a crash of the process is not the agent's fault, so it is no forfeit);
* a game that runs past ``game_timeout`` seconds (the per-move SIGALRM limit could not
  interrupt it) has its worker killed and replaced and is recorded as ``aborted``; the
  clock starts when the worker takes the game (it says so), so a fresh worker's start-up
  (imports, on a loaded machine) is no game's time;
* aborted games count for nobody and are played again when the command is re-run.

Start method: ``forkserver`` where available (Linux, macOS), else ``spawn``; never plain
``fork``, which can copy a lock held by another thread of the parent (progress bar,
logging) into the child. Workers log through a ``QueueHandler``; one listener thread in
the parent hands their records to the parent's loggers (this is why the
``multiprocessing-logging`` package, which needs ``fork``, is not used).
"""

from __future__ import annotations

import logging
import logging.handlers
import multiprocessing as mp
import signal
import time
from collections import deque
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Iterable, Protocol

from mulle_env.threads import single_blas_thread

from .worker import aborted, play_task

log = logging.getLogger("arena.runner")

#: Modules every worker needs; the forkserver imports them once for all workers.
PRELOAD = ["mulle_env", "agents", "agents.builtin", "arena.worker"]


class Backend(Protocol):
    """What :func:`arena.tournament.run` needs of a backend (:class:`ProcessBackend`, the Ray backend)."""

    def run(self, tasks: Iterable[dict[str, Any]], on_result: Callable[[dict[str, Any]], None],
            stop: Callable[[], bool] = ...) -> None:
        """Play ``tasks``, calling ``on_result(line)`` here as each ends; stop dispatching once ``stop()``."""


def default_start_method() -> str:
    """``forkserver`` if this platform has it, else ``spawn``."""
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


#: What a worker sends when it takes a task, before the game's result.
BEGUN = "begun"
#: Seconds a worker may take to start and set a game up (its agents built) before it counts as hung.
STARTUP_LIMIT = 120.0


def _worker_main(conn: Connection, log_queue: Any, level: int) -> None:
    # The parent decides what Ctrl-C and SIGTERM mean (save, stop workers, report); workers
    # ignore both, also when the signal goes to the whole process group.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    single_blas_thread()  # workers share the cores: a threaded BLAS makes small products slower (mulle_env.threads)
    root = logging.getLogger()
    root.handlers[:] = [logging.handlers.QueueHandler(log_queue)]
    root.setLevel(level)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if task is None:
            return
        try:
            # The game's clock starts once it is set up, not at the send: a fresh worker's
            # start-up (imports, agents built, on a loaded machine) is no game's time.
            line = play_task(task, on_begin=lambda: conn.send(BEGUN))
        except Exception as exc:  # the game or arena failed, not an agent: nobody forfeits
            log.exception("game %s failed outside the agents", task.get("game_id"))
            line = aborted(task, f"arena error: {type(exc).__name__}: {exc}")
        try:
            conn.send(line)
        except (EOFError, OSError):
            return


class _Forward(logging.Handler):
    """Hands a worker's log record to the parent's logger of the same name."""

    def emit(self, record: logging.LogRecord) -> None:
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(record.levelno):
            logger.handle(record)


class _Pending:
    """Tasks still to play: an iterator read lazily, plus tasks put back at the front.

    The schedule is consumed as workers free up, so memory does not grow with the number
    of games (``--games 1000000000`` starts at once).
    """

    def __init__(self, tasks: Iterable[dict[str, Any]]) -> None:
        self._source = iter(tasks)
        self._front: deque[dict[str, Any]] = deque()

    def at_least(self, n: int) -> int:
        """How many tasks are pending, counting at most ``n`` (reads ahead up to ``n``)."""
        while len(self._front) < n:
            task = next(self._source, None)
            if task is None:
                break
            self._front.append(task)
        return min(n, len(self._front))

    def __bool__(self) -> bool:
        return self.at_least(1) > 0

    def popleft(self) -> dict[str, Any]:
        if not self:
            raise IndexError("no task pending")
        return self._front.popleft()

    def appendleft(self, task: dict[str, Any]) -> None:
        self._front.appendleft(task)


class _Slot:
    __slots__ = ("proc", "conn", "task", "started", "begun")

    def __init__(self, proc: BaseProcess, conn: Connection) -> None:
        self.proc = proc
        self.conn = conn
        self.task: dict[str, Any] | None = None
        self.started = 0.0  # when the task was sent, then when the worker began it
        self.begun = False

    def deadline(self, game_timeout: float) -> float:
        """When this slot's task counts as hung: the game limit once begun, the startup limit before."""
        return self.started + (game_timeout if self.begun else max(STARTUP_LIMIT, game_timeout))


class ProcessBackend:
    """Runs tasks on ``workers`` local processes (see the module docstring).

    Args:
        workers: Number of worker processes.
        start_method: ``"forkserver"``, ``"spawn"`` (or ``"fork"``); default
            :func:`default_start_method`.
        game_timeout: Seconds after which a game is abandoned (``None``: never).
        max_attempts: Times a game is tried when its worker process dies.
    """

    name = "process"

    def __init__(
        self,
        workers: int = 1,
        start_method: str | None = None,
        game_timeout: float | None = None,
        max_attempts: int = 3,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers!r}")
        self.workers = workers
        self.start_method = start_method or default_start_method()
        self.game_timeout = game_timeout
        self.max_attempts = max_attempts
        self.replaced = 0

    def _spawn(self, ctx: Any, log_queue: Any) -> _Slot:
        parent, child = ctx.Pipe()
        level = logging.getLogger().getEffectiveLevel()
        proc = ctx.Process(target=_worker_main, args=(child, log_queue, level), daemon=True, name="arena-worker")
        proc.start()
        child.close()
        return _Slot(proc, parent)

    def run(
        self,
        tasks: Iterable[dict[str, Any]],
        on_result: Callable[[dict[str, Any]], None],
        stop: Callable[[], bool] = lambda: False,
    ) -> None:
        """Play ``tasks`` (in order of dispatch), calling ``on_result(line)`` in this process as each ends.

        After each result ``stop()`` is asked; once it is true nothing more is dispatched
        and games in flight are cancelled (their workers are stopped).
        """
        pending = _Pending(tasks)
        if not pending:
            return
        ctx = mp.get_context(self.start_method)
        if self.start_method == "forkserver":
            ctx.set_forkserver_preload(PRELOAD)
        log_queue = ctx.Queue()
        listener = logging.handlers.QueueListener(log_queue, _Forward())
        listener.start()
        attempts: dict[str, int] = {}
        slots = [self._spawn(ctx, log_queue) for _ in range(pending.at_least(self.workers))]
        stopping = False
        fresh_deaths = 0  # worker deaths with no finished game in between
        try:
            while True:
                if not stopping:
                    for i, s in enumerate(slots):
                        if s.task is None and pending:
                            slots[i], fresh_deaths = self._dispatch(s, pending, ctx, log_queue, fresh_deaths)
                busy = [s for s in slots if s.task is not None]
                if not busy:
                    if pending and not stopping:
                        continue  # every send found a dead worker; the slots hold fresh ones now
                    break
                watched = [s.conn for s in busy] + [s.proc.sentinel for s in busy]
                ready = set(wait(watched, timeout=self._wait_time(busy)))
                now = time.monotonic()
                for i, s in enumerate(slots):
                    if s.task is None:
                        continue
                    task = s.task
                    if s.conn in ready:
                        try:
                            line = s.conn.recv()
                        except (EOFError, OSError):
                            line = None
                        if line == BEGUN:
                            s.started, s.begun = now, True
                            continue
                        if line is not None:
                            s.task = None
                            fresh_deaths = 0
                            on_result(line)
                            if not stopping and stop():
                                stopping = True
                            continue
                    if s.proc.sentinel in ready or not s.proc.is_alive() or (s.conn in ready):
                        n = attempts[task["game_id"]] = attempts.get(task["game_id"], 0) + 1
                        code = s.proc.exitcode
                        log.warning("worker %s died (exit code %s) playing %s (attempt %d of %d)",
                                    s.proc.pid, code, task["game_id"], n, self.max_attempts)
                        if n < self.max_attempts:
                            pending.appendleft(task)
                        else:
                            why = f"worker process died (exit code {code}) on each of {n} attempts"
                            on_result(aborted(task, why, n))
                            if not stopping and stop():
                                stopping = True
                        fresh_deaths = self._count_death(fresh_deaths, code)
                        slots[i] = self._replace(s, ctx, log_queue)
                    elif self.game_timeout and now > s.deadline(self.game_timeout):
                        if s.begun:
                            log.warning("game %s exceeded %g s; its worker %s is replaced",
                                        task["game_id"], self.game_timeout, s.proc.pid)
                            why = f"game exceeded the game time limit of {self.game_timeout:g} s"
                        else:
                            limit = max(STARTUP_LIMIT, self.game_timeout)
                            log.warning("worker %s did not begin game %s within %g s; it is replaced",
                                        s.proc.pid, task["game_id"], limit)
                            why = (f"the game did not begin within {limit:g} s (worker start-up, the game's set-up "
                                   "or building its agents hung)")
                        on_result(aborted(task, why))
                        if not stopping and stop():
                            stopping = True
                        slots[i] = self._replace(s, ctx, log_queue)
                if stopping:
                    for i, s in enumerate(slots):
                        if s.task is not None:
                            self._kill(s)
                            s.task = None
                    break
        finally:
            for s in slots:
                if s.task is None and s.proc.is_alive():
                    try:
                        s.conn.send(None)
                    except (EOFError, OSError):
                        pass
                else:
                    self._kill(s)
            for s in slots:
                s.proc.join(timeout=2)
                if s.proc.is_alive():
                    self._kill(s)
                s.conn.close()
            listener.stop()
            log_queue.close()

    def _dispatch(self, slot: _Slot, pending: _Pending, ctx: Any, log_queue: Any, fresh_deaths: int
                  ) -> tuple[_Slot, int]:
        """Send the next pending task to the idle ``slot``; return the slot (maybe a new one) and the death count.

        Only busy workers are watched, so an idle one may have died unnoticed (killed,
        out of memory): a dead one is replaced before the send, and one that dies just
        then (``BrokenPipeError``) is replaced and the task put back. Neither is the
        game's fault, so it costs the game no attempt.
        """
        if not slot.proc.is_alive():
            log.warning("idle worker %s died (exit code %s); replacing it", slot.proc.pid, slot.proc.exitcode)
            fresh_deaths = self._count_death(fresh_deaths, slot.proc.exitcode)
            slot = self._replace(slot, ctx, log_queue)
        task = pending.popleft()
        try:
            slot.conn.send(task)
        except OSError as exc:
            log.warning("worker %s could not take game %s (%s); replacing it", slot.proc.pid, task["game_id"], exc)
            pending.appendleft(task)
            fresh_deaths = self._count_death(fresh_deaths, slot.proc.exitcode)
            return self._replace(slot, ctx, log_queue), fresh_deaths
        slot.task, slot.started, slot.begun = task, time.monotonic(), False
        return slot, fresh_deaths

    def _count_death(self, fresh_deaths: int, code: int | None) -> int:
        fresh_deaths += 1
        if fresh_deaths > max(10, 3 * self.workers):
            raise RuntimeError(
                f"{fresh_deaths} worker processes died in a row with no game finished "
                f"(last exit code {code}); see the log above"
            )
        return fresh_deaths

    def _wait_time(self, busy: list[_Slot]) -> float:
        if not self.game_timeout:
            return 1.0
        now = time.monotonic()
        left = min(s.deadline(self.game_timeout) - now for s in busy)
        return max(0.01, min(1.0, left))

    def _replace(self, slot: _Slot, ctx: Any, log_queue: Any) -> _Slot:
        self._kill(slot)
        slot.conn.close()
        self.replaced += 1
        return self._spawn(ctx, log_queue)

    @staticmethod
    def _kill(slot: _Slot) -> None:
        if slot.proc.is_alive():
            slot.proc.kill()
        slot.proc.join(timeout=5)
