"""Measuring a generation: duplicate head-to-heads in the arena, with 95% intervals and thinking time."""

from __future__ import annotations

from pathlib import Path

from arena import Plan, ProcessBackend, report, run, stats

__all__ = ["head_to_head", "ms_per_decision", "pair_score_interval"]


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


def ms_per_decision(lines: list[dict], spec: str) -> float | None:
    """Mean thinking time of ``spec`` per decision in ``lines`` (each seat makes half of a game's moves)."""
    think = moves = 0.0
    for ln in lines:
        if ln.get("status") not in ("ok", "forfeit") or spec not in ln["specs"]:
            continue
        think += ln["think"][ln["specs"].index(spec)]
        moves += ln["moves"] / 2
    return 1000 * think / moves if moves else None


def head_to_head(a: str, b: str, games: int, seed: int, out: str | Path, workers: int = 1,
                 progress: bool = True) -> dict:
    """Play (or resume) ``games`` duplicate games of ``a`` against ``b`` into ``out``; the figures from ``a``'s side.

    Raises ``KeyboardInterrupt`` if the run was interrupted (the games played are saved).
    """
    plan = Plan((a, b), games=games, seed=seed)
    outcome = run(plan, str(out), ProcessBackend(workers), progress=progress)
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
