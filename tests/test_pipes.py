"""Every command line stops quietly when the program reading its output goes away (``mulle-arena ... | head``).

What is checked, in real pipes: the command's status is 141 and stderr holds one line saying what was kept, no
traceback (``mulle-arena`` and ``mulle-train``; ``mulle-play`` had its own handling, now the shared one);
``reader_gone`` itself survives a stdout without a descriptor.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("entry, expected, kept", [
    ("arena.cli:main", EXIT_READER_GONE, "every finished game is saved"),
    ("training.cli:train_main", EXIT_READER_GONE, "run the same command again"),
])
def test_a_command_whose_reader_leaves_stops_with_one_line_and_no_traceback(entry, expected, kept):
    module, func = entry.split(":")
    # The command's own printing, as a long run prints: the argument parser is not what is tested here.
    code = (f"import sys, {module} as m\n"
            f"def chatty(*a, **k):\n"
            f"    for i in range(10**6): print('progress line', i, flush=True)\n"
            f"    return 0\n"
            f"m._main = chatty\n"
            f"sys.exit(m.{func}([]))\n")
    status, err = run_with_closed_reader(code)
    assert status == expected
    assert "Traceback" not in err and "BrokenPipeError" not in err
    assert "the program reading its output went away" in err and kept in err
    assert len(err.strip().splitlines()) == 1


def test_reader_gone_without_a_stdout_descriptor_still_returns_its_status(capsys):
    assert reader_gone("x", "y") == EXIT_READER_GONE  # pytest's capture has no real descriptor: no crash
    assert "x: stopped: the program reading its output went away; y" in capsys.readouterr().err
