"""``ruff check .`` passes: part of the default test run, so CI (which runs exactly the
README's test command, ``python -m pytest``) lints too. ``ruff`` is in the ``test`` extra;
the rules are selected in pyproject.toml (line length 120)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_check_passes():
    pytest.importorskip("ruff", reason="ruff comes with the test extra: pip install -e '.[test]'")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
