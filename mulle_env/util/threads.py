"""One BLAS thread in every worker process the project starts, set one way for the whole project.

Agents and fits multiply small matrices (a decision's few afterstates through a net, a
search's batched rollouts). A multithreaded BLAS makes those products many times slower
on loaded cores (measured 4-90x on this project's 2 shared cores: the threads of two
workers fight over two cores), so every *worker process* the project starts (arena
games, teacher labelling, DMC rounds, warm-start games, Ray tasks) runs with one BLAS
thread. Commands that run in one process (``mulle-play``, a fit) keep whatever the user
set (``OPENBLAS_NUM_THREADS`` and friends, or nothing).

The one mechanism:

* :func:`single_blas_thread`: called first thing in a worker process. It sets the
  thread variables of every common BLAS (read when numpy loads its BLAS) and, when
  numpy is already loaded (a forkserver preloads it), limits the loaded BLAS through
  ``threadpoolctl``;
* :func:`worker_env`: the same variables as a dict, for environments of processes
  started elsewhere (a Ray ``runtime_env``, a subprocess).

Standard library only (``threadpoolctl`` is a dependency of the package, imported when needed).
"""

from __future__ import annotations

import os
import sys

__all__ = ["THREAD_VARIABLES", "single_blas_thread", "worker_env"]

#: The variables BLAS and OpenMP libraries read for their thread count when they load.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

_LIMITED = False


def worker_env() -> dict[str, str]:
    """The environment variables that give a new process one BLAS thread."""
    return dict.fromkeys(THREAD_VARIABLES, "1")


def single_blas_thread() -> bool:
    """Give this (worker) process one BLAS thread; True if a loaded BLAS was limited or none is loaded yet.

    Call it in worker processes only: a command's own process keeps the user's setting.
    Calling it again costs nothing.
    """
    global _LIMITED
    os.environ.update(worker_env())
    if _LIMITED or "numpy" not in sys.modules:
        return True
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # numpy already loaded its BLAS with the threads it found: nothing more to do here
        return False
    threadpool_limits(1, user_api="blas")
    _LIMITED = True
    return True
