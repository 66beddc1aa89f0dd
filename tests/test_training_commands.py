"""The training commands as a user meets them: rulesets in policy files, SIGTERM, paths, run length, intervals, BLAS."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys

import numpy as np
import pytest

import mulle_env as me
from agents.learned import MLPPolicy, load_policy
from agents.learned.agent import DEFAULT_POLICY_PATH, LearnedAgent
from agents.learned.policy import RulesetMismatchError
from mulle_env.observation import OBS_SIZE


def afterstate_net(ruleset=None) -> MLPPolicy:
    rng = np.random.default_rng(0)
    return MLPPolicy([rng.normal(0, 0.1, (OBS_SIZE, 8)).astype(np.float32), rng.normal(0, 0.1, (8, 1)).astype(
        np.float32)], [np.zeros(8, np.float32), np.zeros(1, np.float32)], "relu", {}, head="afterstate",
        ruleset=ruleset)


# ----- a net records its ruleset and plays no other ------------------------------------
def test_a_net_records_its_ruleset_and_refuses_other_rules_naming_them(tmp_path):
    path = afterstate_net({"sets": 1, "forced_capture": False}).save(tmp_path / "p.npz")
    pol = load_policy(path)
    assert pol.ruleset == me.Ruleset(sets=1, forced_capture=False).to_dict()
    agent = LearnedAgent(str(path))
    agent.check_ruleset(me.Ruleset(sets=1, forced_capture=False))
    with pytest.raises(RulesetMismatchError, match=r"lock_every_build=True \(trained for False\)"):
        agent.check_ruleset(me.Ruleset(sets=1, forced_capture=False, lock_every_build=True))
    agent.check_ruleset(me.Ruleset(sets=3, forced_capture=False))  # any number of sets: see ANY_VALUE_PLAYS
    # It plays whole games under its rules, captures that name their cards included.
    m = me.Match(seed=5, ruleset={"sets": 1, "forced_capture": False})
    m.play_out([agent, agent], [random.Random(0), random.Random(1)])
    assert m.over
    # ...and refuses in play too, for tools that do not ask up front.
    st = me.new_game(3)
    with pytest.raises(ValueError, match="trained for"):
        agent.act(st.view(0), st.legal_moves(), random.Random(0))


def test_files_without_a_ruleset_are_for_the_default_rules_and_keep_their_fingerprints(tmp_path):
    if not os.path.isfile(DEFAULT_POLICY_PATH):
        pytest.skip("no shipped policy")
    shipped = load_policy(DEFAULT_POLICY_PATH)
    assert shipped.ruleset == me.Ruleset().to_dict()
    default = afterstate_net()
    explicit = afterstate_net(me.Ruleset().to_dict())
    assert default.fingerprint() == explicit.fingerprint() != afterstate_net({"sets": 1}).fingerprint()
    with np.load(default.save(tmp_path / "d.npz")) as z:
        assert "ruleset" not in z.files  # readers that predate the key read it as before
    with pytest.raises(RulesetMismatchError, match="mulle_hand_values=True"):
        LearnedAgent().check_ruleset(me.Ruleset(mulle_hand_values=True))
    LearnedAgent().check_ruleset(me.Ruleset(sets=1))  # the shipped net plays one-set games


def test_a_bad_ruleset_in_a_file_is_a_policy_file_error(tmp_path):
    from agents.learned import PolicyFileError

    path = afterstate_net({"sets": 1}).save(tmp_path / "p.npz")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["ruleset"] = np.array(json.dumps({"sets": 1, "colour": "red"}))
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(PolicyFileError, match="unknown ruleset flag"):
        load_policy(tmp_path / "bad.npz")


# ----- SIGTERM is Ctrl-C ---------------------------------------------------------------
def _sigterm_self(*_a, **_k):
    os.kill(os.getpid(), signal.SIGTERM)
    raise AssertionError("SIGTERM did not interrupt")


def test_sigterm_in_mulle_train_saves_and_exits_143(monkeypatch, tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from training import ppo

    monkeypatch.setattr(ppo, "train", _sigterm_self)
    assert ppo.main(["--out-dir", str(tmp_path / "run"), "--steps", "100"]) == 143
    assert "interrupted" in capsys.readouterr().err


def test_sigterm_in_the_expert_commands_exits_143(monkeypatch, tmp_path, capsys):
    pytest.importorskip("torch")
    from training import cli, expert

    (tmp_path / "d").mkdir()
    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(expert, "data", _sigterm_self)
    assert cli.main(["data", str(tmp_path / "d" / "x"), "--games", "2", "--shard-games", "1"]) == 143
    assert "run the same command again to continue" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) is before  # the command's handler lives as long as the command


def test_mulle_train_says_how_long_it_runs_and_refuses_to_resume_nothing(monkeypatch, tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    from training import ppo

    monkeypatch.setattr(ppo, "train", lambda args: None)
    assert ppo.main(["--out-dir", str(tmp_path / "run"), "--vec", "batched", "--envs", "64", "--n-steps", "32"]) == 0
    assert "PPO for 2,000,896 steps (--steps 2,000,000" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        ppo.main(["--out-dir", str(tmp_path / "nothere"), "--resume"])
    assert exc.value.code == 2 and "holds no checkpoint to resume" in capsys.readouterr().err


def test_the_progress_bar_counts_the_steps_really_trained():
    from argparse import Namespace

    from training.ppo import planned_steps

    assert planned_steps(Namespace(steps=20000, n_steps=256, envs=8)) == 20480
    assert planned_steps(Namespace(steps=2048, n_steps=256, envs=8)) == 2048


def test_training_paths_that_are_not_files_are_refused_up_front(tmp_path, capsys):
    pytest.importorskip("torch")
    from training import cli

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for argv, message in [
        (["speed", str(fifo), "--out", str(tmp_path / "s.png")], "FIFO"),
        (["regret", "greedy", "--reference", "pimc", "--json", "/dev/full"], "not a regular file"),
        (["dmc", DEFAULT_POLICY_PATH, "--out", "/nonexistent/x.npz"], "does not exist"),
        (["records", "/dev/zero", "--out", str(tmp_path / "r")], "not a regular file"),
        (["data", "/nonexistent/data"], "does not exist"),
    ]:
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2 and message in capsys.readouterr().err, argv


# ----- intervals -----------------------------------------------------------------------
def test_the_wilson_interval_is_never_zero_width():
    from training.evaluate import wilson_interval

    low, high = wilson_interval(0.0, 20)
    assert low == 0.0 and high == pytest.approx(0.161, abs=0.001)
    low, high = wilson_interval(1.0, 20)
    assert high == 1.0 and low == pytest.approx(0.839, abs=0.001)
    low, high = wilson_interval(0.5, 400)
    assert low == pytest.approx(0.451, abs=0.001) and high == pytest.approx(0.549, abs=0.001)


# ----- one BLAS thread in workers, the user's setting in the command -------------------
_PROBE = """
import json, os, sys
os.environ.pop("OPENBLAS_NUM_THREADS", None)
import numpy
from threadpoolctl import threadpool_info
from training.workers import process_pool

