"""The Ray backend: the same game tasks on a Ray cluster (``--backend ray``).

Ray is an optional extra (``pip install 'mulle-env[ray]'``). Without ``--ray-address``
a local Ray is started with ``workers`` CPUs; with one (``auto``, ``ray://host:10001``)
the tasks go to that cluster, whose workers must have this package installed.

Each game is one Ray task running :func:`arena.worker.play_task`, so results are the
same as with the process pool. Ray retries a task whose worker process died (up to
``max_attempts`` runs); a game that still fails, or runs past ``game_timeout``, is
recorded as ``aborted``. Results come back to this process, which writes the file, so
durability and resume work exactly as with the process pool.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import time
from typing import Any, Callable, Iterable

from mulle_env.threads import worker_env

from .worker import aborted, play_task

log = logging.getLogger("arena.ray")

#: Seconds a join waits for the cluster's address to answer before saying that nothing does.
CONNECT_TIMEOUT = 5.0


class RayUnavailableError(RuntimeError):
    """No Ray cluster answers at the address given: said in one line, with what to do instead."""


def _probe(address: str) -> None:
    """Refuse at once an explicit ``host:port`` (or ``ray://host:port``) where nothing listens.

    Ray itself retries such an address for minutes, printing its own warnings; "auto" and other
    forms are left to ``ray.init``, which fails fast when it finds no cluster.
    """
    host, sep, port = address.split("://", 1)[-1].rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        # "[::1]:6379": an IPv6 host is written in brackets, which the socket call does not take.
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise RayUnavailableError(
            f"no Ray cluster answers at {address!r} ({exc.strerror or exc}); start one there with "
            "`ray start --head`, or leave --ray-address out to run a local Ray") from None


class RayBackend:
    """Runs tasks as Ray tasks, at most ``2 * workers`` in flight (for cancellation and memory).

    Args:
        address: Ray cluster address; ``None`` starts a local Ray.
        workers: CPUs of the local Ray (and the in-flight window).
        game_timeout: Seconds after which a game is cancelled and recorded as aborted.
        max_attempts: Runs of a game whose worker process died.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 1, game_timeout: float | None = None,
                 max_attempts: int = 3) -> None:
        self.address = address
        self.workers = workers
        self.game_timeout = game_timeout
        self.max_attempts = max_attempts

    def init(self) -> Any:
        """Start a local Ray, or join the cluster at ``address``; return the ``ray`` module.

        A :class:`RayUnavailableError` when no cluster answers at ``address`` (the commands
        join it while checking their arguments, so that is said before any work starts).

        Its tasks get one BLAS thread each (:func:`mulle_env.threads.worker_env`): on a
        cluster through the job's ``runtime_env``, locally also with this import path.
        """
        import ray

        if ray.is_initialized():
            return ray
        env = worker_env()
        if self.address:
            _probe(self.address)
            try:
                ray.init(address=self.address, log_to_driver=True, runtime_env={"env_vars": env})
            except ConnectionError as exc:  # "auto" with no cluster running, a cluster that went away
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise RayUnavailableError(
                    f"no Ray cluster to join at {self.address!r}: {first} (start one with `ray start --head`, "
                    "or leave --ray-address out to run a local Ray)") from None
        else:
            # Local workers get this interpreter's import path, so checkouts and test
            # helper modules import exactly as they do here.
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            # Ray 2.60 leaves its OpenTelemetry metric exporter's thread running after ray.shutdown(), and at exit
            # it read memory exit had freed (a crash after every result was written). A local Ray has no dashboard
            # here to show its metrics, so the exporter is not started, unless the user asked for it.
            os.environ.setdefault("RAY_enable_open_telemetry", "0")
            ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=True,
                     runtime_env={"env_vars": env})
        return ray

    def run(self, tasks: Iterable[dict[str, Any]], on_result: Callable[[dict[str, Any]], None],
            stop: Callable[[], bool] = lambda: False) -> None:
        """Play ``tasks``, calling ``on_result(line)`` here as each ends; stop dispatching once ``stop()``."""
        source = iter(tasks)  # read lazily: memory does not grow with the number of games
        first = next(source, None)
        if first is None:
            return
        pending = [first]  # tasks taken from the source but not sent yet, next one last

        def more() -> bool:
            if not pending:
                task = next(source, None)
                if task is not None:
                    pending.append(task)
            return bool(pending)

        ray = self.init()
        remote = ray.remote(play_task).options(max_retries=self.max_attempts - 1, retry_exceptions=False)
        window = 2 * self.workers
        inflight: dict[str, Any] = {}
        stopping = False
        try:
            while more() or inflight:
                while not stopping and more() and len(inflight) < window:
                    task = pending.pop()
                    inflight[remote.remote(task)] = (task, time.monotonic())
                if not inflight:
                    break
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
                for ref in ready:
                    task, _ = inflight.pop(ref)
                    try:
                        line = ray.get(ref)
                    except Exception as exc:  # worker died on every attempt, or the task errored
                        line = aborted(task, f"ray task failed: {type(exc).__name__}: {exc}".splitlines()[0],
                                       self.max_attempts)
                    on_result(line)
                    if not stopping and stop():
                        stopping = True
                if self.game_timeout:
                    now = time.monotonic()
                    for ref, (task, started) in list(inflight.items()):
                        if now - started > self.game_timeout:
                            ray.cancel(ref, force=True)
                            del inflight[ref]
                            on_result(aborted(task, f"game exceeded the game time limit of {self.game_timeout:g} s"))
                if stopping:
                    for ref in inflight:
                        ray.cancel(ref, force=True)
                    inflight.clear()
                    break
        finally:
            for ref in inflight:
                ray.cancel(ref, force=True)

    def shutdown(self) -> None:
        """Stop a local Ray started by this backend."""
        import ray

        if ray.is_initialized():
            ray.shutdown()
