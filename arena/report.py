"""Reports: the statistics of a tournament as JSON, Markdown, a terminal table and a plot.

:func:`build` turns result lines into one JSON-able dict; the other functions only
format that dict, so every output says the same thing.

Per pairing (from the first-named agent's side): wins/draws/losses, forfeits, mean
score difference per game with a 95 % t-interval, the pentanomial counts of duplicate
pairs, Elo with its interval and LOS (pentanomial when pairs exist, else trinomial).
For the field: Bradley-Terry ratings over all games, anchored on ``random`` (or the
first spec when ``random`` does not play).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any, cast

from . import stats
from .tournament import FINISHED, Outcome, game_points

ANCHOR = "random"


def _fmt(x: float | None, spec: str = "+.1f") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "inf" if x == math.inf else "-inf" if x == -math.inf else "n/a"
    return format(x, spec)


def pairing_stats(a: str, b: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Statistics of ``a`` against ``b`` over their games in ``lines`` (``a``'s point of view)."""
    games = [ln for ln in lines if set(ln["specs"]) == {a, b}]
    w = d = losses = forfeits_a = forfeits_b = 0
    diffs_by_unit: dict[tuple[str, Any], list[float]] = defaultdict(list)
    pair_pts: dict[Any, list[float]] = defaultdict(list)
    for ln in games:
        if ln.get("status") not in FINISHED:
            continue
        pts = cast(float, game_points(ln, a))  # a finished game with a in it
        w += pts == 1.0
        d += pts == 0.5
        losses += pts == 0.0
        seat = ln["specs"].index(a)
        if ln.get("forfeit") is not None:
            if ln["forfeit"] == seat:
                forfeits_a += 1
            else:
                forfeits_b += 1
        unit = ("pair", ln["pair"]) if ln.get("pair") is not None else ("game", ln["game_id"])
        if ln.get("scores"):
            diffs_by_unit[unit].append(ln["scores"][seat] - ln["scores"][1 - seat])
        if ln.get("pair") is not None:
            pair_pts[ln["pair"]].append(pts)
    penta = [0] * 5
    for both in pair_pts.values():
        if len(both) == 2:
            penta[int(round(2 * sum(both)))] += 1
    n = w + d + losses
    # The independent unit of a duplicate match is the pair: average within it first.
    diff = stats.mean_interval([sum(v) / len(v) for v in diffs_by_unit.values()])
    # The score with its 95% t interval over those units (what the guides quote, "57.8% [51.5%, 64.0%]"):
    # whole pairs (0, 1/4, ..., 1), or single games where there are no pairs; a score lies in [0, 1].
    units = [k / 4 for k, c in enumerate(penta) for _ in range(c)] if sum(penta) else \
        [1.0] * w + [0.5] * d + [0.0] * losses
    score_iv = stats.mean_interval(units)
    score_interval = None
    if score_iv is not None:
        iv = score_iv.to_dict()
        score_interval = {"value": iv["value"], "low": None if iv["low"] is None else max(0.0, iv["low"]),
                          "high": None if iv["high"] is None else min(1.0, iv["high"])}
    est = stats.elo_estimate(penta) if sum(penta) else stats.elo_estimate([losses, d, w]) if n else None
    return {
        "a": a,
        "b": b,
        "games": n,
        "wins": w,
        "draws": d,
        "losses": losses,
        "score": (w + d / 2) / n if n else None,
        "score_interval": score_interval,
        "forfeits": {a: forfeits_a, b: forfeits_b},
        "score_diff": diff.to_dict() if diff else None,
        "pentanomial": penta,
        "pairs": sum(penta),
        "elo": est.elo.to_dict() if est else None,
        "elo_basis": ("pentanomial" if sum(penta) else "trinomial") if est else None,
        "los": est.los if est else None,
    }


#: How reports name the games of lines written before results lines recorded their engine backend.
UNRECORDED = "not recorded"


def engine_backends(lines: list[dict[str, Any]]) -> dict[str, int]:
    """Games counted per engine backend that played them (``"c"``, ``"python"``; :data:`UNRECORDED` for older lines)."""
    out: dict[str, int] = {}
    for ln in lines:
        name = ln.get("engine_backend") or UNRECORDED
        out[name] = out.get(name, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (kv[0] == UNRECORDED, kv[0])))


def backends_text(backends: dict[str, int]) -> str:
    """``"c"``, or ``"c (120 games), python (4 games)"`` when the games were played on more than one."""
    if not backends:
        return "none yet"
    if len(backends) == 1:
        return next(iter(backends))
    return ", ".join(f"{name} ({n} game{'s' if n != 1 else ''})" for name, n in backends.items())


