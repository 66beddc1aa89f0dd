"""Training from nothing, in the default run: every trainer makes a policy file that the arena plays.

Tiny sizes (a few games, tiny nets) so the whole file takes well under a minute on 2
cores; the strength of what they make is measured elsewhere (benchmarks/records/generations.md,
benchmarks/results/time_to_strength.json). What these tests guard is that each road a
user is told to take works end to end, as the commands are typed: expert iteration,
PPO against a pool that mixes ``random`` with agents that read their view (the quick
start's crash, issue 30), PPO's behaviour-cloning warm start, DMC, the exploiter, and
the sb3 bridge.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from training.cli import train_main

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

EXPERT = ["--first-games", "4", "--shard-games", "2", "--first-teacher", "pimc:samples=2,horizon=2",
          "--hidden", "16", "--first-epochs", "1", "--batch-size", "64", "--screen-opponents", "random",
          "--screen-games", "2", "--generations", "1", "--workers", "1", "--no-progress"]
PPO_SMALL = ["--envs", "2", "--n-steps", "64", "--batch-size", "64", "--epochs", "1", "--net", "16,16",
             "--eval-games", "4", "--eval-every", "128", "--checkpoint-every", "128", "--threads", "1",
             "--no-progress"]


def _arena_plays(policy, tmp_path, opponent="random"):
    from arena.cli import main as arena_main

    out = tmp_path / f"arena_{policy.stem}.jsonl"
    code = arena_main([f"learned:path={policy}", opponent, "--games", "2", "--workers", "1", "--seed", "3",
                       "--out", str(out), "--quiet"])
    assert code == 0
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()]
    assert len(lines) == 2 and all(ln["status"] == "ok" for ln in lines), lines


@pytest.fixture(scope="module")
def expert_policy(tmp_path_factory):
    """One generation of expert iteration from nothing (4 labelled games), shared by the DMC and exploit tests."""
    root = tmp_path_factory.mktemp("smoke") / "nested" / "expert"  # --out-dir makes its parents
    lines: list[str] = []
    assert train_main(["expert", "--out-dir", str(root), *EXPERT], out=lines.append) == 0
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["champion"] and (root / "champion.npz").is_file(), lines
    return root / "champion.npz"


def test_expert_iteration_from_nothing_makes_a_playable_champion(expert_policy, tmp_path):
    _arena_plays(expert_policy, tmp_path)


def test_ppo_against_a_mixed_pool_makes_a_playable_policy(tmp_path):
    out = tmp_path / "ppo"
    policy = tmp_path / "ppo.npz"
    code = train_main(["--out-dir", str(out), "--steps", "256", "--opponents", "random=1,heuristic=1,learned=1",
                       "--export", str(policy), *PPO_SMALL])  # no command word: ppo, as the quick start types it
    assert code == 0 and policy.is_file()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timesteps"] == 256
    _arena_plays(policy, tmp_path, "heuristic")


def test_ppo_resume_says_how_many_steps_it_will_train(tmp_path, capsys):
    out = tmp_path / "ppo"
    assert train_main(["ppo", "--out-dir", str(out), "--steps", "128", "--opponents", "random=1,greedy=1",
                       *PPO_SMALL]) == 0
    capsys.readouterr()
    # 300 more steps in rollouts of 2 x 64 = 128: three rollouts, 384 steps, to step 512.
    assert train_main(["ppo", "--out-dir", str(out), "--steps", "428", "--opponents", "random=1,greedy=1",
                       "--resume", *PPO_SMALL]) == 0
    said = capsys.readouterr().out
    assert "at step 128: trains 384 more steps, to step 512" in said, said
    summary = json.loads((out / "summary.json").read_text())
    assert summary["timesteps"] == 512 and summary["timesteps_this_run"] == 384
    # The summary's total is the directory's; what this invocation trained is said beside it.
    assert "steps trained   512 in" in said and f"over every run in {out} (384 in this one)" in said, said


def test_ppo_resume_skips_a_damaged_checkpoint_and_a_garbage_state(tmp_path, capsys):
    # Issue 53, item 2: a kill -9 while saving left a 0-byte step_*.zip that --resume chose (a traceback, exit 1),
    # and a garbage state.json gave a raw JSONDecodeError. Now the newest whole checkpoint is used, the damaged
    # files are set aside by name, and --init-from refuses a file that is no checkpoint before any work.
    out = tmp_path / "ppo"
    assert train_main(["ppo", "--out-dir", str(out), "--steps", "128", "--opponents", "random=1",
                       *PPO_SMALL]) == 0
    ckpts = sorted((out / "checkpoints").glob("step_*.zip"))
    assert ckpts and not list((out / "checkpoints").glob(".*tmp"))
    (out / "checkpoints" / "step_0000009999.zip").write_bytes(b"")  # a torn newer one
    (out / "state.json").write_text("{not json")
    capsys.readouterr()
    assert train_main(["ppo", "--out-dir", str(out), "--steps", "256", "--opponents", "random=1", "--resume",
                       *PPO_SMALL]) == 0
    said = capsys.readouterr().out
    assert "step_0000009999.zip is damaged" in said and f"resumed from {ckpts[-1]}" in said, said
    assert "state.json" in said and (out / "state.json.damaged").is_file()
    assert (out / "checkpoints" / "step_0000009999.zip.damaged").is_file()
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 cut short")
    with pytest.raises(SystemExit) as exc:
        train_main(["ppo", "--out-dir", str(tmp_path / "new"), "--init-from", str(bad), *PPO_SMALL])
    assert exc.value.code == 2 and "is not a checkpoint of mulle-train ppo" in capsys.readouterr().err


def test_behaviour_cloning_warm_start_makes_a_playable_policy(tmp_path):
    policy = tmp_path / "bc.npz"
    code = train_main(["ppo", "--out-dir", str(tmp_path / "bc"), "--steps", "0", "--bc-games", "4",
                       "--bc-epochs", "1", "--bc-workers", "1", "--opponents", "random=1", "--export", str(policy),
                       *PPO_SMALL])
    assert code == 0 and policy.is_file()
    _arena_plays(policy, tmp_path, "greedy")


def test_dmc_fine_tune_makes_a_playable_policy(expert_policy, tmp_path):
    policy = tmp_path / "dmc.npz"
    lines: list[str] = []
    code = train_main(["dmc", str(expert_policy), "--out", str(policy), "--rounds", "2", "--games-per-round", "4",
                       "--opponents", "random heuristic", "--no-progress"], out=lines.append)
    assert code == 0 and policy.is_file()
    # A line a round for people (no JSON on the screen); every round's figures as JSON in <out>.rounds.jsonl.
    assert [ln.split(":")[0] for ln in lines[:2]] == ["round 1", "round 2"] and "points a game against" in lines[0]
    assert not any("{" in ln for ln in lines) and lines[-1].startswith(f"wrote {policy} after")
    logged = [json.loads(x) for x in (tmp_path / "dmc.npz.rounds.jsonl").read_text().splitlines()]
    assert [f["round"] for f in logged] == [1, 2] and all("loss" in f for f in logged)
    _arena_plays(policy, tmp_path)


def test_dmc_fine_tunes_a_net_that_reads_extra_inputs(tmp_path):
    """The shipped net reads the capture-v3 block; DMC (and so the exploiter) fine-tunes it with that block."""
    from agents.learned import DEFAULT_POLICY_PATH, load_policy

    policy = tmp_path / "dmc_extras.npz"
    code = train_main(["dmc", str(DEFAULT_POLICY_PATH), "--out", str(policy), "--rounds", "1",
                       "--games-per-round", "2", "--opponents", "random", "--no-progress"])
    assert code == 0
    assert load_policy(policy).extras == load_policy(DEFAULT_POLICY_PATH).extras is not None
    _arena_plays(policy, tmp_path)


@pytest.mark.filterwarnings("error::UserWarning")  # the ratings plot fits its long policy-path names
def test_exploit_reports_both_measurements(expert_policy, tmp_path):
    out = tmp_path / "exploit"
    lines: list[str] = []
    t0 = time.monotonic()
    code = train_main(["exploit", f"learned:path={expert_policy}", "--out-dir", str(out), "--hours", "0.002",
                       "--games-per-round", "4", "--eval-games", "4", "--workers", "1", "--no-progress"],
                      out=lines.append)
    took = time.monotonic() - t0
    assert code == 0, lines
    report = json.loads((out / "exploit.json").read_text())
    assert report["init_from"] == str(expert_policy)  # an afterstate learned net starts its own exploiter
    assert report["dmc"]["rounds"] >= 1 and report["best"] in ("start", "final")
    # --hours (7.2 s) bounds the whole command: DMC gets what the two measurements leave, and its rounds
    # (a line each, no JSON) stop before the budget; the slack is the last measurement's and the setup's.
    assert report["dmc_budget_seconds"] == pytest.approx(7.2 - 2 * report["start"]["seconds"], abs=0.2)
    assert report["dmc"]["seconds"] <= report["dmc_budget_seconds"]
    assert took < 7.2 + 2 * report["start"]["seconds"] + 20, took
    rounds = [ln for ln in lines if ln.strip().startswith("round ")]
    assert len(rounds) == report["dmc"]["rounds"] and not any(ln.lstrip().startswith(("{", "round {")) for ln in lines)
    logged = [json.loads(ln) for ln in (out / "exploiter.npz.rounds.jsonl").read_text().splitlines()]
    assert [f["round"] for f in logged] == list(range(1, report["dmc"]["rounds"] + 1))
    for key in ("start", "final"):
        m = report[key]
        assert m["games"] == 4 and m["score_low"] <= m["score"] <= m["score_high"]
    _arena_plays(out / "exploiter.npz", tmp_path)


def test_exploit_budget_below_two_measurements_trains_no_round(expert_policy, tmp_path):
    from training.exploit import dmc_budget

    assert dmc_budget(0.05, 60.0) == 60.0 and dmc_budget(0.05, 100.0) == 0.0 and dmc_budget(0.0, 0.0) == 0.0
    out = tmp_path / "exploit"
    lines: list[str] = []
    code = train_main(["exploit", f"learned:path={expert_policy}", "--out-dir", str(out), "--hours", "0",
                       "--eval-games", "2", "--workers", "1", "--no-progress"], out=lines.append)
    assert code == 0, lines
    report = json.loads((out / "exploit.json").read_text())
    assert report["dmc"]["rounds"] == 0 and report["dmc_budget_seconds"] == 0 and report["best"] == "start"
    assert any("no DMC round fits in --hours 0" in ln for ln in lines), lines


def test_finetune_joins_the_command_line(expert_policy, tmp_path, capsys):
    from agents.learned import DEFAULT_POLICY_PATH
    from training.finetune import main as module_main

    ppo_policy = Path(DEFAULT_POLICY_PATH).parent / "learned_ppo.npz"  # a logits net, what PPO fine-tunes
    lines: list[str] = []
    assert train_main(["finetune", str(ppo_policy), str(tmp_path / "a.zip")], out=lines.append) == 0
    assert (tmp_path / "a.zip").is_file() and "mulle-train ppo --init-from" in lines[0]
    assert module_main([str(ppo_policy), str(tmp_path / "b.zip")]) == 0  # the module's old entry point
    # The checkpoint's directory is made, as --help says (the guide's runs/ft/init.zip in a new runs/ft).
    assert train_main(["finetune", str(ppo_policy), str(tmp_path / "new" / "ft" / "d.zip")], out=lines.append) == 0
    assert (tmp_path / "new" / "ft" / "d.zip").is_file()
    # An afterstate net has no logits to copy: bad usage, said plainly before anything is made or written.
    with pytest.raises(SystemExit) as exc:
        train_main(["finetune", str(expert_policy), str(tmp_path / "c" / "c.zip")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "holds an afterstate net" in err and "mulle-train dmc" in err
    assert not (tmp_path / "c").exists()
