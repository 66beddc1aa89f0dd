"""Deep Monte-Carlo fine-tuning of an afterstate net by self-play.

The teacher data of :mod:`training.teacher` values moves by short searches
(``pimc`` rolls out four plies; ``netsearch`` looks two plies ahead of the net), so a
net fitted to it knows what the next few plies bring and little of what decides a set
later: the card-count bonus of the set's end, the last capture, a build kept for
later. Deep Monte-Carlo (as in DouZero) learns that from the games themselves: the
net plays itself (``epsilon`` of its moves at random, so every move keeps being
tried), and the afterstate of every move it chose learns the points that actually
came after it::

    target(move) = the set's final score difference - banked after the move   (points, mover's seat)

which is the same quantity the teacher's values estimate (``value - banked``), over
the whole rest of the set instead of a few plies. Each later set starts afresh, so
points of later sets are not counted. The net starts from a fitted afterstate file
(``init_from``); a round plays ``games_per_round`` games with the round's weights in
``workers`` processes, then takes one squared-error pass over the round's moves.

Opponents: game ``g`` of a round is played against ``opponents[(g // 2) % len]``
(``"self"``: the net in both seats, both recorded; any agent spec, e.g. ``greedy`` or
a past generation ``learned:path=...``: only the net's seat is recorded), the net in
seat ``g % 2``. Deals and every random draw are fixed by ``seed``, the round and the
game index, so the games do not depend on the number of workers. The checkpoint
(weights, optimizer, round, history) is written after every round and the policy
file with it, so a run stopped at any moment resumes from its last round and always
leaves a playable file. torch is imported only inside the functions that train.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from agents.base import Agent
from agents.learned.afterstate import encode_afterstates
from agents.learned.policy import VALUE_SCALE, MLPPolicy, load_policy, save_policy
from mulle_env.engine import Match
from mulle_env.observation import OBS_DTYPE, OBS_SIZE

from .fitloop import gradient_step, save_checkpoint
from .teacher import stable_digest
from .workers import WorkerPool, process_pool

if TYPE_CHECKING:
    from tqdm import tqdm

    from mulle_env.engine import GameState, Move, PlayerView

    #: What the games of a round give: ``(afterstates float16, targets float32 (points), stats)``.
    RoundGames = tuple[NDArray[np.float16], NDArray[np.float32], dict[str, Any]]

__all__ = ["SELF", "DMCConfig", "ExploringAfterstateAgent", "finetune_dmc", "game_rng", "game_seed", "play_games",
           "round_line", "rounds_log_path"]

#: The opponent name for "the net in both seats".
SELF = "self"


class DMCConfig(dict[str, Any]):
    """The settings of a DMC fine-tune (a dict: stored as JSON in checkpoints and metadata).

    Keys and defaults: ``rounds`` 20, ``games_per_round`` 1000, ``epsilon`` 0.03 (the
    share of random moves), ``lr`` 1e-4 (Adam, constant), ``batch_size`` 1024,
    ``weight_decay`` 1e-5, ``augment`` True (clubs and hearts swapped in half the
    rows), ``opponents`` ["self"], ``seed`` 0.
    """

    DEFAULTS: ClassVar[dict[str, Any]] = {
        "rounds": 20, "games_per_round": 1000, "epsilon": 0.03, "lr": 1e-4, "batch_size": 1024,
        "weight_decay": 1e-5, "augment": True, "opponents": [SELF], "seed": 0,
    }

    def __init__(self, **kw: Any) -> None:
        unknown = set(kw) - set(self.DEFAULTS)
        if unknown:
            raise ValueError(f"unknown DMC settings {sorted(unknown)}; known: {sorted(self.DEFAULTS)}")
        super().__init__({**self.DEFAULTS, **kw})
        if isinstance(self["opponents"], str):
            raise ValueError(f"opponents must be a list of agent specs, not the string {self['opponents']!r}")
        self["opponents"] = [str(o) for o in self["opponents"]] or [SELF]
        for key in ("rounds", "games_per_round", "batch_size"):
            if int(self[key]) < 1:
                raise ValueError(f"{key} must be >= 1, not {self[key]!r}")
        if not 0.0 <= float(self["epsilon"]) <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], not {self['epsilon']!r}")
        if not float(self["lr"]) > 0:
            raise ValueError(f"lr must be > 0, not {self['lr']!r}")
        if not float(self["weight_decay"]) >= 0:
            raise ValueError(f"weight_decay must be >= 0, not {self['weight_decay']!r}")
        if int(self["seed"]) < 0:
            raise ValueError(f"seed must be >= 0, not {self['seed']!r}")


def game_seed(seed: int, rnd: int, game: int) -> int:
    """The deal seed of game ``game`` of round ``rnd`` (53 bits, stable everywhere)."""
    return stable_digest("dmc-deal", seed, rnd, game) >> 11


def game_rng(seed: int, rnd: int, game: int, seat: int) -> random.Random:
    """The random stream of seat ``seat`` in game ``game`` of round ``rnd``."""
    return random.Random(stable_digest("dmc-rng", seed, rnd, game, seat))


class ExploringAfterstateAgent(Agent):
    """Plays an afterstate net's best move, a random one with probability ``epsilon``; records its moves.

    ``records`` collects ``(afterstate float16 (OBS_SIZE,), banked after the move, seat,
    set number)`` for every decision of a seat in ``record_seats`` with more than one
    legal move (``set_no`` as the view counts it, from 1).
    """

    name = "dmc"
    spec = "dmc"

    def __init__(self, policy: MLPPolicy, epsilon: float, record_seats: Sequence[int] = (0, 1)) -> None:
        if policy.head != "afterstate":
            raise ValueError("DMC fine-tunes afterstate nets (policy head 'afterstate'), "
                             f"not a {policy.head!r} net")
        self.policy = policy
        self.epsilon = float(epsilon)
        self.record_seats = tuple(record_seats)
        self.records: list[tuple[np.ndarray, float, int, int]] = []
        self._buf = np.empty((64, OBS_SIZE), dtype=OBS_DTYPE)

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        """The net's best move, or with probability ``epsilon`` a uniformly random one."""
        if len(legal_moves) == 1:
            return legal_moves[0]
        if len(legal_moves) > self._buf.shape[0]:
            self._buf = np.empty((len(legal_moves), OBS_SIZE), dtype=OBS_DTYPE)
        obs, banked = encode_afterstates(view, legal_moves, self._buf)
        if rng.random() < self.epsilon:
            i = rng.randrange(len(legal_moves))
        else:
            score = banked + self.policy.points_to_come(obs)
            i = int(np.argmax(score))
        if view.player in self.record_seats:
            self.records.append((obs[i].astype(np.float16), float(banked[i]), view.player, view.set_no))
        return legal_moves[i]


