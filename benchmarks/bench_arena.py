"""Arena throughput: games per second with 1 and 2 workers, and the scaling ratio.

    python benchmarks/bench_arena.py                  # random vs heuristic, 400 games
    python benchmarks/bench_arena.py --games 1000 --specs random greedy --out benchmarks/results/arena.json

Each measurement is a fresh tournament into a temporary results file, timed from the
start of ``arena.run`` (worker start-up included) to the last line written. Prints
and writes JSON. The target is a ratio of at least 1.8 on 2 free cores; on a machine
shared with other work the ratio says more about the neighbours than about the arena.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from arena import Plan, ProcessBackend, run  # noqa: E402


def measure(specs, games, workers, rules, seed) -> dict:
    """Play one tournament and return its size, time and rate."""
    with tempfile.TemporaryDirectory() as tmp:
        plan = Plan(tuple(specs), games, seed=seed, ruleset=rules)
        t0 = time.perf_counter()
        outcome = run(plan, os.path.join(tmp, "r.jsonl"), ProcessBackend(workers), progress=False)
        dt = time.perf_counter() - t0
    n = outcome.played
    # Share of worker wall time spent inside games: near 1 means the pool keeps its
    # workers busy, so a poor scaling ratio comes from CPUs taken by other work.
    busy = sum(line["duration"] for line in outcome.lines) / (dt * workers)
    return {"workers": workers, "games": n, "seconds": round(dt, 3), "games_per_s": round(n / dt, 2),
            "busy_fraction": round(busy, 3)}


def main(argv=None) -> int:
    """Run the benchmark; print and write the JSON result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--specs", nargs="+", default=["random", "heuristic"])
    p.add_argument("--games", type=int, default=400, help="games per pairing (default 400)")
    p.add_argument("--sets", type=int, default=2, help="sets per game (default 2, the standard game)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "arena.json"))
    args = p.parse_args(argv)
    import agents

    for spec in args.specs:  # a misspelled spec is named here, not as a worker's traceback
        try:
            agents.canonical(spec)
        except agents.AgentSpecError as exc:
            p.error(str(exc))
    rules = {"sets": args.sets}
    measure(args.specs, 4, 1, rules, args.seed + 1)  # warm the page cache and imports
    one = measure(args.specs, args.games, 1, rules, args.seed)
    two = measure(args.specs, args.games, 2, rules, args.seed)
    result = {
        "benchmark": "arena throughput",
        "specs": args.specs,
        "ruleset": rules,
        "one_worker": one,
        "two_workers": two,
        "scaling": round(two["games_per_s"] / one["games_per_s"], 3),
        "target_scaling": 1.8,
        "cpu_count": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "note": "wall-clock figures (worker start-up included); on a shared machine compare the load average",
    }
    print(json.dumps(result, indent=2))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
