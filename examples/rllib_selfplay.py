"""Masked PPO self-play with Ray RLlib on the PettingZoo AEC env, exported to a policy file.

    pip install torch==2.13.0            # a CPU build first, on a machine without a GPU
    pip install -e ".[rllib]"
    python examples/rllib_selfplay.py --iterations 40 --out runs/rllib      # a local Ray
    python examples/rllib_selfplay.py --address ray://head:10001 ...         # a cluster: one address

Both seats of ``mulle_env.pettingzoo.env`` map to one policy, ``shared``, so the policy
plays itself. RLlib wraps the AEC env with its own ``PettingZooEnv``; the observation stays
PettingZoo's dict ``{"observation", "action_mask"}``, and masking is done the way RLlib
documents for its new API stack (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``):
an RLModule that builds PPO's networks on the observation alone and adds ``log(mask)``
(clamped to RLlib's ``FLOAT_MIN``) to the action logits in every forward pass, so an
illegal move is never sampled and never gets gradient.

The actor is an MLP (``--hidden`` layers, tanh, no shared value layers), so after training,
and at every ``--eval-every`` iterations, its layers export to the project's ``logits`` policy
file (:mod:`agents.learned.policy`): ``learned:path=<out>/policy.npz`` plays it in the arena,
and the training curve (``<out>/curve.json``) records its arena score against ``random`` and
``heuristic`` (duplicate games) besides RLlib's own numbers. The algorithm is checkpointed
to ``<out>/checkpoint`` at every evaluation; running the same command again resumes from it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.ppo_torch_rl_module import PPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_export import arena_score, export  # noqa: E402  (the examples' shared helper)

ENV_NAME = "mulle_aec"
POLICY_ID = "shared"
ACTIVATION = "tanh"


def make_env(config: dict) -> PettingZooEnv:
    """The AEC env in RLlib's PettingZoo wrapper (``config``: ``reward``, ``score_scale``, ``ruleset``)."""
    from mulle_env.pettingzoo import env

    return PettingZooEnv(env(**config))


def policy_mapping(agent_id, episode, **kwargs) -> str:
    """Both seats play the one shared policy: self-play."""
    return POLICY_ID


class MaskedPPOModule(PPOTorchRLModule):
    """PPO's torch RLModule on ``obs["observation"]``, with ``obs["action_mask"]`` masking the logits.

    RLlib's documented pattern: the networks are built for the inner observation space, and
    every forward pass (inference, exploration, training, and the value pass of GAE) takes
    the dict apart first.
    """

    def __init__(self, *, observation_space=None, **kwargs) -> None:
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observation"], **kwargs)

    def setup(self) -> None:
        # One thread per process: on a few shared cores torch's default (every core) makes each
        # small op wait on its thread pool, and a 2812-logit log or logsumexp took 12 ms, not 20 us.
        torch.set_num_threads(1)
        super().setup()
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: dict) -> tuple[torch.Tensor, dict]:
        obs = batch[Columns.OBS]
        mask = obs["action_mask"]
        return mask, {**batch, Columns.OBS: obs["observation"]}

    @staticmethod
    def _masked(outs: dict, mask: torch.Tensor) -> dict:
        outs[Columns.ACTION_DIST_INPUTS] = outs[Columns.ACTION_DIST_INPUTS] + torch.clamp(
            torch.log(mask.float()), min=FLOAT_MIN
        )
        return outs

    def _forward_inference(self, batch, **kwargs):
        mask, batch = self._split(batch)
        return self._masked(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch, **kwargs):
        mask, batch = self._split(batch)
        return self._masked(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch, **kwargs):
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        if isinstance(batch[Columns.OBS], dict):
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)

    def actor_layers(self) -> list[torch.nn.Linear]:
        """The actor's affine layers in order: its encoder's, then the policy head's."""
        layers = [m for m in self.encoder.actor_encoder.modules() if isinstance(m, torch.nn.Linear)]
        return layers + [m for m in self.pi.modules() if isinstance(m, torch.nn.Linear)]


def build_config(args) -> PPOConfig:
    """The PPO configuration: one shared masked policy for both seats, a local or remote Ray."""
    hidden = [int(h) for h in args.hidden.split(",") if h]
    model = {
        "fcnet_hiddens": hidden,
        "fcnet_activation": ACTIVATION,
        "head_fcnet_hiddens": [],  # the policy head is one affine layer: the actor stays a plain MLP
        "vf_share_layers": False,
    }
    register_env(ENV_NAME, make_env)
    return (
        PPOConfig()
        # RLlib's env check steps unmasked random actions, which this env refuses (illegal_action="raise",
        # so a masking bug fails loudly instead of training on forfeits): skip that check.
        .environment(ENV_NAME, env_config={"reward": args.reward, "score_scale": 100.0}, disable_env_checking=True)
        .multi_agent(policies={POLICY_ID}, policy_mapping_fn=policy_mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={POLICY_ID: RLModuleSpec(module_class=MaskedPPOModule, model_config=model)}
        ))
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     rollout_fragment_length="auto")
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=args.lr, entropy_coeff=args.entropy, gamma=1.0, lambda_=0.95)
        .debugging(seed=args.seed)
    )


