"""mulle-arena: bad arguments, a full run with reports, and surviving kill -9 of the parent."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena import cli
from arena.results import comparable

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "mulle-arena"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["random"], "at least 2 agent specs"),
        (["random", "nosuchagent"], "unknown agent 'nosuchagent'; available agents"),
        (["random", "random"], "given twice"),
        (["random", "heuristic", "--games", "0"], "--games must be at least 1"),
        (["random", "heuristic", "--workers", "0"], "--workers must be at least 1"),
        (["random", "heuristic", "--sprt", "0", "10", "0.05"], "expected 4 arguments"),
        (["random", "heuristic", "--sprt", "10", "0", "0.05", "0.05"], "elo0 < elo1"),
        (["random", "heuristic", "--sprt", "0", "10", "1.5", "0.05"], "alpha"),
        (["random", "heuristic", "greedy", "--sprt", "0", "10", "0.05", "0.05"], "exactly 2 specs"),
        (["random", "heuristic", "--rule", "jokers=1"], "--rule: unknown ruleset flag 'jokers'; known flags: sets"),
        (["random", "heuristic", "--rule", "sets"], "--rule: a rule reads key=value, not 'sets'"),
        (["random", "heuristic", "--rule", "forced_capture=maybe"],
         "rule forced_capture takes true or false, not 'maybe'"),
        (["random", "heuristic", "--rule", "sets=two"], "rule sets takes a whole number, not 'two'"),
        (["random", "heuristic", "--out", "/nonexistent-dir/r.jsonl"], "does not exist"),
        (["random", "heuristic", "--out", "/proc/r.jsonl"], "not writable"),
        (["random", "heuristic", "--backend", "slurm"], "invalid choice"),
        (["random", "heuristic", "--games", "ten"], "invalid int value"),
        (["random", "heuristic", "--report", "/nonexistent-dir/r.json"],
         "--report '/nonexistent-dir/r.json': directory"),
        (["random", "heuristic", "--markdown", "/nonexistent-dir/r.md"],
         "--markdown '/nonexistent-dir/r.md': directory"),
        (["random", "heuristic", "--plot", "/nonexistent-dir/r.png"], "--plot '/nonexistent-dir/r.png': directory"),
        (["random", "heuristic", "--report", "/proc/r.json"], "--report '/proc/r.json' is not writable"),
        (["random", "heuristic", "--out", "r.jsonl", "--report", "r.jsonl"], "is the same file as --out"),
        (["random", "heuristic", "--plot", "."], "is a directory"),
        (["random", "heuristic", "--move-timeout", "nan"], "--move-timeout must be a finite number of seconds"),
        (["random", "heuristic", "--game-timeout", "inf"], "--game-timeout must be a finite number of seconds"),
        (["random", "heuristic", "--workers", "100000"], "--workers 100000 is far more than the"),
        (["random", "learned", "--rule", "forced_capture=false"],
         "agent 'learned' cannot play with these rules (--rule): the learned policy's fixed action space"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        cli.parse_args(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_rule_flags_are_parsed_by_the_game(tmp_path):
    args, _ = cli.parse_args(["random", "heuristic", "--out", str(tmp_path / "r.jsonl"), "--rule", "sets=1",
                              "--rule", "forced_capture=off", "--rule", "lock_every_build = YES"])
    assert args.ruleset["sets"] == 1 and args.ruleset["forced_capture"] is False
    assert args.ruleset["lock_every_build"] is True and args.ruleset["discard_only_if_no_capture"] is True


@pytest.mark.parametrize(
    "argv",
    [
        ["random", "heuristic", "--ray-address", "auto"],
        ["random", "heuristic", "--rule", "jokers=1"],
        ["random", "heuristic", "--sprt", "0", "10", "0.05", "0.05", "--single"],
    ],
)
def test_rejected_command_creates_no_results_file(argv, tmp_path, capsys):
    out = tmp_path / "never.jsonl"
    with pytest.raises(SystemExit) as exc:
        cli.parse_args([*argv, "--out", str(out)])
    assert exc.value.code == 2 and not out.exists()


def _cmd(out, games, workers=2, *extra):
    return [sys.executable, str(SCRIPT), "random", "heuristic", "--games", str(games), "--workers", str(workers),
            "--seed", "5", "--rule", "sets=1", "--out", str(out), *extra]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    return env


def _lines(path):
    with open(path) as f:
        return [json.loads(x) for x in f]


def test_cli_run_writes_results_and_reports(tmp_path):
    out = tmp_path / "res.jsonl"
    p = subprocess.run(_cmd(out, 4, 1, "--save-games"), capture_output=True, text=True, env=_env(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Elo (vs random)" in p.stdout and "random vs heuristic" in p.stdout
    rows = _lines(out)
    assert len(rows) == 4 and all("move_list" in r for r in rows)
    rep = json.loads((tmp_path / "res.report.json").read_text())
    assert rep["games"]["counted"] == 4 and rep["anchor"] == "random"
    assert (tmp_path / "res.report.md").read_text().startswith("# Arena report")


def test_kill_9_of_the_parent_loses_only_games_in_flight(tmp_path):
    games = 120
    out = tmp_path / "killed.jsonl"
    proc = subprocess.Popen(_cmd(out, games), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(),
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and out.read_text().count("\n") >= 8:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # workers of the killed run (this test started them)
        except ProcessLookupError:
            pass
    partial = _lines(out)
    assert 8 <= len(partial) < games  # really interrupted
    again = subprocess.run(_cmd(out, games), capture_output=True, text=True, env=_env(), timeout=120)
    assert again.returncode == 0, again.stderr
    rows = _lines(out)
    ids = [r["game_id"] for r in rows]
    assert len(ids) == len(set(ids)) == games  # every game exactly once
    clean = tmp_path / "clean.jsonl"
    ref = subprocess.run(_cmd(clean, games, 1), capture_output=True, text=True, env=_env(), timeout=120)
    assert ref.returncode == 0, ref.stderr
    key = lambda r: r["game_id"]  # noqa: E731
    assert sorted(map(comparable, rows), key=key) == sorted(map(comparable, _lines(clean)), key=key)


def _fast(tmp_path, *extra):
    return ["random", "heuristic", "--games", "2", "--rule", "sets=1", "--out", str(tmp_path / "r.jsonl"), *extra]


def test_ctrl_c_at_start_up_and_during_the_report_exits_130_cleanly(tmp_path, capsys, monkeypatch):
    def interrupt(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr("agents.make", interrupt)  # Ctrl-C while the agents load
        assert cli.main(_fast(tmp_path)) == 130
    assert "interrupted" in capsys.readouterr().err
    with monkeypatch.context() as m:
        m.setattr("arena.report.markdown", interrupt)  # Ctrl-C while the report is written
        assert cli.main(_fast(tmp_path)) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err
    assert len(_lines(tmp_path / "r.jsonl")) == 2  # the games are saved; the next run writes the report
    assert cli.main(_fast(tmp_path, "--quiet")) == 0 and (tmp_path / "r.report.md").exists()


def test_sigterm_at_start_up_and_during_the_report_exits_143_cleanly(tmp_path, capsys, monkeypatch):
    def terminate(*a, **k):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler interrupts this at once
        raise AssertionError("SIGTERM did not interrupt")

    before = signal.getsignal(signal.SIGTERM)
    with monkeypatch.context() as m:
        m.setattr("agents.make", terminate)  # while the agents load
        assert cli.main(_fast(tmp_path)) == 143
    assert "interrupted by SIGTERM" in capsys.readouterr().err
    with monkeypatch.context() as m:
        m.setattr("arena.report.markdown", terminate)  # while the report is written
        assert cli.main(_fast(tmp_path)) == 143
    err = capsys.readouterr().err
    assert "interrupted by SIGTERM" in err and "Traceback" not in err
    assert len(_lines(tmp_path / "r.jsonl")) == 2  # the games are saved
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is put back when the command ends


def _alive_in_group(pgid: int) -> list[int]:
    """Processes of group ``pgid`` still running (zombies, already ended, do not count)."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] not in "ZX":
                alive.append(int(entry))
    return alive


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the run's processes")
def test_kill_term_mid_run_finishes_writing_reports_and_exits_143(tmp_path):
    games = 120
    out = tmp_path / "term.jsonl"
    proc = subprocess.Popen(_cmd(out, games), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out.exists() and out.read_text().count("\n") >= 8):
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)  # the parent only, as `kill -TERM <pid>` does
        stdout, stderr = proc.communicate(timeout=60)
        deadline = time.monotonic() + 10
        while _alive_in_group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        leftover = _alive_in_group(proc.pid)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # anything left of the run (there should be nothing)
        except ProcessLookupError:
            pass
    assert proc.returncode == 143, stderr
    assert "interrupted by SIGTERM" in stderr and "leaked semaphore" not in stderr and "Traceback" not in stderr
    partial = _lines(out)  # every line whole: the writer finished
    assert 8 <= len(partial) < games
    rep = json.loads((tmp_path / "term.report.json").read_text())
    assert rep["run"]["interrupted"] is True and rep["games"]["counted"] == len(partial)
    assert "Elo (vs random)" in stdout  # the tables of what was played
    assert not leftover  # no worker outlived the run


