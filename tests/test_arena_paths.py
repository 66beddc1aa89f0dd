"""Every path mulle-arena reads or writes is a regular file, checked before the first game.

A device (``/dev/full``, ``/dev/null``), a FIFO or a socket is refused with exit code 2
and a message naming the flag; the results file is read line by line with a bound on
each line; a write that fails mid-run (a full disk) ends the run with a clear error and
loses none of the games written before it.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena import Plan, cli, run
from arena import results as results_mod
from arena.worker import time_limit
from mulle_env.util.files import PathError

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"/dev/full": "is a character device, not a regular file",
         "/dev/null": "is a character device, not a regular file",
         "fifo": "is a FIFO (named pipe), not a regular file"}


def _path(tmp_path, kind: str) -> str:
    if kind != "fifo":
        return kind
    fifo = tmp_path / "fifo.jsonl"
    if not fifo.exists():
        os.mkfifo(fifo)
    return str(fifo)


@pytest.mark.parametrize("flag", ["--out", "--report", "--markdown", "--plot"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_an_output_that_is_no_regular_file_exits_2_before_any_game(tmp_path, capsys, monkeypatch, flag, kind):
    monkeypatch.chdir(tmp_path)
    path = _path(tmp_path, kind)
    with time_limit(30), pytest.raises(SystemExit) as exc:  # a FIFO opened for writing would hang here
        cli.main(["random", "heuristic", "--games", "2", "--rule", "sets=1", flag, path])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{flag} {path!r} {KINDS[kind]}" in err and "Traceback" not in err
    assert not (tmp_path / "results.jsonl").exists()  # nothing was created or played


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_out_dev_full_from_the_command_line(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "mulle-arena"), "random", "heuristic", "--games", "2",
                        "--out", "/dev/full"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and "--out '/dev/full' is a character device, not a regular file" in p.stderr
    assert "Traceback" not in p.stderr and list(tmp_path.iterdir()) == []


def test_the_results_file_of_a_run_must_be_a_regular_file(tmp_path):
    fifo = _path(tmp_path, "fifo")
    plan = Plan(("random", "heuristic"), 2, ruleset={"sets": 1})
    with time_limit(30):
        with pytest.raises(PathError, match="is a FIFO"):
            run(plan, fifo, progress=False)
        with pytest.raises(PathError, match="the results file .* is a FIFO"):
            results_mod.load(fifo)


def test_results_lines_are_read_with_a_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(results_mod, "MAX_LINE_BYTES", 400)
    good = {"game_id": "random|heuristic|7|x", "specs": ["random", "heuristic"], "seed": 7, "status": "aborted",
            "scores": None, "winner": None}
    long = dict(good, error="x" * 1000)  # valid JSON, but longer than any game writes
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(long) + "\n" + json.dumps(good) + "\n" + "y" * 900)
    loaded = results_mod.load(str(path))
    assert len(loaded.lines) == 2 and loaded.too_long == [2]
    assert loaded.torn_size == 900 and len(loaded.torn) == 400  # a torn tail too is read only up to the bound
    assert Path(loaded.torn_backup).read_text() == "y" * 900  # ...and saved whole
    assert path.read_text().endswith("\n") and path.read_text().count("\n") == 3
    assert any("longer than 400 bytes" in note for note in loaded.problems())


def test_a_full_disk_mid_run_ends_with_a_clear_error_and_keeps_the_games(tmp_path):
    out = tmp_path / "r.jsonl"
    cmd = [sys.executable, str(ROOT / "scripts" / "mulle-arena"), "random", "heuristic", "--games", "6",
           "--rule", "sets=1", "--out", str(out), "--quiet"]

    def small_disk():  # in the child: files may not grow past 2000 bytes, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))

    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=small_disk, timeout=120)
    assert p.returncode == 1, p.stderr
    assert "writing the results file" in p.stderr and "game(s) this run wrote before are saved" in p.stderr
    assert "Traceback" not in p.stderr
    kept = [json.loads(x) for x in out.read_text().splitlines(keepends=True) if x.endswith("\n")]
    assert 1 <= len(kept) < 6
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    ids = [json.loads(x)["game_id"] for x in out.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 6  # every game once: the torn line was cut off and replayed
