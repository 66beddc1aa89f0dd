"""Engine throughput: random legal play, as moves/s and games/s (JSON).

Two ways to drive the engine are measured in the same run:
- ``checked``: ``state.legal_moves()`` then ``state.play(move)``, the public API with its
  legality check (what a user script does);
- ``hot``: ``state.legal_move_ids()`` then ``state.play_unchecked(MOVES[i])``, what the
  environments and search agents do.
When OpenSpiel is installed (the ``bench`` extra) the same loop runs its compiled Hearts
as a baseline and the ratio is printed. Figures vary with load: quote ratios.

    python benchmarks/bench_engine.py --seconds 5 --out benchmarks/results/engine.json
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

import mulle_env as me  # noqa: E402
from mulle_env.engine.moves import MOVES  # noqa: E402


def run_mulle(seconds: float, seed: int, hot: bool) -> dict:
    rng = random.Random(seed)
    moves = games = 0
    start = time.perf_counter()
    g = seed
    while time.perf_counter() - start < seconds:
        st = me.new_game(g)
        g += 1
        if hot:
            while not st.over:
                ids = st.legal_move_ids()
                st.play_unchecked(MOVES[ids[rng.randrange(len(ids))]])
                moves += 1
        else:
            while not st.is_over():
                ms = st.legal_moves()
                st.play(ms[rng.randrange(len(ms))])
                moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    return {"moves": moves, "games": games, "seconds": round(elapsed, 3),
            "moves_per_s": round(moves / elapsed), "games_per_s": round(games / elapsed, 2)}


def run_openspiel(seconds: float, seed: int, game: str = "hearts") -> dict | None:
    try:
        import pyspiel
    except ImportError:
        return None
    rng = random.Random(seed)
    g = pyspiel.load_game(game)
    moves = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        st = g.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outcomes = st.chance_outcomes()
                st.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                legal = st.legal_actions()
                st.apply_action(legal[rng.randrange(len(legal))])
                moves += 1
        games += 1
    elapsed = time.perf_counter() - start
    return {"game": game, "moves": moves, "games": games, "moves_per_s": round(moves / elapsed),
            "games_per_s": round(games / elapsed, 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="time per measurement (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results/engine.json", help="JSON file to write ('-' for none)")
    args = ap.parse_args(argv)
    result = {
        "benchmark": "engine random play",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "checked": run_mulle(args.seconds, args.seed, hot=False),
        "hot": run_mulle(args.seconds, args.seed, hot=True),
    }
    base = run_openspiel(args.seconds, args.seed)
    if base is not None:
        result["openspiel_hearts"] = base
        result["ratio_hot_to_openspiel_hearts"] = round(result["hot"]["moves_per_s"] / base["moves_per_s"], 3)
    else:
        result["openspiel_hearts"] = "not installed (pip install -e '.[bench]')"
    text = json.dumps(result, indent=2)
    print(text)
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
