"""The vector env's ``send``/``recv`` against ``step``, with a policy that costs time: what overlapping buys.

A training loop spends its step in two places: the policy (a forward pass over the batch's
observations, Python/torch holding the GIL) and the env. With ``step`` the two take turns,
so threads can only shorten the env's part. With ``send``/``recv`` and two halves of the
games, the policy works on one half while the stepper's threads step the other. This
benchmark emulates the policy by a busy wait of ``--policy-us`` microseconds per
observation (then a uniform legal pick, ``codec.sample_csr``) and reports wall-clock
decisions per second of three drivers, in alternating rounds of one process:

- ``step_t1``: ``step`` on one thread (the baseline);
- ``step_tN``: ``step`` on ``--threads`` threads;
- ``sendrecv_tN``: ``send``/``recv`` of two halves on ``--threads`` threads.

Ratios are to ``step_t1`` in the same round; the JSON has every round and the load::

    python benchmarks/bench_sendrecv.py                      # K=64, policy 0, 1 and 2 us a row
    python benchmarks/bench_sendrecv.py --envs 256 --policy-us 0,1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def _busy(us: float) -> None:
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


def _make(k: int, threads: int):  # type: ignore[no-untyped-def]
    import gymnasium as gym

    import mulle_env  # noqa: F401

    envs = gym.make_vec("Mulle-v0", num_envs=k, vectorization_mode="vector_entry_point", opponent="random",
                        dense_mask=False, num_threads=threads)
    envs.reset(seed=0)
    return envs, envs.unwrapped, np.random.default_rng(0)


def run_step(env, seconds: float, per_row_us: float) -> float:  # type: ignore[no-untyped-def]
    """Decisions per wall-clock second of ``step`` with the emulated policy."""
    from mulle_env.codec import sample_csr

    envs, u, rng = env
    k, n = u.num_envs, 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while time.perf_counter() < end:
        _busy(per_row_us * k)
        envs.step(sample_csr(*u.legal_ids(), rng))
        n += k
    return n / (time.perf_counter() - t0)


def run_sendrecv(env, seconds: float, per_row_us: float) -> float:  # type: ignore[no-untyped-def]
    """Decisions per wall-clock second of ``send``/``recv`` with two halves in a pipeline."""
    from mulle_env.codec import sample_csr

    _, u, rng = env
    k = u.num_envs
    h = k // 2
    a, b = np.arange(h), np.arange(h, k)
    n = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    ids, off = u.legal_ids()
    _busy(per_row_us * h)
    u.send(sample_csr(ids, off[:h + 1], rng), a)
    while time.perf_counter() < end:
        ids, off = u.legal_ids()
        _busy(per_row_us * (k - h))  # the policy on b while a is stepped
        act_b = sample_csr(ids, off[h:], rng)
        u.recv()
        u.send(act_b, b)
        ids, off = u.legal_ids()
        _busy(per_row_us * h)  # the policy on a while b is stepped
        act_a = sample_csr(ids, off[:h + 1], rng)
        u.recv()
        u.send(act_a, a)
        n += k
    u.recv()
    return n / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> dict:
    """Run the rounds, print the ratios and write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=64, help="K (default 64)")
    ap.add_argument("--threads", type=int, default=2, help="threads of the two threaded drivers (default 2)")
    ap.add_argument("--policy-us", default="0,1,2", help="comma-separated policy costs, us per observation")
    ap.add_argument("--seconds", type=float, default=0.25, help="seconds a driver a round (default 0.25)")
    ap.add_argument("--rounds", type=int, default=20, help="alternating rounds (default 20)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "sendrecv.json"),
                    help="JSON file to write ('-' to only print)")
    args = ap.parse_args(argv)
    if args.envs < 2 or args.threads < 1 or args.rounds < 1 or args.seconds <= 0:
        ap.error("--envs must be at least 2, --threads and --rounds at least 1, --seconds positive")
    try:
        costs = [float(c) for c in args.policy_us.split(",") if c.strip()]
    except ValueError:
        ap.error(f"--policy-us must be comma-separated numbers, not {args.policy_us!r}")
    if not costs or min(costs) < 0:
        ap.error("--policy-us needs costs of 0 or more")
    load_before = os.getloadavg()
    t = args.threads
    envs = {"step_t1": _make(args.envs, 1), f"step_t{t}": _make(args.envs, t), f"sendrecv_t{t}": _make(args.envs, t)}
    drivers = {"step_t1": run_step, f"step_t{t}": run_step, f"sendrecv_t{t}": run_sendrecv}
    command = "python benchmarks/bench_sendrecv.py " + " ".join(sys.argv[1:] if argv is None else argv)
    report: dict = {"benchmark": "sendrecv", "envs": args.envs, "threads": t, "command": command,
                    "unit": "wall-clock decisions per second; ratios to step_t1 in the same round, medians",
                    "by_policy_us": {}}
    for cost in costs:
        for name, env in envs.items():  # warm-up
            drivers[name](env, 0.2, cost)
        rounds: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(args.rounds):
            for name, env in envs.items():
                rounds[name].append(drivers[name](env, args.seconds, cost))
        base = rounds["step_t1"]
        row = {"step_t1_decisions_per_s": round(statistics.median(base))}
        for name in list(envs)[1:]:
            ratios = [x / y for x, y in zip(rounds[name], base)]
            row[name] = {"ratio_to_step_t1": round(statistics.median(ratios), 2),
                         "per_round": [round(r, 2) for r in ratios]}
        report["by_policy_us"][str(cost)] = row
        print(f"K={args.envs}, policy {cost:g} us a row: step on 1 thread {row['step_t1_decisions_per_s']:,} "
              f"decisions/s; step on {t} threads x{row[f'step_t{t}']['ratio_to_step_t1']:.2f}; "
              f"send/recv on {t} threads x{row[f'sendrecv_t{t}']['ratio_to_step_t1']:.2f}")
    report["machine"] = {"python": platform.python_version(), "platform": platform.platform(),
                         "cpus": os.cpu_count(), "load_before": [round(x, 2) for x in load_before],
                         "load_after": [round(x, 2) for x in os.getloadavg()]}
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {args.out}")
    return report


if __name__ == "__main__":
    main()
