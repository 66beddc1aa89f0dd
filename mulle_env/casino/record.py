"""Checking a finished Casino game's result: what the arena asks before it believes a results line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .ruleset import Ruleset
from .state import ITEM_POINTS, MAX_SWEEPS, SHEET_KEYS

__all__ = ["check_result", "sheets_problem"]


def _item_problem(key: str, vals: Sequence[Any]) -> str | None:
    """Why the two seats' ``key`` items of one round cannot be (``None``: they can)."""
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in vals):
        return f"{key} must be whole numbers of points, not {list(vals)!r:.60}"
    if key == "sweeps":
        if max(vals) > MAX_SWEEPS:
            return f"sweeps {list(vals)}: a seat plays {MAX_SWEEPS} cards a round, so it sweeps at most that often"
        return None
    most = ITEM_POINTS[key]
    if sum(vals) > most:
        return f"{key} gives {sum(vals)} points in all, more than the {most} a round has"
    if key != "aces" and any(v not in (0, most) for v in vals):  # a race or a casino is won whole, or not at all
        return f"{key} is worth {most} or nothing to a seat, not {list(vals)}"
    return None


def sheets_problem(sheets: Any, sweeps: bool = True) -> str | None:
    """Why ``sheets`` (one pair of score sheets per round) are no rounds' sheets (``None``: they can be).

    Each sheet has exactly :data:`~mulle_env.casino.state.SHEET_KEYS`, whole numbers that one
    round can give (CASINO.md 5.3: 3 for cards and 1 for spades to at most one seat, each casino
    whole to one seat, at most 4 aces, at most 24 sweeps a seat and none under ``sweeps=False``),
    and a ``total`` that is the sum of its items. Positions and results both ask here.
    """
    if not isinstance(sheets, (list, tuple)):
        return f"sheets must list each round's two score sheets, not {sheets!r:.60}"
    for r, pair in enumerate(sheets, 1):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(s, dict) for s in pair):
            return f"round {r}: a pair of score sheets is expected, not {pair!r:.60}"
        for s, sheet in enumerate(pair):
            if set(sheet) != set(SHEET_KEYS):
                odd = sorted(map(str, set(sheet) ^ set(SHEET_KEYS)))
                return f"round {r}: seat {s}'s sheet has the items {', '.join(SHEET_KEYS)}, not with {', '.join(odd)}"
        for key in SHEET_KEYS[:-1]:
            why = _item_problem(key, [sh[key] for sh in pair])
            if why is not None:
                return f"round {r}: {why}"
        if not sweeps and any(sh["sweeps"] for sh in pair):
            return f"round {r}: sweeps scored under sweeps=False"
        for s in (0, 1):
            total = sum(pair[s][k] for k in SHEET_KEYS[:-1])
            if pair[s]["total"] != total:
                return f"round {r}: seat {s}'s total {pair[s]['total']!r:.20} is not the sum of its items, {total}"
    return None


def check_result(result: Any, ruleset: Ruleset | dict[str, Any] | None = None) -> None:
    """Raise ``ValueError`` saying why ``result`` (``scores``, ``winner``, ``sheets``) is no Casino game's end.

    Checked: each round's sheets (:func:`sheets_problem`), two scores that are the sums of the
    sheets' totals, the number of rounds the rules play (under ``target_score``: the game ends
    at the first round that leaves a seat at the target ahead, CASINO.md 5.4), and the winner.
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
    why = sheets_problem(sheets, rs.sweeps)
    if why is not None:
        raise ValueError(why)
    totals = [0, 0]
    n = len(sheets)
    for r, pair in enumerate(sheets, 1):
        totals = [totals[0] + pair[0]["total"], totals[1] + pair[1]["total"]]
        a, b = totals
        if rs.rounds is None and r < n and max(a, b) >= rs.target_score and a != b:
            raise ValueError(f"a game to {rs.target_score} ends after round {r} at {a}-{b}, but {n} rounds are listed")
    if list(scores) != totals:
        raise ValueError(f"scores {list(scores)} are not the sums of the rounds' totals, {totals}")
    if rs.rounds is not None and n != rs.rounds:
        raise ValueError(f"the rules play exactly {rs.rounds} round(s), not {n}")
    if rs.rounds is None:
        a, b = totals
        if n > rs.max_rounds:
            raise ValueError(f"a game to {rs.target_score} ends as a draw after {rs.max_rounds} rounds, not {n}")
        if n < rs.max_rounds and not (max(a, b) >= rs.target_score and a != b):
            raise ValueError(f"a game to {rs.target_score} does not end at {a}-{b}")
    expect = 0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else None
    if winner != expect:
        raise ValueError(f"winner {winner!r:.20} does not match the scores {list(scores)} (expected {expect!r})")