def build(outcome: Outcome) -> dict[str, Any]:
    """The full report of ``outcome`` as a JSON-able dict."""
    plan = outcome.plan
    lines = outcome.lines
    specs = list(plan.specs)
    idx = {s: i for i, s in enumerate(specs)}
    results: list[tuple[int, int, float]] = []
    per: dict[str, dict[str, float]] = {
        s: {"games": 0, "points": 0.0, "wins": 0, "draws": 0, "losses": 0, "forfeits": 0} for s in specs
    }
    for ln in lines:
        if ln.get("status") not in FINISHED:
            continue
        s0, s1 = ln["specs"]
        p0 = cast(float, game_points(ln, s0))  # a finished game
        results.append((idx[s0], idx[s1], p0))
        for s, p in ((s0, p0), (s1, 1 - p0)):
            r = per[s]
            r["games"] += 1
            r["points"] += p
            r["wins" if p == 1 else "draws" if p == 0.5 else "losses"] += 1
        if ln.get("forfeit") is not None:
            per[ln["specs"][ln["forfeit"]]]["forfeits"] += 1
    anchor = idx.get(ANCHOR, 0)
    ratings = stats.bradley_terry(specs, results, anchor=anchor) if results else None
    board = []
    for s in specs:
        r = per[s]
        row: dict[str, Any] = {"spec": s, **r, "score": r["points"] / r["games"] if r["games"] else None}
        if ratings is not None:
            row["rating"] = ratings.interval(idx[s]).to_dict()
        board.append(row)
    board.sort(key=lambda row: -((row.get("rating") or {}).get("value") or 0.0))
    for rank, row in enumerate(board, 1):
        row["rank"] = rank
    total = len(lines)
    report = {
        "tournament": {
            "specs": specs,
            "games_per_pairing": plan.games,
            "seed": plan.seed,
            "duplicate": plan.duplicate,
            "ruleset": plan.ruleset,
            "game": plan.game,
            "engine_version": next((ln.get("engine_version") for ln in lines), None),
            "engine_backends": engine_backends(lines),
            "move_timeout": plan.move_timeout,
            "isolated": plan.isolate,  # every agent in a process of its own (arena.isolate)
        },
        "run": {
            "backend": outcome.backend,
            "workers": outcome.workers,
            "played": outcome.played,
            "resumed": outcome.skipped,
            "elapsed": round(outcome.elapsed, 3),
            "interrupted": outcome.interrupted,
            "notes": outcome.notes,
        },
        "games": {
            "counted": total,
            "expected": plan.games * len(plan.pairings()),
            "forfeits": sum(1 for ln in lines if ln.get("status") == "forfeit"),
            "errors": [ln["error"] for ln in lines if ln.get("error")][:20],
            "aborted": outcome.aborted[:20],
            "aborted_count": len(outcome.aborted),
        },
        "anchor": specs[anchor],
        "leaderboard": board,
        "pairings": [pairing_stats(a, b, lines) for a, b in plan.pairings()],
        "sprt": None,
    }
    if outcome.sprt is not None:
        report["sprt"] = {**outcome.sprt.to_dict(), "stopped_after_pairs": outcome.stopped_at,
                          "pairs": outcome.sprt_pairs, "skipped_pairs": outcome.sprt_skipped,
                          "spec": specs[0], "opponent": specs[1]}
    return report


def _sprt_basis(s: dict[str, Any]) -> str:
    """``"SPRT on k pairs"`` with where it stopped and what it skipped."""
    text = f"SPRT on {s.get('pairs', 0)} pairs"
    if s.get("stopped_after_pairs"):
        text += f", decided after the first {s['stopped_after_pairs']} pairs of the schedule"
    if s.get("skipped_pairs"):
        text += f" ({s['skipped_pairs']} skipped: a game aborted)"
    return text


def _interval_text(iv: dict[str, Any] | None) -> str:
    if not iv:
        return "n/a"
    v, lo, hi = iv["value"], iv["low"], iv["high"]
    if v is None:
        return "n/a"
    if lo is None or hi is None:
        # An end of the interval at a score of 0 or 1 is infinite Elo (null in JSON).
        return f"{v:+.1f} [{'-inf' if lo is None else f'{lo:+.1f}'}, {'+inf' if hi is None else f'{hi:+.1f}'}]"
    return f"{v:+.1f} ± {(hi - lo) / 2:.1f}"


def _score_text(iv: dict[str, Any] | None) -> str:
    """``57.8% [51.5%, 64.0%]``: a pairing's score with its 95% interval (n/a without games)."""
    if not iv or iv.get("value") is None:
        return "n/a"
    ends = ["-" if x is None else f"{100 * x:.1f}%" for x in (iv["low"], iv["high"])]
    return f"{100 * iv['value']:.1f}% [{ends[0]}, {ends[1]}]"


def leaderboard_rows(report: dict[str, Any]) -> list[list[str]]:
    """The leaderboard as rows of text cells (header first)."""
    rows = [["#", "agent", f"Elo (vs {report['anchor']})", "games", "score", "W/D/L", "forfeits"]]
    for r in report["leaderboard"]:
        rows.append([
            str(r["rank"]), r["spec"], _interval_text(r.get("rating")), str(r["games"]),
            _fmt(100 * r["score"], ".1f") + "%" if r["score"] is not None else "n/a",
            f"{r['wins']}/{r['draws']}/{r['losses']}", str(r["forfeits"]),
        ])
    return rows