def test_a_second_run_on_the_same_out_is_refused_with_exit_2(tmp_path, capsys):
    from arena.results import lock

    with lock(str(tmp_path / "r.jsonl")):
        with pytest.raises(SystemExit) as exc:
            cli.main(_fast(tmp_path))
    assert exc.value.code == 2
    assert "--out" in capsys.readouterr().err and (tmp_path / "r.jsonl").read_text() == ""


def test_progress_lines_when_stderr_is_not_a_terminal_and_notes_said_once(tmp_path, capsys, monkeypatch, caplog):
    monkeypatch.setattr(cli, "PROGRESS_INTERVAL", 0.0)
    (tmp_path / "r.jsonl").write_text("{not json\n")
    assert cli.main(_fast(tmp_path)) == 0
    captured = capsys.readouterr()
    assert "arena: 2 of 2 games (100%)" in captured.err
    assert (captured.err + captured.out + caplog.text).count("corrupt line") == 1
    assert "corrupt line" in (tmp_path / "r.report.md").read_text()


def test_workers_above_the_cores_get_a_note(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "usable_cores", lambda: 1)
    args, _ = cli.parse_args(_fast(tmp_path, "--workers", "3"))
    assert args.workers == 3 and "more than the 1 core(s)" in capsys.readouterr().err


