"""Environment throughput: random masked play through each env, as decisions/s (JSON).

Every decision builds the observation and the action mask through the env's public
API, in one process:

- ``mulle_gym``: ``gymnasium.make("Mulle-v0", opponent="random")`` (with gymnasium's
  default wrappers); a decision is one ``env.step`` (the learner's move with its
  observation and mask). The opponent's move happens inside the step; ``moves_per_s``
  counts both players' moves.
- ``mulle_pettingzoo``: ``mulle_env.pettingzoo.env()``; a decision is one ``last()`` +
  ``step()`` (every move of the game).

With the ``bench`` extra installed, the peers a user would pick instead run the same
way and our figures are printed as ratios to theirs: RLCard ``uno`` and ``gin-rummy``
(``env.step`` returns the next state with its obs and legal actions), PettingZoo
``texas_holdem_v4`` (AEC, like ours) and OpenSpiel ``gin_rummy`` (``observation_tensor``
and ``legal_actions`` each decision; chance nodes are sampled and not counted). A
peer that is not installed is reported as skipped. Figures vary with machine load
(recorded in the JSON): ratios and the target use decisions per CPU second of this
process, which other processes on a shared machine disturb less than wall time.

    python benchmarks/bench_env.py --seconds 3 --out benchmarks/results/env.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The issue's aim for our envs, decisions/s.
TARGET = 30_000


def _timed(loop, seconds: float) -> dict:
    """Run ``loop(deadline) -> (decisions, extra)`` for ``seconds`` after a short warm-up."""
    loop(time.perf_counter() + min(0.3, seconds / 10))
    start, cpu = time.perf_counter(), time.process_time()
    decisions, extra = loop(start + seconds)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    out = {
        "decisions": decisions,
        "seconds": round(elapsed, 3),
        "decisions_per_s": round(decisions / elapsed),
        # On a shared machine wall time counts other processes' turns too; CPU time does not.
        "decisions_per_cpu_s": round(decisions / cpu),
    }
    for k, v in extra.items():
        out[k] = v
        if k.endswith("s") and isinstance(v, int):
            out[f"{k}_per_s"] = round(v / elapsed)
    return out


def bench_mulle_gym(seconds: float, seed: int) -> dict:
    import gymnasium as gym

    import mulle_env  # noqa: F401  (registers Mulle-v0)

    env = gym.make("Mulle-v0", opponent="random")
    rng = np.random.default_rng(seed)
    pick = random.Random(seed).random  # the uniform legal pick costs the same for every env

    def loop(deadline):
        steps = episodes = 0
        while time.perf_counter() < deadline:
            obs, info = env.reset(seed=int(rng.integers(2**31)))
            done = False
            while not done:
                legal = info["action_mask"].nonzero()[0]
                obs, reward, done, truncated, info = env.step(legal[int(pick() * len(legal))])
                steps += 1
            episodes += 1
        return steps, {"moves": steps * 2, "games": episodes}

    return _timed(loop, seconds)


def bench_mulle_pettingzoo(seconds: float, seed: int) -> dict:
    from mulle_env.pettingzoo import env as make_env

    return _bench_aec(make_env(), seconds, seed)


def _bench_aec(env, seconds: float, seed: int) -> dict:
    """Random masked play through any PettingZoo AEC env: ours and the peers alike."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed).random  # the uniform legal pick costs the same for every env

    def loop(deadline):
        steps = games = 0
        while time.perf_counter() < deadline:
            env.reset(seed=int(rng.integers(2**31)))
            for agent in env.agent_iter():
                obs, reward, term, trunc, info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = obs["action_mask"].nonzero()[0]
                env.step(int(legal[int(pick() * len(legal))]))
                steps += 1
            games += 1
        return steps, {"games": games}

    return _timed(loop, seconds)


def bench_rlcard(game: str, seconds: float, seed: int) -> dict:
    import rlcard

    env = rlcard.make(game, config={"seed": seed})
    rng = random.Random(seed)

    def loop(deadline):
        steps = games = 0
        while time.perf_counter() < deadline:
            state, player = env.reset()
            while not env.is_over():
                legal = list(state["legal_actions"])
                state, player = env.step(legal[rng.randrange(len(legal))])
                steps += 1
            games += 1
        return steps, {"games": games}

    return _timed(loop, seconds)


def bench_pettingzoo_peer(module: str, seconds: float, seed: int) -> dict:
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = importlib.import_module(f"pettingzoo.classic.{module}").env()
    return _bench_aec(env, seconds, seed)


def bench_openspiel(game: str, seconds: float, seed: int) -> dict:
    import pyspiel

    g = pyspiel.load_game(game)
    rng = random.Random(seed)

    def loop(deadline):
        steps = games = 0
        while time.perf_counter() < deadline:
            st = g.new_initial_state()
            while not st.is_terminal():
                if st.is_chance_node():
                    outcomes, probs = zip(*st.chance_outcomes())
                    st.apply_action(rng.choices(outcomes, probs)[0])
                    continue
                st.observation_tensor(st.current_player())
                legal = st.legal_actions()
                st.apply_action(legal[rng.randrange(len(legal))])
                steps += 1
            games += 1
        return steps, {"games": games}

    return _timed(loop, seconds)


OURS = {"mulle_gym": bench_mulle_gym, "mulle_pettingzoo": bench_mulle_pettingzoo}
PEERS = {
    "rlcard_uno": lambda s, seed: bench_rlcard("uno", s, seed),
    "rlcard_gin_rummy": lambda s, seed: bench_rlcard("gin-rummy", s, seed),
    "pettingzoo_texas_holdem_v4": lambda s, seed: bench_pettingzoo_peer("texas_holdem_v4", s, seed),
    "pettingzoo_gin_rummy_v4": lambda s, seed: bench_pettingzoo_peer("gin_rummy_v4", s, seed),
    "openspiel_gin_rummy": lambda s, seed: bench_openspiel("gin_rummy", s, seed),
}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print the JSON and write it to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per env (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "env.json"),
                        help="JSON file to write ('-' to only print)")
    parser.add_argument("--no-peers", action="store_true", help="measure only the mulle envs")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, not {args.seconds}")

    results: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    for name, fn in OURS.items():
        results[name] = fn(args.seconds, args.seed)
    if not args.no_peers:
        for name, fn in PEERS.items():
            try:
                results[name] = fn(args.seconds, args.seed)
            except ImportError as exc:  # the bench extra is optional
                skipped[name] = f"unavailable here ({exc}); peers come with pip install 'mulle-env[bench]'"
    # Ratios and the target use CPU time: on a shared machine it is the steadier measure.
    ratios = {
        f"{ours}/{peer}": round(results[ours]["decisions_per_cpu_s"] / results[peer]["decisions_per_cpu_s"], 2)
        for ours in OURS
        for peer in results
        if peer not in OURS
    }
    report = {
        "benchmark": "env",
        "unit": "decisions/s: random masked play, observation and mask built every decision, one process",
        "target_decisions_per_s": TARGET,
        "meets_target": {k: results[k]["decisions_per_cpu_s"] >= TARGET for k in OURS},
        "results": results,
        "ratios": ratios,
        "skipped": skipped,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        },
        "seconds_per_env": args.seconds,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return report


if __name__ == "__main__":
    main()
