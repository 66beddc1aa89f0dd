"""Duplicate-match strength and speed of two agent specs.

Each seed is played twice with the seats swapped, so both agents get the same cards;
the pair's mean score difference (A minus B) is one observation. Reports W/D/L per
game, the mean score difference per game with a 95% t confidence interval over the
seed pairs, and milliseconds per decision of each agent (decisions with a single
legal move included, as in a tournament), as JSON on stdout and optionally a file.

    python benchmarks/bench_agents.py pimc heuristic --games 200 --workers 2 --out pimc.json

This is a small stand-alone runner for tuning agents; tournaments belong to the arena.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agents  # noqa: E402
import mulle_env as me  # noqa: E402


def play_pair(args: tuple[str, str, int]) -> dict:
    """Play seed ``seed`` twice (A in seat 0, then in seat 1); return diffs and timings."""
    spec_a, spec_b, seed = args
    out = {"seed": seed, "diffs": [], "time": [0.0, 0.0], "decisions": [0, 0]}
    for a_seat in (0, 1):
        bots = [agents.make(spec_a), agents.make(spec_b)]
        # One rng per agent, seeded from the deal seed: the pair is reproducible.
        rngs = [random.Random(seed * 1_000_003 + 17), random.Random(seed * 1_000_003 + 29)]
        st = me.new_game(seed=seed)
        for b in bots:
            b.reset()
        while not st.over:
            p = st.to_move
            who = 0 if p == a_seat else 1
            t0 = time.perf_counter()
            move = bots[who].act(st.view(p), st.legal_moves(), rngs[who])
            out["time"][who] += time.perf_counter() - t0
            out["decisions"][who] += 1
            st.play(move)
            for b in bots:
                b.observe((p, move))
        s = st.scores()
        out["diffs"].append(s[a_seat] - s[1 - a_seat])
    return out


def summarize(spec_a: str, spec_b: str, pairs: list[dict]) -> dict:
    """W/D/L, mean difference with a 95% CI over seed pairs, ms per decision."""
    games = [d for p in pairs for d in p["diffs"]]
    pair_means = np.array([np.mean(p["diffs"]) for p in pairs], dtype=float)
    n = len(pair_means)
    mean = float(pair_means.mean())
    if n > 1:
        sem = float(stats.sem(pair_means))
        half = float(stats.t.ppf(0.975, n - 1) * sem) if sem > 0 else 0.0
    else:
        half = None  # one seed pair has no spread: no interval (JSON null, not NaN, which strict readers refuse)
    ms = [
        1000 * sum(p["time"][i] for p in pairs) / max(1, sum(p["decisions"][i] for p in pairs)) for i in (0, 1)
    ]
    return {
        "a": spec_a,
        "b": spec_b,
        "games": len(games),
        "seed_pairs": n,
        "a_wins": sum(d > 0 for d in games),
        "draws": sum(d == 0 for d in games),
        "a_losses": sum(d < 0 for d in games),
        "mean_diff": mean,
        "ci95": None if half is None else [mean - half, mean + half],
        "ms_per_decision": {spec_a: ms[0], spec_b: ms[1]},
    }


def main(argv=None) -> int:
    """Command line: two specs, games, workers, first seed, output file."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="agent spec A, e.g. pimc:samples=24")
    ap.add_argument("b", help="agent spec B, e.g. heuristic")
    ap.add_argument("--games", type=int, default=100, help="games in all (two per seed; default 100)")
    ap.add_argument("--seed", type=int, default=1000, help="first deal seed (default 1000)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--out", help="also write the JSON here ('-': only print it, as the other benchmarks)")
    args = ap.parse_args(argv)
    for spec in (args.a, args.b):
        try:
            agents.make(spec)  # fail fast on a bad spec
        except agents.AgentSpecError as exc:  # every refusal of make(), naming the spec
            ap.error(str(exc))
    jobs = [(args.a, args.b, args.seed + i) for i in range(max(1, args.games // 2))]
    t0 = time.perf_counter()
    if args.workers > 1:
        with mp.Pool(args.workers) as pool:
            pairs = list(pool.imap_unordered(play_pair, jobs))
    else:
        pairs = [play_pair(j) for j in jobs]
    pairs.sort(key=lambda p: p["seed"])
    result = summarize(args.a, args.b, pairs)
    result["wall_seconds"] = round(time.perf_counter() - t0, 1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out and args.out != "-":
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
