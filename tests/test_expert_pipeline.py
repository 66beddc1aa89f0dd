"""mulle-train expert: flags, a run from nothing, budgets, the target, resuming after Ctrl-C, SIGTERM and kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.learned import load_policy
from training import cli, pipeline

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--first-games", "2", "--games", "2", "--shard-games", "1", "--first-teacher", "pimc:samples=2,horizon=2",
        "--teacher", "netsearch:samples=2,width=0,depth=2", "--hidden", "16", "--first-epochs", "1", "--epochs", "1",
        "--batch-size", "64", "--screen-opponents", "random", "--screen-games", "2", "--workers", "1",
        "--rule", "sets=1", "--no-progress"]


def expert(root, *extra, out=None):
    lines = [] if out is None else out
    code = cli.main(["expert", "--out-dir", str(root), *TINY, *extra], out=lines.append)
    return code, lines


@pytest.mark.parametrize("argv, message", [
    (["--first-games", "3", "--shard-games", "2"], "must be multiples of --shard-games 2"),
    (["--teacher", "heuristic"], "takes no policy=<file>"),
    (["--teacher", "netsearch:policy=x.npz"], "leave policy= out"),
    (["--first-teacher", "greedy"], "cannot value moves"),
    (["--screen-opponents", "nobody"], "--screen-opponents 'nobody'"),
    (["--target", "nobody"], "--target 'nobody'"),
    (["--extras", "capture-v9"], "--extras 'capture-v9'"),
    (["--rule", "nope=1"], "--rule: unknown ruleset flag 'nope'"),
    (["--out-dir", "/dev/null/run"], "--out-dir '/dev/null/run': '/dev/null' is a character device, not a directory"),
    (["--records", "/no/such/games.jsonl"], "does not exist"),
    (["--memory-gb", "1"], "--memory-gb must be at least 1.5"),
    (["--hours", "-1"], "--hours"),
    (["--data-window", "-2"], "--data-window must be >= 0"),
])
def test_bad_flags_exit_2_naming_the_flag(argv, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main(["expert", "--out-dir", str(tmp_path / "run"), *argv])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_two_generations_from_nothing_with_manifest_plots_and_promotion(tmp_path, capsys):
    root = tmp_path / "run"
    code, lines = expert(root, "--generations", "2")
    assert code == 0, lines
    m = json.loads((root / "manifest.json").read_text())
    assert m["format"] == pipeline.FORMAT and m["settings"]["rules"] == {"sets": 1}
    g0, g1 = m["generations"]
    assert g0["teacher"] == "pimc:horizon=2,samples=2" and g0["teacher_version"]
    assert g1["teacher"].startswith("netsearch:") and f"policy={g0['policy']}" in g1["teacher"]
    for g in (g0, g1):
        assert g["done"] and g["data_done"] and g["games"] == 2 and g["decisions"] > 50
        assert {"data", "fit", "screen"} <= set(g["seconds"]) and g["elapsed"] > 0 and g["peak_rss_mb"] > 0
        assert g["fit"]["heldout_decisions"] > 0 and g["agent_version"].startswith("1+")
        assert "learned|random" in g["eval"]
        assert not (root / f"gen_{g['generation']:03d}" / "fit.ckpt.pt").exists()  # spent checkpoints go
    assert g0["promoted"] and "learned|learned:path=" + g0["policy"] in g1["eval"]
    score = g1["eval"]["learned|learned:path=" + g0["policy"]]["score"]
    assert g1["promoted"] == (score > 0.5)
    assert m["champion"] == (g1["policy"] if g1["promoted"] else g0["policy"])
    champion = load_policy(root / "champion.npz")
    assert champion.ruleset["sets"] == 1 and champion.extras == "capture-v3"
    assert (root / "elo_by_generation.png").stat().st_size > 1000 and (root / "elo_by_time.png").is_file()
    assert m["stopped"]["reason"] == "2 generation(s) done"
    assert any("generation 1 promoted" in ln or "generation 1 not promoted" in ln for ln in lines)
    # A rerun does nothing more; raising --generations continues; other settings are refused.
    code, lines = expert(root, "--generations", "2")
    assert code == 0 and not any("labels" in ln for ln in lines)
    assert expert(root, "--generations", "2", "--games", "4", "--shard-games", "2")[0] == 2
    assert "--games: 2 there, 4 now" in capsys.readouterr().err
    assert len(json.loads((root / "manifest.json").read_text())["commands"]) == 2


def test_on_policy_generations_label_the_games_the_champion_plays(tmp_path, capsys):
    root = tmp_path / "run"
    code, lines = expert(root, "--generations", "2", "--on-policy")
    assert code == 0, lines
    m = json.loads((root / "manifest.json").read_text())
    g0, g1 = m["generations"]
    assert m["settings"]["on_policy"] is True
    # Generation 0 has no net to play: its teacher plays; generation 1's games are generation 0's net's.
    assert g0["driver"] is None and g1["driver"] == "learned:path=" + g0["policy"]
    assert json.loads((root / "gen_000" / "data" / "spec.json").read_text()).get("driver") is None
    assert json.loads((root / "gen_001" / "data" / "spec.json").read_text())["driver"] == g1["driver"]
    assert any(f"labels 2 games {g1['driver']} plays" in ln for ln in lines)
    assert g1["done"] and g1["decisions"] > 50
    # The same directory without --on-policy is another run: refused, naming the flag.
    assert expert(root, "--generations", "2")[0] == 2
    assert "--on-policy: True there, False now" in capsys.readouterr().err


def test_a_run_made_before_on_policy_existed_resumes(tmp_path):
    root = tmp_path / "run"
    assert expert(root, "--generations", "1", "--hours", "0.000001")[0] == 0
    path = root / "manifest.json"
    m = json.loads(path.read_text())
    del m["settings"]["on_policy"]  # as a manifest written before the flag was added
    path.write_text(json.dumps(m))
    assert expert(root, "--generations", "1", "--hours", "0.000001")[0] == 0
    assert expert(root, "--generations", "1", "--hours", "0.000001", "--on-policy")[0] == 2


def test_the_hours_budget_stops_a_run_and_a_larger_one_continues_it(tmp_path):
    root = tmp_path / "run"
    code, lines = expert(root, "--generations", "1", "--hours", "0.000001")
    assert code == 0
    m = json.loads((root / "manifest.json").read_text())
    assert "budget of 1e-06 hour(s) is spent" in m["stopped"]["reason"] and not m["generations"][0].get("done")
    code, lines = expert(root, "--generations", "1")
    m = json.loads((root / "manifest.json").read_text())
    assert code == 0 and m["generations"][0]["done"] and m["elapsed"] > 0


def test_the_target_is_reached_when_the_champion_s_lower_bound_passes_50():
    run = pipeline.Pipeline.__new__(pipeline.Pipeline)
    run.args = type("A", (), {"target": "pimc"})()
    gen = {"generation": 0, "policy": "p.npz", "done": True,
           "eval": {"learned|pimc": {"score": 0.53, "score_low": 0.49}}}
    run.manifest = {"champion": "p.npz", "generations": [gen]}
    assert not run.target_reached()
    gen["eval"]["learned|pimc"]["score_low"] = 0.51
    assert run.target_reached()
    run.manifest["champion"] = "other.npz"  # only the champion's screens count
    assert not run.target_reached()


def test_records_join_generation_zero_s_fit(tmp_path):
    from mulle_env.engine import Match

    games = tmp_path / "games.jsonl"
    with open(games, "w") as fh:
        for seed in range(3):
            m = Match(seed=seed, ruleset={"sets": 1})
            while not m.over:
                m.play(m.legal_moves()[0])
            fh.write(json.dumps(m.record().to_dict()) + "\n")
    root = tmp_path / "run"
    code, lines = expert(root, "--generations", "1", "--records", f"{games}=0.5")
    assert code == 0, lines
    fit = json.loads((root / "manifest.json").read_text())["generations"][0]["fit"]
    assert len(fit["sources"]) == 2 and fit["sources"][1][1] == 0.5
    assert any("records" in ln and "3 games" in ln for ln in lines)


def _spawn(root: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "training.cli", "expert", "--out-dir", str(root), *TINY,
                             "--checkpoint-minutes", "0.0001", *extra], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".tmp" not in p.name}


def _weights(path) -> list[np.ndarray]:
    return load_policy(path).weights


def _interrupt_at_new_files(root: Path, signals, *extra: str) -> None:
    """Start the run and send it the next of ``signals`` as soon as a file appears that was not there; then finish."""
    for sig in signals:
        before = _files(root) if root.exists() else set()
        proc = _spawn(root, *extra)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if root.exists() and _files(root) - before - {"manifest.json"}:
                proc.send_signal(sig)
                break
            time.sleep(0.02)
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:
            return
        expected = {signal.SIGKILL: -signal.SIGKILL, signal.SIGTERM: 143, signal.SIGINT: 130}[sig]
        assert proc.returncode == expected, err
        if sig != signal.SIGKILL:
            assert "interrupted" in err and "Traceback" not in err
            # ... and it said at once what it was waiting for (issue 30: Ctrl-C says what it waits for).
            name = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
            assert f"mulle-train: {name}: stopping; waiting for " in err, err
    proc = _spawn(root, *extra)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err


def test_sigterm_and_kill_9_lose_no_finished_work_and_the_run_ends_where_an_uninterrupted_one_ends(tmp_path):
    clean = tmp_path / "clean"
    assert expert(clean, "--generations", "1", "--checkpoint-minutes", "0.0001")[0] == 0
    killed = tmp_path / "killed"
    # SIGTERM (exit 143, a clean shutdown) at the first shard, kill -9 at whatever file comes next.
    _interrupt_at_new_files(killed, [signal.SIGTERM, signal.SIGKILL], "--generations", "1")
    a, b = (json.loads((r / "manifest.json").read_text())["generations"][0] for r in (clean, killed))
    assert b["done"] and b["promoted"]
    # Same data byte for byte, the same net, the same arena games.
    for shard in sorted((clean / "gen_000" / "data").glob("shard_*.npz")):
        assert (killed / "gen_000" / "data" / shard.name).read_bytes() == shard.read_bytes()
    assert all(np.array_equal(x, y) for x, y in zip(_weights(a["policy"]), _weights(b["policy"])))
    assert a["eval"]["learned|random"]["score"] == b["eval"]["learned|random"]["score"]


@pytest.mark.slow
def test_kill_9_at_every_new_file_of_two_generations(tmp_path):
    root = tmp_path / "run"
    _interrupt_at_new_files(root, [signal.SIGKILL] * 40 + [signal.SIGINT], "--generations", "2")
    m = json.loads((root / "manifest.json").read_text())
    assert [g["done"] for g in m["generations"]] == [True, True]


def test_a_run_under_forced_capture_false_trains_a_net_that_plays_those_rules(tmp_path):
    root = tmp_path / "run"
    code, lines = expert(root, "--generations", "1", "--rule", "forced_capture=false")
    assert code == 0, lines
    m = json.loads((root / "manifest.json").read_text())
    pol = load_policy(m["champion"])
    assert pol.ruleset["forced_capture"] is False and pol.ruleset["sets"] == 1
    assert m["generations"][0]["eval"]["learned|random"]["games"] == 2
