"""What ``mulle-arena --isolate`` costs: games per second with agents in process and isolated, one run each.

    python benchmarks/bench_isolate.py                       # random-heuristic and heuristic-greedy, both games
    python benchmarks/bench_isolate.py --games 40 --out benchmarks/results/isolate.json

Each row plays the same games (one worker, the tournament's own ``arena.run``) twice: agents
in the worker's process, then each agent in its own process (:mod:`arena.isolate`); the
ratio is the isolated rate over the in-process one. Start-up is included (an isolated
agent's process starts once per worker and spec, about a third of a second). It also
reports the peak address space (VmPeak) of an isolated process for each of the shipped
agents, which is what ``--agent-memory`` must leave room for. Prints and writes JSON with
the machine load beside the figures.
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


def rate(specs: tuple[str, str], game: str, games: int, isolate: bool) -> dict:
    """One tournament of ``games`` games: its time and games per second."""
    rules = {"sets": 1} if game == "mulle" else {}
    with tempfile.TemporaryDirectory() as tmp:
        plan = Plan(specs, games, ruleset=rules, game=game, isolate=isolate, move_timeout=60)
        t0 = time.perf_counter()
        outcome = run(plan, os.path.join(tmp, "r.jsonl"), ProcessBackend(1), progress=False)
        dt = time.perf_counter() - t0
    bad = [line["error"] for line in outcome.lines if line["status"] != "ok"]
    if bad:
        raise SystemExit(f"a benchmark game did not finish: {bad[0]}")
    return {"games": outcome.played, "seconds": round(dt, 3), "games_per_s": round(outcome.played / dt, 3)}


def peak_memory(spec: str, game: str | None) -> float:
    """VmPeak in MiB of an isolated process that built ``spec`` and played a few moves."""
    import random

    from arena.isolate import IsolatedAgent
    from arena.worker import load_game

    module = load_game(game or "mulle")
    state = module.new_game(seed=1)
    agent = IsolatedAgent(spec, game, seconds=120)
    try:
        agent.reset()
        for _ in range(4):
            state.play(agent.act(state.view(state.to_move), state.legal_moves(), random.Random(0)))
        assert agent._proc is not None
        with open(f"/proc/{agent._proc.pid}/status") as f:
            line = next(x for x in f if x.startswith("VmPeak"))
        return round(int(line.split()[1]) / 1024, 1)
    finally:
        agent.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20, help="games per row (default 20)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    rows = []
    for game, specs in (("mulle", ("random", "heuristic")), ("mulle", ("heuristic", "greedy")),
                        ("casino", ("random", "heuristic")), ("casino", ("heuristic", "greedy"))):
        inside = rate(specs, game, args.games, False)
        isolated = rate(specs, game, args.games, True)
        row = {"game": game, "specs": list(specs), "in_process": inside, "isolated": isolated,
               "ratio": round(isolated["games_per_s"] / inside["games_per_s"], 3)}
        rows.append(row)
        print(f"{game:7} {' vs '.join(specs):22} in process {inside['games_per_s']:8.2f} games/s  "
              f"isolated {isolated['games_per_s']:8.2f} games/s  ratio {row['ratio']:.2f}", flush=True)
    peaks = {}
    for game, spec in ((None, "random"), (None, "heuristic"), (None, "greedy"), (None, "pimc"), (None, "learned"),
                       (None, "netsearch"), ("casino", "pimc")):
        key = f"{game or 'mulle'}:{spec}"
        peaks[key] = peak_memory(spec, game)
        print(f"VmPeak of an isolated {key}: {peaks[key]} MiB", flush=True)
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"benchmark": "isolate", "rows": rows, "vm_peak_mib": peaks, "load_average": load,
                       "cpus": os.cpu_count(), "machine": platform.processor() or platform.machine(),
                       "python": platform.python_version(), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                      f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
