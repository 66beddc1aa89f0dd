"""Masked PPO in one file, in the style of CleanRL, on Mulle's batched vector env.

    python examples/cleanrl_ppo.py --total-steps 200000 --out runs/cleanrl

Everything a PPO needs is here, in the order it runs, with nothing from the project but
the env: ``MulleVectorEnv`` steps ``--num-envs`` games in one call (the opponent moves
inside it), ``legal_ids()`` gives each game's legal actions as sparse ids (CSR rows:
``ids[offsets[i]:offsets[i + 1]]``), from which the network's logits are masked (an
illegal action gets probability 0, so it is never sampled and never learned), and
``mulle_env.codec.sample_csr`` draws uniformly random legal actions for the baseline the
curve starts from. Rewards are the env's ``reward="score_delta"``: each step the change in
the score difference since the learner's last move, / 100, so a game's rewards add up to
its final score difference / 100 while the points come at the moves that made them
(docs/learning.md, "Training with standard RL", says why that matters for any algorithm).

The curve (mean points a game of the last finished games, and the greedy policy's
results against the opponent at the end) goes to ``<out>/curve.json``; ``--out`` is this
example's own directory (default ``runs/cleanrl``), so it never writes into another
example's files. The network is a plain MLP with a policy head over the 2,812 actions
and a value head; it is not exported (``mulle-train ppo`` makes policy files).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from mulle_env.codec import NUM_ACTIONS, sample_csr
from mulle_env.vector_env import MulleVectorEnv

#: The logit an illegal action gets: its probability underflows to exactly 0 (-inf would make the entropy NaN).
MASKED = -1e8


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The example's flags (CleanRL's names where it has them)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--total-steps", type=int, default=200_000, help="learner decisions in all")
    p.add_argument("--num-envs", type=int, default=32, help="games stepped together")
    p.add_argument("--num-steps", type=int, default=64, help="steps per game per rollout")
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=256, help="width of the two hidden layers")
    p.add_argument("--opponent", default="heuristic", help="the env's opponent (an agent spec)")
    p.add_argument("--sets", type=int, default=0, help="sets a game (0: the rules' default)")
    p.add_argument("--eval-games", type=int, default=100, help="greedy games against the opponent at the end")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="runs/cleanrl", help="directory of curve.json (made if missing)")
    return p.parse_args(argv)


def legal_mask(ids: np.ndarray, offsets: np.ndarray) -> torch.Tensor:
    """A bool ``(rows, NUM_ACTIONS)`` mask, True exactly at each row's legal ids (CSR rows of ``legal_ids()``)."""
    rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    mask = torch.zeros((len(offsets) - 1, NUM_ACTIONS), dtype=torch.bool)
    mask[torch.from_numpy(rows), torch.from_numpy(ids[: offsets[-1]].astype(np.int64))] = True
    return mask


class Agent(nn.Module):
    """An actor over every action id and a critic, both two-layer tanh MLPs of the observation."""

    def __init__(self, obs_size: int, hidden: int) -> None:
        super().__init__()

        def mlp(out: int, gain: float) -> nn.Sequential:
            layers = [nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                      nn.Linear(hidden, out)]
            for layer, g in zip(layers[::2], (np.sqrt(2), np.sqrt(2), gain)):
                nn.init.orthogonal_(layer.weight, g)
                nn.init.zeros_(layer.bias)
            return nn.Sequential(*layers)

        self.actor = mlp(NUM_ACTIONS, 0.01)
        self.critic = mlp(1, 1.0)

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> Categorical:
        """The policy over the legal actions only: illegal logits set to :data:`MASKED`."""
        return Categorical(logits=torch.where(mask, self.actor(obs), torch.tensor(MASKED)))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's estimate of the points still to come (/ 100)."""
        return self.critic(obs).squeeze(-1)


def make_env(args: argparse.Namespace, seed: int) -> tuple[MulleVectorEnv, np.ndarray]:
    """The batched env (learner's seat alternating, rewards as the score changes) and its first observations."""
    rules = {"sets": args.sets} if args.sets else None
    env = MulleVectorEnv(args.num_envs, opponent=args.opponent, reward="score_delta", seat="alternate",
                         ruleset=rules, dense_mask=False)  # the legal ids are enough: no dense mask is written
    obs, _ = env.reset(seed=seed)
    return env, obs


def random_points(args: argparse.Namespace, games: int) -> float:
    """Mean points a game (score difference) of uniformly random legal moves, drawn by ``sample_csr``."""
    env, _ = make_env(args, args.seed + 10_000)
    rng, totals, running = np.random.default_rng(args.seed), [], np.zeros(args.num_envs)
    while len(totals) < games:
        ids, offsets = env.legal_ids()
        _, reward, done, _, _ = env.step(sample_csr(ids, offsets, rng))
        running += reward
        totals += (100 * running[done]).tolist()
        running[done] = 0.0
    env.close()
    return float(np.mean(totals[:games]))


