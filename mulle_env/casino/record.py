"""Checking a finished Casino game's result: what the arena asks before it believes a results line."""

from __future__ import annotations

from typing import Any

from .ruleset import Ruleset
from .state import ITEM_POINTS

__all__ = ["check_result"]

# What one round's sheets can hand out in all, item by item (sweeps: a bound only, never reached).
_ITEM_MAX = {**ITEM_POINTS, "sweeps": 52}


def check_result(result: Any, ruleset: Ruleset | dict[str, Any] | None = None) -> None:
    """Raise ``ValueError`` saying why ``result`` (``scores``, ``winner``, ``sheets``) is no Casino game's end.

    Checked: two non-negative scores that are the sums of the sheets' totals, each sheet's items
    within what one round can give (3 for cards and 1 for spades to at most one seat, each
    casino and ace to at most one seat), the number of rounds the rules play, and the winner.
    ``result`` is a dict or a :class:`~mulle_env.casino.GameResult`.
    """
    rs = Ruleset.from_dict(ruleset) if not isinstance(ruleset, Ruleset) else ruleset
    data = result.to_dict() if hasattr(result, "to_dict") else result
    if not isinstance(data, dict):
        raise ValueError(f"a result is a dict with scores, winner and sheets, not {type(data).__name__}")
    scores, winner, sheets = data.get("scores"), data.get("winner"), data.get("sheets")
    if (not isinstance(scores, (list, tuple)) or len(scores) != 2
            or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in scores)):
        raise ValueError(f"scores must be two whole numbers of points, not {scores!r:.60}")
    if not isinstance(sheets, (list, tuple)) or not sheets:
        raise ValueError(f"sheets must list each round's two score sheets, not {sheets!r:.60}")
    totals = [0, 0]
    for r, pair in enumerate(sheets, 1):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(s, dict) for s in pair):
            raise ValueError(f"round {r}: a pair of score sheets is expected, not {pair!r:.60}")
        for key, most in _ITEM_MAX.items():
            vals = [s.get(key) for s in pair]
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in vals):
                raise ValueError(f"round {r}: {key} must be whole numbers of points, not {vals!r:.60}")
            if key != "sweeps" and sum(vals) > most:
                raise ValueError(f"round {r}: {key} gives {sum(vals)} points in all, more than the {most} "
                                 "a round has")
            if not rs.sweeps and key == "sweeps" and any(vals):
                raise ValueError(f"round {r}: sweeps scored under sweeps=False")
        for s in (0, 1):
            total = sum(pair[s][k] for k in _ITEM_MAX)
            if pair[s].get("total") != total:
                raise ValueError(f"round {r}: seat {s}'s total {pair[s].get('total')!r:.20} is not the sum of its "
                                 f"items, {total}")
            totals[s] += total
    if list(scores) != totals:
        raise ValueError(f"scores {list(scores)} are not the sums of the rounds' totals, {totals}")
    n = len(sheets)
    if rs.rounds is not None and n != rs.rounds:
        raise ValueError(f"the rules play exactly {rs.rounds} round(s), not {n}")
    if rs.rounds is None:
        a, b = totals
        if n < rs.max_rounds and not (max(a, b) >= rs.target_score and a != b):
            raise ValueError(f"a game to {rs.target_score} does not end at {a}-{b}")
    expect = 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None
    if winner != expect:
        raise ValueError(f"winner {winner!r:.20} does not match the scores {list(scores)} (expected {expect!r})")