def export_policy(algo, path: Path, metadata: dict) -> Path:
    """The shared policy's actor as a ``logits`` policy file (``learned:path=...``)."""
    return export(algo.get_module(POLICY_ID).actor_layers(), ACTIVATION, metadata, path)


def build_parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--address", default=None, help="Ray address (ray://host:10001, or auto); default: a local Ray")
    p.add_argument("--out", default="runs/rllib", help="directory for the policy, curve and checkpoint")
    p.add_argument("--iterations", type=int, default=40, help="PPO iterations (each one train batch)")
    p.add_argument("--batch", type=int, default=4000, help="env steps per train batch (both seats' moves)")
    p.add_argument("--minibatch", type=int, default=500)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--entropy", type=float, default=0.01, help="entropy bonus")
    p.add_argument("--hidden", default="256,256", help="actor and critic hidden layer sizes")
    p.add_argument("--reward", choices=("score", "win"), default="score",
                   help="the env's reward: point difference / 100, or +1/0/-1")
    p.add_argument("--env-runners", type=int, default=1, help="RLlib env runners (processes sampling games)")
    p.add_argument("--envs-per-runner", type=int, default=8,
                   help="games each env runner steps together (one batched forward pass for all of them)")
    p.add_argument("--eval-every", type=int, default=10, help="export, checkpoint and measure every N iterations")
    p.add_argument("--eval-games", type=int, default=20, help="arena games against each of random and heuristic")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs a local Ray may use (ignored with --address)")
    return p


def _check(args) -> str | None:
    for name in ("iterations", "batch", "minibatch", "epochs", "eval_every", "num_cpus", "envs_per_runner"):
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1, not {getattr(args, name)}"
    if args.eval_games < 0 or args.env_runners < 0:
        return "--eval-games and --env-runners must be at least 0"
    if args.minibatch > args.batch:
        return f"--minibatch ({args.minibatch}) may not exceed --batch ({args.batch})"
    try:
        hidden = [int(h) for h in args.hidden.split(",") if h]
    except ValueError:
        hidden = []
    if not hidden or min(hidden) < 1:
        return f"--hidden must be comma-separated positive sizes such as 256,256, not {args.hidden!r}"
    if Path(args.out).exists() and not Path(args.out).is_dir():
        return f"--out {args.out!r} is a file; give a directory (it is created if missing)"
    return None


def train(args) -> dict:
    """Train, export and measure; return the curve (also written to ``<out>/curve.json``)."""
    import ray

    from mulle_env.util.files import check_output_path

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    policy_path = out / "policy.npz"
    curve_path = out / "curve.json"
    check_output_path(str(curve_path))
    checkpoint = out / "checkpoint"
    curve = json.loads(curve_path.read_text()) if curve_path.exists() and checkpoint.exists() else {"points": []}
    curve["command"] = " ".join(["python", "examples/rllib_selfplay.py", *sys.argv[1:]])
    # Ray's workers (env runners, here or on a cluster) import this module and its helper from
    # the job's working directory; mulle-env itself must be installed where they run.
    runtime_env = {"working_dir": str(Path(__file__).resolve().parent)}
    if args.address:
        ray.init(address=args.address, runtime_env=runtime_env)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False, runtime_env=runtime_env)
    try:
        algo = build_config(args).build_algo()
        start = 0
        if checkpoint.exists():
            algo.restore_from_path(str(checkpoint))
            start = algo.iteration
            print(f"resumed from {checkpoint} at iteration {start}")
        t0 = time.perf_counter()
        for it in range(start + 1, args.iterations + 1):
            result = algo.train()
            steps = result.get("env_runners", {}).get("num_env_steps_sampled_lifetime", 0)
            learner = result.get("learners", {}).get(POLICY_ID, {})
            print(f"iteration {it}: {steps} env steps, policy loss {learner.get('policy_loss', float('nan')):.4f}, "
                  f"entropy {learner.get('entropy', float('nan')):.3f}, {time.perf_counter() - t0:.0f} s")
            if it % args.eval_every == 0 or it == args.iterations:
                meta = {"trainer": "rllib PPO self-play (examples/rllib_selfplay.py)", "iteration": it,
                        "env_steps": steps, "command": curve["command"]}
                export_policy(algo, policy_path, meta)
                algo.save_to_path(str(checkpoint))
                point = {"iteration": it, "env_steps": steps, "seconds": round(time.perf_counter() - t0, 1),
                         "entropy": learner.get("entropy"), "policy_loss": learner.get("policy_loss")}
                if args.eval_games:
                    for opp in ("random", "heuristic"):
                        point[opp] = arena_score(policy_path, opp, args.eval_games, seed=1000 + it)
                        print(f"  vs {opp}: score {point[opp]['score']:.1%}, "
                              f"{point[opp]['points_per_game']:+.1f} points a game over {point[opp]['games']} games")
                curve["points"] = [p for p in curve["points"] if p["iteration"] < it] + [point]
                curve_path.write_text(json.dumps(curve, indent=2) + "\n")
        algo.stop()
    finally:
        ray.shutdown()
    print(f"policy: {policy_path} (play it: mulle-arena learned:path={policy_path} heuristic)")
    return curve


def main(argv=None) -> int:
    """Run the example; 2 with a message for bad arguments."""
    args = build_parser().parse_args(argv)
    problem = _check(args)
    if problem:
        print(f"rllib_selfplay: {problem}", file=sys.stderr)
        return 2
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
