"""Arena memory against ``--games``: the parent's RSS once a tournament is under way.

    python benchmarks/bench_arena_memory.py            # --games 100 and 1,000,000,000
    python benchmarks/bench_arena_memory.py --games 100 2000000 --out benchmarks/results/arena_memory.json

Each size runs ``mulle-arena random heuristic --rule sets=1`` (one worker) into a
temporary file, waits until ``--after`` games are written, reads the parent process's
resident set size from ``/proc`` (Linux), then stops the run with Ctrl-C (SIGINT) and
checks it exits with 130. The schedule is generated lazily, so the figures should not
depend on ``--games``; the time to the first games shows that nothing is built up front.
Prints and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB (Linux /proc)."""
    with open(f"/proc/{pid}/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    return round(kb / 1024, 1)


def measure(games: int, after: int, timeout: float) -> dict:
    """Start a tournament of ``games`` per pairing; RSS and time once ``after`` games are written."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.jsonl")
        cmd = [sys.executable, os.path.join(ROOT, "scripts", "mulle-arena"), "random", "heuristic",
               "--games", str(games), "--rule", "sets=1", "--out", out, "--quiet"]
        t0 = time.perf_counter()
        # SIGINT restored to its default: a shell's background job would inherit it ignored.
        proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            while True:
                if os.path.exists(out) and open(out).read().count("\n") >= after:
                    break
                if time.perf_counter() - t0 > timeout or proc.poll() is not None:
                    raise RuntimeError(f"--games {games}: no {after} games after {timeout:g} s")
                time.sleep(0.05)
            first = time.perf_counter() - t0
            rss = rss_mb(proc.pid)
            os.killpg(proc.pid, signal.SIGINT)
            code = proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    return {"games": games, "rss_mb": rss, "seconds_to_first_games": round(first, 2), "exit_code": code}


def main() -> None:
    """Measure, print and write the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, nargs="+", default=[100, 1_000_000_000])
    ap.add_argument("--after", type=int, default=20, help="games written before measuring")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "arena_memory.json"))
    args = ap.parse_args()
    rows = [measure(g, args.after, args.timeout) for g in args.games]
    for r in rows:
        print(f"--games {r['games']:>13,}: parent RSS {r['rss_mb']:6.1f} MB, {args.after} games after "
              f"{r['seconds_to_first_games']:.1f} s, exit {r['exit_code']}")
    result = {"benchmark": "arena_memory", "after_games": args.after, "rows": rows,
              "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
              "measured": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
