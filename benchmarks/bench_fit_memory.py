"""The afterstate fit's memory bound and quality: in memory against streamed from disk in chunks.

Two measurements on teacher data made with ``--afterstates`` (e.g. a generation of
``mulle-train expert``):

* **quality**: the same fit (settings, seed) with all the data in memory (one chunk, as
  fits were before streaming) and streamed in chunks of ``--chunk-rows`` afterstates, for
  each of ``--seeds`` seeds; the held-out regret (points a decision) of each, so the
  difference between the two ways can be set against the spread between seeds (noise);
* **memory**: the peak resident memory of a fit process streaming the data listed
  ``1, 2, 4, ...`` times (``--copies``) within ``--memory-gb``, against the in-memory fit of
  the same data (which grows with it), one epoch each.

Each fit runs in its own process (its peak memory is its own ``ru_maxrss``). Example::

    python benchmarks/bench_fit_memory.py runs/expert-auto/gen_000/data --seeds 0 1 --epochs 3 \\
        --chunk-rows 100000 --copies 1 4 16 --json benchmarks/results/fit_memory.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_FIT = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
from training import teacher
from training.afterfit import AfterstateConfig, fit_afterstate
from training.stream import ShardSource, chunk_rows_for
job = json.loads(sys.argv[1])
cfg = AfterstateConfig(**job["config"])
dirs = job["dirs"]
t = time.monotonic()
if job["mode"] == "memory":
    data = teacher.load(dirs, large=("after_obs",), compact=True)
else:
    rows = job.get("chunk_rows") or chunk_rows_for(job["memory_gb"])
    data = ShardSource(dirs, rows)
figures = fit_afterstate(data, job["out"], cfg, progress=False)
figures["seconds"] = round(time.monotonic() - t, 1)
figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(figures))
"""


def fit(job: dict) -> dict:
    """Run one fit in a fresh process; its held-out figures, seconds and peak memory."""
    out = subprocess.run([sys.executable, "-c", _FIT.format(root=str(ROOT)), json.dumps(job)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="+", help="teacher data directories with afterstates")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="fit seeds (the spread is the noise)")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--hidden", default="256,256")
    ap.add_argument("--extras", default="capture-v3")
    ap.add_argument("--chunk-rows", type=int, default=100_000, help="afterstates a streamed chunk holds")
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 4], help="the data listed this many times")
    ap.add_argument("--memory-gb", type=float, default=4.0, help="the streamed fits' bound in the memory runs")
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument("--json", default="", help="write the figures here")
    args = ap.parse_args(argv)
    from training.teacher import TeacherDataError, check_data_dir

    for d in args.data:  # named here, not as a child process's traceback
        try:
            check_data_dir(d)
        except (TeacherDataError, ValueError) as exc:
            ap.error(f"data directory {d!r}: {exc}")
    base = {"hidden": [int(h) for h in args.hidden.split(",")], "epochs": args.epochs,
            "extras": None if args.extras == "none" else args.extras}
    result: dict = {"data": args.data, "config": base, "chunk_rows": args.chunk_rows, "quality": [], "memory": []}
    tmp = Path(tempfile.mkdtemp(prefix="fitmem-"))
    if not args.skip_quality:
        for seed in args.seeds:
            for mode in ("memory", "stream"):
                figures = fit({"mode": mode, "dirs": args.data, "config": {**base, "seed": seed},
                               "chunk_rows": args.chunk_rows, "out": str(tmp / f"{mode}{seed}.npz")})
                row = {"seed": seed, "mode": mode, **figures}
                result["quality"].append(row)
                _save(args.json, result)
                print(f"seed {seed} {mode:6s}: held-out regret {figures['heldout_regret_points']:.4f} points, "
                      f"agreement {figures['heldout_agreement']:.2%}, {figures['seconds']} s, "
                      f"peak {figures['peak_rss_mb']:.0f} MB", flush=True)
        by = {(r["seed"], r["mode"]): r["heldout_regret_points"] for r in result["quality"]}
        diffs = [by[(s, "stream")] - by[(s, "memory")] for s in args.seeds]
        spread = max(by[(s, "memory")] for s in args.seeds) - min(by[(s, "memory")] for s in args.seeds)
        result["stream_minus_memory_regret"] = diffs
        result["memory_regret_spread_over_seeds"] = spread
        print(f"streamed minus in-memory regret per seed: {[f'{d:+.4f}' for d in diffs]}; "
              f"spread of the in-memory fits over seeds: {spread:.4f}")
    for copies in args.copies:
        dirs = args.data * copies
        one = {**base, "epochs": 1, "seed": 0}
        for mode in ("memory", "stream"):
            figures = fit({"mode": mode, "dirs": dirs, "config": one, "memory_gb": args.memory_gb,
                           "out": str(tmp / f"mem{mode}{copies}.npz")})
            result["memory"].append({"copies": copies, "mode": mode, "decisions": figures["decisions"],
                                     "peak_rss_mb": figures["peak_rss_mb"], "seconds": figures["seconds"]})
            _save(args.json, result)
            print(f"{copies}x data ({figures['decisions']} decisions) {mode:6s}: peak {figures['peak_rss_mb']:.0f} MB, "
                  f"{figures['seconds']} s", flush=True)
    _save(args.json, result)
    return 0


def _save(path: str, result: dict) -> None:
    """Write the figures so far (a long run that is stopped keeps what it measured)."""
    if path:
        Path(path).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