def test_a_game_module_is_checked_against_the_arenas_protocol(capsys, tmp_path):
    import types

    import mulle_env
    from arena.game import GameProtocolError, check_game

    check_game(mulle_env)  # the real game passes
    with pytest.raises(GameProtocolError, match="no new_game"):
        check_game(types.SimpleNamespace())
    with pytest.raises(GameProtocolError, match="lacks legal_moves, play, view"):
        check_game(types.SimpleNamespace(new_game=lambda seed, ruleset=None: types.SimpleNamespace(
            to_move=0, is_over=lambda: False, result=lambda: None)))
    with pytest.raises(SystemExit) as exc:
        cli.parse_args(["random", "heuristic", "--game", "json", "--out", str(tmp_path / "r.jsonl")])
    assert exc.value.code == 2 and "--game 'json' is not a game for the arena" in capsys.readouterr().err


def test_quiet_still_says_what_the_results_file_needed(tmp_path):
    # --quiet hides progress and tables, not what happened to the user's data (a newcomer found it silent).
    out = tmp_path / "r.jsonl"
    subprocess.run(_cmd(out, 4, 1, "--quiet"), env=_env(), check=True, capture_output=True, timeout=120)
    with open(out, "ab") as f:
        f.write(b'{"torn')  # what a run cut off mid-write leaves
    done = subprocess.run(_cmd(out, 4, 1, "--quiet"), env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "WARNING arena.results" in done.stderr and "torn" in done.stderr, done.stderr
    assert "pairing" not in done.stdout  # still no tables
