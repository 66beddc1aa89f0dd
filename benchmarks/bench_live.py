"""Live server load: many concurrent tables of scripted WebSocket players against ``random`` on loopback.

    python benchmarks/bench_live.py                              # 200 tables, 0.5 s think time, 60 s, store on
    python benchmarks/bench_live.py --tables 400 --think 0.25 --seconds 30
    python benchmarks/bench_live.py --think 0 --tables 50        # saturation: players answer at once
    python benchmarks/bench_live.py --no-store                   # the same without the game history

The server runs as ``mulle-serve`` in its own process (``python -m live.cli --port 0``), with its
game store (``--db``, a fresh SQLite file in a temporary directory) unless ``--no-store``; this
process runs every player on one event loop (all from 127.0.0.1, so the server runs with
``--trust-loopback``). Each player opens a table, starts one-set games (``--sets``) one after
another and answers each request with a random legal move after a think time drawn uniformly
from [0.5, 1.5] x ``--think`` seconds (people do not answer in microseconds); at 0.5 s a game
lasts 25 to 50 s, so in the default 60 s window every table finishes a game and the store
commits one row per game (``synchronous=FULL``: on disk before ``game_over`` is sent). Measured
after a warm-up: tables, moves per second (both seats), games finished, and the latency from
sending a person's move to the reply: the opponent's move, or ``game_over`` when the person's
move ended the game (that reply waits for the store's commit), p50/p90/p99/max. The aim is 200
concurrent tables with p99 under 50 ms on 2 cores (server and players share them), store on.
Prints and writes JSON to benchmarks/results/live.json.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_server(max_tables: int, workers: int, db: str | None, prelude: str | None = None
                 ) -> tuple[subprocess.Popen, str]:
    """Start ``mulle-serve`` on a free port in a child process (its store at ``db``, or none); return it and its URL.
    ``prelude``: Python run in the server process before ``live.cli`` is imported (bench_live_footprint's
    ``--without-openspiel``)."""
    entry = (["-m", "live.cli"] if prelude is None else
             ["-c", f"{prelude}\nimport sys\nfrom live.cli import main\nsys.exit(main(sys.argv[1:]))"])
    proc = subprocess.Popen(
        [sys.executable, *entry, "--port", "0", "--opponent", "random", "--max-tables", str(max_tables),
         "--workers", str(workers), "--log-level", "ERROR", "--trust-loopback",
         *(["--db", db] if db else ["--no-db"])],
        stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    if "open http" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    url = line.split("open ")[1].split()[0].rstrip("/")
    return proc, url


class Stats:
    """Latencies and move counts, recorded only inside the measuring window."""

    def __init__(self) -> None:
        self.recording = False
        self.latencies: list[float] = []
        #: Latencies of the replies that were a game_over (the person's move ended the game: a store commit).
        self.over_latencies: list[float] = []
        self.moves = 0
        self.games = 0
        self.errors = 0


async def player(url: str, index: int, think: float, stats: Stats, stop: asyncio.Event, seed: int,
                 sets: int, game: str = "mulle", name: str = "p", cookie: str | None = None) -> None:
    """One person at their own table: start games and answer every request until ``stop``. ``game``: the table's
    game; ``name`` and ``cookie`` (a login's ``Cookie`` header): sit under a claimed name, so the games are rated."""
    rng = random.Random(seed)
    headers = {"Cookie": cookie} if cookie else None
    async with aiohttp.ClientSession() as session, session.ws_connect(url + "/ws", max_msg_size=1 << 22,
                                                                      headers=headers) as ws:
        await ws.send_json({"type": "join", "payload": {"table_name": f"bench-{index}", "player_name": name,
                                                         "opponent": "random", "agent_delay_ms": 0, "sets": sets,
                                                         **({"game": game} if game != "mulle" else {})}})
        sent_at: float | None = None
        seat = 0
        async for msg in ws:
            m = json.loads(msg.data)
            kind, p = m["type"], m["payload"]
            if kind == "joined_confirmation":
                seat = p["seat"]
                await ws.send_json({"type": "lobby_action", "payload": {"action": "start_game"}})
            elif kind == "request":
                if think:
                    await asyncio.sleep(think * rng.uniform(0.5, 1.5))
                if stop.is_set():
                    break
                move = rng.choice(p["context"]["legal_moves"])
                sent_at = time.perf_counter()
                await ws.send_json({"type": "response", "payload": {"request_id": p["request_id"],
                                                                     "data": {"move": move}}})
            elif kind == "notification":
                event = p["event"]
                if event == "moved":
                    if stats.recording:
                        stats.moves += 1
                    if p["data"]["player"] != seat and sent_at is not None:
                        if stats.recording:
                            stats.latencies.append(time.perf_counter() - sent_at)
                        sent_at = None
                elif event == "game_over":
                    if stats.recording:
                        stats.games += 1
                        if sent_at is not None:
                            wait = time.perf_counter() - sent_at
                            stats.latencies.append(wait)
                            stats.over_latencies.append(wait)
                    sent_at = None
                    if stop.is_set():
                        break
                    await ws.send_json({"type": "lobby_action", "payload": {"action": "start_game"}})
            elif kind == "error":
                stats.errors += 1
        await ws.send_json({"type": "leave", "payload": {}})


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of a process (Linux /proc), or None elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, in milliseconds."""
    if not values:
        return float("nan")
    values = sorted(values)
    return 1000 * values[min(len(values) - 1, int(q * len(values)))]


async def run(url: str, tables: int, think: float, warmup: float, seconds: float, seed: int,
              server_pid: int | None = None, sets: int = 1, games: tuple[str, ...] = ("mulle",),
              logins: dict[int, tuple[str, str]] | None = None) -> dict:
    """Run the players, measure for ``seconds`` after ``warmup``; return the figures. Table ``i`` plays
    ``games[i % len(games)]``; ``logins[i]`` = (name, cookie) seats a logged-in player there (rated games)."""
    stats, stop = Stats(), asyncio.Event()
    tasks = []
    logins = logins or {}
    for i in range(tables):
        name, cookie = logins.get(i, ("p", None))
        tasks.append(asyncio.create_task(player(url, i, think, stats, stop, seed * 100_003 + i, sets,
                                                games[i % len(games)], name, cookie)))
        await asyncio.sleep(0.005)  # a ramp, not a thundering herd of joins
    await asyncio.sleep(warmup)
    gc.collect()
    gc.freeze()  # the players' own collector pauses would show up as server latency
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    server0 = process_cpu(server_pid) if server_pid else None
    stats.recording = True
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    stats.recording = False
    dt = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    server1 = process_cpu(server_pid) if server_pid else None
    stop.set()
    await asyncio.wait(tasks, timeout=10)
    lat = stats.latencies
    return {
        "tables": tables, "think_s": think, "seconds": round(dt, 2), "moves": stats.moves,
        "moves_per_s": round(stats.moves / dt, 1), "games_finished": stats.games, "errors": stats.errors,
        "replies_measured": len(lat),
        "latency_ms": {"p50": round(pct(lat, 0.5), 2), "p90": round(pct(lat, 0.9), 2),
                       "p99": round(pct(lat, 0.99), 2), "max": round(1000 * max(lat), 2) if lat else None,
                       "mean": round(1000 * statistics.fmean(lat), 2) if lat else None},
        "game_over_replies": len(stats.over_latencies),
        "game_over_latency_ms": {"p50": round(pct(stats.over_latencies, 0.5), 2),
                                 "max": round(1000 * max(stats.over_latencies), 2) if stats.over_latencies else None},
        "players_cpu_s": round((cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime), 2),
        "server_cpu_s": round(server1 - server0, 2) if server0 is not None and server1 is not None else None,
        # CPU per move depends far less on the neighbours than latency does: the capacity figure.
        "server_cpu_ms_per_move": (round(1000 * (server1 - server0) / stats.moves, 3)
                                   if server0 is not None and server1 is not None and stats.moves else None),
        "loadavg_1min": round(os.getloadavg()[0], 2),
    }


def main(argv=None) -> int:
    """Run the benchmark; print and write the JSON result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, nargs="+", default=[200], help="concurrent tables (several: one run each)")
    p.add_argument("--think", type=float, default=0.5, help="mean think time of a person in seconds (default 0.5)")
    p.add_argument("--seconds", type=float, default=60, help="measuring window per run (default 60)")
    p.add_argument("--warmup", type=float, default=10, help="seconds before measuring (default 10)")
    p.add_argument("--sets", type=int, default=1, help="sets per game (default 1, so games end inside the window)")
    p.add_argument("--no-store", action="store_true", help="run the server without its game history (--no-db)")
    p.add_argument("--workers", type=int, default=4, help="the server's agent threads (default 4)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "live.json"))
    args = p.parse_args(argv)
    runs = []
    for tables in args.tables:
        with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
            db = None if args.no_store else os.path.join(tmp, "games.db")
            proc, url = start_server(max(1000, 2 * tables), args.workers, db)
            try:
                figures = asyncio.run(run(url, tables, args.think, args.warmup, args.seconds, args.seed, proc.pid,
                                          args.sets))
            finally:
                proc.terminate()
                proc.wait(10)
            figures["store"] = db is not None
            figures["sets"] = args.sets
            if db is not None:
                import sqlite3

                con = sqlite3.connect(db)
                figures["games_stored"] = con.execute("SELECT count(*) FROM games").fetchone()[0]
                con.close()
        runs.append(figures)
        lat = figures["latency_ms"]
        print(f"{tables:4d} tables  think {args.think:g} s  {figures['moves_per_s']:8.1f} moves/s  "
              f"reply latency p50 {lat['p50']:.2f} ms  p99 {lat['p99']:.2f} ms  max {lat['max']} ms  "
              f"games {figures['games_finished']} (stored {figures.get('games_stored', '-')})  "
              f"errors {figures['errors']}  server CPU {figures['server_cpu_ms_per_move']} ms/move  "
              f"load {figures['loadavg_1min']}",
              flush=True)
    write_result(args.out, "live server load (scripted WebSocket players vs random, loopback)", "bench_live.py",
                 argv, runs=runs)
    return 0


def write_result(out: str, benchmark: str, script: str, argv: list[str] | None, **figures) -> None:
    """Write a live benchmark's JSON (what it measured, its figures, the machine with its load at the end, the
    command) to ``out`` and say where; the load benchmarks of the live server share it."""
    result = {
        "benchmark": benchmark,
        **figures,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "loadavg_at_end": [round(x, 2) for x in os.getloadavg()]},
        "command": f"python benchmarks/{script} " + " ".join(sys.argv[1:] if argv is None else argv),
    }
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
