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


def test_casino_on_ray_equals_the_process_pool_and_sprt_stops_it(tmp_path, monkeypatch):
    # Issue 50, item 4: the arena plays Casino as it plays Mulle: on Ray the same games as in the pool (same seeds,
    # duplicate deals), and an SPRT head-to-head at Casino stops once decided.
    from arena.ray_backend import RayBackend
    from arena.stats import SPRT

    monkeypatch.delenv("RAY_enable_open_telemetry", raising=False)
    plan = Plan(("random", "heuristic"), 4, ruleset={"rounds": 1}, game="mulle_env.casino")
    a = run(plan, str(tmp_path / "pool.jsonl"), ProcessBackend(2), progress=False)
    backend = RayBackend(workers=2)
    try:
        b = run(plan, str(tmp_path / "ray.jsonl"), backend, progress=False)
    finally:
        backend.shutdown()
    key = lambda x: x["game_id"]  # noqa: E731
    assert a.played == b.played == 4
    assert sorted(map(comparable, a.lines), key=key) == sorted(map(comparable, b.lines), key=key)
    assert {x["game"] for x in a.lines} == {"mulle_env.casino"}
    sprt = Plan(("heuristic", "random"), 400, ruleset={"rounds": 1}, game="mulle_env.casino")
    done = run(sprt, str(tmp_path / "sprt.jsonl"), ProcessBackend(2), sprt=SPRT(0, 200, 0.05, 0.05), progress=False)
    assert done.sprt is not None and done.played < 400, done.played
