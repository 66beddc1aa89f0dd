"""OpenSpiel's NFSP (Neural Fictitious Self-Play) on ``python_mulle``, end to end.

    pip install -e ".[openspiel]" torch dm-tree   # OpenSpiel's pytorch NFSP imports dm-tree
    python examples/openspiel_nfsp.py --episodes 3000 --out runs/nfsp

One NFSP agent per seat (``open_spiel.python.pytorch.nfsp``: a DQN best response and a
supervised average policy) learns from self-play in OpenSpiel's ``rl_environment`` on the
one-set game ``python_mulle(sets=1)``, reading the 524-float observation tensor (the
information-state tensor is perfect recall, 13,868 floats for one set: too wide for this
small run). Every ``--eval-every`` episodes each seat's *average policy* network, an MLP
with ReLU, is exported to the project's ``logits`` policy file (``<out>/seat0.npz``,
``<out>/seat1.npz``), and the arena measures it against ``random`` and ``heuristic``
(duplicate games, one set). The curve goes to ``<out>/curve.json``.

NFSP is the OpenSpiel algorithm of this size class that fits Mulle: MCCFR and the
exploitability tools need the game tree's information states revisited, and Mulle's
(a hand of 8 from 104 cards, a table of up to 20) are practically never seen twice.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyspiel
import torch
from open_spiel.python import rl_environment
from open_spiel.python.pytorch import nfsp

import mulle_env.openspiel  # noqa: F401  (registers python_mulle)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy_export import arena_score, export  # noqa: E402  (the examples' shared helper)

RULESET = {"sets": 1}


def build_parser() -> argparse.ArgumentParser:
    """The command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--out", default="runs/nfsp", help="directory for the policy files and the curve")
    p.add_argument("--episodes", type=int, default=3000, help="self-play games (one set each)")
    p.add_argument("--hidden", default="256", help="hidden layer sizes of both networks")
    p.add_argument("--eval-every", type=int, default=1000, help="export and measure every N episodes")
    p.add_argument("--eval-games", type=int, default=100, help="arena games against each of random and heuristic")
    p.add_argument("--anticipatory", type=float, default=0.1, help="share of games played by the best response")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate of both networks")
    p.add_argument("--reward-scale", type=float, default=100.0,
                   help="the networks learn the returns (points) divided by this")
    p.add_argument("--seed", type=int, default=0)
    return p


def make_agents(env: rl_environment.Environment, hidden: list[int], args) -> list[nfsp.NFSP]:
    """One NFSP agent per seat, with buffers sized for a run of ``args.episodes`` one-set games."""
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    return [
        nfsp.NFSP(player, size, actions, hidden, reservoir_buffer_capacity=200_000,
                  anticipatory_param=args.anticipatory, replay_buffer_capacity=100_000, batch_size=128,
                  rl_learning_rate=args.lr, sl_learning_rate=args.lr, min_buffer_size_to_learn=1000, learn_every=64,
                  optimizer_str="adam", update_target_network_every=4800, epsilon_start=0.2, epsilon_end=0.02,
                  epsilon_decay_duration=max(1, args.episodes * 48), seed=args.seed + player)
        for player in (0, 1)
    ]


def average_policy_layers(agent: nfsp.NFSP) -> list[torch.nn.Linear]:
    """The average-policy MLP's affine layers in order (ReLU between them, none after the last)."""
    return [m for m in agent._avg_network.modules() if isinstance(m, torch.nn.Linear)]


def _scaled(time_step, scale: float):
    # Returns are points (tens a game): a DQN regressing on them with its default step sizes
    # diverged (losses near 20 in a first run), so the networks see points / scale.
    if time_step.rewards is None:
        return time_step
    return time_step._replace(rewards=[r / scale for r in time_step.rewards])


def play_episode(env: rl_environment.Environment, agents: list[nfsp.NFSP], scale: float = 1.0) -> None:
    """One self-play game; both agents learn from it (rewards divided by ``scale``)."""
    time_step = env.reset()
    while not time_step.last():
        player = time_step.observations["current_player"]
        time_step = env.step([agents[player].step(_scaled(time_step, scale)).action])
    for agent in agents:
        agent.step(_scaled(time_step, scale))


def train(args) -> dict:
    """Self-play, export and measure; return the curve (also written to ``<out>/curve.json``)."""
    torch.set_num_threads(1)  # small nets: one thread is fastest on a few shared cores
    np.random.seed(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    hidden = [int(h) for h in args.hidden.split(",") if h]
    game = pyspiel.load_game("python_mulle", {"sets": 1})
    env = rl_environment.Environment(game, observation_type=rl_environment.ObservationType.OBSERVATION,
                                     seed=args.seed)
    agents = make_agents(env, hidden, args)
    curve = {"command": " ".join(["python", "examples/openspiel_nfsp.py", *sys.argv[1:]]), "points": []}
    t0 = time.perf_counter()
    for episode in range(1, args.episodes + 1):
        play_episode(env, agents, args.reward_scale)
        if episode % args.eval_every == 0 or episode == args.episodes:
            point = {"episodes": episode, "seconds": round(time.perf_counter() - t0, 1),
                     "losses": [[None if v is None else float(v) for v in a.loss] for a in agents]}
            for seat, agent in enumerate(agents):
                path = export(average_policy_layers(agent), "relu",
                              {"trainer": "OpenSpiel NFSP average policy (examples/openspiel_nfsp.py)",
                               "seat": seat, "episodes": episode, "command": curve["command"]},
                              out / f"seat{seat}.npz")
                if args.eval_games:
                    point[f"seat{seat}"] = {opp: arena_score(path, opp, args.eval_games, seed=2000 + episode,
                                                             ruleset=RULESET)
                                            for opp in ("random", "heuristic")}
                    print(f"episode {episode}, seat {seat}'s average policy: "
                          + ", ".join(f"vs {o} {r['score']:.1%} ({r['points_per_game']:+.1f} points a game)"
                                      for o, r in point[f"seat{seat}"].items()))
            curve["points"].append(point)
            (out / "curve.json").write_text(json.dumps(curve, indent=2) + "\n")
    return curve


def main(argv=None) -> int:
    """Run the example; 2 with a message for bad arguments."""
    args = build_parser().parse_args(argv)
    try:
        hidden = [int(h) for h in args.hidden.split(",") if h]
    except ValueError:
        hidden = []
    if (not hidden or min(hidden) < 1 or args.episodes < 1 or args.eval_every < 1 or args.eval_games < 0
            or not args.lr > 0 or not args.reward_scale > 0):
        print("openspiel_nfsp: --hidden takes positive sizes (256 or 256,128); --episodes and --eval-every must be "
              "at least 1, --eval-games at least 0, --lr and --reward-scale above 0", file=sys.stderr)
        return 2
    if Path(args.out).exists() and not Path(args.out).is_dir():
        print(f"openspiel_nfsp: --out {args.out!r} is a file; give a directory (it is created if missing)",
              file=sys.stderr)
        return 2
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
