"""mulle-expert: flag checks, a tiny generation end to end, resume, interrupt, plots."""

from __future__ import annotations

import argparse
import json

import pytest

from agents.learned import load_policy
from training import cli, expert

pytest.importorskip("torch")

TINY = ["--games", "2", "--shard-games", "1", "--teacher", "pimc:samples=2,horizon=2",
        "--search", "netsearch:samples=2,width=2,depth=2", "--hidden", "16", "--value-hidden", "8", "--epochs", "1",
        "--batch-size", "64", "--eval-opponents", "random", "--eval-games", "2", "--no-progress"]


def run(tmp_path, *extra, out=None):
    lines = [] if out is None else out
    code = cli.main(["run", "--out-dir", str(tmp_path / "run"), "--generations", "1", *TINY, *extra], out=lines.append)
    return code, lines


@pytest.mark.parametrize("argv, flag", [
    (["run", "--games", "0"], "--games"),
    (["run", "--games", "3", "--shard-games", "2"], "--games 3 must be a multiple of --shard-games"),
    (["run", "--search", "heuristic"], "--search 'heuristic'"),
    (["run", "--search", "netsearch:policy=x.npz"], "leave policy= out"),
    (["run", "--eval-opponents", "nobody"], "--eval-opponents 'nobody'"),
    (["run", "--teacher", "pimc:samples=x"], "--teacher"),
    (["run", "--hidden", "16,-1"], "--hidden"),
    (["run", "--temperature", "0"], "--temperature"),
    (["run", "--init-from", "/no/such.npz"], "--init-from: policy file '/no/such.npz' does not exist"),
    (["plot", "/no/manifest.json"], "manifest"),
    (["speed", "/no/results.jsonl"], "results"),
])
def test_bad_flags_exit_2_naming_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_a_generation_end_to_end_resumes_and_plots(tmp_path, capsys):
    code, lines = run(tmp_path)
    assert code == 0, lines
    root = tmp_path / "run"
    manifest = json.loads((root / "manifest.json").read_text())
    gen = manifest["generations"][0]
    assert gen["done"] and gen["teacher"] == "pimc:horizon=2,samples=2" and gen["decisions"] > 100
    pol = load_policy(gen["policy"])
    assert pol.has_value and pol.metadata["generation"] == 0 and pol.hidden_sizes == (16,)
    assert set(gen["eval"]) == {"learned|random", "search|random"}
    match = gen["eval"]["search|random"]
    assert match["games"] == 2 and match["a"] == gen["search"] and match["ms_per_decision"][gen["search"]] > 0
    # A rerun finds everything done and plays nothing.
    results = (root / "gen_000" / "eval_search_random.jsonl").read_text()
    code, lines = run(tmp_path)
    assert code == 0 and not any("vs random" in ln for ln in lines)
    assert (root / "gen_000" / "eval_search_random.jsonl").read_text() == results
    commands = json.loads((root / "manifest.json").read_text())["commands"]
    assert len(commands) == 2 and commands[0]["argv"][:3] == ["mulle-train", "run", "--out-dir"]
    # Other settings are refused, naming them.
    assert cli.main(["run", "--out-dir", str(root), *TINY, "--games", "4", "--shard-games", "2"]) == 2
    assert "--games: 2 there, 4 now" in capsys.readouterr().err
    assert cli.main(["run", "--out-dir", str(root), *TINY, "--seed", "3"]) == 2
    # Plots: Elo by generation from the manifest, Elo against thinking time from one arena file.
    assert cli.main(["plot", str(root), "--out", str(tmp_path / "gen.png")], out=lambda _: None) == 0
    assert (tmp_path / "gen.png").stat().st_size > 1000
    speed_json = tmp_path / "speed.json"
    assert cli.main(["speed", str(root / "gen_000" / "eval_search_random.jsonl"), "--out", str(tmp_path / "s.png"),
                     "--json", str(speed_json)], out=lambda _: None) == 0
    points = {p["spec"]: p for p in json.loads(speed_json.read_text())["points"]}
    assert set(points) == {gen["search"], "random"} and points["random"]["elo"] == 0


def test_interrupt_exits_130_and_the_rerun_reuses_the_data(tmp_path, monkeypatch):
    from training import distill

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(distill, "fit", interrupted)
    assert run(tmp_path)[0] == 130
    shards = sorted((tmp_path / "run" / "gen_000" / "data").glob("shard_*.npz"))
    stamps = [p.stat().st_mtime_ns for p in shards]
    assert len(shards) == 2
    monkeypatch.undo()
    assert run(tmp_path)[0] == 0
    assert [p.stat().st_mtime_ns for p in shards] == stamps


def test_the_teacher_is_the_newest_search_that_beat_the_reference():
    args = argparse.Namespace(reference="pimc", teacher="pimc")
    gens = [{"search": "netsearch:policy=a", "eval": {"search|pimc": {"score_low": 0.52}}},
            {"search": "netsearch:policy=b", "eval": {"search|pimc": {"score_low": 0.49}}}]
    assert expert.teacher_for({"generations": gens}, args) == "netsearch:policy=a"
    assert expert.teacher_for({"generations": gens[1:]}, args) == "pimc"


def test_run_errors_exit_1_with_the_reason(tmp_path, capsys):
    data = tmp_path / "run" / "gen_000" / "data"
    data.mkdir(parents=True)
    (data / "spec.json").write_text(json.dumps({"format": "mulle-teacher-data-2", "seed": 99}))
    assert run(tmp_path)[0] == 1
    assert "holds teacher data made with other settings" in capsys.readouterr().err


def test_pair_score_interval_stays_within_0_and_1():
    from training.evaluate import pair_score_interval

    score, low, high = pair_score_interval([0, 0, 1, 0, 2])  # pair scores .5, 1, 1
    assert score == pytest.approx(5 / 6) and 0 <= low < score < high == 1.0
    assert pair_score_interval([0, 0, 0, 0, 0]) == (None, None, None)
    assert pair_score_interval([0, 0, 4, 0, 0]) == (0.5, 0.5, 0.5)


@pytest.mark.slow
def test_two_generations_fit_on_a_window_and_resume_from_a_raised_count(tmp_path):
    assert run(tmp_path)[0] == 0
    code = cli.main(["run", "--out-dir", str(tmp_path / "run"), "--generations", "2", *TINY], out=lambda _: None)
    assert code == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    g0, g1 = manifest["generations"]
    pol = load_policy(g1["policy"])
    assert pol.metadata["data"] == [g0["data"], g1["data"]] and pol.metadata["init_from"] == g0["policy"]
    assert g1["decisions"] > g0["decisions"]
    beat = g0["eval"].get("search|pimc")  # the reference is pimc, not evaluated here: the teacher stays
    assert beat is None and g1["teacher"] == g0["teacher"]


def test_a_generation_of_afterstate_nets(tmp_path):
    code, lines = run(tmp_path, "--net", "afterstate")
    assert code == 0, lines
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    gen = manifest["generations"][0]
    pol = load_policy(gen["policy"])
    assert pol.head == "afterstate" and pol.hidden_sizes == (16,) and manifest["settings"]["net"] == "afterstate"
    assert json.loads((tmp_path / "run" / "gen_000" / "data" / "spec.json").read_text())["afterstates"] is True
    assert gen["eval"]["search|random"]["games"] == 2
    # The same directory with the other kind of net is another run: refused.
    assert cli.main(["run", "--out-dir", str(tmp_path / "run"), "--generations", "1", *TINY]) == 2
