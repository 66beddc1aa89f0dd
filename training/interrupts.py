"""Ctrl-C and SIGTERM that say at once what a long command waits for before it stops.

A long stage (labelling, a fit, DMC rounds, arena games) does not stop the instant a signal
comes: workers end, a checkpoint is written. Without a word the terminal looks hung, so the
commands that run such stages (``mulle-train expert``, ``mulle-train exploit``) install
:func:`announcing_interrupts` around them: the first signal prints one line naming what the
command is waiting for, then interrupts as it would have.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["announcing_interrupts"]


@contextlib.contextmanager
def announcing_interrupts(prog: str, waiting_for: Callable[[], str]) -> Iterator[None]:
    """Within the block, the first Ctrl-C or SIGTERM prints ``PROG: Ctrl-C: stopping; waiting for <waiting_for()>``.

    Then the handler that was installed before runs (SIGINT's default raises
    :class:`KeyboardInterrupt`), so the command stops as it did without this. Outside the
    main thread (where signals cannot be handled) it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal that is ignored (SIGINT under nohup or in a background job) stays ignored.
    previous = {sig: h for sig in (signal.SIGINT, signal.SIGTERM)
                if (h := signal.getsignal(sig)) is not signal.SIG_IGN}
    said = [False]

    def handle(signum: int, frame: Any) -> None:
        if not said[0]:
            said[0] = True
            name = "Ctrl-C" if signum == signal.SIGINT else "SIGTERM"
            print(f"\n{prog}: {name}: stopping; waiting for {waiting_for()}", file=sys.stderr, flush=True)
        before = previous[signal.Signals(signum)]
        if callable(before):
            before(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:  # SIG_DFL: end the process as the signal would have, once it is said
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for sig in previous:
        signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
