"""Training throughput: MaskablePPO steps/s on the batched vector env against today's ``mulle-train`` envs (JSON).

The same learner in every configuration: sb3-contrib ``MaskablePPO``, ``MlpPolicy``
with ``mulle-train``'s defaults (256,256 tanh policy and value nets, batch 512,
4 epochs, rollouts of 2048 steps, one torch thread), ``reward="score"``,
``seat="alternate"``. Only the environment side changes:

- ``dummy``: what ``mulle-train`` runs today (``--vec dummy``): ``DummyVecEnv`` of 8
  ``Monitor(Mulle-v0)``, 256 steps each per rollout;
- ``batched``: ``mulle-train --vec batched``: ``VecMonitor(SB3VectorEnv(MulleVectorEnv))``
  with K = 64 games, 32 steps each per rollout;
- ``batched_selfplay``: the same with ``opponent="self"``: the network being trained
  plays the other seat too (one batched forward pass per opponent turn).

For each opponent (``--opponents``) the configurations run ``--rounds`` times in turn
(``--steps`` steps each after one warm-up rollout); figures are medians, ratios the
medians of per-round ratios to ``dummy`` with the same opponent. Each run also
records how its time splits between collecting rollouts (env + policy forward) and
the PPO update (``train()``), which no env speed changes.

    python benchmarks/bench_training.py --steps 6144 --rounds 3 --out benchmarks/results/training_speed.json
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROLLOUT = 2048
AIM = 3.0


def _model(env, seed: int):
    import torch
    from sb3_contrib import MaskablePPO

    return MaskablePPO(
        "MlpPolicy", env, learning_rate=1e-4, n_steps=ROLLOUT // env.num_envs, batch_size=512, n_epochs=4,
        gamma=0.998, gae_lambda=0.95, clip_range=0.15, ent_coef=0.002, target_kl=0.03, seed=seed, device="cpu",
        verbose=0, policy_kwargs={"net_arch": {"pi": [256, 256], "vf": [256, 256]}, "activation_fn": torch.nn.Tanh},
    )


def build(config: str, opponent: str, seed: int):
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from mulle_env.gym_env import MulleEnv
    from mulle_env.vector_env import MulleVectorEnv
    from training.sb3_vec import SB3VectorEnv

    kw = {"reward": "score", "seat": "alternate"}
    if config == "dummy":
        env = DummyVecEnv([lambda: Monitor(MulleEnv(opponent=opponent, **kw)) for _ in range(8)])
        return _model(env, seed)
    venv = SB3VectorEnv(MulleVectorEnv(64, opponent="self" if config == "batched_selfplay" else opponent, **kw))
    model = _model(VecMonitor(venv), seed)
    if config == "batched_selfplay":
        venv.use_policy(model.policy)
    return model


def run(model, steps: int) -> dict:
    """Train ``steps`` more steps; return steps/s and the update's share of the time."""
    spent = {"update": 0.0}
    train = model.train

    def timed_train():
        t = time.perf_counter()
        train()
        spent["update"] += time.perf_counter() - t

    model.train = timed_train
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, reset_num_timesteps=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    model.train = train
    return {"steps": steps, "seconds": round(wall, 2), "steps_per_s": round(steps / wall, 1),
            "steps_per_cpu_s": round(steps / cpu, 1), "update_share": round(spent["update"] / wall, 3),
            "rollout_ms_per_1000_steps": round(1000 * (wall - spent["update"]) / steps * 1000, 1),
            "update_ms_per_1000_steps": round(1000 * spent["update"] / steps * 1000, 1)}


def main(argv: list[str] | None = None) -> dict:
    """Run the benchmark, print a table and the JSON, write the JSON to ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=6144, help="timed PPO steps per run (multiple of 2048)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--opponents", default="random,heuristic", help="comma-separated opponent specs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "training_speed.json"),
                    help="JSON file to write ('-' to only print)")
    args = ap.parse_args(argv)
    if args.steps < ROLLOUT or args.steps % ROLLOUT:
        ap.error(f"--steps must be a positive multiple of {ROLLOUT}, not {args.steps}")
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    import torch

    torch.set_num_threads(1)
    configs = [(c, o) for o in args.opponents.split(",") for c in ("dummy", "batched")]
    configs.append(("batched_selfplay", "self"))
    models = {}
    for c, o in configs:
        models[(c, o)] = m = build(c, o, args.seed)
        m.learn(ROLLOUT)  # warm-up: first rollout and update
    runs: dict = {k: [] for k in models}
    for _ in range(args.rounds):
        for key, m in models.items():
            runs[key].append(run(m, args.steps))
    results, ratios = {}, {}
    for (c, o), rs in runs.items():
        results[f"{c}:{o}"] = {k: statistics.median(r[k] for r in rs) for k in rs[0] if k != "steps"} | {"runs": rs}
    for (c, o), rs in runs.items():
        if c == "dummy":
            continue
        base = runs[("dummy", o if o != "self" else "random")]
        ratios[f"{c}:{o}/dummy:{o if o != 'self' else 'random'}"] = round(
            statistics.median(a["steps_per_cpu_s"] / b["steps_per_cpu_s"] for a, b in zip(rs, base)), 2)
    report = {
        "benchmark": "training_speed",
        "unit": "MaskablePPO steps (learner decisions) per CPU second, median of alternating runs, one torch thread",
        "command": "python benchmarks/bench_training.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "network": "MlpPolicy pi/vf 256,256 tanh; n_steps*envs 2048, batch 512, 4 epochs",
        "aim": AIM,
        "results": results,
        "ratios": ratios,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
    }
    print(f"{'config':<28} {'steps/CPU s':>12} {'update share':>13} {'rollout ms/1k':>14} {'update ms/1k':>13}")
    for name, r in results.items():
        print(f"{name:<28} {r['steps_per_cpu_s']:>12.0f} {r['update_share']:>13.2f} "
              f"{r['rollout_ms_per_1000_steps']:>14.0f} {r['update_ms_per_1000_steps']:>13.0f}")
    for k, v in ratios.items():
        print(f"{k}: {v}x (aim {AIM}x)")
    text = json.dumps(report, indent=1)
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text + "\n")
    return report


if __name__ == "__main__":
    main()
