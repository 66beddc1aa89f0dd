"""SIGTERM handled like Ctrl-C: a clean shutdown that finishes writing, then exit code 143.

``kill -TERM`` (a job scheduler, ``systemctl stop``, a container runtime ending a run) by
default ends a process at once: no last results line, no report, and the
``multiprocessing`` semaphores the run holds are left for the resource tracker to
complain about. Inside :class:`TerminateAsInterrupt` a SIGTERM raises
``KeyboardInterrupt`` in the main thread instead, so the same code that handles Ctrl-C
stops the workers, closes the results file and writes the report; the command then
exits with :attr:`TerminateAsInterrupt.exit_code` (130 after Ctrl-C, 143 after SIGTERM:
128 + the signal's number, as a shell reports a process the signal ended).

Standard library only.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["TerminateAsInterrupt", "deferred_interrupts"]


class TerminateAsInterrupt:
    """Context manager: SIGTERM raises ``KeyboardInterrupt`` inside the block (main thread only).

    Only the first SIGTERM interrupts: one that arrives while the shutdown it started is
    under way is ignored, so the shutdown can finish (SIGKILL still ends the process).
    The previous handler comes back when the block ends.

    >>> with TerminateAsInterrupt() as stop:
    ...     stop.exit_code
    130
    """

    def __init__(self) -> None:
        #: The signal that interrupted the block: SIGINT unless a SIGTERM came.
        self.signum = signal.SIGINT
        self._previous: Callable[[int, FrameType | None], Any] | int | None = None
        self._installed = False

    @property
    def terminated(self) -> bool:
        """True once a SIGTERM arrived."""
        return self.signum == signal.SIGTERM

    @property
    def exit_code(self) -> int:
        """128 + the interrupting signal: 130 for Ctrl-C (SIGINT), 143 for SIGTERM."""
        return 128 + int(self.signum)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.terminated:
            return  # already shutting down because of the first one
        self.signum = signal.SIGTERM
        raise KeyboardInterrupt

    def __enter__(self) -> TerminateAsInterrupt:
        if hasattr(signal, "SIGTERM") and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGTERM, self._previous)
            self._installed = False


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Ctrl-C and SIGTERM that arrive inside the block take effect as it ends (main thread, POSIX).

    For work that must not be cut in half by a ``KeyboardInterrupt``: a results line written
    but not yet counted made a report that said 7 games while the file held 8. Inside the
    block both signals go to a handler that only notes them; as the block ends the previous
    handlers come back and the first signal noted is handed to its own (raising
    ``KeyboardInterrupt`` after the block, or whatever that handler does). Masking the
    signals with ``pthread_sigmask`` held them only while the main thread was the process's
    only thread: the kernel gives a process-directed signal to any thread not blocking it (a
    BLAS or stepper worker), and Python runs the handler in the main thread at once. Elsewhere
    (another thread) a no-op: only the main thread receives ``KeyboardInterrupt``.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        noted.append(signum)

    held = [s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None)) if s is not None]
    previous: dict[int, Any] = {}
    try:
        for s in held:
            previous[s] = signal.signal(s, note)
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if noted:
            _deliver(noted[0], previous[noted[0]])


def _deliver(signum: int, handler: Any) -> None:
    """Hand a signal held by :func:`deferred_interrupts` to the handler it would have met."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)  # the default action: the process ends
    # SIG_IGN, or a handler not installed from Python (None): the signal would have been ignored or lost.
