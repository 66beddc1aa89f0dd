"""The PNGs of expert iteration: Elo by generation, and Elo against thinking time (needs the ``plot`` extra)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from arena import results as results_mod
from arena import stats
from arena.report import ANCHOR
from arena.tournament import FINISHED, game_points

from .evaluate import ms_per_decision

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["generation_series", "plot_generations", "plot_speed", "speed_points"]


def _pyplot() -> ModuleType | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def generation_series(manifest: dict[str, Any], x: str = "generation"
                      ) -> dict[str, list[tuple[float, float, float, float]]]:
    """Per ``"<candidate> vs <opponent>"``: ``(x, elo, low, high)`` of every measured generation.

    ``x`` is the generation's number (``"generation"``) or the run's wall-clock hours when
    it ended (``"hours"``, from its ``elapsed`` seconds; generations without it are left out).
    """
    series: dict[str, list[tuple[float, float, float, float]]] = {}
    for gen in manifest.get("generations", []):
        if x == "hours" and gen.get("elapsed") is None:
            continue
        at = gen["generation"] if x == "generation" else gen["elapsed"] / 3600
        for kind, match in (gen.get("eval") or {}).items():
            elo = match.get("elo") or {}
            if elo.get("value") is None:
                continue
            key = f"{kind.split('|')[0]} vs {match.get('label') or match['b']}"
            low = elo["low"] if elo.get("low") is not None else elo["value"]
            high = elo["high"] if elo.get("high") is not None else elo["value"]
            series.setdefault(key, []).append((at, elo["value"], low, high))
    return series


def _manifest(path: str | Path) -> dict[str, Any]:
    """An expert run's ``manifest.json``, or a ``ValueError`` naming the file and what it is not."""
    from mulle_env.files import read_json

    run = read_json(path, "the run's manifest")  # a file that is no JSON is refused by name (PathError, JSONInputError)
    if not isinstance(run, dict) or not isinstance(run.get("generations"), list):
        raise ValueError(f"{path} is not an expert run's manifest.json (a JSON object with a list of generations)")
    return run


def plot_generations(manifest: dict[str, Any] | str | Path, path: str | Path, x: str = "generation") -> bool:
    """Elo (95% interval) of each generation's policy and search against each opponent; False without matplotlib.

    ``x="hours"`` draws it against the run's wall-clock hours instead of the generation number.
    """
    run: dict[str, Any] = manifest if isinstance(manifest, dict) else _manifest(manifest)
    plt = _pyplot()
    if plt is None:
        return False
    series = generation_series(run, x)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    spread = 0.06 if x == "generation" else 0.0
    for k, (name, pts) in enumerate(sorted(series.items())):
        xs = [p[0] + spread * (k - len(series) / 2) for p in pts]  # spread overlapping error bars
        y = [p[1] for p in pts]
        ax.errorbar(xs, y, yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]], fmt="o-", capsize=3,
                    label=name)
    ax.axhline(0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("generation" if x == "generation" else "wall-clock hours of the run")
    ax.set_ylabel("Elo against the opponent (duplicate, 95% interval)")
    ax.set_title("Expert iteration: strength by " + ("generation" if x == "generation" else "wall-clock time"))
    gens = sorted({p[0] for pts in series.values() for p in pts})
    if gens and x == "generation":
        ax.set_xticks(gens)
    if series:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def speed_points(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per spec in arena result lines: Bradley-Terry Elo (95% interval) and ms a decision.

    The ratings are anchored on ``random`` when it plays, else on the first spec.
    """
    lines = [ln for ln in lines if ln.get("status") in FINISHED]
    specs = sorted({s for ln in lines for s in ln["specs"]})
    if len(specs) < 2:
        raise ValueError(f"an Elo needs games between at least 2 agents; the results hold {len(specs)}")
    idx = {s: i for i, s in enumerate(specs)}
    games = [(idx[ln["specs"][0]], idx[ln["specs"][1]], cast(float, game_points(ln, ln["specs"][0])))  # finished
             for ln in lines]
    ratings = stats.bradley_terry(specs, games, anchor=idx.get(ANCHOR, 0))
    out: list[dict[str, Any]] = []
    for s in specs:
        iv = ratings.interval(idx[s])
        out.append({"spec": s, "elo": iv.value, "low": iv.low, "high": iv.high, "ms": ms_per_decision(lines, s),
                    "games": sum(1 for ln in lines if s in ln["specs"])})
    return out


def plot_speed(results: str | Path, path: str | Path) -> list[dict[str, Any]]:
    """Plot Elo against milliseconds per decision for every spec of one arena results file; return the points.

    Raises ``RuntimeError`` when matplotlib is missing.
    """
    loaded = results_mod.load(str(results), repair=False)
    points = speed_points(loaded.lines)
    plt = _pyplot()
    if plt is None:
        raise RuntimeError("plotting needs matplotlib: pip install 'mulle-env[plot]'")
    anchor = ANCHOR if any(p["spec"] == ANCHOR for p in points) else points[0]["spec"]
    fig, ax = plt.subplots(figsize=(8, 5))
    placed: list[tuple[float, float, int]] = []
    # Log scale: an agent that reported no time is drawn at 1 µs.
    shown = {id(q): max(q["ms"] or 1e-3, 1e-3) for q in points}
    at = [(math.log10(shown[id(q)]), q["elo"]) for q in points]
    for p in sorted(points, key=lambda q: q["ms"] or 0.0):
        ms = shown[id(p)]
        x = math.log10(ms)
        ax.errorbar([ms], [p["elo"]], yerr=[[p["elo"] - p["low"]], [p["high"] - p["elo"]]], fmt="o", capsize=3)
        # Agents of about the same time and strength would print their names on top of
        # each other: the first label free of its neighbours' goes above, else below.
        near = {dy for px, y, dy in placed if abs(x - px) < 0.5 and abs(p["elo"] - y) < 60}
        dy = next(d for d in (4, -12, 16, -24, 28) if d not in near or d == 28)
        placed.append((x, p["elo"], dy))
        # A label that would run over another agent's marker at about the same strength
        # goes to the left of its own if that side is free (about 0.045 decades a
        # character at this size), else further down with a leader line to its marker.
        width = 0.045 * len(p["spec"])

        def crowded(lo: float, hi: float, gap: float) -> bool:
            return any(lo < qx < hi and abs(p["elo"] - qy) < gap for qx, qy in at)

        style: dict[str, Any] = {"xytext": (5, dy), "ha": "left"}
        if crowded(x, x + width, 40):
            # A label moved left must keep well clear of the markers there, or it reads as theirs.
            if not crowded(x - width, x, 60):
                style = {"xytext": (-5, dy), "ha": "right"}
            else:
                leader = {"arrowstyle": "-", "lw": 0.5, "relpos": (0, 0.5)}
                style = {"xytext": (5, dy - 26), "ha": "left", "arrowprops": leader}
        ax.annotate(p["spec"], (ms, p["elo"]), textcoords="offset points", fontsize=7, **style)
    ax.set_xscale("log")
    # Room on the right for the labels of the slowest agents.
    xs = list(shown.values())
    ax.set_xlim(min(xs) / 2, max(xs) * 8)
    ax.set_xlabel("milliseconds per decision (arena thinking time, log scale)")
    ax.set_ylabel(f"Bradley-Terry Elo relative to {anchor} (95% interval)")
    ax.set_title(f"Strength against thinking time ({len(loaded.lines)} games, one arena run)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return points
