"""Duplicate evaluation of a policy against an agent spec (used during training).

Each deal is played twice with the seats swapped, so luck of the cards cancels out.
Runs in the training process (no worker pool: a few hundred games of numpy inference
against ``heuristic`` take seconds). Figures: wins/draws/losses, score (win 1, draw
0.5) with a 95% t interval over the deal pairs, and the mean score difference. The
final, published figures come from the arena (``mulle-arena``), not from here.
"""

from __future__ import annotations

import random

import numpy as np
from scipy import stats

from ..match import play_agents

__all__ = ["duplicate_match"]


def duplicate_match(agent, opponent: str, games: int, seed: int) -> dict:
    """Play ``games`` (even) games of ``agent`` (an agent object) against the spec ``opponent``.

    Deal ``seed + k`` is played with ``agent`` in seat 0 and then in seat 1.
    """
    import agents

    pairs = max(1, games // 2)
    opp = agents.make(opponent)
    points, diffs = [], []
    w = d = losses = 0
    for k in range(pairs):
        pair_pts, pair_diff = 0.0, 0.0
        for seat in (0, 1):
            bots = [agent, opp] if seat == 0 else [opp, agent]
            rngs = [random.Random((seed + k) * 1_000_003 + 17 + 12 * p) for p in (0, 1)]
            s = play_agents(bots, seed + k, rngs).state.scores()
            diff = s[seat] - s[1 - seat]
            w, d, losses = w + (diff > 0), d + (diff == 0), losses + (diff < 0)
            pair_pts += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
            pair_diff += diff
        points.append(pair_pts / 2)
        diffs.append(pair_diff / 2)
    pts = np.array(points)
    n = len(pts)
    score = float(pts.mean())
    half = float(stats.t.ppf(0.975, n - 1) * stats.sem(pts)) if n > 1 and pts.std() > 0 else 0.0
    return {
        "opponent": opponent,
        "games": 2 * n,
        "wins": int(w),
        "draws": int(d),
        "losses": int(losses),
        "score": score,
        "score_low": max(0.0, score - half),
        "score_high": min(1.0, score + half),
        "mean_diff": float(np.mean(diffs)),
    }
