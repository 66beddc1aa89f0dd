"""``mulle-train``: train a policy for Mulle with masked PPO and export it for numpy play.

Pipeline (docs/learning.md has the shipped run's exact command and figures):

1. optional warm start (``--bc-games N``): the teacher (``greedy``) plays N games,
   the policy and value nets are fitted to its moves and the games' outcomes
   (:mod:`training.bc`);
2. ``MaskablePPO`` (sb3-contrib) on ``Mulle-v0`` with vectorized envs whose opponent
   is an :class:`~training.pool.OpponentPool` (a new opponent each game, drawn
   from agent specs and earlier snapshots of the learner by ``--opponents``), the
   learner's seat alternating; ``--vec batched`` steps all games in one call through the
   batched vector env (:mod:`mulle_env.vector_env`, wrapped by :mod:`training.sb3_vec`),
   where ``--opponents selfplay=1`` lets the network being trained play the other seat;
3. every ``--checkpoint-every`` steps a resumable checkpoint (``checkpoints/``), a
   numpy snapshot for the pool (``pool/``); every ``--eval-every`` steps a duplicate
   match against ``--eval-opponent`` (``eval.csv``, and sb3's logger: CSV, plus
   TensorBoard when it is installed); the best evaluated policy is kept as
   ``best.npz`` and copied to ``--export``.

``--resume`` continues from the newest checkpoint: step count, learning-rate schedule,
best policy, evaluation log and snapshot pool all carry on.

``--recipe quick|long`` sets the flags measured for standard RL (:data:`training.recipes.PPO_RECIPES`:
the batched env, ``--reward score_delta``, the warm start, a gentle PPO against ``heuristic``);
under ``--reward score_delta --score-scale 100`` the policy files carry the critic as their value
head, since it then predicts what a value head means (the points still to come / 100).

``--game casino`` trains a Casino policy the same way, on ``Casino-v0`` (the same env core
given Casino's game object): its agents (``heuristic``, ``greedy``, ``random`` as Casino's
registry has them) and ``self`` snapshots in the pool, Casino's evaluation games, and policy
files recorded as Casino nets (``learned:path=FILE`` at ``mulle-arena --game casino``). Its
defaults differ only where the game does (:data:`GAME_DEFAULTS`: ``--score-scale 11``, the
points a round hands out besides sweeps, as ``Casino-v0``'s); the behaviour-cloning warm start
is Mulle's and refused there.

torch, stable-baselines3 and sb3-contrib are imported only here, and only when the
command runs: ``pip install "mulle-env[train]"``.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # torch, sb3 and tqdm are imported where they are used; to mypy they are Any
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor
    from tqdm import tqdm

    from .pool import OpponentPool

__all__ = ["GAME_DEFAULTS", "SELFPLAY", "PPORun", "add_arguments", "apply_game_defaults", "build_parser", "check_args",
           "main", "parse_args", "planned_steps", "run_command", "steps_to_train", "train"]

#: ``--opponents`` member for self-play in the batched env: the network being trained plays both seats.
SELFPLAY = "selfplay"

#: ``--game``: the games PPO trains policies for (:mod:`training.games`).
GAMES = ("mulle", "casino")
#: Per game, the flags whose default differs from Mulle's (``--game casino`` sets them; flags given explicitly win).
GAME_DEFAULTS: dict[str, dict[str, Any]] = {"casino": {"score_scale": 11.0}}

EVAL_FIELDS = ["timesteps", "games_trained", "elapsed_s", "opponent", "games", "wins", "draws", "losses", "score",
               "score_low", "score_high", "mean_diff"]


class TrainingDependencyError(ImportError):
    """torch / stable-baselines3 / sb3-contrib are missing (they are the optional ``train`` extra)."""


def _import_training_stack() -> None:
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        raise TrainingDependencyError(
            f"mulle-train needs torch, stable-baselines3 and sb3-contrib ({exc}); install the optional extra: "
            'pip install "mulle-env[train]" (CPU torch is enough)'
        ) from None


#: What ``mulle-train ppo --help`` says first.
DESCRIPTION = ("Train a Mulle policy (or a Casino one, --game casino) with masked PPO (sb3-contrib) against an "
               "opponent pool and export it as a numpy .npz policy for the 'learned' agent.")
#: What ``mulle-train ppo --help`` says last.
EPILOG = ("Quick start (about 2 minutes on one core): mulle-train ppo --out-dir runs/try --steps 20000 "
          "--eval-games 40 --eval-every 10000 --checkpoint-every 10000 --export try.npz; then "
          "mulle-arena learned:path=try.npz heuristic --games 20. Exit codes: 0 done, 2 bad arguments or "
          "missing torch, 130 interrupted (a checkpoint is saved; continue with --resume), 141 the same when the "
          "reader of its output went away (| head). See docs/learning.md.")


def build_parser(prog: str = "mulle-train ppo") -> argparse.ArgumentParser:
    """A parser of the ``ppo`` command's flags alone (``mulle-train ppo`` is :func:`training.cli.build_parser`'s)."""
    ap = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_arguments(ap)
    return ap


def apply_game_defaults(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """``--game NAME`` and ``--recipe NAME`` in ``argv`` (the ``ppo`` flags): their defaults become ``parser``'s.

    The game's :data:`GAME_DEFAULTS`, then the recipe's flags (:data:`training.recipes.PPO_RECIPES`).
    Flags given explicitly win, as with ``expert --recipe``; ``--help`` then shows those defaults.
    """
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--game")  # no choices here: a bad name is the real parser's to refuse, naming the command
    pre.add_argument("--recipe")
    known, _ = pre.parse_known_args(argv)
    if known.game in GAME_DEFAULTS:
        parser.set_defaults(**GAME_DEFAULTS[known.game])
    from .recipes import PPO_RECIPES

    if known.recipe in PPO_RECIPES:  # a bad name is the real parser's to refuse; --game casino refuses any
        parser.set_defaults(**PPO_RECIPES[known.recipe])


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """Add the ``ppo`` command's flags to ``ap`` (the one definition of them)."""
    g = ap.add_argument_group("run")
    g.add_argument("--game", choices=GAMES, default="mulle",
                   help="the game to train for: mulle (Mulle-v0) or casino (Casino-v0; its agents in --opponents and "
                        "--eval-opponent, and --score-scale 11 by default)")
    from .recipes import PPO_RECIPES

    g.add_argument("--recipe", choices=list(PPO_RECIPES), default=None,
                   help="a preset of the flags below, chosen by measurement (docs/learning.md, 'Training with "
                        "standard RL'): quick = warm start and PPO against heuristic in 10 minutes; long = an hour "
                        "against a pool; flags given explicitly win")
    g.add_argument("--out-dir", default="runs/ppo", help="checkpoints, snapshots, logs and best.npz go here")
    g.add_argument("--steps", type=int, default=2_000_000, help="total PPO environment steps (learner decisions)")
    g.add_argument("--seed", type=int, default=0, help="seed of everything (envs, pool draws, nets, BC data)")
    g.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in --out-dir")
    g.add_argument("--init-from", default="",
                   help="start a new run from the weights (policy, value, optimizer) of this checkpoint .zip, with "
                   "this command's hyperparameters (e.g. a second, gentler stage); no warm start")
    g.add_argument("--max-minutes", type=float, default=0,
                   help="bound the whole command's wall time (warm start, the update in flight, the final evaluation "
                        "and export included, the last two estimated from the run's own): training stops early enough, "
                        "with a checkpoint; 0 = no limit")
    g.add_argument("--export", default="",
                   help="copy the best evaluated policy here at the end (e.g. agents/data/learned.npz)")
    g.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest for these small nets)")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")
    g = ap.add_argument_group("environment and opponents")
    g.add_argument("--envs", type=int, default=8, help="parallel environments")
    g.add_argument("--vec", choices=("dummy", "subproc", "batched"), default="dummy",
                   help="vectorization: dummy = Mulle-v0 envs in one process, subproc = one process each, batched = "
                   "the batched vector env (all games stepped in one call; use more --envs and fewer --n-steps)")
    g.add_argument("--opponents", default="heuristic=0.6,greedy=0.1,random=0.05,self=0.25",
                   help="opponent pool: spec=weight,...; 'self' = earlier snapshots of the learner; "
                   f"'{SELFPLAY}' alone (with --vec batched) = the network being trained plays the other seat")
    g.add_argument("--pool-keep", type=int, default=5, help="'self' draws among this many newest snapshots")
    g.add_argument("--reward", choices=("score", "score_delta", "win"), default="score",
                   help="Mulle-v0 reward mode: score_delta pays each step's points as they are made (docs/learning.md, "
                        "'Training with standard RL')")
    g.add_argument("--score-scale", type=float, default=100.0, help="score difference divisor (reward=score)")
    g = ap.add_argument_group("network and PPO")
    g.add_argument("--actor", choices=("logits", "afterstate"), default="logits",
                   help="logits: one logit per action id from the observation; afterstate: each legal move scored "
                        "by the position it leaves, through one shared net (needs --vec batched; "
                        "training/afterstate_policy.py)")
    g.add_argument("--temperature", type=float, default=2.0,
                   help="an afterstate actor's starting temperature in points (it is learned from there)")
    g.add_argument("--extras", default=None,
                   help="an afterstate actor's extra-input block appended to each afterstate (mulle_env.extras: "
                        "capture-v1 to capture-v4, what the position offers the next capture)")
    g.add_argument("--net", default="256,256", help="hidden layer widths of the policy and value MLPs")
    g.add_argument("--activation", choices=("tanh", "relu"), default="tanh", help="hidden layer activation")
    g.add_argument("--lr", type=float, default=1e-4, help="initial learning rate (decays linearly)")
    g.add_argument("--lr-final", type=float, default=1e-5, help="learning rate at the last step")
    g.add_argument("--n-steps", type=int, default=256, help="steps per env per rollout")
    g.add_argument("--batch-size", type=int, default=512, help="minibatch size of a PPO gradient step")
    g.add_argument("--epochs", type=int, default=4, help="PPO epochs per rollout")
    g.add_argument("--gamma", type=float, default=0.998, help="discount (a game is 96 learner decisions)")
    g.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda (bias/variance of the advantages)")
    g.add_argument("--clip", type=float, default=0.15, help="PPO clip range")
    g.add_argument("--ent-coef", type=float, default=0.002, help="entropy bonus weight (exploration)")
    g.add_argument("--vf-coef", type=float, default=0.5, help="value loss weight")
    g.add_argument("--target-kl", type=float, default=0.03, help="stop an update's epochs early past this KL; 0 = off")
    g = ap.add_argument_group("behaviour-cloning warm start")
    g.add_argument("--bc-games", type=int, default=0, help="teacher games to clone before PPO (0 = no warm start)")
    g.add_argument("--bc-teacher", default="greedy", help="agent spec whose moves are cloned")
    g.add_argument("--bc-opponents", default="greedy,heuristic,heuristic,random", help="teacher's opponents, in turn")
    g.add_argument("--bc-epochs", type=int, default=6, help="passes over the cloned decisions")
    g.add_argument("--bc-lr", type=float, default=1e-3, help="learning rate of the warm start")
    g.add_argument("--bc-workers", type=int, default=2, help="processes playing the teacher's games")
    g.add_argument("--no-bc-augment", action="store_true",
                   help="do not show each cloned decision with clubs and hearts swapped (a symmetry of the rules)")
    g = ap.add_argument_group("checkpoints and evaluation")
    g.add_argument("--checkpoint-every", type=int, default=100_000, help="steps between checkpoints and pool snapshots")
    g.add_argument("--eval-every", type=int, default=100_000, help="steps between evaluations")
    g.add_argument("--eval-games", type=int, default=400, help="games per evaluation (duplicate pairs x 2)")
    g.add_argument("--eval-opponent", default="heuristic", help="agent spec evaluated against")
    g.add_argument("--eval-seed", type=int, default=500_000, help="first deal seed of the evaluation games")