def pairing_rows(report: dict[str, Any]) -> list[list[str]]:
    """The per-pairing table as rows of text cells (header first)."""
    rows = [["pairing", "games", "score [95%]", "W/D/L", "score diff/game", "pentanomial", "Elo", "LOS"]]
    for p in report["pairings"]:
        rows.append([
            f"{p['a']} vs {p['b']}", str(p["games"]), _score_text(p.get("score_interval")),
            f"{p['wins']}/{p['draws']}/{p['losses']}",
            _interval_text(p["score_diff"]), " ".join(map(str, p["pentanomial"])) if p["pairs"] else "-",
            _interval_text(p["elo"]), _fmt(100 * p["los"], ".1f") + "%" if p["los"] is not None else "n/a",
        ])
    return rows


def _table(rows: list[list[str]], left: int = 2) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for k, r in enumerate(rows):
        out.append("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def text(report: dict[str, Any], notes: bool = True) -> str:
    """The terminal summary: leaderboard, pairings, SPRT verdict, notes (unless ``notes=False``)."""
    t = report["tournament"]
    g = report["games"]
    parts = [
        f"{len(t['specs'])} agents, {t['games_per_pairing']} games per pairing, seed {t['seed']}, "
        f"{'duplicate' if t['duplicate'] else 'single'} format; {g['counted']} of {g['expected']} games counted"
        + (f", {g['forfeits']} forfeited" if g["forfeits"] else "")
        + (f"; {g['aborted_count']} aborted (re-run to play them again)" if g["aborted_count"] else "")
        + f"; engine: {backends_text(t.get('engine_backends') or {})}",
        "",
        _table(leaderboard_rows(report)),
        "",
        _table(pairing_rows(report), left=1),
    ]
    if report["sprt"]:
        s = report["sprt"]
        parts += ["", f"{s['spec']} vs {s['opponent']}: {s['text']}; {_sprt_basis(s)}"]
    for note in report["run"]["notes"] if notes else ():
        parts.append(f"note: {note}")
    return "\n".join(parts)


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown."""
    def md(rows: list[list[str]]) -> str:
        head, *body = rows
        return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                         + ["| " + " | ".join(r) + " |" for r in body])

    t = report["tournament"]
    g = report["games"]
    out = [
        "# Arena report",
        "",
        f"- Agents: {', '.join(f'`{s}`' for s in t['specs'])}",
        f"- Games per pairing: {t['games_per_pairing']} ({'duplicate' if t['duplicate'] else 'single'} format), "
        f"seed {t['seed']}",
        f"- Ruleset: `{json.dumps(t['ruleset'])}`, engine version {t['engine_version']}, "
        f"engine backend: {backends_text(t.get('engine_backends') or {})}",
        f"- Games counted: {g['counted']} of {g['expected']}; forfeits: {g['forfeits']}",
        "",
        f"## Ratings (Bradley-Terry, logistic Elo, anchored on `{report['anchor']}` = 0, 95 % intervals)",
        "",
        md(leaderboard_rows(report)),
        "",
        "## Pairings (first-named agent's point of view)",
        "",
        md(pairing_rows(report)),
        "",
        "Pentanomial: duplicate pairs scoring 0, ½, 1, 1½, 2 for the first agent. "
        "Score difference: mean points per game, t-interval over pairs.",
    ]
    if report["sprt"]:
        s = report["sprt"]
        out += ["", "## SPRT", "", f"`{s['spec']}` vs `{s['opponent']}`: {s['text']}; {_sprt_basis(s)}."]
    if report["games"]["errors"] or report["games"]["aborted"]:
        out += ["", "## Errors", ""] + [f"- {e}" for e in report["games"]["errors"] + report["games"]["aborted"]]
    if report["run"]["notes"]:
        out += ["", "## Notes", ""] + [f"- {n}" for n in report["run"]["notes"]]
    return "\n".join(out) + "\n"


def plot(report: dict[str, Any], path: str) -> bool:
    """Write a PNG of the ratings with 95 % error bars; False if matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    board = [r for r in report["leaderboard"] if r.get("rating") and r["rating"]["value"] is not None]
    board = board[::-1]
    names = [r["spec"] for r in board]
    vals = [r["rating"]["value"] for r in board]
    ratings = [r["rating"] for r in board]
    lo = [r["value"] - (r["low"] if r["low"] is not None else r["value"]) for r in ratings]
    hi = [(r["high"] if r["high"] is not None else r["value"]) - r["value"] for r in ratings]
    # Wide enough for the longest name (a policy file's path can be 80 characters): tight_layout cannot shrink
    # the axes below zero width, and warns instead.
    width = max(7.0, 4.0 + 0.075 * max((len(n) for n in names), default=0))
    fig, ax = plt.subplots(figsize=(width, 0.5 * len(names) + 1.5))
    ax.errorbar(vals, range(len(names)), xerr=[lo, hi], fmt="o", capsize=4)
    ax.set_yticks(range(len(names)), names)
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel(f"Elo relative to {report['anchor']} (95 % interval)")
    engine = backends_text(report["tournament"].get("engine_backends") or {})
    ax.set_title(f"Arena ratings ({report['games']['counted']} games; engine: {engine})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
