"""The Ray backend gives the same results as the process pool for the same seeds (local Ray)."""

import json
import os

import pytest

from arena import Plan, ProcessBackend, run
from arena.results import comparable

ray = pytest.importorskip("ray")


def test_ray_results_equal_process_pool_results(tmp_path, monkeypatch):
    from arena.ray_backend import RayBackend

    monkeypatch.delenv("RAY_enable_open_telemetry", raising=False)
    plan = Plan(("random", "heuristic", "crasher:at=5"), 4, ruleset={"sets": 1}, worker_init="arena_agents:register")
    a = run(plan, str(tmp_path / "pool.jsonl"), ProcessBackend(2), progress=False)
    backend = RayBackend(workers=2)
    try:
        b = run(plan, str(tmp_path / "ray.jsonl"), backend, progress=False)
        # The local Ray started without the metric exporter whose thread outlives ray.shutdown() (conftest.py).
        assert os.environ["RAY_enable_open_telemetry"] == "0"
    finally:
        backend.shutdown()
    assert a.played == b.played == 12
    key = lambda x: x["game_id"]  # noqa: E731
    assert sorted(map(comparable, a.lines), key=key) == sorted(map(comparable, b.lines), key=key)
    rows = [json.loads(x) for x in open(tmp_path / "ray.jsonl")]
    assert sum(r["status"] == "forfeit" for r in rows) == 8
