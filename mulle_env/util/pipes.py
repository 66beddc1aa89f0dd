"""A command whose reader went away (``mulle-arena ... | head``): it stops quietly, not with a traceback.

When the program reading a command's output exits, the next write to the pipe raises
``BrokenPipeError``. Python would print a traceback for it, and then another one when the
interpreter flushes stdout at exit. Every command line of the project catches it at its
entry point and calls :func:`reader_gone`, which points stdout at the null device (so the
final flush has nowhere to fail) and says, on stderr, what the stop kept.

Standard library only, like the rest of :mod:`mulle_env.util`.
"""

from __future__ import annotations

import os
import sys

__all__ = ["EXIT_READER_GONE", "reader_gone"]

#: The exit status of a command stopped because its output's reader went away: 128 + SIGPIPE, what a shell
#: reports for a program killed by that signal (a pipeline's other programs see the usual status).
EXIT_READER_GONE = 141


def reader_gone(prog: str, kept: str = "") -> int:
    """Silence stdout for the rest of the process, say on stderr that ``prog`` stopped and what it ``kept``.

    Returns :data:`EXIT_READER_GONE` for the entry point to return.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout descriptor (an embedding, a test's capture): nothing to flush
        pass
    note = f"{prog}: stopped: the program reading its output went away"
    try:
        print(f"{note}{'; ' + kept if kept else ''}", file=sys.stderr)
    except (OSError, ValueError):  # stderr gone too (both piped to the same reader): stop without a word
        pass
    return EXIT_READER_GONE
