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

With ``--full`` (issue 52, item 6) the server carries everything a card room does at once: half the
tables play Casino (``--casino-share``), ``--rated`` players claim names and log in (so their games
update the ratings in the store), and a client keeps asking for the ratings of both games, a player's
history and the game list every 2 s and keeps one post-game analysis running. The server's RSS is
also read just before and after its first ``GET /api/ratings`` (that request doubled it before:
58.9 to 123.8 MB, scipy loaded for a refit), and the analysis process's own peak is reported apart.

``--without-openspiel`` runs the server as an install without the ``openspiel`` extra has it
(``pip install -e ".[web]"``, what a card room needs): the agent registry then leaves ``ismcts``
out and OpenSpiel (about 17 MB resident) is never loaded. The project's development environment
has every extra, so without the flag the server carries OpenSpiel though no live table offers
``ismcts``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_live  # noqa: E402 - the players and the server start of the load benchmark, not a second copy

ROOT = bench_live.ROOT

#: Run in the server process first: the agent registry registers ismcts only when ``find_spec("pyspiel")`` finds
#: OpenSpiel, so answering "not installed" there is exactly an install without the openspiel extra.
WITHOUT_OPENSPIEL = ("import importlib.util as u\n_find = u.find_spec\n"
                     "u.find_spec = lambda name, package=None: None if name == 'pyspiel' else _find(name, package)")


def memory(pid: int) -> dict[str, float]:
    """``VmRSS`` and ``VmHWM`` of a process in MB (Linux ``/proc``)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
    return out


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the analysis process), from ``/proc``."""
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return out


async def logins(url: str, n: int) -> dict[int, tuple[str, str]]:
    """Claim ``n`` names and log each in: table index -> (name, Cookie header)."""
    out = {}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
        for i in range(n):
            body = {"name": f"bench{i}", "password": "bench password"}
            async with http.post(url + "/api/accounts", json=body) as r:
                assert r.status == 201, await r.text()
            async with http.post(url + "/api/session", json=body) as r:
                assert r.status == 200, await r.text()
                out[i] = (body["name"], f"mulle_session={r.cookies['mulle_session'].value}")
    return out


async def first_ratings(url: str, pid: int) -> dict[str, float]:
    """The server's RSS just before and 1 s after its first ``GET /api/ratings``."""
    before = memory(pid)["VmRSS"]
    async with aiohttp.ClientSession() as http:
        for game in ("mulle", "casino"):
            async with http.get(f"{url}/api/ratings?game={game}") as r:
                assert r.status == 200, await r.text()
    await asyncio.sleep(1.0)
    return {"before": round(before, 1), "after": round(memory(pid)["VmRSS"], 1)}


async def extras(url: str, pid: int, stop: asyncio.Event, seen: dict) -> None:
    """Ratings, a player's history and the game list every 2 s, and one analysis running at a time."""
    seen.update(requests=0, analyses_started=0, analysis_peak_mb=0.0, errors=0)
    async with aiohttp.ClientSession() as http:
        job = None
        while not stop.is_set():
            for path in ("/api/ratings?game=mulle", "/api/ratings?game=casino", "/api/players/bench0",
                         "/api/games?limit=10"):
                async with http.get(url + path) as r:
                    seen["requests"] += 1
                    seen["errors"] += r.status not in (200, 404)
                    body = await r.json()
                    if path.startswith("/api/games") and body.get("games") and job is None:
                        job = body["games"][0]["id"]
                        async with http.post(f"{url}/api/games/{job}/analysis") as a:
                            seen["analyses_started"] += a.status in (200, 202)
            if job is not None:
                async with http.get(f"{url}/api/games/{job}/analysis") as a:
                    if a.status != 202:
                        job = None  # done (or failed): the next one starts on the next round
            for child in children(pid):
                try:
                    seen["analysis_peak_mb"] = max(seen["analysis_peak_mb"], memory(child)["VmHWM"])
                except OSError:
                    pass
            await asyncio.sleep(2.0)


