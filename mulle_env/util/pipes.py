"""A command whose reader went away (``mulle-arena ... | head``): it stops quietly, not with a traceback.

When the program reading a command's output exits, the next write to the pipe raises
``BrokenPipeError``. Python would print a traceback for it, and then another one when the
interpreter flushes stdout at exit. Every command line of the project catches it at its
entry point and calls :func:`reader_gone`, which points stdout at the null device (so the
final flush has nowhere to fail) and says, on stderr, what the stop kept.

Not every ``BrokenPipeError`` is the reader's: a worker process that died breaks the pipe to
it too (stable-baselines3's subprocess envs, a pool). So :func:`reader_gone` first asks the
operating system whether stdout's reader has really gone (:func:`stdout_reader_gone`) and
re-raises the error otherwise: a crash is never reported as a quiet stop.

Standard library only, like the rest of :mod:`mulle_env.util`.
"""

from __future__ import annotations

import os
import select
import stat
import sys

__all__ = ["EXIT_READER_GONE", "reader_gone", "silence_stdout", "stdout_reader_gone"]

#: The exit status of a command stopped because its output's reader went away: 128 + SIGPIPE, what a shell
#: reports for a program killed by that signal (a pipeline's other programs see the usual status).
EXIT_READER_GONE = 141

_silenced = False  # stdout was pointed at the null device because its reader went away


def stdout_reader_gone() -> bool:
    """True when stdout is a pipe or socket whose reading end is closed (or was, and stdout is silenced)."""
    if _silenced:
        return True
    try:
        fd = sys.stdout.fileno()
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False  # a file or a terminal: a broken pipe was some other pipe
        poll = select.poll()
        poll.register(fd, 0)  # errors and hang-ups are reported whatever is asked for
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no descriptor behind stdout (an embedding, a test's capture)
        return False


def silence_stdout() -> None:
    """Point stdout's descriptor at the null device: later writes and the exit's flush go nowhere, quietly.

    For code that must still print (its goodbye, a checkpoint's note) after its reader went away.
    """
    global _silenced
    _silenced = True
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # no descriptor behind stdout: nothing to flush at exit
        pass


def reader_gone(prog: str, kept: str = "") -> int:
    """Within ``except BrokenPipeError:``: stop ``prog`` quietly if stdout's reader went away, else re-raise.

    Silences stdout (:func:`silence_stdout`), says on stderr that ``prog`` stopped and what it
    ``kept``, and returns :data:`EXIT_READER_GONE` for the entry point to return. A broken pipe
    that is not stdout's (a dead worker's) is re-raised as it was.
    """
    if not stdout_reader_gone():
        raise  # noqa: PLE0704  (called only inside an except clause: re-raises the error being handled)
    silence_stdout()
    note = f"{prog}: stopped: the program reading its output went away"
    try:
        print(f"{note}{'; ' + kept if kept else ''}", file=sys.stderr)
    except (OSError, ValueError):  # stderr gone too (both piped to the same reader): stop without a word
        pass
    return EXIT_READER_GONE
