"""Teacher labelling as Ray tasks across a cluster (``--backend ray``; the ``ray`` extra).

Each shard of a teacher data set is one Ray task (:func:`training.teacher.label_shard`):
it plays the shard's games on whatever node Ray picks and sends the shard file's bytes
back to this process, which writes them (the nodes need no shared disk). A shard's games
depend on the data set's seed and the shard's number alone, so the data are byte for byte
those of the local backend (tested). A node lost mid-run loses only the shards it was
playing: Ray runs those tasks again elsewhere (``max_attempts`` runs in all), and
shards already written stay written.

Fits stay on the node that runs the command. Arena screens go through the arena's own
Ray backend (:class:`arena.ray_backend.RayBackend`), which also starts (or joins) Ray.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["RayLabeller"]


def _label(shard: int, *rest: Any) -> tuple[int, bytes]:
    from mulle_env.threads import single_blas_thread

    single_blas_thread()
    from .teacher import label_shard

    return label_shard(shard, *rest)


class RayLabeller:
    """Runs teacher shards as Ray tasks, at most ``2 * workers`` in flight.

    Args:
        address: A Ray cluster's address (``auto``, ``host:6379``, ``ray://host:10001``);
            ``None`` starts a local Ray with ``workers`` CPUs.
        workers: CPUs of a local Ray, and half the in-flight window.
        max_attempts: Runs of a shard whose worker or node died.
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 1, max_attempts: int = 4) -> None:
        self.address = address
        self.workers = workers
        self.max_attempts = max_attempts

    def ray(self) -> Any:
        """The ``ray`` module, initialised (joining ``address`` or starting a local Ray) the way the arena does."""
        from arena.ray_backend import RayBackend

        # One way to start or join Ray for the whole project: the arena's.
        return RayBackend(self.address, self.workers).init()

    def run(self, todo: list[int], rest: tuple[Any, ...], on_done: Callable[[int, int, bytes], None],
            stop: Callable[[], bool] = lambda: False) -> None:
        """Label shards ``todo`` (``rest``: :func:`~training.teacher.label_shard`'s other arguments).

        ``on_done(shard, decisions, data)`` runs here as each shard arrives; no new shard is
        sent once ``stop()`` is true (those in flight are finished).
        """
        ray = self.ray()
        remote = ray.remote(_label).options(max_retries=self.max_attempts - 1, retry_exceptions=False)
        pending = list(reversed(todo))
        inflight: dict[Any, int] = {}  # Ray's object refs -> shard
        try:
            while pending or inflight:
                while pending and len(inflight) < 2 * self.workers and not stop():
                    k = pending.pop()
                    inflight[remote.remote(k, *rest)] = k
                if not inflight:
                    break
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0)
                for ref in ready:
                    k = inflight.pop(ref)
                    n, data = ray.get(ref)
                    on_done(k, n, data)
                if stop() and not inflight:
                    break
        finally:
            for ref in inflight:
                ray.cancel(ref, force=True)
            time.sleep(0)  # let Ray's cancellation go out before the caller moves on
