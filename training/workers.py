"""The process pools of the training commands: forkserver (or spawn) workers with one BLAS thread each."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

from mulle_env.threads import single_blas_thread

__all__ = ["process_pool"]


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, each started with :func:`mulle_env.threads.single_blas_thread`.

    Start method: ``forkserver`` where available, else ``spawn``; never ``fork``, which can
    copy a lock held by another thread of the parent (a progress bar's) into the child.
    """
    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=single_blas_thread)
