"""What ``mulle-train ppo --recipe NAME`` makes from nothing, and in how long: its curve and its final duplicate scores.

    python benchmarks/bench_ppo_recipes.py quick --out benchmarks/results/ppo_recipe_quick.json
    python benchmarks/bench_ppo_recipes.py long --out benchmarks/results/ppo_recipe_long.json

Runs the recipe into ``--run-dir`` (a fresh directory; extra ``ppo`` flags after ``--``), then plays the best
evaluated policy against ``heuristic`` and ``greedy`` over ``--games`` duplicate games each in the arena
(``mulle-arena``'s statistics: the score with its 95% interval over duplicate pairs). Writes the curve (every
evaluation of the run: steps, wall seconds, score against the recipe's evaluation opponent), the two final
scores, the wall time and the CPU seconds of the training process and its children, and the load average
before and after (the machine is shared: quote the figures with their load).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    """Run a recipe, measure its net, write the JSON; 0 when done."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recipe", choices=("quick", "long"))
    ap.add_argument("--run-dir", default="", help="the run's --out-dir (default runs/bench_ppo_<recipe>)")
    ap.add_argument("--games", type=int, default=400, help="duplicate games against each opponent at the end")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="", help="JSON (default benchmarks/results/ppo_recipe_<recipe>.json)")
    ap.add_argument("--curve-vs", default="", help="also play every pool snapshot of the run against this agent")
    ap.add_argument("--curve-games", type=int, default=200, help="duplicate games of each --curve-vs point")
    args = ap.parse_args(argv)
    run_dir = Path(args.run_dir or f"runs/bench_ppo_{args.recipe}")
    out = Path(args.out or ROOT / "benchmarks" / "results" / f"ppo_recipe_{args.recipe}.json")
    load_before = os.getloadavg()
    t0 = time.monotonic()
    cmd = [sys.executable, "-m", "training.cli", "ppo", "--recipe", args.recipe, "--out-dir", str(run_dir),
           "--no-progress", *extra]
    print("running:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)
    wall = time.monotonic() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = os.getloadavg()
    with open(run_dir / "eval.csv") as fh:
        curve = [{k: (float(v) if k not in ("opponent",) else v) for k, v in row.items()} for row in csv.DictReader(fh)]
    from training.evaluate import head_to_head

    best = run_dir / "best.npz"
    final = {}
    for opponent in ("heuristic", "greedy"):
        m = head_to_head(f"learned:path={best}", opponent, args.games, 9_000_000, run_dir / f"vs_{opponent}.jsonl",
                         workers=args.workers, progress=False)
        final[opponent] = {k: m[k] for k in ("games", "score", "score_low", "score_high", "points_per_game")}
        print(f"best net vs {opponent}: {m['score']:.1%} [{m['score_low']:.1%}, {m['score_high']:.1%}] over "
              f"{m['games']} games", flush=True)
    curve_vs = []
    if args.curve_vs:  # the snapshots the run kept (pool/step_*.npz, one a checkpoint) against a second opponent
        for snap in sorted((run_dir / "pool").glob("step_*.npz")):
            m = head_to_head(f"learned:path={snap}", args.curve_vs, args.curve_games, 9_500_000,
                             run_dir / f"curve_{args.curve_vs}_{snap.stem}.jsonl", workers=args.workers, progress=False)
            curve_vs.append({"steps": int(snap.stem.split("_")[1]), "opponent": args.curve_vs,
                             **{k: m[k] for k in ("games", "score", "score_low", "score_high", "points_per_game")}})
            print(f"{snap.name} vs {args.curve_vs}: {m['score']:.1%}", flush=True)
    summary = json.loads((run_dir / "summary.json").read_text())
    result = {
        "recipe": args.recipe, "command": cmd[2:], "training_wall_s": round(wall, 1),
        "training_cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "timesteps": summary["timesteps"],
        "bc": summary.get("bc"), "curve": curve, "curve_vs": curve_vs, "final_vs": final,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after], "cpus": os.cpu_count(), "machine": platform.processor()
        or platform.machine(), "created": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