async def measure(url: str, pid: int, tables: int, think: float, warmup: float, seconds: float, seed: int,
                  full: bool = False, casino_share: float = 0.5, rated: int = 10) -> dict:
    """Run ``bench_live``'s players and sample the server's memory while they play (``full``: with Casino tables,
    logged-in players, ratings, histories and analyses in use: see the module docstring)."""
    samples: list[float] = []
    stop = asyncio.Event()
    extra: dict = {}
    games: tuple[str, ...] = ("mulle",)
    logged: dict[int, tuple[str, str]] = {}
    if full:
        extra["first_ratings_rss_mb"] = await first_ratings(url, pid)
        logged = await logins(url, min(rated, tables))
        every = max(1, round(1 / casino_share)) if casino_share > 0 else 0
        games = tuple("casino" if every and i % every == 0 else "mulle" for i in range(every or 1))

    async def sampler() -> None:
        while not stop.is_set():
            samples.append(memory(pid)["VmRSS"])
            await asyncio.sleep(0.5)

    async def window() -> dict:
        # bench_live.run measures its window after its warm-up: sample over the same span.
        await asyncio.sleep(warmup + 0.005 * tables)
        task = asyncio.create_task(sampler())
        side = asyncio.create_task(extras(url, pid, stop, extra)) if full else None
        await asyncio.sleep(seconds)
        stop.set()
        await task
        if side is not None:
            await side
        return {}

    figures, _ = await asyncio.gather(bench_live.run(url, tables, think, warmup, seconds, seed, pid,
                                                     games=games, logins=logged), window())
    if full:
        figures["full"] = {**extra, "casino_tables": sum(1 for i in range(tables) if games[i % len(games)] ==
                                                         "casino"), "rated_players": len(logged)}
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
    p.add_argument("--full", action="store_true", help="Casino tables, logged-in players, ratings, histories and "
                   "analyses in use too (see the module docstring)")
    p.add_argument("--casino-share", type=float, default=0.5, help="with --full: the share of Casino tables")
    p.add_argument("--rated", type=int, default=10, help="with --full: logged-in players (rated games)")
    p.add_argument("--without-openspiel", action="store_true",
                   help="run the server as an install without the openspiel extra (see the module docstring)")
    p.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "live_footprint.json"))
    args = p.parse_args(argv)
    if not os.path.exists("/proc/self/status"):
        raise SystemExit("bench_live_footprint.py reads /proc: Linux only")
    runs = []
    for tables in args.tables:
        load_before = os.getloadavg()
        with tempfile.TemporaryDirectory(prefix="bench-footprint-") as tmp:
            db = os.path.join(tmp, "games.db")
            proc, url = bench_live.start_server(max(1000, 2 * tables), args.workers, db,
                                                WITHOUT_OPENSPIEL if args.without_openspiel else None)
            try:
                time.sleep(1.0)
                idle = memory(proc.pid)["VmRSS"]
                figures = asyncio.run(measure(url, proc.pid, tables, args.think, args.warmup, args.seconds, args.seed,
                                              args.full, args.casino_share, args.rated))
            finally:
                proc.terminate()
                proc.wait(10)
            figures["rss_mb"]["idle_at_start"] = round(idle, 1)
        figures["without_openspiel"] = args.without_openspiel
        figures["loadavg_before"] = [round(x, 2) for x in load_before]
        runs.append(figures)
        rss, cpu = figures["rss_mb"], figures["server_cpu_share_of_one_core"]
        print(f"{tables:4d} tables  RSS idle {rss['idle_at_start']} MB  mean {rss['mean']} MB  "
              f"peak {rss['high_water']} MB  server CPU {cpu} of a core, {figures['server_cpu_ms_per_move']} ms/move  "
              f"{figures['moves_per_s']} moves/s  p99 {figures['latency_ms']['p99']} ms  "
              f"load {figures['loadavg_1min']}", flush=True)
        if args.full:
            print("      " + json.dumps(figures["full"]), flush=True)
    bench_live.write_result(args.out, "live server footprint (resident memory and CPU with tables playing, store on)",
                            "bench_live_footprint.py", argv, runs=runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
