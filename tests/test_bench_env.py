"""The env benchmark's drivers run and report what benchmarks/records/speed.md quotes (figures are not checked)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def test_bench_env_runs_every_mulle_env_and_reports_medians(capsys):
    import bench_env

    report = bench_env.main(["--seconds", "0.05", "--rounds", "2", "--no-peers", "--out", "-"])
    assert set(report["results"]) == set(bench_env.OURS) | {"mulle_vector_sparse_t2", "casino_vector_sparse_t2"}
    assert {"2", "casino_2"} <= set(report["thread_scaling"]) and report["machine"]["load_before"]["load_average"]
    for r in report["results"].values():
        assert len(r["runs"]) == 2 and r["decisions_per_cpu_s"] > 0
    assert "mulle_vector" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        bench_env.main(["--only", "nosuchenv", "--out", "-"])


@pytest.mark.slow
def test_bench_training_runs(tmp_path):
    pytest.importorskip("sb3_contrib")
    import bench_training

    report = bench_training.main(["--steps", "2048", "--rounds", "1", "--opponents", "random",
                                  "--out", str(tmp_path / "t.json")])
    assert set(report["ratios"]) == {"batched:random/dummy:random", "batched_selfplay:self/dummy:random"}


def test_bench_agents_refuses_a_bad_spec_and_writes_strict_json(tmp_path, capsys, monkeypatch):
    import json

    import bench_agents

    with pytest.raises(SystemExit) as exc:  # was a bare traceback ending in AgentSpecError
        bench_agents.main(["pimc", "heurstic", "--games", "2"])
    assert exc.value.code == 2 and "did you mean 'heuristic'" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert bench_agents.main(["random", "heuristic", "--games", "2", "--workers", "1", "--out", "-"]) == 0
    assert list(tmp_path.iterdir()) == []  # '-' prints only, as bench_env's and bench_sendrecv's --out
    assert json.loads(capsys.readouterr().out)["ci95"] is None  # one seed pair: no interval (not NaN)


@pytest.mark.parametrize(("script", "argv", "message"), [
    ("bench_expert", ["nosuch", "--games", "1", "--out", "x.json"], "unknown agent 'nosuch'"),
    ("bench_arena", ["--specs", "nosuch", "random", "--games", "2", "--out", "x.json"], "unknown agent 'nosuch'"),
    ("bench_fit_memory", ["/nonexistent", "--json", "x.json"], "data directory '/nonexistent'"),
])
def test_benchmarks_name_bad_arguments_instead_of_a_traceback(script, argv, message, capsys, tmp_path, monkeypatch):
    import importlib

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        importlib.import_module(script).main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
