"""Environment throughput: random masked play through each env, as decisions/s, against peers (JSON).

A *decision* is one observation plus legal-action mask for the player to move, then
one random legal action applied, all through the env's public API in one process:

- ``mulle_gym``: ``gymnasium.make("Mulle-v0", opponent="random")`` (with gymnasium's
  default wrappers); a decision is one ``env.step`` (the learner's move, the
  opponent's move inside it, the next observation and mask). The pick reads the
  mask with :func:`mulle_env.codec.mask_indices`.
- ``mulle_pettingzoo``: ``mulle_env.pettingzoo.env()`` (with PettingZoo's
  ``OrderEnforcingWrapper``); a decision is one ``last()`` + ``step()``.
- ``mulle_vector``: ``gymnasium.make_vec("Mulle-v0", num_envs=K,
  vectorization_mode="vector_entry_point", opponent="random")``, on the stepper of the
  engine's backend. One ``step`` = K decisions; the K random picks are one call of
  :func:`mulle_env.codec.sample_masks` on the ``(K, 2812)`` mask (until issue 32's last
  step the driver read the mask with ``batch_mask_indices`` and numpy, 102 us a step of
  the 236 at K=64: what the 10.1x of ``env_threads_quiet.json``'s time includes).
- ``mulle_vector_sparse``: the same env with ``dense_mask=False``, driven by its sparse
  legal ids: ``legal_ids()`` (CSR) and :func:`mulle_env.codec.sample_csr`, one thread.
- ``mulle_vector_sparse_tN`` (``--threads``, default ``2``): that, with ``num_threads=N``.
- ``casino_gym``, ``casino_pettingzoo``, ``casino_vector``, ``casino_vector_sparse``,
  ``casino_vector_sparse_tN``: the same drivers on ``Casino-v0`` and ``mulle_env.casino.env()`` (the
  same env core, Casino's game object; on Casino's compiled core the compiled stepper steps it
  through Casino's game table, issue 51).
  Threads are judged by wall-clock decisions/s against the same game's one-thread
  ``*_vector_sparse`` in the same rounds (``thread_scaling``, keyed by thread count for Mulle and
  ``casino_N`` for Casino): CPU time counts every thread's work, so it cannot show them.

All of them run on the engine's backend (``MULLE_ENGINE``; the report records it): for
the pure-Python figures run the script again with ``MULLE_ENGINE=python``.

Peers (the ``bench`` extra; a missing one is reported as skipped): RLCard ``uno`` and
``gin-rummy`` (plain ``env.step``, which returns the next state with its observation
and legal actions), PettingZoo ``texas_holdem_v4`` (AEC, like ours), OpenSpiel
``gin_rummy`` (``observation_tensor`` + ``legal_actions``; chance nodes are sampled and
not counted).

Every env is built and seeded ONCE; later games start with an unseeded ``reset()``.
(PettingZoo's RLCard-based envs rebuild themselves on every seeded reset, which
would halve them.) The envs run ``--rounds`` times in turn for ``--seconds`` each;
figures are the medians over rounds of decisions per CPU second of this process
(steadier than wall time on a shared machine), ratios the medians of the per-round
ratios, so each ratio compares runs made side by side.

    python benchmarks/bench_env.py --seconds 2 --rounds 5 --out benchmarks/results/env.json
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
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: The aims (issues 21 and 32; Casino's, issue 51), as ratios to RLCard UNO's plain env.step in the same run.
#: Casino's vector aim is on the path the docs recommend (sparse legal ids and codec.sample_csr).
AIMS = {"mulle_gym": 1.5, "mulle_pettingzoo": 1.5, "mulle_vector": 15.0, "mulle_vector_sparse": 15.0,
        "casino_gym": 2.5, "casino_pettingzoo": 1.5, "casino_vector_sparse": 10.0}
#: Issue 32's aim for two threads: wall-clock decisions/s over one thread's, on a 2-core machine (Casino's
#: threads are to scale as Mulle's do: the same aim).
THREAD_AIM = {2: 1.6}
#: The games whose vector env runs on threads here: the row prefix of each.
THREADED = ("mulle", "casino")
BASELINE = "rlcard_uno"
VECTOR_K = 64


def _timed(loop, seconds: float) -> dict:
    """Run ``loop(deadline) -> decisions`` for ``seconds``."""
    start, cpu = time.perf_counter(), time.process_time()
    decisions = loop(start + seconds)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return {
        "decisions": decisions,
        "seconds": round(elapsed, 3),
        "decisions_per_s": round(decisions / elapsed),
        # On a shared machine wall time counts other processes' turns too; CPU time does not.
        "decisions_per_cpu_s": round(decisions / max(cpu, 1e-9)),
    }


def mulle_gym(seed: int, env_id: str = "Mulle-v0"):
    import gymnasium as gym

    import mulle_env  # noqa: F401  (registers Mulle-v0 and Casino-v0)
    from mulle_env.codec import mask_indices

    env = gym.make(env_id, opponent="random")
    _, info = env.reset(seed=seed)
    pick = random.Random(seed).random  # the uniform legal pick costs the same for every env
    box = [info]

    def loop(deadline):
        info, steps = box[0], 0
        while time.perf_counter() < deadline:
            legal = mask_indices(info["action_mask"])
            _, _, done, _, info = env.step(legal[int(pick() * len(legal))])
            steps += 1
            if done:
                _, info = env.reset()
        box[0] = info
        return steps

    return loop


def mulle_pettingzoo(seed: int):
    from mulle_env.pettingzoo import env as make_env

    return _aec(make_env(), seed)


def _aec(env, seed: int):
    """Random masked play through any PettingZoo AEC env: ours and the peers alike."""
    pick = random.Random(seed).random
    env.reset(seed=seed)

    def loop(deadline):
        steps = 0
        while time.perf_counter() < deadline:
            for _agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                mask = obs["action_mask"]
                legal = mask.view(bool).nonzero()[0] if mask.dtype == np.int8 else mask.nonzero()[0]
                env.step(int(legal[int(pick() * len(legal))]))
                steps += 1
                if time.perf_counter() >= deadline:
                    return steps  # the game goes on in the next round
            env.reset()
        return steps

    return loop


def mulle_vector(seed: int, k: int = VECTOR_K, env_id: str = "Mulle-v0"):
    import gymnasium as gym

    import mulle_env  # noqa: F401
    from mulle_env.codec import sample_masks

    envs = gym.make_vec(env_id, num_envs=k, vectorization_mode="vector_entry_point", opponent="random")
    _, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    masks = info["action_mask"]  # the env rewrites this array in place every step

    def loop(deadline):
        steps = 0
        while time.perf_counter() < deadline:
            envs.step(sample_masks(masks, rng))
            steps += k
        return steps

    return loop


def mulle_vector_sparse(seed: int, k: int = VECTOR_K, threads: int = 1, env_id: str = "Mulle-v0"):
    import gymnasium as gym

    import mulle_env  # noqa: F401
    from mulle_env.codec import sample_csr

    envs = gym.make_vec(env_id, num_envs=k, vectorization_mode="vector_entry_point", opponent="random",
                        dense_mask=False, num_threads=threads)
    legal_ids = envs.unwrapped.legal_ids
    envs.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def loop(deadline):
        steps = 0
        while time.perf_counter() < deadline:
            envs.step(sample_csr(*legal_ids(), rng))
            steps += k
        return steps

    return loop


def _load() -> dict:
    """The machine's load as ``uptime`` states it (other processes share the cores), and os.getloadavg()."""
    import subprocess

    try:
        uptime = subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        uptime = None
    avg = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return {"uptime": uptime, "load_average": avg}