def evaluate(agent: Agent, args: argparse.Namespace, games: int) -> dict[str, Any]:
    """The greedy policy (the most likely legal action) against the opponent: wins, draws, losses, mean points."""
    env, obs = make_env(args, args.seed + 20_000)
    running, finals = np.zeros(args.num_envs), []
    with torch.no_grad():
        while len(finals) < games:
            mask = legal_mask(*env.legal_ids())
            action = agent.dist(torch.from_numpy(obs), mask).probs.argmax(1)
            obs, reward, done, _, _ = env.step(action.numpy())
            running += reward
            finals += (100 * running[done]).tolist()
            running[done] = 0.0
    env.close()
    pts = np.round(np.array(finals[:games]))
    return {"games": games, "wins": int((pts > 0).sum()), "draws": int((pts == 0).sum()),
            "losses": int((pts < 0).sum()), "score": float(((pts > 0) + 0.5 * (pts == 0)).mean()),
            "mean_points": float(pts.mean())}


def train(args: argparse.Namespace) -> dict[str, Any]:
    """PPO for ``--total-steps``; returns the curve written to ``<out>/curve.json``."""
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # these nets are small: one thread is fastest and leaves the others to the env
    env, next_obs_np = make_env(args, args.seed)
    n, t_len = args.num_envs, args.num_steps
    obs_size = next_obs_np.shape[1]
    agent = Agent(obs_size, args.hidden)
    optim = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    obs = torch.zeros((t_len, n, obs_size))
    masks = torch.zeros((t_len, n, NUM_ACTIONS), dtype=torch.bool)
    actions, logprobs, rewards, dones, values = (torch.zeros((t_len, n)) for _ in range(5))
    next_obs, next_done = torch.from_numpy(next_obs_np.copy()), torch.zeros(n)
    running, finished = np.zeros(n), []
    curve: dict[str, Any] = {"args": vars(args), "random_points": random_points(args, 2 * n), "updates": []}
    steps, t0 = 0, time.monotonic()
    while steps < args.total_steps:
        for t in range(t_len):  # the rollout
            obs[t], dones[t] = next_obs, next_done
            masks[t] = legal_mask(*env.legal_ids())
            with torch.no_grad():
                dist = agent.dist(next_obs, masks[t])
                action = dist.sample()
                logprobs[t], values[t] = dist.log_prob(action), agent.value(next_obs)
            actions[t] = action
            o, r, term, trunc, _ = env.step(action.numpy())  # an illegal id would raise: the mask is checked here
            rewards[t] = torch.from_numpy(r.astype(np.float32))
            next_obs, next_done = torch.from_numpy(o.copy()), torch.from_numpy((term | trunc).astype(np.float32))
            running += r
            finished += (100 * running[term | trunc]).tolist()
            running[term | trunc] = 0.0
        steps += t_len * n
        with torch.no_grad():  # generalised advantage estimates, bootstrapped from the last observation
            advantages, last = torch.zeros_like(rewards), torch.zeros(n)
            next_value = agent.value(next_obs)
            for t in reversed(range(t_len)):
                nonterminal = 1.0 - (next_done if t == t_len - 1 else dones[t + 1])
                following = next_value if t == t_len - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * nonterminal - values[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * nonterminal * last
            returns = advantages + values
        b = {"obs": obs.reshape(-1, obs_size), "masks": masks.reshape(-1, NUM_ACTIONS), "act": actions.reshape(-1),
             "logp": logprobs.reshape(-1), "adv": advantages.reshape(-1), "ret": returns.reshape(-1)}
        size = t_len * n
        mb = size // args.minibatches
        stats: dict[str, list[float]] = {"pg_loss": [], "v_loss": [], "entropy": [], "approx_kl": [], "ratio0": []}
        for epoch in range(args.update_epochs):
            order = torch.randperm(size)
            for start in range(0, size, mb):
                i = order[start : start + mb]
                dist = agent.dist(b["obs"][i], b["masks"][i])
                logratio = dist.log_prob(b["act"][i].long()) - b["logp"][i]
                ratio = logratio.exp()
                if epoch == 0 and start == 0:  # before any update the new policy is the old one: ratio 1
                    stats["ratio0"].append(float(ratio.mean().detach()))
                adv = (b["adv"][i] - b["adv"][i].mean()) / (b["adv"][i].std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((agent.value(b["obs"][i]) - b["ret"][i]) ** 2).mean()
                entropy = dist.entropy().mean()
                loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optim.step()
                with torch.no_grad():
                    stats["approx_kl"].append(float(((ratio - 1) - logratio).mean()))
                stats["pg_loss"].append(float(pg_loss.detach()))
                stats["v_loss"].append(float(v_loss.detach()))
                stats["entropy"].append(float(entropy.detach()))
        row = {"steps": steps, "seconds": round(time.monotonic() - t0, 1), "games": len(finished),
               "mean_points_last_100": float(np.mean(finished[-100:])) if finished else None,
               **{k: float(np.mean(v)) for k, v in stats.items()}}
        curve["updates"].append(row)
        print(json.dumps(row), flush=True)
    env.close()
    curve["final"] = evaluate(agent, args, args.eval_games)
    print(json.dumps({"final": curve["final"], "random_points": curve["random_points"]}), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "curve.json").write_text(json.dumps(curve, indent=1) + "\n")
    return curve


if __name__ == "__main__":
    train(parse_args())
