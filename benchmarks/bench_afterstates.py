"""What afterstates cost: the env layer's compiled writer, its Python reference, and a vector env step with them.

    python benchmarks/bench_afterstates.py --json benchmarks/results/afterstates_speed.json

Three figures, each the median of ``--repeats`` timings over the same positions (the
decisions of ``--games`` random games, both seats):

* ``compiled_us_per_move``: :func:`mulle_env.afterstates.write_afterstates` on the compiled
  core (``mulle_env._native``, what the envs and the agents' afterstate nets use);
* ``reference_us_per_move``: :func:`mulle_env.afterstates.reference_afterstates`, the Python
  loop it is checked against (copy the mover's placeholder state, play, encode, score);
* ``vector_step_ms`` and ``vector_step_afterstates_ms``: one step of
  ``MulleVectorEnv(64, opponent="heuristic")`` without and with ``legal_afterstates()`` after
  it, so the share afterstates add to a training step is visible.

The machine's load average is written beside the figures (shared machines: quote them with it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mulle_env.afterstates import (  # noqa: E402
    AFTERSTATE_SIZE,
    placeholder_state,
    reference_afterstates,
    write_afterstates,
)
from mulle_env.engine import BACKEND, GameState, new_game  # noqa: E402
from mulle_env.vector_env import MulleVectorEnv  # noqa: E402


def positions(games: int) -> list[GameState]:
    """Every decision of ``games`` random games (seeds 0..games-1), as states."""
    out = []
    for g in range(games):
        st = new_game(seed=g)
        rng = random.Random(g)
        while not st.over:
            out.append(st.copy())
            st.play(rng.choice(st.legal_moves()))
    return out


def per_move(fn: Any, states: list[GameState], repeats: int) -> float:
    """Median over ``repeats`` of the microseconds a legal move that ``fn(state, ids)`` costs."""
    moves = sum(len(st.legal_ids()) for st in states)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for st in states:
            fn(st, sorted(st.legal_ids()))
        times.append((time.perf_counter() - t) / moves * 1e6)
    return statistics.median(times)


def vector_step(afterstates: bool, steps: int, repeats: int) -> float:
    """Median milliseconds of one step of a 64-game vector env, with ``legal_afterstates()`` after it or not."""
    times = []
    for r in range(repeats):
        env = MulleVectorEnv(64, opponent="heuristic", reward="score_delta", seat="alternate")
        env.reset(seed=r)
        rng = np.random.default_rng(r)
        t = time.perf_counter()
        for _ in range(steps):
            ids, offsets = env.legal_ids()
            counts = np.diff(offsets)
            env.step(ids[offsets[:-1] + (rng.random(64) * counts).astype(np.int64)])
            if afterstates:
                env.legal_afterstates()
        times.append((time.perf_counter() - t) / steps * 1e3)
        env.close()
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Measure, print, and with ``--json`` write the figures; 0 when done."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=20, help="random games whose decisions are the positions")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200, help="vector env steps a timing")
    ap.add_argument("--json", default="", help="write the figures here")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    states = positions(args.games)

    def buffers(n: int) -> tuple[np.ndarray, np.ndarray]:
        return np.empty((n, AFTERSTATE_SIZE), np.float32), np.empty(n)

    def writer(st: GameState, ids: list[int]) -> None:
        write_afterstates(st, st.to_move, ids, *buffers(len(ids)))

    def reference(st: GameState, ids: list[int]) -> None:
        reference_afterstates(placeholder_state(st, st.to_move), st.to_move, ids, *buffers(len(ids)))

    result: dict[str, Any] = {"benchmark": "afterstates", "engine": BACKEND, "positions": len(states)}
    if BACKEND == "c":
        result["compiled_us_per_move"] = round(per_move(writer, states, args.repeats), 2)
    result["reference_us_per_move"] = round(per_move(reference, states, args.repeats), 2)
    result["vector_step_ms"] = round(vector_step(False, args.steps, args.repeats), 3)
    result["vector_step_afterstates_ms"] = round(vector_step(True, args.steps, args.repeats), 3)
    result.update(load_before=[round(x, 2) for x in load_before], load_after=[round(x, 2) for x in os.getloadavg()],
                  cpus=os.cpu_count(), machine=platform.machine(), created=time.strftime("%Y-%m-%d %H:%M:%S"))
    for k, v in result.items():
        print(f"{k:32} {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
