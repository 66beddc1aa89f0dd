"""Warm start by behaviour cloning: record a teacher's moves, fit the policy to them.

PPO from a random policy needs far more games than a 2-core budget allows to learn
even the basics (capture when you can, never hand the opponent a mulle). Cloning a
cheap, decent teacher first (``greedy`` by default: it beats ``heuristic`` about 70%
of the time at under 1 ms a move) puts the policy near the teacher's level in a few
minutes; PPO then improves on it against the opponent pool.

:func:`generate` (numpy only) plays teacher games in worker processes and returns the
teacher's decisions: observation, legal action ids, chosen id, and the game's final
score difference from the teacher's seat. :func:`pretrain` (torch) fits the policy
network with the masked cross-entropy of the teacher's moves and the value network
to the (discounted) final reward, so PPO starts with a critic that already knows
what positions are worth.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from agents.match import play_agents
from mulle_env import codec
from mulle_env.afterstates import write_afterstates
from mulle_env.observation import OBS_SIZE, encode_state

from .workers import process_pool

if TYPE_CHECKING:  # torch, sb3-contrib and tqdm are imported where they are used; to mypy they are Any
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from torch import Tensor
    from tqdm import tqdm

    from mulle_env.engine import GameState, Move

    from .teacher import Arrays

    #: A batch of :func:`pretrain`: observations, legal-action mask, the teacher's actions, value targets.
    Batch = tuple[Tensor, NDArray[np.bool_], Tensor, Tensor]

__all__ = ["MAX_LEGAL", "generate", "load_data", "pretrain", "save_data", "value_targets"]

#: Legal-move lists are stored padded to this length (-1 = padding); larger ones are truncated to the teacher's move
#: plus the first others, which never happens in practice (about 50 legal moves at most).
MAX_LEGAL = 96


def _play(args: tuple[str, str, int, int] | tuple[str, str, int, int, bool]) -> Arrays:
    """One game of ``teacher`` (seat ``seat``) against ``opponent``; the teacher's recorded decisions.

    With a fifth element ``True``, each decision's afterstates too (:func:`generate`).
    """
    import agents

    teacher_spec, opp_spec, seed, seat = args[:4]
    with_after = len(args) > 4 and bool(args[4])
    after: list[NDArray[np.float16]] = []
    banked: list[NDArray[np.float32]] = []
    both = teacher_spec == opp_spec
    teacher, opp = agents.make(teacher_spec), agents.make(opp_spec)
    bots = [teacher, opp] if seat == 0 else [opp, teacher]
    rngs = [random.Random(seed * 7919 + p) for p in (0, 1)]
    obs: list[NDArray[np.float16]] = []
    legal: list[NDArray[np.int16]] = []
    acts: list[int | None] = []
    seats: list[int] = []
    steps: list[int] = []
    count = [0, 0]

    def record(st: GameState, p: int, moves: list[Move], move: Move) -> None:
        if (p == seat or both) and len(moves) > 1:
            ids = [m.id for m in moves][:MAX_LEGAL]
            if move.id not in ids:
                ids[-1] = move.id
            row = np.full(MAX_LEGAL, -1, dtype=np.int16)
            row[: len(ids)] = ids  # type: ignore[assignment]  # the default rules give every move an id
            obs.append(encode_state(st, p).astype(np.float16))
            legal.append(row)
            if with_after:
                rows = np.empty((len(ids), OBS_SIZE), np.float32)
                bk = np.empty(len(ids), np.float64)
                write_afterstates(st, p, cast("list[int]", ids), rows, bk)
                after.append(rows.astype(np.float16))
                banked.append(bk.astype(np.float32))
            acts.append(move.id)
            seats.append(p)
            steps.append(count[p])
        count[p] += 1

    scores = play_agents(bots, seed, rngs, on_move=record).state.scores()
    seats_a = np.array(seats, dtype=np.int8)
    diff = np.where(seats_a == 0, scores[0] - scores[1], scores[1] - scores[0]).astype(np.float32)
    out: Arrays = {
        "obs": np.array(obs, dtype=np.float16).reshape(-1, OBS_SIZE),
        "legal": np.array(legal, dtype=np.int16).reshape(-1, MAX_LEGAL),
        "action": np.array(acts, dtype=np.int16),
        "step": np.array(steps, dtype=np.int16),
        "diff": diff,
    }
    if with_after:  # rows in the order of each decision's ``legal`` ids, decision after decision
        out["after"] = np.concatenate(after) if after else np.empty((0, OBS_SIZE), np.float16)
        out["banked"] = np.concatenate(banked) if banked else np.empty(0, np.float32)
    return out


def _play_many(tasks: list[tuple[str, str, int, int, bool]]) -> Arrays:
    return _concat([_play(t) for t in tasks])


def _concat(parts: list[Arrays]) -> Arrays:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def generate(
    teacher: str,
    opponents: list[str],
    games: int,
    seed: int,
    workers: int = 1,
    progress: bool = True,
    afterstates: bool = False,
) -> Arrays:
    """Play ``games`` games of ``teacher`` against ``opponents`` (in turn) and return its decisions.

    With ``afterstates``, also ``after`` (float16, one row per legal id of each decision, in
    ``legal``'s order, decision after decision: :mod:`mulle_env.afterstates`) and ``banked``
    (the teacher's score difference after each), for an afterstate actor's warm start.

    Game ``g`` deals seed ``seed + g`` with the teacher in seat ``g % 2``. When the
    opponent is the teacher itself both seats are recorded. Decisions with a single
    legal move are left out (nothing to learn). Returns arrays ``obs`` (float16),
    ``legal`` (padded ids), ``action``, ``step`` (the mover's decision number in the
    game) and ``diff`` (final score difference from the mover's seat).
    """
    if games < 1:
        raise ValueError(f"games must be >= 1, not {games}")
    if not opponents:
        raise ValueError("opponents must name at least one agent spec")
    tasks = [(teacher, opponents[g % len(opponents)], seed + g, g % 2, afterstates) for g in range(games)]
    chunk = 10
    chunks = [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]
    bar: tqdm | None = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=games, unit="game", desc=f"bc data ({teacher})", dynamic_ncols=True)
    parts: list[Arrays] = []
    if workers <= 1:
        for c in chunks:
            parts.append(_play_many(c))
            if bar:
                bar.update(len(c))
    else:
        with process_pool(workers) as pool:
            for c, part in zip(chunks, pool.map(_play_many, chunks)):
                parts.append(part)
                if bar:
                    bar.update(len(c))
    if bar:
        bar.close()
    return _concat(parts)


def save_data(data: Arrays, path: str | Path, **meta: object) -> None:
    """Cache generated data (``.npz``) so a resumed run does not play the games again."""
    # (mypy takes a key of the ** dicts for allow_pickle; they name arrays)
    np.savez(path, **data, **{f"meta_{k}": np.array(str(v)) for k, v in meta.items()})  # type: ignore[arg-type]


def load_data(path: str | Path, **meta: object) -> Arrays | None:
    """Cached data if ``path`` exists and was made with the same ``meta``; else ``None``."""
    path = Path(path)
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        for k, v in meta.items():
            if f"meta_{k}" not in z or str(z[f"meta_{k}"]) != str(v):
                return None
        return {k: z[k] for k in ("obs", "legal", "action", "step", "diff", "after", "banked") if k in z}


def value_targets(data: Arrays, reward: str, score_scale: float, gamma: float,
                  decisions: int = codec.MAX_DECISIONS_PER_PLAYER) -> NDArray[np.float32]:
    """The return PPO's critic estimates: the final reward discounted back to each decision.

    Under ``reward="score_delta"`` the steps before a decision have paid out the score difference
    its observation shows, so the return from there is the rest: final less that, / ``score_scale``.
    """
    diff = data["diff"].astype(np.float64)
    if reward == "score_delta":
        from mulle_env.engine.state import SHEET_KEYS
        from mulle_env.observation import OBS_SLICES, SCORE_SCALE

        total = SHEET_KEYS.index("total")
        obs = data["obs"]
        shown = (obs[:, OBS_SLICES["my_score"].start + total].astype(np.float64)
                 - obs[:, OBS_SLICES["opp_score"].start + total].astype(np.float64))
        diff = diff - np.round(shown * SCORE_SCALE)  # float16 holds the points / 100 to within 0.2 points
    final = diff / score_scale if reward in ("score", "score_delta") else np.sign(diff)
    remaining = decisions - 1 - data["step"].astype(np.float64)
    return (final * gamma ** np.maximum(remaining, 0)).astype(np.float32)


#: Suits whose cards score alike in every table (clubs and hearts: only their aces give an intake
#: point, like every ace), so swapping them in a position changes nothing in the game.
SYMMETRIC_SUITS = ("KL", "HJ")


def suit_swap_permutations() -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Index permutations of the observation and of the action space that swap :data:`SYMMETRIC_SUITS`.

    ``obs[..., obs_perm]`` is the observation of the suit-swapped position and
    ``act_perm[a]`` the swapped action. Checked against the card tables at import of
    the training code, so a rules change that breaks the symmetry fails loudly.
    """
    from mulle_env.engine.cards import CARD_NAMES, HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, TABLE_VALUE
    from mulle_env.engine.moves import MOVES, Move
    from mulle_env.observation import FACE_BLOCKS, OBS_SLICES

    return swap_permutations(CARD_NAMES, (HAND_VALUE, INTAKE_POINTS, MULLE_VALUE, TABLE_VALUE),
                             [OBS_SLICES[name].start for name in FACE_BLOCKS], OBS_SIZE,
                             [str(m) for m in MOVES], lambda text: Move.from_str(text).id)


def swap_permutations(card_names: Sequence[str], tables: Sequence[Sequence[object]], face_starts: Sequence[int],
                      obs_size: int, move_texts: Sequence[str], move_id: Callable[[str], int | None]
                      ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The observation and action permutations that swap :data:`SYMMETRIC_SUITS`, for any game's tables.

    ``card_names``: each face's name (the suit its prefix); ``tables``: every per-face table the
    rules score by (each must agree on swapped faces, else an ``AssertionError``: the swap is no
    symmetry); ``face_starts``: where each block of one entry per face begins in the observation
    (the rest of it must not depend on the two suits); ``move_texts``: each action id's move as
    text, and ``move_id`` the id of a move's text. Mulle's (:func:`suit_swap_permutations`) and
    Casino's (:meth:`training.games.TrainGame.suit_swap`) are made here.
    """
    a, b = SYMMETRIC_SUITS

    def swap_name(text: str) -> str:
        return text.replace(a, "\0").replace(b, a).replace("\0", b)

    faces = len(card_names)
    face_perm = np.array([list(card_names).index(swap_name(card_names[f])) for f in range(faces)])
    for table in tables:
        if any(table[f] != table[face_perm[f]] for f in range(faces)):
            raise AssertionError(f"suits {a} and {b} no longer score alike: the suit-swap augmentation is invalid")
    obs_perm = np.arange(obs_size)
    for start in face_starts:
        obs_perm[start : start + faces] = start + face_perm
    act_perm = np.array([move_id(swap_name(text)) for text in move_texts])
    assert sorted(act_perm.tolist()) == list(range(len(move_texts)))
    return obs_perm, act_perm


def pretrain(model: MaskablePPO, data: Arrays, epochs: int, batch_size: int = 512, lr: float = 1e-3,
             reward: str = "score", score_scale: float = 100.0, gamma: float = 1.0, vf_coef: float = 0.5,
             seed: int = 0, augment: bool = True, progress: bool = True,
             log: Callable[[dict[str, float]], None] | None = None, extras: str | None = None) -> dict[str, float]:
    """Fit ``model.policy`` (a MaskablePPO policy) to the teacher's moves and the games' outcomes.

    Loss: masked cross-entropy of the teacher's action + ``vf_coef`` * squared error of
    the value against :func:`value_targets`. 5% of the decisions are held out to
    report accuracy. With ``augment``, each training decision is seen with clubs and
    hearts swapped half of the time (:func:`suit_swap_permutations`): the same
    position to the rules, so twice the data for free. Returns the final figures.

    Data with afterstates (``generate(..., afterstates=True)``) fits an afterstate actor
    (:class:`training.afterstate_policy.AfterstatePolicy`): its batches are the ``Dict``
    observations the env gives it, with the block ``extras`` appended to each afterstate.
    """
    import torch

    policy = model.policy
    device = policy.device
    n = len(data["action"])
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    n_val = max(1, n // 20)
    val_idx, train_idx = order[:n_val], order[n_val:]
    returns = value_targets(data, reward, score_scale, gamma)
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    steps_per_epoch = max(1, len(train_idx) // batch_size)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps_per_epoch)

    obs_perm, act_perm = suit_swap_permutations() if augment else (None, None)
    counts = (data["legal"] >= 0).sum(axis=1)
    starts = np.concatenate([[0], np.cumsum(counts)])
    with_after = "after" in data

    def after_obs(idx: NDArray[np.integer[Any]], legal: NDArray[np.int64], swap: NDArray[np.bool_] | None,
                  obs: Tensor) -> dict[str, Tensor]:
        from mulle_env.extras import with_extras

        k = int(counts[idx].max())
        cols = np.arange(k)
        take = cols[None, :] < counts[idx][:, None]
        rows = (starts[idx][:, None] + cols[None, :])[take]
        flat = data["after"][rows].astype(np.float32)
        if swap is not None and swap.any():
            assert obs_perm is not None
            flip = np.repeat(swap, counts[idx])
            flat[flip] = flat[flip][:, obs_perm]
        flat = with_extras(flat, extras)
        after = np.zeros((len(idx), k, flat.shape[1]), np.float32)
        after[take] = flat
        banked = np.zeros((len(idx), k), np.float32)
        banked[take] = data["banked"][rows]
        ids = np.where(take, legal[:, :k], -1).astype(np.float32)
        return {"obs": obs, "after": torch.as_tensor(after, device=device),
                "banked": torch.as_tensor(banked, device=device), "ids": torch.as_tensor(ids, device=device)}

    def batch(idx: NDArray[np.integer[Any]], swap: NDArray[np.bool_] | None = None) -> Batch:
        obs_np = data["obs"][idx].astype(np.float32)
        legal = data["legal"][idx].astype(np.int64)
        act_np = data["action"][idx].astype(np.int64)
        if swap is not None and swap.any():
            assert act_perm is not None  # a swap is drawn only with augment
            obs_np[swap] = obs_np[swap][:, obs_perm]
            sl = legal[swap]
            legal[swap] = np.where(sl >= 0, act_perm[np.maximum(sl, 0)], -1)
            act_np[swap] = act_perm[act_np[swap]]
        obs: Any = torch.as_tensor(obs_np, device=device)
        if with_after:
            obs = after_obs(idx, legal, swap, obs)
        mask = np.zeros((len(idx), codec.NUM_ACTIONS), dtype=bool)
        rows = np.repeat(np.arange(len(idx)), legal.shape[1])
        cols = legal.ravel()
        keep = cols >= 0
        mask[rows[keep], cols[keep]] = True
        act = torch.as_tensor(act_np, device=device)
        ret = torch.as_tensor(returns[idx], device=device)
        return obs, mask, act, ret

    bar: tqdm | None = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=epochs * steps_per_epoch, unit="batch", desc="bc pretrain", dynamic_ncols=True)
    policy.set_training_mode(True)
    figures: dict[str, float] = {}
    for epoch in range(epochs):
        perm = rng.permutation(train_idx)
        tot_pi = tot_v = 0.0
        for b in range(steps_per_epoch):
            idx = np.sort(perm[b * batch_size : (b + 1) * batch_size])
            swap = rng.random(len(idx)) < 0.5 if augment else None
            obs, mask, act, ret = batch(idx, swap)
            values, log_prob, _ = policy.evaluate_actions(obs, act, action_masks=mask)
            loss_pi = -log_prob.mean()
            loss_v = torch.nn.functional.mse_loss(values.flatten(), ret)
            loss = loss_pi + vf_coef * loss_v
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            sched.step()
            tot_pi += loss_pi.item()
            tot_v += loss_v.item()
            if bar:
                bar.update(1)
        figures = _held_out(policy, batch, val_idx, batch_size)
        figures.update(epoch=epoch + 1, train_policy_loss=tot_pi / steps_per_epoch,
                       train_value_loss=tot_v / steps_per_epoch)
        if log is not None:
            log(figures)
    if bar:
        bar.close()
    policy.set_training_mode(False)
    return figures


def _held_out(policy: MaskableActorCriticPolicy, batch: Callable[[NDArray[np.integer[Any]]], Batch],
              idx: NDArray[np.integer[Any]], batch_size: int) -> dict[str, float]:
    import torch

    correct = 0
    vloss = 0.0
    policy.set_training_mode(False)
    with torch.no_grad():
        for i in range(0, len(idx), batch_size):
            obs, mask, act, ret = batch(np.sort(idx[i : i + batch_size]))
            dist = policy.get_distribution(obs, action_masks=mask)
            pred = dist.distribution.probs.argmax(dim=1)
            correct += int((pred == act).sum())
            values = policy.predict_values(obs).flatten()
            vloss += float(((values - ret) ** 2).sum())
    policy.set_training_mode(True)
    return {"heldout_accuracy": correct / len(idx), "heldout_value_mse": vloss / len(idx)}
