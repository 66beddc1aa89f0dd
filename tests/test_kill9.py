"""kill -9 at random moments and resume: the harness (benchmarks/kill9_harness.py) on its quicker targets.

Slow (``-m slow``): each target runs an uninterrupted run and several killed ones. The whole
harness (every long run of the project, at least 20 kills) is
``python benchmarks/kill9_harness.py --out benchmarks/results/kill9.json``.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _harness():
    spec = importlib.util.spec_from_file_location("kill9_harness", ROOT / "benchmarks" / "kill9_harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("target", ["arena", "data", "live", "dmc"])
def test_a_run_killed_at_random_moments_resumes_losing_nothing_finished(target, tmp_path):
    out = tmp_path / "kill9.json"
    code = _harness().main(["--kills", "3", "--only", target, "--work", str(tmp_path / "work"), "--seed", "7",
                            "--out", str(out)])
    result = json.loads(out.read_text())["results"][0]
    assert code == 0 and result["ok"], result


def test_the_harness_names_every_long_run():
    # The targets issue 53 lists: a long run added later belongs here too.
    assert set(_harness().TARGETS) == {"ppo", "expert", "dmc", "exploit", "data", "arena", "live"}


def test_a_write_removes_the_temporary_a_killed_writer_left_and_keeps_a_live_ones(tmp_path):
    import subprocess
    import sys

    from mulle_env.util.files import replacing

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = tmp_path / f".spec.json.{int(dead.stdout)}.tmp"  # what kill -9 mid-write left (the harness found them)
    live = tmp_path / f".spec.json.{os.getppid()}.tmp"  # a writer that still runs: not ours to remove
    other = tmp_path / ".other.json.1.tmp"  # another file's
    for p in (gone, live, other):
        p.write_text("half")
    with replacing(tmp_path / "spec.json") as tmp:
        tmp.write_text("{}")
    assert (tmp_path / "spec.json").read_text() == "{}"
    assert not gone.exists() and live.exists() and other.exists()