def _set_diffs(state: GameState, player: int) -> list[float]:
    """The score difference for ``player`` at the end of each set (cumulative, as ``set_value`` counts)."""
    out: list[float] = []
    acc = 0.0
    for sheets in state.sheets:
        acc += sheets[player]["total"] - sheets[1 - player]["total"]
        out.append(acc)
    return out


def play_games(policy: MLPPolicy, seed: int, rnd: int, games: Sequence[int], epsilon: float,
               opponents: Sequence[str], rules: dict[str, Any] | None = None) -> RoundGames:
    """Play games ``games`` of round ``rnd``; return ``(afterstates float16, targets float32, stats)``.

    Targets are in points (see the module docstring). ``stats`` sums the recorded
    decisions and the net's score difference in its games against each opponent.
    ``rules`` changes ruleset flags (e.g. ``{"sets": 1}`` for short games in tests).
    """
    import agents

    obs: list[NDArray[np.float16]] = []
    target: list[float] = []
    stats: dict[str, Any] = {"decisions": 0, "games": 0, "vs": {}}
    # Built once per call: a learned:path= opponent must not reload its file every game.
    made = {o: agents.make(o) for o in set(opponents) if o != SELF}
    for g in games:
        opp = opponents[(g // 2) % len(opponents)]
        seat = g % 2
        if opp == SELF:
            bot = ExploringAfterstateAgent(policy, epsilon)
            seats: list[Agent] = [bot, bot]
        else:
            bot = ExploringAfterstateAgent(policy, epsilon, record_seats=(seat,))
            other = made[opp]
            seats = [bot, other] if seat == 0 else [other, bot]
        match = Match(seed=game_seed(seed, rnd, g), ruleset=rules)
        rngs = [game_rng(seed, rnd, g, p) for p in (0, 1)]
        result = match.play_out(seats, rngs)
        diffs = [_set_diffs(match.state, p) for p in (0, 1)]
        for x, banked, p, set_no in bot.records:
            obs.append(x)
            target.append(diffs[p][set_no - 1] - banked)  # set_no counts from 1
        stats["decisions"] += len(bot.records)
        stats["games"] += 1
        if opp != SELF:
            vs = stats["vs"].setdefault(opp, [0, 0.0])
            vs[0] += 1
            vs[1] += result.scores[seat] - result.scores[1 - seat]
    x = np.stack(obs) if obs else np.zeros((0, OBS_SIZE), dtype=np.float16)
    return x, np.asarray(target, dtype=np.float32), stats


def _merge(stats: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"decisions": 0, "games": 0, "vs": {}}
    for s in stats:
        out["decisions"] += s["decisions"]
        out["games"] += s["games"]
        for k, (n, d) in s["vs"].items():
            v = out["vs"].setdefault(k, [0, 0.0])
            v[0] += n
            v[1] += d
    return out


def _round_games(policy: MLPPolicy, cfg: DMCConfig, rnd: int, workers: int,
                 pool: ProcessPoolExecutor | None) -> RoundGames:
    n = int(cfg["games_per_round"])
    # Contiguous chunks, concatenated in game order: the data does not depend on workers.
    chunks = [list(range(k * n // workers, (k + 1) * n // workers)) for k in range(workers)]
    fixed = (int(cfg["seed"]), rnd)
    rest = (float(cfg["epsilon"]), cfg["opponents"])
    if pool is None:
        parts = [play_games(policy, *fixed, c, *rest) for c in chunks]
    else:
        parts = [f.result() for f in [pool.submit(play_games, policy, *fixed, c, *rest) for c in chunks]]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            _merge([p[2] for p in parts]))


def rounds_log_path(out: str | Path) -> Path:
    """Where :func:`finetune_dmc` appends each round's figures, one JSON object a line: ``<out>.rounds.jsonl``."""
    return Path(str(out) + ".rounds.jsonl")


def round_line(fig: dict[str, Any]) -> str:
    """One round's figures for people (the same figures go to :func:`rounds_log_path` as JSON)."""
    vs = ", ".join(f"{v:+.1f} points a game against {k[len('points_vs_'):]}" for k, v in fig.items()
                   if k.startswith("points_vs_"))
    return (f"round {fig['round']}: {fig['games']} games, {fig['decisions']:,} decisions, loss {fig['loss']:.4f}"
            + (f", {vs}" if vs else "") + f" ({fig['game_seconds']:.0f} s of games)")


def finetune_dmc(init_from: str | Path, out: str | Path, config: DMCConfig | None = None,
                 checkpoint: str | Path | None = None, workers: int = 1, threads: int = 1,
                 progress: bool = True, log: Callable[[dict[str, Any]], None] | None = None,
                 metadata: dict[str, Any] | None = None, max_seconds: float | None = None) -> dict[str, Any]:
    """Fine-tune the afterstate net ``init_from`` by DMC self-play; write the policy file ``out``.

    Runs ``config["rounds"]`` rounds (see the module docstring), resuming from
    ``checkpoint`` (default ``<out>.ckpt.pt``); raising ``rounds`` continues a finished
    run. ``max_seconds`` bounds the rounds' time (over every resume): a round starts only
    while the rounds done and one more, as long as the last one took, fit in it. Each
    round's figures are appended to :func:`rounds_log_path` (one JSON object a line) and
    passed to ``log``; the progress bar shows the loss and the points of the last round.
    A checkpoint of another run (other settings or another starting net) is refused
    with a ``ValueError`` naming the difference, never overwritten, and so is
    an ``out`` that is the starting file. The policy file is rewritten after every
    round. A net that reads an extra-input block (``capture-v3``, the shipped net's) is
    fine-tuned with it: the block is computed from each afterstate, after the suit swap.
    Returns the last round's figures.
    """
    import torch

    from mulle_env.extras import with_extras

    from .afterfit import _build, _load_numpy, to_policy
    from .bc import suit_swap_permutations

    cfg = config or DMCConfig()
    if Path(out).resolve() == Path(init_from).resolve():
        raise ValueError(f"out {str(out)!r} is the starting file: write the fine-tuned net elsewhere "
                         "(a resume checks that the start is unchanged)")
    start = load_policy(init_from)
    if start.head != "afterstate":
        raise ValueError(f"{init_from}: DMC fine-tunes afterstate nets, this file holds a {start.head!r} net")
    extras = start.extras
    if workers < 1:
        raise ValueError(f"workers must be >= 1, not {workers}")
    torch.set_num_threads(threads)
    hidden = list(start.hidden_sizes)
    activation = start.activation
    net = _build({"seed": cfg["seed"], "hidden": hidden, "activation": activation, "extras": extras})
    _load_numpy(net, start, extras)
    opt = torch.optim.AdamW(net.parameters(), lr=float(cfg["lr"]), weight_decay=float(cfg["weight_decay"]))
    ckpt = Path(checkpoint) if checkpoint else Path(str(out) + ".ckpt.pt")
    # Not the number of rounds (raising it continues a finished run), nor the start's path (its fingerprint).
    settings = {k: v for k, v in cfg.items() if k != "rounds"}
    key = json.loads(json.dumps({"config": settings, "init_fingerprint": start.fingerprint()}))
    rnd, elapsed = 0, 0.0
    round_seconds = 0.0  # the last round's time, the estimate of the next one's under max_seconds
    history: list[dict[str, Any]] = []
    if ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        if state.get("key") != key:
            # Starting afresh would overwrite rounds of work: say what differs instead.
            old = state.get("key") or {}
            diff = [f"{k}: {old.get('config', {}).get(k)!r} there, {v!r} now" for k, v in settings.items()
                    if old.get("config", {}).get(k) != v]
            if old.get("init_fingerprint") != key["init_fingerprint"]:
                diff.append("the starting net differs")
            what = "; ".join(diff) or "other settings"
            raise ValueError(f"checkpoint {str(ckpt)!r} belongs to another run ({what}); "
                             "use the same settings to resume, or another --out/--checkpoint")
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        rnd, history, elapsed = state["round"], state["history"], state["elapsed"]
        round_seconds = float(state.get("round_seconds", 0.0))  # absent from checkpoints written before it
    obs_perm = suit_swap_permutations()[0] if cfg["augment"] else None

    def meta_now() -> dict[str, Any]:
        return {"trainer": "training.dmc", "config": dict(cfg), "init_from": str(init_from),
                "init_fingerprint": start.fingerprint(), "rounds_done": rnd, "history": history,
                "dmc_seconds": round(elapsed, 1), **(metadata or {})}

    def policy_now() -> MLPPolicy:
        return to_policy(net, activation, meta_now(), extras=extras)

    bs = int(cfg["batch_size"])
    # The net writes points / VALUE_SCALE; the loss is reported in (points / 10)^2, as the fits do.
    scale = (VALUE_SCALE / 10.0) ** 2
    bar: tqdm | None = None
    if progress:
        from tqdm import tqdm

        # Under a time budget (mulle-train exploit --hours) the rounds it allows are not known ahead.
        bar = tqdm(total=int(cfg["rounds"]) if max_seconds is None else None, initial=rnd, unit="round",
                   desc="dmc" if max_seconds is None else f"dmc ({max_seconds / 60:.1f} min)", dynamic_ncols=True)
    stack = ExitStack()
    if bar is not None:
        stack.callback(bar.close)
    # Entered, the pool ends its workers if the rounds are left by an exception (Ctrl-C, SIGTERM): the
    # finished rounds are saved, the running round's games are lost either way.
    pool: WorkerPool | None = stack.enter_context(process_pool(workers)) if workers > 1 else None
    t0 = time.monotonic()
    with stack:
        # Under a budget a round that would end past it is not started: the last one's time is the estimate.
        while rnd < int(cfg["rounds"]) and (max_seconds is None or elapsed + round_seconds < max_seconds):
            net.eval()
            policy = to_policy(net, activation, extras=extras)
            tg = time.monotonic()
            x16, target, stats = _round_games(policy, cfg, rnd, workers, pool)
            game_seconds = time.monotonic() - tg
            net.train()
            order = np.random.default_rng([int(cfg["seed"]), rnd]).permutation(len(target))
            y = torch.from_numpy(target / VALUE_SCALE)
            losses: list[float] = []
            for b in range(0, len(order), bs):
                rows = np.sort(order[b : b + bs])
                x = x16[rows].astype(np.float32)
                if obs_perm is not None:
                    flip = np.random.default_rng([int(cfg["seed"]), rnd, b]).random(len(rows)) < 0.5
                    x[flip] = x[flip][:, obs_perm]
                pred = net(torch.from_numpy(with_extras(x, extras)))[:, 0]
                loss = torch.mean((pred - y[rows]) ** 2) * scale
                gradient_step(net, opt, loss)
                losses.append(float(loss.detach()))
            rnd += 1
            fig: dict[str, Any] = {"round": rnd, "games": stats["games"], "decisions": stats["decisions"],
                   "loss": round(float(np.mean(losses)) if losses else float("nan"), 4),
                   "mean_target_points": round(float(target.mean()) if len(target) else 0.0, 3),
                   "game_seconds": round(game_seconds, 1)}
            for opp, (n, d) in sorted(stats["vs"].items()):
                fig[f"points_vs_{opp}"] = round(d / n, 2)
            now = time.monotonic()
            round_seconds = now - t0
            history.append(fig)
            elapsed += now - t0
            t0 = now
            net.eval()
            save_policy(policy_now(), out)
            save_checkpoint({"key": key, "net": net.state_dict(), "opt": opt.state_dict(), "round": rnd,
                             "history": history, "elapsed": elapsed, "round_seconds": round_seconds}, ckpt)
            with rounds_log_path(out).open("a") as fh:
                fh.write(json.dumps(fig) + "\n")
            if bar is not None:
                bar.update(1)
                bar.set_postfix({k.replace("points_vs_", "vs "): v for k, v in fig.items()
                                 if k == "loss" or k.startswith("points_vs_")})
            if log is not None:
                log(fig)
    if not Path(out).is_file():
        # Nothing left to run and no file (e.g. it was deleted): write the checkpoint's net.
        net.eval()
        save_policy(policy_now(), out)
    return {**(history[-1] if history else {}), "dmc_seconds": round(elapsed, 1)}