def _net(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--net must be comma-separated widths like 256,256, not {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--net must list positive widths, not {text!r}")
    return sizes


#: (flag, lowest allowed, whether the lowest itself is allowed) of the numeric flags.
_BOUNDS = [
    ("steps", 0, True), ("threads", 1, True), ("envs", 1, True), ("pool_keep", 1, True), ("score_scale", 0, False),
    ("lr", 0, False), ("lr_final", 0, True), ("n_steps", 1, True), ("batch_size", 1, True), ("epochs", 1, True),
    ("gamma", 0, False), ("gae_lambda", 0, True), ("clip", 0, False), ("ent_coef", 0, True), ("vf_coef", 0, True),
    ("target_kl", 0, True), ("bc_games", 0, True), ("bc_epochs", 1, True), ("bc_lr", 0, False),
    ("bc_workers", 1, True), ("checkpoint_every", 1, True), ("eval_every", 1, True), ("eval_games", 2, True),
    ("max_minutes", 0, True), ("temperature", 0, False),
]


def _check_spec(parser: argparse.ArgumentParser, flag: str, spec: str, game: str = "mulle") -> None:
    import agents

    try:
        agents.make(spec) if game == "mulle" else agents.make(spec, game=game)
    except ValueError as exc:  # AgentSpecError names the spec and what is wrong
        parser.error(f"{flag}: {exc}" + ("" if game == "mulle" else f" (--game {game})"))


def _checked(parser: argparse.ArgumentParser, check: Callable[..., object], path: str, flag: str, **kw: Any) -> None:
    """A :mod:`mulle_env.files` check of ``path``; exit 2 with its message."""
    from mulle_env.files import PathError

    try:
        check(path, flag, **kw)
    except PathError as exc:
        parser.error(str(exc))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and validate every argument before anything runs: a bad one exits 2 naming its flag."""
    parser = build_parser()
    apply_game_defaults(parser, list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    check_args(parser, args)
    return args


def _check_memory(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 when ``--envs`` games and a rollout of ``--n-steps`` for each cannot fit in the memory there is.

    ``--vec batched --envs 100000000`` was accepted and built a hundred million opponent pools
    (9 GB and growing) before the vector env's own check could refuse it. The floor counted here:
    each game's state and rows (:func:`mulle_env.vector_env.memory_estimate`) and sb3's rollout
    buffer (an observation, a mask and six floats a step).
    """
    from mulle_env.games import get_game
    from mulle_env.vector_env import available_memory, memory_estimate

    have = available_memory()
    if have is None:
        return
    env_game = get_game(None if args.game == "mulle" else args.game)
    per_step = env_game.obs_size * 4 + env_game.num_actions + 6 * 8
    if getattr(args, "actor", "logits") == "afterstate":  # and each step's afterstate slots
        from mulle_env.extras import extras_size

        from .sb3_vec import AFTERSTATE_SLOTS

        per_step += AFTERSTATE_SLOTS * (env_game.afterstate_size + extras_size(args.extras) + 2) * 4
    need = memory_estimate(args.envs, env_game.obs_size, env_game.num_actions) + rollout_steps(args) * per_step
    if need > have:
        gib = 1024**3
        parser.error(f"--envs {args.envs:,} with --n-steps {args.n_steps:,} needs at least {need / gib:,.1f} GiB "
                     f"(the games and one rollout), more than the {have / gib:,.1f} GiB this machine has available; "
                     "use fewer --envs or --n-steps")


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Validate parsed ``ppo`` flags before anything runs: a bad one exits 2 (``parser.error``) naming its flag."""
    import math

    from mulle_env.files import check_input_path, check_output_dir, check_output_path

    game = getattr(args, "game", "mulle")  # a namespace made before --game existed trains Mulle
    args.game = game

    for dest, low, inclusive in _BOUNDS:
        value = getattr(args, dest)
        flag = "--" + dest.replace("_", "-")
        if isinstance(value, float) and not math.isfinite(value):
            parser.error(f"{flag} must be a finite number, not {value}")
        if value < low or (value == low and not inclusive):
            parser.error(f"{flag} must be {'>=' if inclusive else '>'} {low:g}, not {value:g}")
    for dest in ("gamma", "gae_lambda"):
        if getattr(args, dest) > 1:
            parser.error(f"--{dest.replace('_', '-')} must be at most 1, not {getattr(args, dest):g}")
    if args.eval_games % 2:
        parser.error(f"--eval-games plays duplicate pairs (each deal from both seats), so it must be even, "
                     f"not {args.eval_games}")
    if game != "mulle" and getattr(args, "recipe", None):
        parser.error(f"--recipe {args.recipe}: the ppo recipes are Mulle's (measured there); leave it out with "
                     f"--game {game}")
    if game != "mulle" and args.bc_games:
        parser.error(f"--bc-games: the behaviour-cloning warm start is Mulle's (training/bc.py: its teacher's games, "
                     f"its suit swap); leave it out with --game {game} (PPO then starts from random weights)")
    actor = getattr(args, "actor", "logits")
    args.actor = actor
    if getattr(args, "extras", None) is not None:
        if actor != "afterstate":
            parser.error("--extras is an afterstate actor's input; add --actor afterstate or leave it out")
        from mulle_env.extras import EXTRAS

        if args.extras not in EXTRAS:
            parser.error(f"--extras {args.extras!r} is no extra-input block; the blocks are {', '.join(EXTRAS)}")
    if actor == "afterstate":
        if game != "mulle":
            parser.error(f"--actor afterstate: {game} offers no afterstates yet (Mulle-v0 does); use --actor logits")
        if args.vec != "batched":
            parser.error("--actor afterstate needs --vec batched (the batched env gives each step's afterstates)")
        if SELFPLAY in getattr(args, "opponents", ""):
            parser.error(f"--actor afterstate cannot play --opponents {SELFPLAY} (the network on the other seat would "
                         "need that seat's afterstates); use 'self' (its snapshots) instead")
    if args.lr_final > args.lr:
        parser.error(f"--lr-final {args.lr_final:g} must not exceed --lr {args.lr:g} (the rate decays)")
    _check_memory(parser, args)
    try:
        _net(args.net)
    except ValueError as exc:
        parser.error(str(exc))
    from .pool import SELF, parse_weights

    try:
        weights = parse_weights(args.opponents)
    except ValueError as exc:
        parser.error(f"--opponents: {exc}")
    for spec in weights:
        if spec == SELFPLAY:
            if args.vec != "batched":
                parser.error(f"--opponents {SELFPLAY} needs --vec batched (the network plays the other seat there)")
            if len(weights) > 1:
                parser.error(f"--opponents {SELFPLAY} cannot be mixed with other opponents")
        elif spec != SELF:
            _check_spec(parser, "--opponents", spec, game)
    _check_spec(parser, "--eval-opponent", args.eval_opponent, game)
    if args.bc_games:
        _check_spec(parser, "--bc-teacher", args.bc_teacher)
        if not [s for s in args.bc_opponents.split(",") if s.strip()]:
            parser.error("--bc-opponents must name at least one agent spec")
        for spec in args.bc_opponents.split(","):
            _check_spec(parser, "--bc-opponents", spec.strip())
    if args.init_from:
        if args.resume:
            parser.error("--init-from starts a new run; it cannot be combined with --resume")
        if not Path(args.init_from).exists():
            parser.error(f"--init-from {args.init_from!r} does not exist or is not a file (give a checkpoint .zip "
                         "from an earlier run's checkpoints/ directory)")
        _checked(parser, check_input_path, args.init_from, "--init-from", limit=None)
        if (why := checkpoint_problem(Path(args.init_from))) is not None:
            parser.error(f"--init-from {args.init_from!r} is not a checkpoint of mulle-train ppo: {why} (give a "
                         "step_*.zip from an earlier run's checkpoints/ directory)")
    # The run makes --out-dir with its parents (mkdir -p), so only what is in the way is refused.
    _checked(parser, check_output_dir, args.out_dir, "--out-dir", parents=True)
    out = Path(args.out_dir)
    if args.export:
        _checked(parser, check_output_path, args.export, "--export")
    # Last: the other arguments are known to be good, so this is the only thing left to fix.
    existing = sorted((out / "checkpoints").glob("step_*.zip"))
    state = _run_state(out / "state.json") if args.resume else None
    if state is not None:
        ran = _state_game(state)
        if ran != game:
            parser.error(f"--resume: --out-dir {args.out_dir!r} holds a {ran} run, and this command trains {game} "
                         f"(--game {game}); resume it with --game {ran}, or choose another --out-dir")
        had = _state_actor(state)
        now = (actor, getattr(args, "extras", None))
        if had is not None and had != now:
            def flags(a: tuple[str, str | None]) -> str:
                return f"--actor {a[0]}" + (f" --extras {a[1]}" if a[1] else "")

            parser.error(f"--resume: --out-dir {args.out_dir!r} holds a run of {flags(had)} (its checkpoints' network "
                         f"reads that), and this command asks for {flags(now)}; resume it with {flags(had)}, or "
                         "choose another --out-dir")
    if args.resume and _latest_checkpoint(out / "checkpoints") is None:
        damaged = f"; {len(existing)} there are damaged, the newest {existing[-1].name}" if existing else ""
        parser.error(f"--resume: --out-dir {args.out_dir!r} holds no checkpoint to resume (checkpoints/step_*.zip"
                     f"{damaged}); leave --resume out to start a new run {'elsewhere' if existing else 'there'}")
    # Any checkpoint file, whole or damaged, belongs to another run: a new one never mixes into it.
    if not args.resume and existing:
        parser.error(f"--out-dir {args.out_dir!r} already holds checkpoints; pass --resume to continue them "
                     "or choose another --out-dir")


def _run_state(path: Path) -> dict[str, Any] | None:
    """A run's ``state.json`` as a dict, read once for the resume checks; ``None`` if missing or unreadable (set
    aside, with a line saying so, when the run resumes)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _state_game(state: dict[str, Any]) -> str:
    """The game a run's state says it trains (``"mulle"`` without the entry)."""
    return str(state.get("game", "mulle"))


def _state_actor(state: dict[str, Any]) -> tuple[str, str | None] | None:
    """The ``(--actor, --extras)`` a run's state records (runs made before the entry: logits, none); ``None`` if
    the entry is not a record."""
    actor = state.get("actor", {"actor": "logits", "extras": None})
    if not isinstance(actor, dict):
        return None
    return str(actor.get("actor", "logits")), actor.get("extras")


def rollout_steps(args: argparse.Namespace) -> int:
    """Steps one PPO rollout collects: ``--n-steps`` x ``--envs``; training runs whole rollouts."""
    return int(args.n_steps * args.envs)


def planned_steps(args: argparse.Namespace) -> int:
    """The steps a run trains in all: ``--steps`` rounded up to whole rollouts."""
    rollout = rollout_steps(args)
    return int(-(-args.steps // rollout) * rollout)


def steps_to_train(args: argparse.Namespace, at: int) -> int:
    """The steps a run that stands at step ``at`` still trains: whole rollouts until ``--steps`` is reached.

    sb3 collects whole rollouts while its step count is below the goal, so a resumed run
    trains ``ceil((--steps - at) / rollout)`` rollouts: its end is not ``planned_steps``
    when the checkpoint was written off that grid (an earlier run with other ``--envs``).
    """
    rollout = rollout_steps(args)
    goal: int = args.steps
    return max(0, -(-(goal - at) // rollout) * rollout)


def say(message: str) -> None:
    """Print a log line on stdout without tearing a progress bar (bars are on stderr)."""
    from tqdm import tqdm

    tqdm.write(message, file=sys.stdout)
    sys.stdout.flush()


def _make_env_fn(rank: int, args: argparse.Namespace, snapshot_dir: str, weights: dict[str, float]
                 ) -> Callable[[], Monitor]:
    def make() -> Monitor:
        from stable_baselines3.common.monitor import Monitor

        if args.vec == "subproc":  # this runs in the env's own worker process
            from mulle_env.threads import single_blas_thread

            single_blas_thread()

        from mulle_env.gym_env import MulleEnv

        from .pool import OpponentPool

        game = getattr(args, "game", "mulle")
        if game == "mulle":
            pool = OpponentPool(weights, snapshot_dir=snapshot_dir, keep=args.pool_keep, seed=args.seed * 1009 + rank)
            env = MulleEnv(opponent=pool, reward=args.reward, seat="alternate", score_scale=args.score_scale)
        else:  # the same env given the game's object (Casino-v0 is MulleEnv(game="casino"))
            pool = OpponentPool(weights, snapshot_dir=snapshot_dir, keep=args.pool_keep, seed=args.seed * 1009 + rank,
                                game=game)
            env = MulleEnv(opponent=pool, reward=args.reward, seat="alternate", score_scale=args.score_scale,
                           game=game)
        return Monitor(env)

    return make


def _batched_env(args: argparse.Namespace, snapshot_dir: str, weights: dict[str, float]) -> VecMonitor:
    """The batched vector env as an sb3 VecEnv: a lone agent spec runs as the env's opponent (``random`` inside
    the stepper), a mix gets one :class:`OpponentPool` per game, seeded as the ``dummy`` envs' pools are."""
    from stable_baselines3.common.vec_env import VecMonitor

    from mulle_env.vector_env import SELF_PLAY, MulleVectorEnv

    from .pool import SELF, OpponentPool
    from .sb3_vec import SB3VectorEnv

    live = [s for s, w in weights.items() if w > 0]
    game = getattr(args, "game", "mulle")
    opponent: str | list[OpponentPool]
    if live == [SELFPLAY]:
        opponent = SELF_PLAY
    elif SELFPLAY in weights:
        raise SystemExit(f"mulle-train: --opponents {SELFPLAY} cannot be mixed with other opponents")
    elif len(live) == 1 and live[0] != SELF:
        opponent = live[0]
    else:
        opponent = [OpponentPool(weights, snapshot_dir=snapshot_dir, keep=args.pool_keep, seed=args.seed * 1009 + rank,
                                 game=game)
                    for rank in range(args.envs)]
    venv = MulleVectorEnv(args.envs, opponent=opponent, reward=args.reward, seat="alternate",
                          score_scale=args.score_scale, game=None if game == "mulle" else game)
    from .sb3_vec import AFTERSTATE_SLOTS

    slots = AFTERSTATE_SLOTS if getattr(args, "actor", "logits") == "afterstate" else 0
    return VecMonitor(SB3VectorEnv(venv, afterstate_slots=slots, afterstate_extras=getattr(args, "extras", None)))


#: The members every checkpoint sb3 writes holds (``MaskablePPO.save``); a zip without them is no checkpoint.
CHECKPOINT_MEMBERS = ("data", "policy.pth")


def checkpoint_problem(path: Path) -> str | None:
    """Why ``path`` is not a whole PPO checkpoint (``None``: it is one): not a zip, torn, or without sb3's members.

    Every member's CRC is checked, so a file cut short or damaged anywhere is caught before sb3
    reads it (sb3 would fail with a traceback from inside torch or zipfile).
    """
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            missing = [m for m in CHECKPOINT_MEMBERS if m not in names]
            if missing:
                return f"it lacks {', '.join(missing)}"
            bad = z.testzip()
            if bad is not None:
                return f"its member {bad} is damaged"
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        return f"not a whole zip file ({exc or type(exc).__name__})"
    return None


def _latest_checkpoint(ckpt_dir: Path, set_aside: bool = False) -> Path | None:
    """The newest whole checkpoint in ``ckpt_dir`` (``None``: none).

    A damaged one (a run killed while writing it before checkpoints were written atomically, a
    disk error) is skipped, and with ``set_aside`` renamed to ``*.damaged`` with a line saying so,
    so that a resume takes the newest good checkpoint and loses only the work since it.
    """
    for path in sorted(ckpt_dir.glob("step_*.zip"), reverse=True):
        why = checkpoint_problem(path)
        if why is None:
            return path
        if set_aside:
            aside = path.with_name(path.name + ".damaged")
            path.replace(aside)
            say(f"mulle-train: {path} is damaged ({why}); set aside as {aside.name}, resuming from an older checkpoint")
    return None


def _read_state(path: Path) -> dict[str, Any] | None:
    """The run's ``state.json``, or ``None`` (with the file set aside and a line saying why) when it is unreadable."""
    from mulle_env.util.files import JSONInputError, read_json

    try:
        state = read_json(path, "the run's state.json")
        if not isinstance(state, dict) or not isinstance(state.get("runs", []), list):
            raise JSONInputError(str(path), None, "not a run state (a JSON object with a list of runs)")
    except (JSONInputError, OSError, ValueError) as exc:
        aside = path.with_name(path.name + ".damaged")
        path.replace(aside)
        say(f"mulle-train: {exc}; set aside as {aside.name}: the resumed run keeps its checkpoint's steps but starts "
            "its evaluation history and timing anew")
        return None
    return state


def _command() -> str:
    if sys.argv and sys.argv[0].endswith("mulle-train"):
        return "mulle-train " + " ".join(sys.argv[1:])
    return " ".join(sys.argv)


class PPORun:
    """One ``mulle-train`` run in ``args.out_dir``: its files, state, model and the hooks PPO calls.

    :func:`train` drives it: :meth:`make_model` (resumed, from ``--init-from``, or new with
    the optional warm start), :meth:`learn`, then :meth:`finish` (or :meth:`interrupted`).
    """

    def __init__(self, args: argparse.Namespace) -> None:
        import torch

        from .pool import parse_weights

        torch.set_num_threads(args.threads)
        self.args = args
        self.t_start = time.monotonic()
        from agents.learned.policy import VALUE_SCALE

        #: Whether the policy files carry the critic as their value head: where it predicts what a value head
        #: means (the points still to come / 100), i.e. under --reward score_delta --score-scale 100 (Mulle).
        self.value_head = (getattr(args, "game", "mulle") == "mulle" and args.reward == "score_delta"
                           and args.score_scale == VALUE_SCALE)
        out = self.out = Path(args.out_dir)
        self.ckpt_dir, self.pool_dir, self.log_root = out / "checkpoints", out / "pool", out / "logs"
        for d in (self.ckpt_dir, self.pool_dir, self.log_root):
            d.mkdir(parents=True, exist_ok=True)
        self.state_path = out / "state.json"
        self.weights = parse_weights(args.opponents)
        self.command = _command()
        #: What carries over a resume (``state.json``): the best and last evaluations, time spent, every run.
        self.state: dict[str, Any] = {"best": None, "elapsed_before": 0.0, "runs": []}
        self.latest = _latest_checkpoint(self.ckpt_dir, set_aside=True) if args.resume else None
        self.first_step = 0  # the step this invocation starts from: set by start() once the model is loaded
        if args.resume and self.state_path.is_file():
            self.state = _read_state(self.state_path) or self.state
            self.state.setdefault("runs", [])
            self.state.setdefault("elapsed_before", 0.0)
        self.state["runs"].append({"command": self.command, "started": time.strftime("%Y-%m-%d %H:%M:%S")})
        #: The game trained (``--game``); state.json records it for another game's runs (a resume checks it).
        self.game: str = getattr(args, "game", "mulle")
        if self.game != "mulle":
            self.state["game"] = self.game
        #: The network's kind: a resume with another --actor or --extras is refused (check_args).
        self.state["actor"] = {"actor": getattr(args, "actor", "logits"), "extras": getattr(args, "extras", None)}
        if SELFPLAY in self.weights and args.vec != "batched":
            raise SystemExit(f"mulle-train: --opponents {SELFPLAY} needs --vec batched")
        self.vec_env = self._make_env()
        self.bc_figures: dict[str, Any] | None = self.state.get("bc")
        self._model: MaskablePPO | None = None
        self._eval_log: tuple[TextIO, csv.DictWriter[str]] | None = None
        #: How long the last evaluation took (``--max-minutes`` keeps the final one in hand); a resumed run
        #: starts from the one before it.
        self.eval_seconds = float(self.state.get("eval_seconds", 0.0))

    @property
    def model(self) -> MaskablePPO:
        """The model being trained (:meth:`make_model` makes it)."""
        if self._model is None:
            raise RuntimeError("PPORun.make_model() makes the model first")
        return self._model

    # ----- setting up --------------------------------------------------------------------
    def _make_env(self) -> VecEnv:
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        args = self.args
        if args.vec == "batched":
            return _batched_env(args, str(self.pool_dir), self.weights)
        fns = [_make_env_fn(i, args, str(self.pool_dir), self.weights) for i in range(args.envs)]
        return SubprocVecEnv(fns) if args.vec == "subproc" else DummyVecEnv(fns)

    def _logger(self) -> Logger:
        from stable_baselines3.common.logger import configure

        run_no = len(list(self.log_root.glob("run*")))
        formats = ["csv"]
        try:
            import tensorboard  # noqa: F401

            formats.append("tensorboard")
        except ImportError:
            pass
        return configure(str(self.log_root / f"run{run_no}"), formats)

    def make_model(self) -> None:
        """The model: resumed from the newest checkpoint, or new (from ``--init-from``, or warm-started)."""
        import torch
        from sb3_contrib import MaskablePPO

        args = self.args
        logger = self._logger()
        if self.latest is not None:
            self._model = MaskablePPO.load(self.latest, env=self.vec_env, device="cpu")
            at = int(self.model.num_timesteps)
            more = steps_to_train(args, at)
            say(f"mulle-train: resumed from {self.latest} at step {at:,}: "
                + (f"trains {more:,} more steps, to step {at + more:,}" if more else
                   f"--steps {args.steps:,} is reached, nothing left to train (raise --steps to continue)"))
        else:
            lr: float = args.lr
            lr_final: float = args.lr_final

            def lr_schedule(progress_remaining: float) -> float:
                return lr_final + (lr - lr_final) * progress_remaining

            policy: Any = "MlpPolicy"
            policy_kwargs: dict[str, Any] = {
                "net_arch": {"pi": _net(args.net), "vf": _net(args.net)},
                "activation_fn": torch.nn.Tanh if args.activation == "tanh" else torch.nn.ReLU}
            if getattr(args, "actor", "logits") == "afterstate":
                from .afterstate_policy import AfterstatePolicy

                policy = AfterstatePolicy
                policy_kwargs.update(temperature=args.temperature, extras=args.extras)
            self._model = MaskablePPO(
                policy, self.vec_env, learning_rate=lr_schedule, n_steps=args.n_steps,
                batch_size=args.batch_size, n_epochs=args.epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
                clip_range=args.clip, ent_coef=args.ent_coef, vf_coef=args.vf_coef,
                target_kl=args.target_kl or None, seed=args.seed, device="cpu", verbose=0,
                policy_kwargs=policy_kwargs,
            )
            if args.init_from:
                self._init_from()
            elif args.bc_games > 0:
                self._warm_start()
        self.model.set_logger(logger)
        if args.vec == "batched" and SELFPLAY in self.weights:
            self.vec_env.venv.use_policy(self.model.policy)  # VecMonitor -> SB3VectorEnv: the other seat plays it

    def _init_from(self) -> None:
        args = self.args
        try:
            self.model.set_parameters(args.init_from, exact_match=True, device="cpu")
        except (RuntimeError, ValueError) as exc:  # another game's nets (or other --net widths) do not fit
            raise SystemExit(f"mulle-train: --init-from {args.init_from}: its nets do not fit this run's (--game "
                             f"{self.game}, --net {args.net}): {str(exc).splitlines()[0]}") from None
        self.state["init_from"] = args.init_from
        source_state = Path(args.init_from).resolve().parent.parent / "state.json"
        if source_state.is_file():  # keep the warm start's figures with the policy's history
            self.bc_figures = self.state["bc"] = json.loads(source_state.read_text()).get("bc")
        say(f"mulle-train: weights from {args.init_from}")

    def _warm_start(self) -> None:
        from . import bc

        args = self.args
        after = getattr(args, "actor", "logits") == "afterstate"
        # "afterstates" always: a cache of the other kind is never reused (a logits run cannot read afterstates).
        meta = {"teacher": args.bc_teacher, "opponents": args.bc_opponents, "games": args.bc_games, "seed": args.seed,
                "afterstates": after}
        cache = self.out / "bc_data.npz"
        data = bc.load_data(cache, **meta)
        if data is None:
            data = bc.generate(args.bc_teacher, args.bc_opponents.split(","), args.bc_games, 1_000_000 + args.seed,
                               workers=args.bc_workers, progress=not args.no_progress, afterstates=after)
            bc.save_data(data, cache, **meta)
        t_bc = time.monotonic()
        log_path = self.out / "bc_log.jsonl"  # the epochs' figures for programs; people see the bar or a line each

        def log(f: dict[str, Any]) -> None:
            with log_path.open("a") as fh:
                fh.write(json.dumps(f) + "\n")
            if args.no_progress:
                say(f"mulle-train: warm start epoch {f['epoch']}: held-out accuracy {f['heldout_accuracy']:.1%}, "
                    f"policy loss {f['train_policy_loss']:.3f}")

        figures = bc.pretrain(
            self.model, data, epochs=args.bc_epochs, lr=args.bc_lr, reward=args.reward, score_scale=args.score_scale,
            gamma=args.gamma, seed=args.seed, augment=not args.no_bc_augment, progress=not args.no_progress, log=log,
            extras=getattr(args, "extras", None),
        )
        figures.update(decisions=len(data["action"]), games=args.bc_games, teacher=args.bc_teacher,
                       seconds=round(time.monotonic() - t_bc, 1))
        self.bc_figures = self.state["bc"] = figures
        say(f"mulle-train: warm start: {figures['decisions']:,} decisions of {args.bc_teacher}'s {args.bc_games} games "
            f"cloned in {figures['seconds']:.0f} s, held-out accuracy {figures['heldout_accuracy']:.1%} "
            f"(every epoch in {log_path})")

    def open_eval_log(self) -> None:
        """Open ``eval.csv`` for appending (its header on a new file)."""
        eval_path = self.out / "eval.csv"
        new_eval_file = not eval_path.is_file()
        fh = open(eval_path, "a", newline="")  # noqa: SIM115 - written by the hooks, closed in close()
        writer = csv.DictWriter(fh, fieldnames=EVAL_FIELDS)
        if new_eval_file:
            writer.writeheader()
        self._eval_log = fh, writer

    # ----- what the hooks do -------------------------------------------------------------
    def elapsed(self) -> float:
        """Training seconds over every run that resumed this one."""
        return float(self.state["elapsed_before"]) + time.monotonic() - self.t_start

    def metadata(self, evaluation: dict[str, Any] | None) -> dict[str, Any]:
        """The metadata a policy file of this run carries."""
        args, model = self.args, self.model
        return {**({} if self.game == "mulle" else {"game": self.game}),
            "command": self.command, "timesteps": int(model.num_timesteps), "seed": args.seed,
            "training_seconds": round(self.elapsed(), 1), "evaluation": evaluation, "bc": self.bc_figures,
            "net": args.net, "activation": args.activation, "reward": args.reward, "opponents": args.opponents,
            "init_from": args.init_from or None, "trainer": "sb3-contrib MaskablePPO",
            "created": time.strftime("%Y-%m-%d %H:%M:%S"), **self._actor_metadata(),
        }

    def _actor_metadata(self) -> dict[str, Any]:
        """An afterstate actor's settings and its learned temperature (points); nothing for a logits actor."""
        policy = self.model.policy
        if getattr(self.args, "actor", "logits") != "afterstate" or not hasattr(policy, "log_temperature"):
            return {}
        return {"actor": "afterstate", "extras": self.args.extras,
                "temperature_points": round(float(policy.log_temperature.detach().exp()), 4)}

    def evaluate(self) -> dict[str, Any]:
        """A duplicate match of the current policy against ``--eval-opponent``; keeps the best as ``best.npz``."""
        from agents.learned.agent import LearnedAgent
        from agents.learned.casino import CasinoLearnedAgent
        from agents.learned.policy import save_policy

        from .evaluate import duplicate_match
        from .export import policy_from_sb3
        from .games import train_game

        if self._eval_log is None:
            raise RuntimeError("PPORun.open_eval_log() opens eval.csv before the first evaluation")
        fh, writer = self._eval_log
        args, model = self.args, self.model
        t_eval = time.monotonic()
        if self.game == "mulle":
            pol = policy_from_sb3(model.policy, value=self.value_head)
            res = duplicate_match(LearnedAgent.from_policy(pol), args.eval_opponent, args.eval_games, args.eval_seed)
        else:
            pol = policy_from_sb3(model.policy, game=self.game)
            # As `learned:path=` plays the exported file: the last deal solved (agents/casino/endgame.py).
            agent = CasinoLearnedAgent.from_policy(pol, endgame=True)
            res = duplicate_match(agent, args.eval_opponent, args.eval_games, args.eval_seed, game=self.game)
        res.update(timesteps=int(model.num_timesteps),
                   games_trained=int(model.num_timesteps) // train_game(self.game).decisions,
                   elapsed_s=round(self.elapsed(), 1))
        writer.writerow({k: res.get(k) for k in EVAL_FIELDS})
        fh.flush()
        self.eval_seconds = self.state["eval_seconds"] = time.monotonic() - t_eval
        for k in ("score", "score_low", "mean_diff"):
            model.logger.record(f"eval/{k}", res[k])
        say(f"mulle-train: eval at {res['timesteps']} steps vs {res['opponent']}: score {res['score']:.3f} "
            f"[{res['score_low']:.3f}, {res['score_high']:.3f}] W/D/L {res['wins']}/{res['draws']}/{res['losses']} "
            f"mean diff {res['mean_diff']:+.1f}")
        self.state["last_eval"] = res
        best = self.state.get("best")
        if best is None or res["score"] > best["score"]:
            pol.metadata = self.metadata(res)
            save_policy(pol, self.out / "best.npz")
            self.state["best"] = res
        return res

    def checkpoint(self) -> None:
        """A resumable checkpoint, a numpy snapshot for the pool, and ``state.json``."""
        from agents.learned.policy import save_policy
        from mulle_env.util.files import replacing

        from .export import policy_from_sb3

        n = int(self.model.num_timesteps)
        # Each file whole or absent (a kill -9 while saving once left a 0-byte step_*.zip that --resume chose).
        with replacing(self.ckpt_dir / f"step_{n:010d}.zip") as tmp, open(tmp, "wb") as fh:
            self.model.save(fh)
        save_policy(policy_from_sb3(self.model.policy, self.metadata(None), self.game, value=self.value_head),
                    self.pool_dir / f"step_{n:010d}.npz")
        self.state["timesteps"] = n
        with replacing(self.state_path) as tmp:
            tmp.write_text(json.dumps({**self.state, "elapsed_before": self.elapsed()}, indent=1))

    def hooks(self) -> BaseCallback:
        """The sb3 callback: progress bar, evaluations and checkpoints at rollout starts, ``--max-minutes``."""
        from stable_baselines3.common.callbacks import BaseCallback

        run, args = self, self.args

        class Hooks(BaseCallback):
            def __init__(self) -> None:
                super().__init__()
                self.bar: tqdm | None = None
                self.next_ckpt = self.next_eval = 0
                # What --max-minutes keeps in hand: the last PPO update's and evaluation's seconds (a stop
                # mid-rollout still waits for nothing, but an update once begun runs to its end, and the
                # final evaluation follows the stop).
                self.rollout_end: float | None = None
                self.update_s = 0.0

            def _on_training_start(self) -> None:
                n = self.model.num_timesteps
                self.next_ckpt = (n // args.checkpoint_every + 1) * args.checkpoint_every
                self.next_eval = (n // args.eval_every + 1) * args.eval_every
                if not args.no_progress:
                    from tqdm import tqdm

                    # The real count: PPO trains whole rollouts, so --steps is rounded up to one.
                    self.bar = tqdm(total=n + steps_to_train(args, n), initial=n, unit="step", desc="ppo",
                                    dynamic_ncols=True, mininterval=2.0)

            def _on_rollout_end(self) -> None:
                self.rollout_end = time.monotonic()

            def _on_rollout_start(self) -> None:
                # Here the policy has been trained on every step counted so far, so an
                # evaluation or checkpoint labelled with num_timesteps is exactly that policy.
                if self.rollout_end is not None:
                    self.update_s = time.monotonic() - self.rollout_end
                n = self.model.num_timesteps
                if n >= self.next_eval:
                    self.next_eval = (n // args.eval_every + 1) * args.eval_every
                    run.evaluate()
                if n >= self.next_ckpt:
                    self.next_ckpt = (n // args.checkpoint_every + 1) * args.checkpoint_every
                    run.checkpoint()

            def _on_step(self) -> bool:
                n = self.model.num_timesteps
                if self.bar is not None:
                    self.bar.update(n - self.bar.n)
                if args.max_minutes:
                    in_hand = self.update_s + run.eval_seconds  # the next update and the final evaluation
                    if time.monotonic() - run.t_start + in_hand > 60 * args.max_minutes:
                        say(f"mulle-train: --max-minutes {args.max_minutes:g} reached at step {n} (stopping "
                            f"{in_hand:.0f} s early, for the last update and the final evaluation)")
                        return False
                return True

            def _on_training_end(self) -> None:
                if self.bar is not None:
                    self.bar.close()

        return Hooks()

    # ----- running -----------------------------------------------------------------------
    def start(self) -> None:
        """The first pool snapshot when ``self`` plays, and a fresh run's evaluation of its starting point."""
        from agents.learned.policy import save_policy

        from .export import policy_from_sb3
        from .pool import SELF

        model = self.model
        self.first_step = int(model.num_timesteps)  # where this invocation starts (a resumed run's checkpoint)
        if self.weights.get(SELF, 0) > 0 and not list(self.pool_dir.glob("*.npz")):
            # 'self' plays earlier snapshots; on a fresh run the first one is the starting policy.
            first = self.pool_dir / f"step_{int(model.num_timesteps):010d}.npz"
            save_policy(policy_from_sb3(model.policy, self.metadata(None), self.game), first)
        if self.latest is None:
            self.evaluate()  # the starting point (after the warm start, if any) is a candidate too

    def learn(self) -> None:
        """PPO until ``--steps`` (whole rollouts)."""
        model = self.model
        remaining = self.args.steps - model.num_timesteps
        if remaining > 0:
            model.learn(total_timesteps=remaining, callback=self.hooks(), reset_num_timesteps=self.latest is None,
                        progress_bar=False)

    def interrupted(self) -> None:
        """Ctrl-C or SIGTERM: save a checkpoint, close the files; the same command with ``--resume`` continues."""
        say(f"mulle-train: interrupted at step {int(self.model.num_timesteps)}; saving a checkpoint")
        self.checkpoint()
        self.close()
        say(f"mulle-train: checkpoint saved in {self.ckpt_dir}; continue with the same command and --resume")

    def finish(self) -> dict[str, Any]:
        """The final evaluation and checkpoint, ``--export`` and ``summary.json``; returns the summary."""
        args, model = self.args, self.model
        last: dict[str, Any] = self.state.get("last_eval") or {}
        final = last if last.get("timesteps") == int(model.num_timesteps) else self.evaluate()
        self.checkpoint()
        self.close()
        summary = {"timesteps": int(model.num_timesteps), "elapsed_s": round(self.elapsed(), 1),
                   "timesteps_this_run": int(model.num_timesteps) - self.first_step, "final": final,
                   "best": self.state["best"], "best_path": str(self.out / "best.npz"), "bc": self.bc_figures}
        if args.export:
            shutil.copyfile(self.out / "best.npz", args.export)
            summary["exported"] = args.export
        (self.out / "summary.json").write_text(json.dumps(summary, indent=1))
        say(summary_text(summary, self.out))
        return summary

    def close(self) -> None:
        """Close the evaluation log and the environments."""
        if self._eval_log is not None:
            self._eval_log[0].close()
        self.vec_env.close()


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the pipeline described in the module docstring; return a summary dict."""
    _import_training_stack()
    run = PPORun(args)
    run.make_model()
    run.open_eval_log()
    run.start()
    try:
        run.learn()
    except KeyboardInterrupt:
        run.interrupted()
        raise
    except BrokenPipeError:
        from mulle_env.util.pipes import silence_stdout, stdout_reader_gone

        if not stdout_reader_gone():
            raise  # a worker's pipe (a dead subprocess env), not the reader's: a crash, reported as one
        # `mulle-train ppo ... | head`: keep the work as Ctrl-C does (its notes go nowhere now; the entry point
        # says on stderr how to continue).
        silence_stdout()
        run.interrupted()
        raise
    return run.finish()


def summary_text(summary: dict[str, Any], out: Path) -> str:
    """The end-of-run summary for people (``summary.json`` holds the same figures for programs)."""

    def ev(e: dict[str, Any] | None) -> str:
        if not e:
            return "not evaluated"
        return (f"score {e['score']:.3f} [{e['score_low']:.3f}, {e['score_high']:.3f}] against {e['opponent']} "
                f"over {e['games']} games (W/D/L {e['wins']}/{e['draws']}/{e['losses']}), "
                f"mean score difference {e['mean_diff']:+.1f}, at step {e['timesteps']}")

    lines = [
        "mulle-train: done",
        f"  steps trained   {summary['timesteps']} in {summary['elapsed_s']:.0f} s"
        + ("" if summary.get("timesteps_this_run", summary["timesteps"]) == summary["timesteps"] else
           f" over every run in {out} ({summary['timesteps_this_run']} in this one)"),
        f"  final policy    {ev(summary['final'])}",
        f"  best policy     {ev(summary['best'])}",
        f"  best saved as   {summary['best_path']}",
    ]
    if summary.get("exported"):
        lines.append(f"  exported to     {summary['exported']}")
    lines.append(f"  figures         {out / 'summary.json'}, {out / 'eval.csv'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``mulle-train ppo``'s flags alone: 0 done, 2 bad arguments or no torch, 130 Ctrl-C, 143 SIGTERM.

    An interrupted run saves a checkpoint first; the same command with ``--resume`` continues.
    """
    parser = build_parser()
    apply_game_defaults(parser, list(sys.argv[1:] if argv is None else argv))
    return run_command(parser, parser.parse_args(argv))


def run_command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check the parsed flags (exit 2 naming a bad one) and train: :func:`main` after parsing."""
    from arena.shutdown import TerminateAsInterrupt

    with TerminateAsInterrupt() as stop:
        try:
            check_args(parser, args)
            if args.resume:
                # The newest checkpoint's step count is read when the model loads (make_model says it).
                say(f"mulle-train: PPO to step {planned_steps(args):,} at most (--steps {args.steps:,}) into "
                    f"{args.out_dir}, resuming its newest checkpoint")
            else:
                total = planned_steps(args)
                from .games import train_game

                if getattr(args, "recipe", None):
                    from .recipes import ppo_recipe_defaults

                    say(f"mulle-train: recipe {args.recipe}: " + ", ".join(
                        f"--{k.replace('_', '-')} {getattr(args, k)}" for k in ppo_recipe_defaults(args.recipe)))

                tg = train_game(getattr(args, "game", "mulle"))
                say(f"mulle-train: PPO for {total:,} steps (--steps {args.steps:,}; a game is about {tg.decisions} "
                    f"learner decisions) into {args.out_dir}" + ("" if tg.name == "mulle" else f", {tg.title}"))
                if args.steps % rollout_steps(args):
                    say(f"mulle-train: note: PPO trains whole rollouts of --n-steps {args.n_steps} x --envs "
                        f"{args.envs} = {rollout_steps(args)} steps, so --steps {args.steps} trains {total} steps")
            train(args)
        except TrainingDependencyError as exc:
            print(f"mulle-train: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("mulle-train: interrupted", file=sys.stderr)
            return stop.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
