"""The live server's footprint: resident memory and CPU of ``mulle-serve`` with many tables playing.

    python benchmarks/bench_live_footprint.py                  # 50 tables, store on, 60 s window
    python benchmarks/bench_live_footprint.py --tables 10 50 --seconds 30

The Tichu seed runs its server on a Raspberry Pi; this measures what ``mulle-serve`` needs for
that. The server runs in its own process with its game store on, and the scripted players of
``bench_live.py`` (one person per table against ``random``, a think time of 0.5 s a move, one-set
games one after another) keep every table playing. The server's resident set (``VmRSS`` in
``/proc/<pid>/status``) is sampled every half second: at start (idle, nothing played), its mean
and peak over the window, and the kernel's high-water mark (``VmHWM``) at the end; its CPU time
over the window gives the share of one core it used and the CPU per move. Linux only (``/proc``).
The aim is under 200 MB resident at 50 tables. Prints and writes JSON to
``benchmarks/results/live_footprint.json``, with the machine's load average beside each figure
(the players share the machine's cores with the server).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_live  # noqa: E402 - the players and the server start of the load benchmark, not a second copy

ROOT = bench_live.ROOT


def memory(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` of a process in MB (Linux ``/proc``)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


async def measure(url: str, pid: int, tables: int, think: float, warmup: float, seconds: float, seed: int) -> dict:
    """Run ``bench_live``'s players and sample the server's memory while they play."""
    samples: list[float] = []
    stop = asyncio.Event()

    async def sampler() -> None:
        while not stop.is_set():
            samples.append(memory(pid)["VmRSS"])
            await asyncio.sleep(0.5)

    async def window() -> dict:
        # bench_live.run measures its window after its warm-up: sample over the same span.
        await asyncio.sleep(warmup + 0.005 * tables)
        task = asyncio.create_task(sampler())
        await asyncio.sleep(seconds)
        stop.set()
        await task
        return {}

    figures, _ = await asyncio.gather(bench_live.run(url, tables, think, warmup, seconds, seed, pid), window())
    mem = memory(pid)
    figures["rss_mb"] = {"mean": round(sum(samples) / len(samples), 1) if samples else None,
                         "max_sampled": round(max(samples), 1) if samples else None,
                         "high_water": round(mem["VmHWM"], 1), "at_end": round(mem["VmRSS"], 1)}
    figures["server_cpu_share_of_one_core"] = (round(figures["server_cpu_s"] / figures["seconds"], 3)
                                              if figures.get("server_cpu_s") is not None else None)
    return figures


def main(argv=None) -> int:
    """Run the measurement; print and write the JSON result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, nargs="+", default=[50], help="tables playing (several: one run each)")
    p.add_argument("--think", type=float, default=0.5, help="mean think time of a person in seconds (default 0.5)")
    p.add_argument("--seconds", type=float, default=60, help="measuring window per run (default 60)")
    p.add_argument("--warmup", type=float, default=10, help="seconds before measuring (default 10)")
    p.add_argument("--workers", type=int, default=4, help="the server's agent threads (default 4)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "live_footprint.json"))
    args = p.parse_args(argv)
    if not os.path.exists("/proc/self/status"):
        raise SystemExit("bench_live_footprint.py reads /proc: Linux only")
    runs = []
    for tables in args.tables:
        with tempfile.TemporaryDirectory(prefix="bench-footprint-") as tmp:
            db = os.path.join(tmp, "games.db")
            proc, url = bench_live.start_server(max(1000, 2 * tables), args.workers, db)
            try:
                time.sleep(1.0)
                idle = memory(proc.pid)["VmRSS"]
                figures = asyncio.run(measure(url, proc.pid, tables, args.think, args.warmup, args.seconds, args.seed))
            finally:
                proc.terminate()
                proc.wait(10)
            figures["rss_mb"]["idle_at_start"] = round(idle, 1)
        runs.append(figures)
        rss, cpu = figures["rss_mb"], figures["server_cpu_share_of_one_core"]
        print(f"{tables:4d} tables  RSS idle {rss['idle_at_start']} MB  mean {rss['mean']} MB  "
              f"peak {rss['high_water']} MB  server CPU {cpu} of a core, {figures['server_cpu_ms_per_move']} ms/move  "
              f"{figures['moves_per_s']} moves/s  p99 {figures['latency_ms']['p99']} ms  "
              f"load {figures['loadavg_1min']}", flush=True)
    bench_live.write_result(args.out, "live server footprint (resident memory and CPU with tables playing, store on)",
                            "bench_live_footprint.py", argv, runs=runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