def threads():
    from threadpoolctl import threadpool_info
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

if __name__ == "__main__":
    with process_pool(1) as pool:
        worker = pool.submit(threads).result()
    print(json.dumps({"worker": worker, "main": threads()}))
"""


def test_worker_processes_run_one_blas_thread_and_the_command_keeps_the_user_s(tmp_path):
    pytest.importorskip("threadpoolctl")
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *sys.path])
    env["OPENBLAS_NUM_THREADS"] = "2"  # the user's setting (the probe removes it before numpy loads)
    out = json.loads(subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                                    check=True, cwd=tmp_path).stdout)
    assert out["worker"] and set(out["worker"]) == {1}
    import multiprocessing

    if multiprocessing.cpu_count() > 1 and out["main"]:
        assert max(out["main"]) > 1  # the command's own process is left alone


def test_a_pool_left_by_an_interrupt_ends_its_workers_instead_of_waiting_for_their_tasks():
    """Found when a SIGTERM'd ``mulle-train data`` waited minutes for its workers' shards to end."""
    import time

    from training.workers import process_pool

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with process_pool(2) as pool:
            for _ in range(3):  # two running, one queued
                pool.submit(time.sleep, 300)
            while not pool._processes or len(pool._processes) < 2:  # noqa: SLF001 (the executor's own table)
                time.sleep(0.01)
            processes = list(pool._processes.values())  # noqa: SLF001
            raise KeyboardInterrupt
    assert time.monotonic() - t0 < 120  # a plain executor waits the 300 s its tasks sleep
    assert not any(p.is_alive() for p in processes)


def test_a_pool_left_normally_finishes_its_tasks():
    from training.workers import process_pool

    with process_pool(2) as pool:
        tasks = [pool.submit(pow, 2, k) for k in range(8)]
    assert [t.result() for t in tasks] == [2**k for k in range(8)]


def test_worker_env_names_every_blas():
    from mulle_env.util.threads import THREAD_VARIABLES, worker_env

    assert worker_env() == dict.fromkeys(THREAD_VARIABLES, "1") and "OPENBLAS_NUM_THREADS" in THREAD_VARIABLES


# ----- checked before any work (no torch needed to refuse) ------------------------------
@pytest.mark.parametrize("argv, message", [
    (["expert", "--memory-gb", "inf"], "--memory-gb: must be a positive number, not 'inf'"),
    (["expert", "--lr", "nan"], "--lr: must be a positive number, not 'nan'"),
    (["expert", "--hours", "inf"], "--hours: must be a finite number >= 0, not 'inf'"),
    (["fit", "DATA", "--out", "OUT", "--checkpoint-minutes", "inf"], "--checkpoint-minutes: must be a positive"),
    (["dmc", "NET", "--out", "OUT", "--epsilon", "nan"], "--epsilon: must be a number from 0 to 1, not 'nan'"),
])
def test_infinite_or_nan_numbers_are_refused_naming_the_flag(argv, message, tmp_path, capsys):
    from training import cli

    argv = [str(tmp_path / a) if a in ("DATA", "OUT", "NET") else a for a in argv]
    if argv[0] == "expert":
        argv += ["--out-dir", str(tmp_path / "run")]
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_logits_fit_refuses_streamed_data_up_front(tmp_path):
    from training import teacher
    from training.expert import fit_net
    from training.stream import ShardSource

    data = tmp_path / "data"
    teacher.generate(data, "pimc:samples=2,horizon=2", 1, seed=3, shard_games=1, rules={"sets": 1}, afterstates=True,
                     progress=False)
    # Only afterstate fits take a data source; a logits fit says so before any work (and before importing torch).
    with pytest.raises(ValueError, match="logits nets are fitted to the dict of arrays .* not to a ShardSource"):
        fit_net("logits", ShardSource([data]), tmp_path / "x.npz", {"epochs": 1}, progress=False)
    assert not (tmp_path / "x.npz").exists()


def test_ppo_refuses_envs_no_memory_holds_and_plot_a_file_that_is_no_manifest(tmp_path, capsys):
    # Issue 53, item 10: --vec batched --envs 100000000 built a hundred million pools (9 GB and growing) before any
    # check; `mulle-train plot /etc/passwd` ended in a JSONDecodeError traceback.
    from training.cli import train_main

    with pytest.raises(SystemExit) as exc:
        train_main(["ppo", "--vec", "batched", "--envs", "100000000", "--out-dir", str(tmp_path / "run")])
    assert exc.value.code == 2 and "more than the" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    bad = tmp_path / "passwd"
    bad.write_text("root:x:0:0:root:/root:/bin/bash\n")
    assert train_main(["plot", str(bad), "--out", str(tmp_path / "p.png")]) == 1
    err = capsys.readouterr().err
    assert "the run's manifest" in err and "not valid JSON" in err, err
