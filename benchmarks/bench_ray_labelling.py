"""How teacher labelling scales on Ray: one generation's shards on one Ray node, then on two.

Two local Ray clusters (``ray.cluster_utils.Cluster``) label the same games: one node with
one CPU, then two nodes with one CPU each (``--backend ray``'s :class:`training.cluster.RayLabeller`,
``2 * workers`` shards in flight). The ratio of the two wall-clock times is the scaling
(2.0 would be linear); the data of both runs are checked byte for byte equal. On a
2-core machine the two nodes share its two cores with the driver and everything else
running, so the ratio is a lower bound of what two real machines give. Example::

    python benchmarks/bench_ray_labelling.py --games 40 --shard-games 2 --json benchmarks/results/ray_labelling.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def label(nodes: int, out: Path, args) -> float:
    """Seconds to label the games on a fresh cluster of ``nodes`` one-CPU nodes."""
    import ray
    from ray.cluster_utils import Cluster

    from training import teacher
    from training.cluster import RayLabeller

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024})
    for _ in range(nodes - 1):
        c.add_node(num_cpus=1, object_store_memory=100 * 1024 * 1024)
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    try:
        # A warm-up task per CPU, so worker start-up is not timed.
        ray.get([ray.remote(lambda: __import__("agents").make(args.teacher).spec).remote() for _ in range(nodes)])
        t = time.monotonic()
        teacher.generate(out, args.teacher, args.games, seed=args.seed, shard_games=args.shard_games,
                         afterstates=True, progress=False, backend=RayLabeller(c.address, nodes))
        return time.monotonic() - t
    finally:
        ray.shutdown()
        c.shutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--teacher", default="pimc:samples=40")
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--shard-games", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="raylabel-"))
    one = label(1, tmp / "one", args)
    two = label(2, tmp / "two", args)
    same = all((tmp / "one" / p.name).read_bytes() == p.read_bytes() for p in (tmp / "two").glob("shard_*.npz"))
    result = {"teacher": args.teacher, "games": args.games, "shard_games": args.shard_games,
              "one_node_seconds": round(one, 1), "two_nodes_seconds": round(two, 1),
              "speedup": round(one / two, 2), "identical_data": same}
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
