"""--backend ray: teacher labelling and arena screens on a two-node Ray cluster, equal to the local backend.

The cluster is ``ray.cluster_utils.Cluster``: two Ray nodes (one CPU each) on this machine.
"""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (the optional 'ray' extra)")
cluster_utils = pytest.importorskip("ray.cluster_utils", reason="ray.cluster_utils is not available")

from training import teacher  # noqa: E402
from training.cluster import RayLabeller  # noqa: E402

TEACHER = "pimc:samples=2,horizon=2"
SETTINGS = {"games": 6, "seed": 4, "shard_games": 1, "rules": {"sets": 1}, "afterstates": True, "progress": False}


@pytest.fixture(scope="module")
def cluster(ray_without_telemetry):
    c = cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 1,
                                                                    "object_store_memory": 80 * 1024 * 1024})
    c.add_node(num_cpus=1, object_store_memory=80 * 1024 * 1024)
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def local_data(tmp_path_factory):
    d = tmp_path_factory.mktemp("local") / "data"
    teacher.generate(d, TEACHER, **SETTINGS)
    return d


def _same_shards(a, b) -> None:
    names = sorted(p.name for p in a.glob("shard_*.npz"))
    assert names and names == sorted(p.name for p in b.glob("shard_*.npz"))
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_ray_labels_byte_identical_teacher_data(cluster, local_data, tmp_path):
    nodes = set()

    class Watching(RayLabeller):
        def run(self, todo, rest, on_done, stop=lambda: False):
            nodes.update(n["NodeID"] for n in ray.nodes() if n["Alive"])
            return super().run(todo, rest, on_done, stop)

    summary = teacher.generate(tmp_path / "data", TEACHER, backend=Watching(cluster.address, 2), **SETTINGS)
    assert summary["complete"] and summary["made"] == 6 and len(nodes) == 2
    _same_shards(local_data, tmp_path / "data")


def test_arena_screens_on_ray_equal_the_local_ones(cluster, tmp_path):
    from arena import results
    from arena.ray_backend import RayBackend
    from training.evaluate import head_to_head

    kw = {"ruleset": {"sets": 1}, "progress": False}
    local = head_to_head("greedy", "heuristic", 4, 11, tmp_path / "local.jsonl", workers=1, **kw)
    remote = head_to_head("greedy", "heuristic", 4, 11, tmp_path / "ray.jsonl",
                          backend=RayBackend(cluster.address, 2), **kw)
    assert {k: local[k] for k in ("wins", "draws", "losses", "score")} == \
        {k: remote[k] for k in ("wins", "draws", "losses", "score")}

    def games(path):
        return sorted((ln["game_id"], ln["scores"], ln["moves"]) for ln in results.load(str(path)).lines)

    assert games(tmp_path / "local.jsonl") == games(tmp_path / "ray.jsonl")


def test_mulle_train_expert_on_ray_makes_the_local_run_s_generation(cluster, tmp_path):
    pytest.importorskip("torch")
    import json

    import numpy as np
    from test_expert_pipeline import TINY

    from agents.learned import load_policy
    from training import cli

    runs = {}
    for name, extra in (("local", []), ("ray", ["--backend", "ray", "--ray-address", cluster.address,
                                                "--workers", "2"])):
        root = tmp_path / name
        assert cli.main(["expert", "--out-dir", str(root), *TINY, "--generations", "1", *extra],
                        out=lambda _: None) == 0
        runs[name] = json.loads((root / "manifest.json").read_text())["generations"][0]
    _same_shards(tmp_path / "local" / "gen_000" / "data", tmp_path / "ray" / "gen_000" / "data")
    a, b = (load_policy(runs[n]["policy"]) for n in ("local", "ray"))
    assert all(np.array_equal(x, y) for x, y in zip(a.weights, b.weights))
    assert runs["local"]["eval"]["learned|random"]["score"] == runs["ray"]["eval"]["learned|random"]["score"]


def test_a_node_lost_mid_run_costs_only_its_unfinished_shards(cluster, local_data, tmp_path):
    worker = [n for n in cluster.worker_nodes][0]
    lost = []

    def on_first_shard(k, n, data, inner):
        if not lost:
            cluster.remove_node(worker, allow_graceful=False)  # the second node dies with shards in flight
            lost.append(k)
        inner(k, n, data)

    class Losing(RayLabeller):
        def run(self, todo, rest, on_done, stop=lambda: False):
            return super().run(todo, rest, lambda k, n, d: on_first_shard(k, n, d, on_done), stop)

    summary = teacher.generate(tmp_path / "data", TEACHER, backend=Losing(cluster.address, 2, max_attempts=4),
                               **SETTINGS)
    assert lost and summary["complete"] and summary["made"] == 6
    _same_shards(local_data, tmp_path / "data")
