"""Time a decision of Casino's learned agents: the shipped ``learned`` net (and any other Casino specs).

Each spec plays ``--games`` whole Casino games (the default rules: to 21) against
``--opponent`` in one process, seats alternating, through the engine's game loop as the arena
plays them; every call of the agent's ``act`` is timed (decisions with a single legal move
included, as the arena counts them). Prints, and with ``--json`` writes, per spec: decisions,
mean, median, 99th percentile and largest milliseconds a decision, the machine's load average
before and after, and the Python engine or the compiled one (``mulle_env.casino.BACKEND``).

    python benchmarks/bench_casino_learned.py --games 40 --json benchmarks/results/casino_learned_speed.json
    python benchmarks/bench_casino_learned.py learned netsearch --games 4

Issue 51 asks ``learned`` at Casino to decide in at most 1 ms; that is measured here, not in a
timed unit test. The process runs with one BLAS thread, as the arena's and training's worker
processes do (:mod:`mulle_env.util.threads`): an afterstate net multiplies a decision's few
afterstates at once, and a multithreaded BLAS made that tens of milliseconds on loaded cores
(measured on 2 shared cores at load 5: 7.7 ms a decision on average, 1.1 ms with one thread).
``--blas-threads default`` keeps the BLAS's own choice.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agents  # noqa: E402
from agents.base import Agent  # noqa: E402
from mulle_env import casino  # noqa: E402
from mulle_env.engine import GameLoop  # noqa: E402


class Timed(Agent):
    """Wraps an agent and records how long each of its decisions took."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name, self.spec, self.games, self.version = inner.name, inner.spec, inner.games, inner.version
        self.seconds: list[float] = []

    def reset(self) -> None:
        self.inner.reset()

    def observe(self, event: Any) -> None:
        self.inner.observe(event)

    def check_ruleset(self, ruleset: Any) -> None:
        check = getattr(self.inner, "check_ruleset", None)
        if check is not None:
            check(ruleset)

    def act(self, view: Any, legal_moves: Any, rng: random.Random) -> Any:
        t = time.perf_counter()
        move = self.inner.act(view, legal_moves, rng)
        self.seconds.append(time.perf_counter() - t)
        return move


def measure(spec: str, opponent: str, games: int, seed: int) -> dict[str, Any]:
    """Play ``games`` games of ``spec`` against ``opponent``; the timing figures of ``spec``'s decisions."""
    bot = Timed(agents.make(spec, game="casino"))
    other = agents.make(opponent, game="casino")
    t0 = time.perf_counter()
    for g in range(games):
        seat = g % 2
        bots = [bot, other] if seat == 0 else [other, bot]
        for b in bots:
            b.reset()
        loop = GameLoop(casino.new_game(seed + g // 2), bots, [random.Random(seed + g), random.Random(~g)])
        loop.start()
        loop.run()
    ms = np.array(bot.seconds) * 1000
    return {"spec": agents.canonical(spec, game="casino"), "agent_version": bot.version, "opponent": opponent,
            "games": games, "decisions": len(ms), "ms_mean": round(float(ms.mean()), 4),
            "ms_median": round(float(np.median(ms)), 4), "ms_p99": round(float(np.percentile(ms, 99)), 4),
            "ms_max": round(float(ms.max()), 4), "wall_seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    """Command line: the specs (default: the shipped ``learned``), games, opponent, seed, JSON output."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*", default=["learned"], help="Casino agent specs to time (default: learned)")
    ap.add_argument("--games", type=int, default=40, help="whole games per spec (default 40)")
    ap.add_argument("--opponent", default="greedy", help="the other seat (default greedy)")
    ap.add_argument("--seed", type=int, default=5000, help="first deal seed (default 5000)")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--blas-threads", choices=("1", "default"), default="1",
                    help="one BLAS thread, as the arena's workers (default), or the BLAS's own choice")
    args = ap.parse_args(argv)
    if args.blas_threads == "1":
        from mulle_env.util.threads import single_blas_thread

        single_blas_thread()
    if args.games < 1:
        ap.error(f"--games must be >= 1, not {args.games}")
    for spec in [*args.specs, args.opponent]:
        try:
            agents.make(spec, game="casino")  # a bad spec fails now, naming itself
        except agents.AgentSpecError as exc:
            ap.error(str(exc))
    load_before = os.getloadavg()
    rows = [measure(spec, args.opponent, args.games, args.seed) for spec in args.specs]
    result = {"what": "milliseconds a decision of Casino agents in whole games (benchmarks/bench_casino_learned.py)",
              "backend": casino.BACKEND, "machine": f"{platform.machine()}, {os.cpu_count()} cores",
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in os.getloadavg()], "blas_threads": args.blas_threads,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "agents": rows}
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
