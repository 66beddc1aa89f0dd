"""Thinking time of search agents on the same positions: what a teacher label and a search decision cost.

Positions are taken along ``heuristic`` self-play games (every ``--every``-th decision
with a choice, so early and late positions both count); each spec's ``move_values``
(or ``act`` for agents without it) is timed on every position with the same rng seed.
Prints a table and writes JSON (default benchmarks/results/expert.json).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_expert.py pimc netsearch "netsearch:samples=32" --games 4

Quote ratios between specs measured in one run (the machine is shared).
``--compare-afterstates`` times every spec twice more, alternately, with the compiled
core's afterstate encoding and with the Python reference loop
(``agents.learned.afterstate.NATIVE`` set to ``None`` for the latter), and reports the ratio:
the before/after figure of moving that hot path of ``learned`` and ``netsearch`` into C.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_expert.py learned netsearch pimc --games 2 --every 8 \\
        --compare-afterstates --out benchmarks/results/afterstates_core.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agents
from mulle_env.engine import Match


def positions(games: int, every: int, seed: int) -> list[tuple]:
    """(view, legal moves, heard moves) at every ``every``-th decision with a choice of ``games`` games."""
    out = []
    for g in range(games):
        m = Match(seed=seed + g)
        bot = agents.make("heuristic")
        rng = random.Random(g)
        k = 0
        while not m.state.over:
            legal = m.legal_moves()
            if len(legal) > 1:
                if k % every == 0:
                    out.append((m.state.view(m.state.to_move), legal, [(e.player, e.move) for e in m.history]))
                k += 1
            m.play(bot.act(m.state.view(m.state.to_move), legal, rng))
    return out


def time_spec(spec: str, pos: list[tuple]) -> dict:
    """Mean and median milliseconds per decision of ``spec`` over ``pos``."""
    bot = agents.make(spec)
    call = getattr(bot, "move_values", None) or bot.act
    times = []
    for view, legal, heard in pos:
        bot.reset()
        for event in heard:
            bot.observe(event)
        t0 = time.perf_counter()
        call(view, legal, random.Random(0))
        times.append(time.perf_counter() - t0)
    times.sort()
    return {"spec": bot.spec, "positions": len(times), "mean_ms": 1000 * sum(times) / len(times),
            "median_ms": 1000 * times[len(times) // 2]}


def main(argv=None) -> int:
    """Run the benchmark; exit code 0."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="+", help="agent specs to time")
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--every", type=int, default=8, help="take every N-th decision with a choice")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--compare-afterstates", action="store_true",
                    help="also time each spec with the reference Python afterstate loop and report the ratio")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "expert.json"))
    args = ap.parse_args(argv)
    for spec in args.specs:  # a misspelled spec is named here, not as a traceback
        try:
            agents.make(spec)
        except agents.AgentSpecError as exc:  # every refusal of make(), naming the spec
            ap.error(str(exc))
    pos = positions(args.games, args.every, args.seed)
    rows = [time_spec(s, pos) for s in args.specs]
    for r in rows:
        print(f"{r['spec']:45s} {r['mean_ms']:8.2f} ms mean  {r['median_ms']:8.2f} ms median  "
              f"({r['positions']} positions)")
    if args.compare_afterstates:
        from mulle_env import afterstates as afterstate

        native = afterstate.NATIVE  # the env layer's compiled module; None makes write_afterstates use its Python loop
        if native is None:
            sys.exit("--compare-afterstates needs the env layer's compiled module (mulle_env/_native), which is not "
                     "built (or MULLE_ENGINE=python)")
        for r, spec in zip(rows, args.specs):
            # Alternate the two paths so that a change in the machine's load hits both alike.
            core, ref = [], []
            for _ in range(3):
                for module, acc in ((native, core), (None, ref)):
                    afterstate.NATIVE = module
                    acc.append(time_spec(spec, pos)["mean_ms"])
            afterstate.NATIVE = native
            r["core_afterstates_mean_ms"] = min(core)
            r["reference_afterstates_mean_ms"] = min(ref)
            r["reference_over_core"] = min(ref) / min(core)
            print(f"{r['spec']:45s} compiled afterstates {min(core):8.2f} ms, reference loop {min(ref):8.2f} ms: "
                  f"{min(ref) / min(core):.2f}x")
    record = {"command": " ".join(sys.argv), "machine": platform.platform(),
              "time": time.strftime("%Y-%m-%d %H:%M:%S"), "results": rows}
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