def _cpu_model() -> str | None:
    """The processor's name as /proc/cpuinfo gives it (None elsewhere): ratios to the peers differ by machine,
    since a faster interpreter speeds the Python peers more than the compiled engine."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def rlcard_env(game: str, seed: int):
    import rlcard

    env = rlcard.make(game, config={"seed": seed})
    rng = random.Random(seed)
    box = [env.reset()[0]]

    def loop(deadline):
        state, steps = box[0], 0
        while time.perf_counter() < deadline:
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[rng.randrange(len(legal))])
            steps += 1
            if env.is_over():
                state, _ = env.reset()
        box[0] = state
        return steps

    return loop


def pettingzoo_peer(module: str, seed: int):
    import importlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = importlib.import_module(f"pettingzoo.classic.{module}").env()
    return _aec(env, seed)


def openspiel(game: str, seed: int):
    import pyspiel

    g = pyspiel.load_game(game)
    rng = random.Random(seed)
    box = [g.new_initial_state()]

    def loop(deadline):
        st, steps = box[0], 0
        while time.perf_counter() < deadline:
            if st.is_terminal():
                st = g.new_initial_state()
            if st.is_chance_node():
                outcomes, probs = zip(*st.chance_outcomes())
                st.apply_action(rng.choices(outcomes, probs)[0])
                continue
            st.observation_tensor(st.current_player())
            legal = st.legal_actions()
            st.apply_action(legal[rng.randrange(len(legal))])
            steps += 1
        box[0] = st
        return steps

    return loop


def casino_pettingzoo(seed: int):
    from mulle_env import casino

    return _aec(casino.env(), seed)


OURS = {
    "mulle_gym": mulle_gym,
    "mulle_pettingzoo": mulle_pettingzoo,
    "mulle_vector": mulle_vector,
    "mulle_vector_sparse": mulle_vector_sparse,
    "casino_gym": lambda seed: mulle_gym(seed, "Casino-v0"),
    "casino_pettingzoo": casino_pettingzoo,
    "casino_vector": lambda seed: mulle_vector(seed, VECTOR_K, "Casino-v0"),
    "casino_vector_sparse": lambda seed: mulle_vector_sparse(seed, VECTOR_K, env_id="Casino-v0"),
}
PEERS = {
    "rlcard_uno": lambda seed: rlcard_env("uno", seed),
    "rlcard_gin_rummy": lambda seed: rlcard_env("gin-rummy", seed),
    "pettingzoo_texas_holdem_v4": lambda seed: pettingzoo_peer("texas_holdem_v4", seed),
    "openspiel_gin_rummy": lambda seed: openspiel("gin_rummy", seed),
}


def _table(report: dict) -> str:
    res, ratios = report["results"], report["ratios"]
    lines = [f"{'env':<28} {'decisions/s (CPU)':>18} {'x ' + BASELINE:>14} {'aim':>6}"]
    for name, r in res.items():
        ratio = ratios.get(f"{name}/{BASELINE}")
        aim = AIMS.get(name)
        lines.append(f"{name:<28} {r['decisions_per_cpu_s']:>18,} {'' if ratio is None else f'{ratio:.2f}':>14} "
                     f"{'' if aim is None else f'{aim:g}':>6}")
    for key, sc in report.get("thread_scaling", {}).items():
        game, _, n = key.rpartition("_")
        lines.append(f"{game or 'mulle'}_vector_sparse on {n} threads: {sc['wall_ratio_to_1_thread']:.2f} x one "
                     f"thread's wall-clock decisions/s" + (f" (aim {sc['aim']:g})" if "aim" in sc else ""))
    for name, why in report.get("skipped", {}).items():  # an empty ratio column says why here, not only in the JSON
        lines.append(f"{name}: skipped, {why}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print a table and the JSON, and write the JSON to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per env per round (default 2)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of alternating runs (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "env.json"),
                        help="JSON file to write ('-' to only print)")
    parser.add_argument("--no-peers", action="store_true", help="measure only the mulle envs")
    parser.add_argument("--only", default="", help="comma-separated env names to run (default: all)")
    parser.add_argument("--envs", type=int, default=VECTOR_K,
                        help=f"K, the games of each vector env (default {VECTOR_K}, what the vector aims are set at); "
                             "threads pay more with more games per thread and step")
    parser.add_argument("--threads", default="2",
                        help="comma-separated thread counts for mulle_vector_sparse_tN and casino_vector_sparse_tN "
                             "(default 2; '' for none), e.g. 2,4,8,16 for a scaling curve")
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error(f"--seconds must be positive, not {args.seconds}")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if args.envs < 1:
        parser.error(f"--envs must be at least 1, not {args.envs}")
    try:
        counts = sorted({int(t) for t in args.threads.split(",") if t.strip()} - {1})
    except ValueError:
        parser.error(f"--threads must be comma-separated thread counts, not {args.threads!r}")
    if any(n < 1 for n in counts):
        parser.error(f"--threads must be positive counts, not {args.threads!r}")
    k = args.envs
    ours = dict(OURS)
    ours.update(mulle_vector=lambda seed: mulle_vector(seed, k),
                mulle_vector_sparse=lambda seed: mulle_vector_sparse(seed, k),
                casino_vector=lambda seed: mulle_vector(seed, k, "Casino-v0"),
                casino_vector_sparse=lambda seed: mulle_vector_sparse(seed, k, env_id="Casino-v0"))
    for n in counts:
        ours[f"mulle_vector_sparse_t{n}"] = lambda seed, n=n: mulle_vector_sparse(seed, k, threads=n)
        ours[f"casino_vector_sparse_t{n}"] = lambda seed, n=n: mulle_vector_sparse(seed, k, threads=n,
                                                                                 env_id="Casino-v0")
    wanted = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = wanted - set(ours) - set(PEERS)
    if unknown:
        parser.error(f"--only: unknown env(s) {sorted(unknown)}; known: {sorted(ours) + sorted(PEERS)}")

    loops, skipped = {}, {}
    candidates = {**ours, **({} if args.no_peers else PEERS)}
    load_before = _load()
    for name, make in candidates.items():
        if wanted and name not in wanted:
            continue
        try:
            loops[name] = make(args.seed)
        except ImportError as exc:  # the bench extra is optional
            skipped[name] = f"unavailable here ({exc}); peers come with pip install 'mulle-env[bench]'"
    for loop in loops.values():  # warm-up: imports, caches, first games
        loop(time.perf_counter() + min(0.3, args.seconds / 5))
    runs: dict[str, list[dict]] = {name: [] for name in loops}
    for _ in range(args.rounds):
        for name, loop in loops.items():
            runs[name].append(_timed(loop, args.seconds))
    results = {}
    for name, rs in runs.items():
        results[name] = {
            "decisions_per_cpu_s": round(statistics.median(r["decisions_per_cpu_s"] for r in rs)),
            "decisions_per_s": round(statistics.median(r["decisions_per_s"] for r in rs)),
            "runs": rs,
        }
    load_after = _load()
    ratios = {}
    for mine in (n for n in ours if n in runs):
        for peer in (n for n in runs if n not in ours):
            per_round = [a["decisions_per_cpu_s"] / b["decisions_per_cpu_s"] for a, b in zip(runs[mine], runs[peer])]
            ratios[f"{mine}/{peer}"] = round(statistics.median(per_round), 2)
    # Threads: wall-clock decisions/s over one thread's, per round (the same rounds), then the median.
    scaling = {}
    for game in THREADED:
        one = f"{game}_vector_sparse"
        for n in counts:
            name = f"{game}_vector_sparse_t{n}"
            if name in runs and one in runs:
                per_round = [a["decisions_per_s"] / b["decisions_per_s"] for a, b in zip(runs[name], runs[one])]
                ratio = round(statistics.median(per_round), 2)
                key = str(n) if game == "mulle" else f"{game}_{n}"  # Mulle's keys as before
                scaling[key] = {"wall_ratio_to_1_thread": ratio, "per_round": [round(r, 2) for r in per_round]}
                if n in THREAD_AIM:
                    scaling[key].update(aim=THREAD_AIM[n], met=ratio >= THREAD_AIM[n])
    aims = {}
    if BASELINE in runs:
        for name, aim in AIMS.items():
            key = f"{name}/{BASELINE}"
            if key in ratios and (k == VECTOR_K or "vector" not in name):  # the vector aims are K=64's
                aims[name] = {"aim": aim, "ratio": ratios[key], "met": ratios[key] >= aim}
    from mulle_env import BACKEND

    report = {
        "benchmark": "env",
        "unit": "decisions per CPU second: an observation and legal-action mask for the player to move, then one "
                "random legal action; median of alternating rounds, one process, each env seeded once",
        "command": "python benchmarks/bench_env.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "aims_vs_" + BASELINE: aims,
        "results": results,
        "ratios": ratios,
        "skipped": skipped,
        "thread_scaling": scaling,
        "vector_k": k,
        "backend": BACKEND,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_model": _cpu_model(),
            "cpus": os.cpu_count(),
            "cores_allowed": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "load_before": load_before,
            "load_after": load_after,
        },
        "seconds_per_run": args.seconds,
        "rounds": args.rounds,
    }
    text = json.dumps(report, indent=2)
    print(_table(report))
    print(text)
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    return report


if __name__ == "__main__":
    main()
