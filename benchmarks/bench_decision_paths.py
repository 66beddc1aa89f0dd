"""Per-decision cost before/after a change: Mulle-v0 and PettingZoo decisions per CPU second of two source trees.

The tree at ``--before`` (a git revision, exported with ``git archive``) and the
working tree each run the same driver in their own process, alternately, ``--rounds``
times: ``Mulle-v0`` with ``opponent="random"`` and the PettingZoo AEC env, each seeded
once, a uniformly random legal action per decision. The driver reads the mask the way
each tree offers (``codec.mask_indices`` when it exists, else ``mask.nonzero()``), as a
user of that version would. The exported tree's compiled modules are built first (its own
``setup.py build_ext --inplace``), so both trees run on the engine backend they would give a
user; each run records its backend, and trees that ended on different backends are refused
(a compiled tree against the pure-Python one measures the backend, not the change). Medians go
to JSON.

    python benchmarks/bench_decision_paths.py --before 5da8017 --out benchmarks/results/env_slimming.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DRIVER = r'''
import json, random, sys, time
import gymnasium as gym
import mulle_env
import mulle_env.codec as codec
from mulle_env.pettingzoo import env as make_pz
scan = getattr(codec, "mask_indices", None) or (lambda m: m.nonzero()[0])
def gym_loop(sec):
    env = gym.make("Mulle-v0", opponent="random"); _, info = env.reset(seed=0); pick = random.Random(0).random
    end, c, n = time.perf_counter() + sec, time.process_time(), 0
    while time.perf_counter() < end:
        legal = scan(info["action_mask"]); _, _, d, _, info = env.step(legal[int(pick() * len(legal))]); n += 1
        if d: _, info = env.reset()
    return n / (time.process_time() - c)
def pz_loop(sec):
    env = make_pz(); env.reset(seed=0); pick = random.Random(0).random
    end, c, n = time.perf_counter() + sec, time.process_time(), 0
    while time.perf_counter() < end:
        for a in env.agent_iter():
            obs, r, t, tr, _ = env.last()
            if t or tr: env.step(None); continue
            legal = scan(obs["action_mask"]); env.step(int(legal[int(pick() * len(legal))])); n += 1
        env.reset()
    return n / (time.process_time() - c)
gym_loop(0.3); pz_loop(0.3)
sec = float(sys.argv[1])
backend = getattr(getattr(mulle_env, "engine", None), "BACKEND", "python")
print(json.dumps({"mulle_gym": gym_loop(sec), "mulle_pettingzoo": pz_loop(sec), "file": mulle_env.__file__,
                  "backend": backend}))
'''


def _run(tree: str | None, seconds: float) -> dict:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", DRIVER, str(seconds)], env=env, cwd=tree or str(ROOT),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    """Export ``--before``, run both trees alternately, print and write the medians."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="git revision of the tree to compare against")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="-", help="JSON file to write ('-' to only print)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = subprocess.run(["git", "ls-tree", "--name-only", args.before], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.split()
        wanted = [p for p in ("mulle_env", "agents", "setup.py", "pyproject.toml") if p in paths]
        data = subprocess.run(["git", "archive", args.before, *wanted], cwd=ROOT, capture_output=True,
                              check=True).stdout
        tarfile.open(fileobj=BytesIO(data)).extractall(tmp, filter="data")
        if "setup.py" in wanted:  # the compiled modules of that revision, as its users got them
            subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=tmp,
                           capture_output=True, check=True)
        runs = {"before": [], "after": []}
        for _ in range(args.rounds):
            runs["before"].append(_run(tmp, args.seconds))
            runs["after"].append(_run(None, args.seconds))
        engines = {side: {r.get("backend") for r in rs} for side, rs in runs.items()}
        if engines["before"] != engines["after"]:
            ap.error(f"the trees ran on different engine backends (before {sorted(engines['before'])}, after "
                     f"{sorted(engines['after'])}): the ratio would measure the backend, not the change")
    command = "python benchmarks/bench_decision_paths.py " + " ".join(sys.argv[1:] if argv is None else argv)
    report = {"benchmark": "decision_paths", "before": args.before, "backend": sorted(engines["after"])[0],
              "unit": "decisions per CPU second, medians of alternating rounds", "command": command,
              "load_average": [round(x, 2) for x in os.getloadavg()]}
    for key in ("mulle_gym", "mulle_pettingzoo"):
        b = statistics.median(r[key] for r in runs["before"])
        a = statistics.median(r[key] for r in runs["after"])
        report[key] = {"before": round(b), "after": round(a), "ratio": round(a / b, 2)}
    report["runs"] = runs
    text = json.dumps(report, indent=1)
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text + "\n")
    return report


if __name__ == "__main__":
    main()
