"""SIGTERM handled as Ctrl-C by every training command: a clean shutdown that finishes writing, exit 143.

``kill -TERM`` (a scheduler ending a job, ``timeout``, a container stop) used to kill a
training command on the spot, mid-write. Inside :func:`terminate_as_interrupt` a SIGTERM
raises ``KeyboardInterrupt`` in the main thread, so it takes exactly the path Ctrl-C
takes (shards and checkpoints finished, the manifest written, worker pools shut down),
and :func:`exit_code` then says 143 (128 + SIGTERM) instead of Ctrl-C's 130.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import NoReturn

__all__ = ["exit_code", "terminate_as_interrupt"]

_received: list[int] = []


def _raise(signum: int, frame: FrameType | None) -> NoReturn:
    _received.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises ``KeyboardInterrupt`` (main thread only; elsewhere a no-op)."""
    _received.clear()
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_code() -> int:
    """The exit status of an interrupted command: 143 after SIGTERM, else 130 (Ctrl-C)."""
    return 128 + signal.SIGTERM if signal.SIGTERM in _received else 130
