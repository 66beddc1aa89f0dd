"""CPU per move of the live server's hub, in process, without sockets: the figure that least follows the load.

    python benchmarks/bench_live_hub.py                                  # this checkout, 3 runs of 10,000 moves
    python benchmarks/bench_live_hub.py --root /path/to/other/checkout --root .   # an A/B, runs interleaved

50 tables, each with one person (a connection whose frames go nowhere) who answers every request
at once with a random legal move, against ``random`` (thinking in the hub's pool, as in
``mulle-serve``); each finished one-set game starts the next. Everything a move costs the server
apart from the socket writes is counted: the request with its previews, the views, the JSON of
every notification, the agent's thread hop. Reports the process CPU time per person move (each
person move comes with one agent move). ``--root`` runs another checkout's ``live`` package (each
run in a fresh interpreter, the roots interleaved), so a change can be compared with the commit
before it on a loaded machine. Prints and writes JSON to ``benchmarks/results/live_hub_cpu.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CHILD = r'''
import asyncio, json, random, sys, time
sys.path.insert(0, sys.argv[1])
from live.hub import Connection, Hub, LiveConfig

async def main(moves):
    hub = Hub(LiveConfig(opponent="random", trust_loopback=True, max_tables_per_address=1000))
    rng, count, done = random.Random(1), [0], asyncio.Event()
    loop = asyncio.get_running_loop()

    async def nowhere(text):
        return None

    conns = []
    for i in range(50):
        conn = Connection(nowhere, "127.0.0.1")
        queue = conn.send

        def send(msg, conn=conn, queue=queue):
            queue(msg)
            p = msg["payload"]
            if msg["type"] == "request":
                move = rng.choice(p["context"]["legal_moves"])
                loop.call_soon(hub.handle, conn, "response", {"request_id": p["request_id"], "move": move})
            elif msg["type"] == "notification" and p["event"] == "moved":
                if conn.person is not None and p["data"]["player"] == conn.person.seat:
                    count[0] += 1
                    if count[0] >= moves:
                        done.set()
            elif msg["type"] == "notification" and p["event"] == "game_over":
                loop.call_soon(hub.handle, conn, "lobby_action", {"action": "start_game"})
        conn.send = send
        conns.append(conn)
        hub.handle(conn, "join", {"table_name": f"t{i}", "player_name": "p", "opponent": None, "seed": None,
                                  "sets": 1, "agent_delay_ms": 0})
    cpu0 = time.process_time()
    for conn in conns:
        hub.handle(conn, "lobby_action", {"action": "start_game"})
    await done.wait()
    cpu = time.process_time() - cpu0
    print(json.dumps({"person_moves": count[0], "cpu_ms_per_person_move": round(1000 * cpu / count[0], 4)}))
    hub.shutdown()

asyncio.run(main(int(sys.argv[2])))
'''


def main(argv=None) -> int:
    """Run the measurement; print and write the JSON result."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", action="append", help="a checkout whose live package to measure (repeat for an A/B; "
                   "default this one)")
    p.add_argument("--runs", type=int, default=3, help="runs per root (default 3)")
    p.add_argument("--moves", type=int, default=10_000, help="person moves per run (default 10,000)")
    p.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "live_hub_cpu.json"))
    args = p.parse_args(argv)
    roots = [os.path.abspath(r) for r in (args.root or [ROOT])]
    results: dict[str, list[float]] = {r: [] for r in roots}
    loads = []
    for _ in range(args.runs):
        for root in roots:
            out = subprocess.run([sys.executable, "-c", _CHILD, root, str(args.moves)], capture_output=True,
                                 text=True, cwd=os.path.dirname(root) or "/", check=True)
            figure = json.loads(out.stdout.strip().splitlines()[-1])["cpu_ms_per_person_move"]
            results[root].append(figure)
            loads.append(round(os.getloadavg()[0], 2))
            print(f"{root}: {figure:.3f} ms CPU a person move (with the agent's reply)  load {loads[-1]}", flush=True)
    summary = {root: {"runs_ms": v, "median_ms": round(statistics.median(v), 3),
                      "mean_ms": round(statistics.fmean(v), 3)} for root, v in results.items()}
    for root, s in summary.items():
        print(f"{root}: median {s['median_ms']} ms, mean {s['mean_ms']} ms over {len(s['runs_ms'])} runs")
    import bench_live  # this script's folder is first on sys.path when it runs

    bench_live.write_result(args.out, "live hub CPU per person move, in process, 50 tables vs random, no sockets",
                            "bench_live_hub.py", argv, roots=summary, loadavg_after_each_run=loads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
