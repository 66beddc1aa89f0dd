"""Every command line stops quietly when the program reading its output goes away (``mulle-arena ... | head``).

What is checked, in real pipes: the command's status is 141 and stderr holds one line saying what was kept, no
traceback (``mulle-arena`` and ``mulle-train``; ``mulle-play`` had its own handling, now the shared one); a broken
pipe that is not stdout's (a dead worker's) still ends in its traceback and status 1.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mulle_env.util import pipes
from mulle_env.util.pipes import EXIT_READER_GONE, reader_gone

ROOT = Path(__file__).resolve().parents[1]


def run_with_closed_reader(code: str) -> tuple[int, str]:
    """Run ``code`` in a fresh interpreter whose stdout is a pipe nobody reads any more."""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)  # the command has started writing ...
    proc.stdout.close()  # ... and the reader goes away, as `head` does
    err = proc.stderr.read().decode()
    return proc.wait(timeout=300), err


@pytest.mark.parametrize("entry, argv, kept", [
    ("arena.cli:main", [], "every finished game is saved"),
    ("training.cli:train_main", ["data", "d"], "run the same command again"),
    ("training.cli:train_main", ["ppo"], "continue with the same command and --resume"),
])
def test_a_command_whose_reader_leaves_stops_with_one_line_and_no_traceback(entry, argv, kept):
    module, func = entry.split(":")
    # The command's own printing, as a long run prints: the argument parser is not what is tested here.
    code = (f"import sys, {module} as m\n"
            f"def chatty(*a, **k):\n"
            f"    for i in range(10**6): print('progress line', i, flush=True)\n"
            f"    return 0\n"
            f"m._main = chatty\n"
            f"sys.exit(m.{func}({argv!r}))\n")
    status, err = run_with_closed_reader(code)
    assert status == EXIT_READER_GONE
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert "the program reading its output went away" in err and kept in err
    assert len(err.strip().splitlines()) == 1


def test_a_broken_pipe_that_is_not_stdouts_is_a_crash_reported_as_one():
    # stdout is a healthy pipe that is read to the end; the broken pipe is another one (a dead worker's).
    code = ("import sys, arena.cli as m\n"
            "def dead_worker(*a, **k):\n"
            "    print('working', flush=True)\n"
            "    raise BrokenPipeError(32, 'Broken pipe (a worker died)')\n"
            "m._main = dead_worker\n"
            "sys.exit(m.main([]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 1 and done.stdout == "working\n"
    assert "Traceback" in done.stderr and "a worker died" in done.stderr
    assert "went away" not in done.stderr


def test_reader_gone_outside_a_pipe_re_raises_and_after_silencing_stops_quietly(capsys, monkeypatch):
    with pytest.raises(BrokenPipeError, match="other"):
        try:
            raise BrokenPipeError("other")
        except BrokenPipeError:
            reader_gone("x")  # pytest's capture is no pipe: this broken pipe was not stdout's
    monkeypatch.setattr(pipes, "_silenced", True)  # as after silence_stdout (PPO silences before checkpointing)
    try:
        raise BrokenPipeError
    except BrokenPipeError:
        assert reader_gone("x", "y") == EXIT_READER_GONE
    assert "x: stopped: the program reading its output went away; y" in capsys.readouterr().err
