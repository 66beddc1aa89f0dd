"""Measuring a policy: quick duplicate matches in this process, and head-to-heads in the arena.

* :func:`duplicate_match`: each deal played twice with the seats swapped, in the
  training process (no worker pool: a few hundred games of numpy inference against
  ``heuristic`` take seconds); wins/draws/losses, score with its Wilson 95% interval
  (:func:`wilson_interval`: never zero-width), mean score difference. Used while training to pick the best snapshot.
* :func:`head_to_head`: duplicate games in the arena (resumable results file, worker
  processes, 95% intervals, thinking time): the published figures of a generation.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.match import play_agents
from arena import Plan, ProcessBackend, report, run, stats

if TYPE_CHECKING:
    from agents.base import Agent
    from arena.runner import Backend

__all__ = ["duplicate_match", "head_to_head", "ms_per_decision", "pair_score_interval", "wilson_interval"]


def pair_score_interval(pentanomial: list[int]) -> tuple[float | None, float | None, float | None]:
    """Mean score of the first agent over duplicate pairs with its 95% t interval ``(score, low, high)``."""
    values = [k / 4 for k, c in enumerate(pentanomial) for _ in range(c)]
    iv = stats.mean_interval(values)
    if iv is None:
        return None, None, None
    d = iv.to_dict()
    # A score lies in [0, 1]; the t interval of a few pairs can reach past it.
    low = None if d["low"] is None else max(0.0, d["low"])
    high = None if d["high"] is None else min(1.0, d["high"])
    return d["value"], low, high


def ms_per_decision(lines: list[dict[str, Any]], spec: str) -> float | None:
    """Mean thinking time of ``spec`` per decision in ``lines`` (each seat makes half of a game's moves)."""
    think = moves = 0.0
    for ln in lines:
        if ln.get("status") not in ("ok", "forfeit") or spec not in ln["specs"]:
            continue
        think += ln["think"][ln["specs"].index(spec)]
        moves += ln["moves"] / 2
    return 1000 * think / moves if moves else None


def head_to_head(a: str, b: str, games: int, seed: int, out: str | Path, workers: int = 1,
                 progress: bool = True, ruleset: dict[str, Any] | None = None,
                 backend: Backend | None = None, game: str | None = None) -> dict[str, Any]:
    """Play (or resume) ``games`` duplicate games of ``a`` against ``b`` into ``out``; the figures from ``a``'s side.

    ``ruleset`` changes the rules (flags as in :class:`mulle_env.Ruleset`); ``backend`` is an
    arena backend (default: ``workers`` local processes; :class:`arena.ray_backend.RayBackend`
    for a Ray cluster: the same games). ``game``: the arena's short name of the game
    (``"casino"``; default Mulle), whose agents the specs name and whose rules ``ruleset``
    changes. Raises ``KeyboardInterrupt`` if the run was interrupted (the games played are saved).
    """
    plan = (Plan((a, b), games=games, seed=seed, ruleset=ruleset) if game in (None, "mulle") else
            Plan((a, b), games=games, seed=seed, ruleset=ruleset, game=game))
    outcome = run(plan, str(out), backend or ProcessBackend(workers), progress=progress)
    if outcome.interrupted:
        raise KeyboardInterrupt
    st = report.pairing_stats(plan.specs[0], plan.specs[1], outcome.lines)
    score, low, high = pair_score_interval(st["pentanomial"])
    return {
        "a": plan.specs[0], "b": plan.specs[1], "games": st["games"], "seed": seed,
        "wins": st["wins"], "draws": st["draws"], "losses": st["losses"],
        "score": score, "score_low": low, "score_high": high, "elo": st["elo"],
        "points_per_game": st["score_diff"],
        "ms_per_decision": {s: ms_per_decision(outcome.lines, s) for s in plan.specs},
        "results": str(out),
    }


def wilson_interval(score: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson 95% interval of a score (the share of ``n`` games won, draws as halves).

    Unlike the normal or t interval it never has zero width: 0 wins in 20 games is
    [0.000, 0.161], not [0, 0], which would claim certainty 20 games cannot give.
    """
    if n < 1:
        return 0.0, 1.0
    denom = 1 + z * z / n
    centre = (score + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, score * (1 - score)) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def duplicate_match(agent: Agent, opponent: str, games: int, seed: int, game: str = "mulle",
                    rules: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play ``games`` (even) games of ``agent`` (an agent object) against the spec ``opponent``.

    Deal ``seed + k`` is played with ``agent`` in seat 0 and then in seat 1. ``game``: the
    game's short name (:mod:`training.games`; Mulle by default), ``rules`` its changed flags.
    """
    import agents

    from .games import train_game

    tg = train_game(game)
    pairs = max(1, games // 2)
    opp = agents.make(opponent) if tg.name == "mulle" else agents.make(opponent, game=tg.name)
    points: list[float] = []
    diffs: list[float] = []
    w = d = losses = 0
    for k in range(pairs):
        pair_pts, pair_diff = 0.0, 0.0
        for seat in (0, 1):
            bots = [agent, opp] if seat == 0 else [opp, agent]
            rngs = [random.Random((seed + k) * 1_000_003 + 17 + 12 * p) for p in (0, 1)]
            if tg.name == "mulle" and rules is None:
                s = play_agents(bots, seed + k, rngs).state.scores()
            else:
                s = tg.play(bots, seed + k, rngs, rules)
            diff = s[seat] - s[1 - seat]
            w, d, losses = w + (diff > 0), d + (diff == 0), losses + (diff < 0)
            pair_pts += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
            pair_diff += diff
        points.append(pair_pts / 2)
        diffs.append(pair_diff / 2)
    score = float(np.mean(points))
    low, high = wilson_interval(score, 2 * len(points))
    return {
        "opponent": opponent,
        "games": 2 * len(points),
        "wins": int(w),
        "draws": int(d),
        "losses": int(losses),
        "score": score,
        "score_low": low,
        "score_high": high,
        "mean_diff": float(np.mean(diffs)),
    }
