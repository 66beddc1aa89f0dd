"""Before and after: the same workloads on two checkouts of the project, alternating, in one run (JSON).

A refactor must not make the engine, the environments or the agents slower. This runs a
fixed set of workloads, each through the public API both checkouts share, in a fresh
subprocess of each checkout's own interpreter, alternating ``before, after, before, ...``
for ``--rounds`` rounds, and reports per workload the median rate (per CPU second of the
subprocess, steadier than wall time on a shared machine) of each and their ratio
(after / before: above 1 is faster).

    python benchmarks/bench_builds.py --before /path/to/old/checkout --after . --rounds 5

Each checkout needs its own environment with the project installed (``<checkout>/.venv``
by default, or ``--before-python``/``--after-python``). Workloads:

- ``engine_ids_c`` / ``engine_ids_python``: random play, ``legal_move_ids()`` + ``play_id(i)``, per backend;
- ``engine_checked_c``: ``legal_moves()`` + ``play(move)``, the checked API;
- ``gym_random`` / ``gym_heuristic``: ``Mulle-v0`` steps (a learner decision, the opponent's moves inside);
- ``aec``: PettingZoo ``last()`` + ``step()``;
- ``vector_random``: the batched vector env, K = 64, decisions;
- ``decide_<spec>``: an agent's decisions on a fixed set of positions (pimc, learned, netsearch, greedy, heuristic).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: Each workload: code that defines ``run(seconds) -> (operations, cpu_seconds)``.
_ENGINE = """
import random, time
from mulle_env.engine import backends
def run(seconds):
    mod = backends()[{backend!r}]; rr = random.Random(0).randrange; n = 0; g = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        st = mod.new_game(g); g += 1
        while not st.over:
            {move}; n += 1
    return n, time.process_time() - t0
"""
_IDS = "ids = st.legal_move_ids(); st.play_id(ids[rr(len(ids))])"
_CHECKED = "ms = st.legal_moves(); st.play(ms[rr(len(ms))])"
_GYM = """
import time, numpy as np, gymnasium as gym, mulle_env
def run(seconds):
    env = gym.make("Mulle-v0", opponent={opponent!r}); obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0); n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(legal[rng.integers(len(legal))])); n += 1
        if term: obs, info = env.reset()
    return n, time.process_time() - t0
"""
_DECIDE = """
import random, time, agents, mulle_env as me
def run(seconds):
    rr = random.Random(0); pos = []
    for g in range(40):  # fixed positions from random play, made before the clock starts
        st = me.new_game(g)
        while not st.over and len(pos) < 120:
            if rr.random() < 0.1 and len(st.legal_moves()) > 1:
                pos.append(st.copy())
            ms = st.legal_moves(); st.play(ms[rr.randrange(len(ms))])
    agent = agents.make({spec!r}); n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        st = pos[n % len(pos)]; agent.reset()
        agent.act(st.view(st.to_move), st.legal_moves(), random.Random(n)); n += 1
    return n, time.process_time() - t0
"""
#: The agents whose decision times must not get slower.
DECIDERS = ("heuristic", "greedy", "pimc", "learned", "netsearch")
WORKLOADS: dict[str, str] = {
    "engine_ids_c": _ENGINE.format(backend="c", move=_IDS),
    "engine_ids_python": _ENGINE.format(backend="python", move=_IDS),
    "engine_checked_c": _ENGINE.format(backend="c", move=_CHECKED),
    "gym_random": _GYM.format(opponent="random"),
    "gym_heuristic": _GYM.format(opponent="heuristic"),
    "aec": """
import time, numpy as np
from mulle_env.pettingzoo import env as make
def run(seconds):
    e = make(); e.reset(seed=0); rng = np.random.default_rng(0); n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        obs, r, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            if not e.agents: e.reset()
            continue
        legal = np.flatnonzero(obs["action_mask"]); e.step(int(legal[rng.integers(len(legal))])); n += 1
    return n, time.process_time() - t0
""",
    "vector_random": """
import time, numpy as np, gymnasium as gym, mulle_env
def run(seconds):
    k = 64
    envs = gym.make_vec("Mulle-v0", num_envs=k, vectorization_mode="vector_entry_point", opponent="random")
    obs, info = envs.reset(seed=0); rng = np.random.default_rng(0); n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < seconds:
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, r, term, trunc, info = envs.step(acts); n += k
    return n, time.process_time() - t0
""",
    **{f"decide_{spec}": _DECIDE.format(spec=spec) for spec in DECIDERS},
}

_RUNNER = """
import json, sys
sys.path.insert(0, {root!r})
{code}
run(0.2)  # warm-up: imports, caches
ops, cpu = run({seconds})
print(json.dumps({{"ops": ops, "cpu": cpu}}))
"""


def measure(python: str, root: Path, name: str, seconds: float) -> float:
    """One run of workload ``name`` in a fresh interpreter of the checkout at ``root``: operations per CPU second."""
    code = _RUNNER.format(root=str(root), code=WORKLOADS[name], seconds=seconds)
    env = {**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([python, "-c", code], cwd=root, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed in {root}:\n{done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["ops"] / out["cpu"]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, type=Path, help="the old checkout")
    ap.add_argument("--after", default=Path("."), type=Path, help="the new checkout (default: this one)")
    ap.add_argument("--before-python", default="", help="its interpreter (default: <before>/.venv/bin/python)")
    ap.add_argument("--after-python", default="", help="its interpreter (default: <after>/.venv/bin/python)")
    ap.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per run (default 2)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    ap.add_argument("--out", default="benchmarks/results/builds.json", help="JSON to write ('-' for none)")
    args = ap.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    pythons = {k: getattr(args, f"{k}_python") or str(trees[k] / ".venv" / "bin" / "python") for k in trees}
    names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
    runs: dict[str, dict[str, list[float]]] = {n: {"before": [], "after": []} for n in names}
    for r in range(args.rounds):
        for n in names:
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for which in order:
                runs[n][which].append(measure(pythons[which], trees[which], n, args.seconds))
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    results = {}
    for n, rs in runs.items():
        b, a = statistics.median(rs["before"]), statistics.median(rs["after"])
        ratios = [x / y for x, y in zip(rs["after"], rs["before"])]
        results[n] = {"before": round(b, 1), "after": round(a, 1), "ratio": round(statistics.median(ratios), 3),
                      "runs": rs}
    report = {
        "benchmark": "builds",
        "unit": "operations per CPU second of the workload's process (moves, env decisions, agent decisions); "
                "ratio = median over rounds of after/before",
        "command": "python benchmarks/bench_builds.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "trees": {k: str(v) for k, v in trees.items()},
        "results": results,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
        "seconds_per_run": args.seconds,
        "rounds": args.rounds,
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    width = max(map(len, results))
    print(f"{'workload':{width}}  {'before':>12}  {'after':>12}  ratio")
    for n, r in results.items():
        print(f"{n:{width}}  {r['before']:12,.1f}  {r['after']:12,.1f}  {r['ratio']:.3f}")
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    main()
