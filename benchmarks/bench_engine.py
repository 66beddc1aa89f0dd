"""Engine throughput: random legal play from Python, C core vs Python engine vs Casino vs OpenSpiel Hearts (JSON).

Every configuration plays whole games with uniformly random legal moves; a move is one
legal-move query plus one move applied, the same work the Hearts baseline does with
``legal_actions()`` + ``apply_action()`` (its chance moves, the deal, are not counted).
Configurations, measured in one run, alternating, ``--rounds`` times each; the JSON
keeps every run (moves per wall second and per CPU second of this process) and the medians, and
the ratios are of the medians per CPU second (the figure the machine's load changes least):

- ``<backend>_ids``: ``legal_move_ids()`` + ``play_id(i)``: ints in, ints out, like Hearts;
- ``<backend>_hot``: ``legal_move_ids()`` + ``play_unchecked(MOVES[i])``, what rollouts do;
- ``<backend>_checked``: ``legal_moves()`` + ``play(move)``, the checked public API;
- ``c_in_core``: ``random_playout``: the same random play without leaving C (the ceiling);
- ``casino_<backend>_ids`` / ``casino_<backend>_checked``: Casino's engine on each backend (the compiled
  core and the Python reference), games to 21 under the default rules, ``legal_ids()`` + ``play_id(i)``
  and ``legal_moves()`` + ``play(move)``; ``casino_<backend>_choices``: ``legal_moves()`` + ``play(move)``
  under ``gather_all=False`` (every choice of cards its own move);
- ``openspiel_hearts``: OpenSpiel's compiled Hearts (``pip install -e '.[bench]'``).

Then the exact forced-capture search on crowded 22-card tables (low cards, the most
groupings), every capture value 2..13, with the memo emptied before each table (cold)
and kept (warm), per engine: milliseconds per table.

    python benchmarks/bench_engine.py --seconds 2 --rounds 5 --out benchmarks/results/engine.json
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mulle_env.engine import BACKEND, backends
from mulle_env.engine.moves import MOVES
from mulle_env.stepper import random_playout


def mulle_loop(mod, mode: str, ids_method: str = "legal_move_ids", ruleset=None):
    """A function (seconds, seed) -> moves played, for one backend (or game module) and driving mode.

    ``ids_method`` names the state's method that lists the legal move ids (Casino's is ``legal_ids``).
    """

    def run(seconds: float, seed: int) -> tuple[int, int]:
        rng = random.Random(seed)
        randrange = rng.randrange
        moves = games = 0
        g = seed
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            st = mod.new_game(g) if ruleset is None else mod.new_game(g, ruleset)
            g += 1
            if mode == "ids":
                legal, play = getattr(st, ids_method), st.play_id
                while not st.over:
                    ids = legal()
                    play(ids[randrange(len(ids))])
                    moves += 1
            elif mode == "hot":
                legal, play = st.legal_move_ids, st.play_unchecked
                while not st.over:
                    ids = legal()
                    play(MOVES[ids[randrange(len(ids))]])
                    moves += 1
            elif mode == "in_core":
                moves += random_playout(st, g, 10**9)
            else:
                while not st.is_over():
                    ms = st.legal_moves()
                    st.play(ms[randrange(len(ms))])
                    moves += 1
            games += 1
        return moves, games

    return run


def hearts_loop():
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("hearts")

    def run(seconds: float, seed: int) -> tuple[int, int]:
        rng = random.Random(seed)
        randrange = rng.randrange
        moves = games = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            st = game.new_initial_state()
            while not st.is_terminal():
                if st.is_chance_node():
                    outcomes = st.chance_outcomes()
                    st.apply_action(outcomes[randrange(len(outcomes))][0])
                else:
                    legal = st.legal_actions()
                    st.apply_action(legal[randrange(len(legal))])
                    moves += 1
            games += 1
        return moves, games

    return run


def capture_search(tables: int, seed: int) -> dict:
    """Milliseconds per 22-card table (all values 2..13) of the forced-capture search, per engine."""
    from mulle_env.engine import capture
    from mulle_env.engine.cards import MULLE_VALUE, NUM_FACES

    rng = random.Random(seed)
    low = [f for f in range(NUM_FACES) if f % 13 < 6 for _ in range(2)]
    boards = [sorted(rng.sample(low, 22)) for _ in range(tables)]

    def python_search(loose, v):
        return capture.forced_groups(loose, v, [], MULLE_VALUE)

    def python_clear():
        capture._best_memo.clear()
        capture._covers_memo.clear()
        capture._pick_memo.clear()

    engines = {"python": (python_search, python_clear)}
    if "c" in backends():
        from mulle_env.engine import _core

        engines["c"] = (lambda loose, v: _core.forced_groups(loose, v, [], False), _core.clear_memo)
    out = {}
    for name, (search, clear) in engines.items():
        for memo in ("cold", "warm"):
            times = []
            for loose in boards:
                if memo == "cold":
                    clear()
                start = time.perf_counter()
                for v in range(2, 14):
                    search(loose, v)
                times.append((time.perf_counter() - start) * 1000)
            out[f"{name}_{memo}"] = {"median_ms": round(statistics.median(times), 3), "max_ms": round(max(times), 3)}
    return {"tables": tables, "cards": 22, "values": "2..13 per table", "ms_per_table": out}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds; medians are reported (default 5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tables", type=int, default=100, help="22-card tables for the capture-search timing")
    ap.add_argument("--out", default="benchmarks/results/engine.json", help="JSON file to write ('-' for none)")
    args = ap.parse_args(argv)
    configs = {}
    hearts = hearts_loop()
    if hearts is not None:
        configs["openspiel_hearts"] = hearts
    for name, mod in sorted(backends().items()):
        for mode in ("ids", "hot", "checked"):
            configs[f"{name}_{mode}"] = mulle_loop(mod, mode)
    if BACKEND == "c":  # mulle_env._native, which follows the backend switch
        configs["c_in_core"] = mulle_loop(backends()["c"], "in_core")
    from mulle_env import casino

    for name, mod in sorted(casino.backends().items()):
        for mode in ("ids", "checked"):
            configs[f"casino_{name}_{mode}"] = mulle_loop(mod, mode, ids_method="legal_ids")
        configs[f"casino_{name}_choices"] = mulle_loop(mod, "checked", ruleset={"gather_all": False})
    runs: dict[str, list[dict]] = {k: [] for k in configs}
    for r in range(args.rounds):
        for name, fn in configs.items():  # alternate, so load changes hit every config alike
            start, cpu = time.perf_counter(), time.process_time()
            moves, games = fn(args.seconds, args.seed + r * 1_000_003)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
            runs[name].append({"moves": moves, "games": games, "moves_per_s": round(moves / elapsed),
                               "moves_per_cpu_s": round(moves / max(cpu, 1e-9))})
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]['moves_per_s']:,}" for k, v in runs.items()),
              file=sys.stderr)
    medians = {k: round(statistics.median(x["moves_per_s"] for x in v)) for k, v in runs.items()}
    cpu_medians = {k: round(statistics.median(x["moves_per_cpu_s"] for x in v)) for k, v in runs.items()}
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    result = {
        "benchmark": "engine random play, moves/s (median of alternating runs)",
        "command": "python benchmarks/bench_engine.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "default_backend": BACKEND,
        "seconds_per_run": args.seconds,
        "rounds": args.rounds,
        "load_average_at_end": [round(x, 2) for x in load] if load else None,
        "ratios_of": "median moves per CPU second",
        "median_moves_per_s": medians,
        "median_moves_per_cpu_s": cpu_medians,
        "runs": runs,
    }
    # Ratios of the medians per CPU second of this process: on a shared machine the wall clock also counts the
    # time other processes held the cores, which changes from run to run; CPU time counts only our own work.
    ratios = {}
    cm = cpu_medians
    if "openspiel_hearts" in cm:
        for k, v in cm.items():
            if k != "openspiel_hearts":
                ratios[f"{k}/openspiel_hearts"] = round(v / cm["openspiel_hearts"], 3)
    for mode in ("ids", "checked"):
        if f"casino_python_{mode}" in cm and f"python_{mode}" in cm:
            ratios[f"casino_python_{mode}/python_{mode}"] = round(cm[f"casino_python_{mode}"] / cm[f"python_{mode}"], 2)
    for mode in ("ids", "checked", "choices"):  # Casino's compiled core against its reference
        if f"casino_c_{mode}" in cm:
            ratios[f"casino_c_{mode}/casino_python_{mode}"] = round(cm[f"casino_c_{mode}"]
                                                                   / cm[f"casino_python_{mode}"], 2)
    for mode in ("ids", "hot", "checked"):
        if f"c_{mode}" in cm:
            ratios[f"c_{mode}/python_{mode}"] = round(cm[f"c_{mode}"] / cm[f"python_{mode}"], 2)
    result["ratios"] = ratios
    result["capture_search_22_cards"] = capture_search(args.tables, args.seed)
    text = json.dumps(result, indent=2)
    print(json.dumps({k: result[k] for k in ("median_moves_per_s", "median_moves_per_cpu_s", "ratios",
                                             "load_average_at_end", "capture_search_22_cards")}, indent=2))
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
