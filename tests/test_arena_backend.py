"""Which engine ran: every results line records it, the reports show it, a silent fallback is said.

The game module's ``BACKEND`` (an optional attribute of the arena's game protocol) goes
into each line as ``engine_backend``; lines written before it was recorded still read.
``mulle-arena`` prints the game's ``fallback_notice()`` when the compiled core did not
build and the Python engine runs in its place.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mulle_env as me
from arena import Plan, ProcessBackend, cli, report, run
from arena.results import check_line

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"


def _lines(path) -> list[dict]:
    return [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]


def test_every_line_and_every_report_names_the_engine_backend(tmp_path):
    out = tmp_path / "r.jsonl"
    o = run(Plan(("random", "heuristic"), 2, ruleset={"sets": 1}), str(out), ProcessBackend(1), progress=False)
    assert [ln["engine_backend"] for ln in _lines(out)] == [me.BACKEND] * 2
    rep = report.build(o)
    assert rep["tournament"]["engine_backends"] == {me.BACKEND: 2}
    assert f"; engine: {me.BACKEND}\n" in report.text(rep)
    assert f"engine backend: {me.BACKEND}\n" in report.markdown(rep)


def test_lines_written_before_the_backend_was_recorded_still_count(tmp_path):
    from test_arena_records import PLANS

    name = "arena_pre_match_ok.jsonl"
    out = tmp_path / name
    shutil.copy(DATA / name, out)
    assert not any("engine_backend" in ln for ln in _lines(out))
    old = run(PLANS[name], str(out), ProcessBackend(1), progress=False)
    assert old.played == 0 and len(old.lines) == 6
    rep = report.build(old)
    assert rep["tournament"]["engine_backends"] == {"not recorded": 6}
    assert "; engine: not recorded" in report.text(rep)
    more = Plan(PLANS[name].specs, 3, seed=11, ruleset={"sets": 1}, save_games=True,
                worker_init="arena_agents:register")
    mixed = run(more, str(out), ProcessBackend(1), progress=False)
    assert mixed.played == 3
    assert report.build(mixed)["tournament"]["engine_backends"] == {me.BACKEND: 3, "not recorded": 6}
    assert f"engine: {me.BACKEND} (3 games), not recorded (6 games)" in report.text(report.build(mixed))


def test_a_line_with_a_malformed_engine_backend_breaks_the_schema():
    line = {"game_id": "a|b|1|x", "specs": ["a", "b"], "seed": 1, "status": "aborted", "scores": None,
            "winner": None}
    assert check_line(line) is None and check_line({**line, "engine_backend": None}) is None
    assert "'engine_backend' must be a non-empty string" in check_line({**line, "engine_backend": 5})


def _arena(tmp_path, env_extra: dict, sitecustomize: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MULLE_ENGINE"} | env_extra
    paths = [str(ROOT), str(ROOT / "tests")]
    if sitecustomize is not None:  # runs in this interpreter and in every worker it starts
        site = tmp_path / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(sitecustomize)
        paths.insert(0, str(site))
    env["PYTHONPATH"] = os.pathsep.join(paths)
    cmd = [sys.executable, str(ROOT / "scripts" / "mulle-arena"), "random", "heuristic", "--games", "2",
           "--rule", "sets=1", "--out", str(tmp_path / "r.jsonl"), "--quiet"]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


@pytest.mark.skipif("c" not in me.engine.backends(), reason="needs the compiled core to take it away")
def test_a_run_on_the_python_engine_because_the_core_is_missing_says_so(tmp_path):
    # As if the C core never built: importing it fails (sys.modules None makes find_spec say "absent").
    p = _arena(tmp_path, {}, "import sys\nsys.modules['mulle_env.engine._core'] = None\n")
    assert p.returncode == 0, p.stderr
    assert "mulle-arena: warning: running on the pure-Python engine (about 10x slower)" in p.stderr
    assert p.stderr.count("pure-Python engine") == 1
    assert [ln["engine_backend"] for ln in _lines(tmp_path / "r.jsonl")] == ["python", "python"]
    rep = json.loads((tmp_path / "r.report.json").read_text())
    assert rep["tournament"]["engine_backends"] == {"python": 2}
    assert "engine backend: python" in (tmp_path / "r.report.md").read_text()


def test_a_chosen_python_engine_gets_no_warning_but_is_recorded(tmp_path):
    p = _arena(tmp_path, {"MULLE_ENGINE": "python"})
    assert p.returncode == 0, p.stderr
    assert "pure-Python engine" not in p.stderr
    assert [ln["engine_backend"] for ln in _lines(tmp_path / "r.jsonl")] == ["python", "python"]


def test_the_notice_is_printed_when_the_game_gives_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(me, "fallback_notice", lambda: "warning: slow engine")
    argv = ["random", "heuristic", "--games", "2", "--rule", "sets=1", "--out", str(tmp_path / "r.jsonl")]
    assert cli.main([*argv, "--quiet"]) == 0
    assert "mulle-arena: warning: slow engine" in capsys.readouterr().err
    monkeypatch.setattr(me, "fallback_notice", lambda: None)
    assert cli.main([*argv, "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err
