"""The process pools of the training commands: forkserver (or spawn) workers with one BLAS thread each."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType

from mulle_env.threads import single_blas_thread

__all__ = ["WorkerPool", "process_pool"]


class WorkerPool(ProcessPoolExecutor):
    """A ``ProcessPoolExecutor`` that, left by an exception, ends its workers instead of waiting for them.

    A plain executor's ``with`` block (and the interpreter's exit) waits for every task a
    worker has started, even after ``shutdown(wait=False, cancel_futures=True)``: a Ctrl-C
    or SIGTERM (which the commands turn into ``KeyboardInterrupt``) then hung for as long as
    the running tasks took, minutes for a teacher's shard. Only a terminal's Ctrl-C, which
    reaches the workers too, stopped them. A task's unfinished work is lost either way and
    done again when the command is rerun (finished shards, rounds and games are on disk).
    """

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool | None:
        if exc_type is not None:
            self.stop()
            return False
        return super().__exit__(exc_type, exc, tb)

    def stop(self) -> None:
        """Cancel the queued tasks and end the worker processes now (SIGTERM; those still there after 10 s, SIGKILL)."""
        # The executor's own table of its processes (CPython's, since 3.2; 3.14 adds terminate_workers()).
        processes = list((getattr(self, "_processes", None) or {}).values())
        self.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            if p.is_alive():
                p.terminate()
        for p in processes:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join(5)
        # Let the executor's own thread see its workers gone and close its pipes now: left to the interpreter's
        # exit, it woke that thread through a pipe already closed ("Exception ignored ... Bad file descriptor").
        self.shutdown(wait=True)


def process_pool(workers: int) -> WorkerPool:
    """A pool of ``workers`` processes, each started with :func:`mulle_env.threads.single_blas_thread`.

    Start method: ``forkserver`` where available, else ``spawn``; never ``fork``, which can
    copy a lock held by another thread of the parent (a progress bar's) into the child.
    Leaving its ``with`` block by an exception, or :meth:`WorkerPool.stop`, ends the workers
    at once.
    """
    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    return WorkerPool(workers, mp_context=ctx, initializer=single_blas_thread)
