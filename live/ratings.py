"""Ratings of the people and agents who played at a live server, from its game history.

The rating math is the arena's (:func:`arena.stats.bradley_terry`: logistic Elo, a maximum-likelihood
Bradley-Terry fit with 95 % intervals); this module only decides which stored games count and who
played them:

* only games played to the end (``status`` ``finished``; an abandoned game has no result);
* only games in which each seat had one holder from the first move to the last (a person who took
  an agent's seat mid-game, or an agent replaced for time, makes the game nobody's to rate);
* a person is known by name, any case (``Anna`` and ``anna`` are one player; names are not
  accounts, so a rating says how games played under that name went), an agent by its spec
  (``pimc:samples=20``); ``person:`` and ``agent:`` keep a person called ``random`` apart from the agent;
* a win scores 1, a draw 1/2; the anchor at 0 Elo is the agent ``random`` when it played, else the
  agent with the most games, else the player with the most games.

``GET /api/ratings`` answers :func:`ratings` (and ``?player=NAME`` adds :func:`history`). scipy is imported
only when ratings are asked for, so a server that never rates does not carry it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["history", "player_key", "rated_games", "ratings"]

Row = tuple[int, str, "int | None", list[list[dict]]]


def player_key(name: str, kind: str) -> str:
    """The key one player is rated under: ``person:anna`` (case-folded) or ``agent:<spec>``."""
    return f"person:{name.casefold()}" if kind == "person" else f"agent:{name}"


def rated_games(rows: list[Row]) -> list[dict[str, Any]]:
    """The games that count (see the module docstring), each ``{"id", "finished_at", "keys": [k0, k1], "names":
    [n0, n1], "score": score of seat 0}``, oldest first."""
    out = []
    for gid, finished_at, winner, seats in rows:
        if any(len(holders) != 1 for holders in seats):
            continue
        keys = [player_key(h[0]["name"], h[0]["kind"]) for h in seats]
        if keys[0] == keys[1]:
            continue  # an agent against itself says nothing about anyone's strength
        score = 0.5 if winner is None else (1.0 if winner == 0 else 0.0)
        out.append({"id": gid, "finished_at": finished_at, "keys": keys, "names": [h[0]["name"] for h in seats],
                    "score": score})
    return out


def _anchor(keys: list[str], counts: Counter[str]) -> int:
    if "agent:random" in keys:
        return keys.index("agent:random")
    agents = [k for k in keys if k.startswith("agent:")]
    pool = agents or keys
    return keys.index(max(pool, key=lambda k: (counts[k], k)))


def ratings(games: list[dict[str, Any]]) -> dict[str, Any]:
    """Ratings with 95 % intervals for everyone in ``games`` (:func:`rated_games`): ``{"anchor", "games",
    "players": [{"key", "name", "kind", "elo", "low", "high", "games", "wins", "draws", "losses"}, ...]}``,
    best first. Fewer than two players: an empty list."""
    names: dict[str, str] = {}
    counts: Counter[str] = Counter()
    wdl: dict[str, list[int]] = {}
    for g in games:
        for seat in (0, 1):
            key = g["keys"][seat]
            names.setdefault(key, g["names"][seat])
            counts[key] += 1
            s = g["score"] if seat == 0 else 1 - g["score"]
            wdl.setdefault(key, [0, 0, 0])[0 if s == 1 else 1 if s == 0.5 else 2] += 1
    keys = sorted(names)
    if len(keys) < 2:
        return {"anchor": None, "games": len(games), "players": []}
    from arena.stats import bradley_terry  # scipy: only when ratings are asked for

    index = {k: i for i, k in enumerate(keys)}
    anchor = _anchor(keys, counts)
    fit = bradley_terry(keys, [(index[g["keys"][0]], index[g["keys"][1]], g["score"]) for g in games], anchor=anchor)
    players = []
    for i, key in enumerate(keys):
        iv = fit.interval(i).to_dict()
        w, d, lo = wdl[key]
        players.append({"key": key, "name": names[key], "kind": key.split(":", 1)[0], "elo": _round(iv["value"]),
                        "low": _round(iv["low"]), "high": _round(iv["high"]), "games": counts[key], "wins": w,
                        "draws": d, "losses": lo})
    players.sort(key=lambda p: (-(p["elo"] if p["elo"] is not None else -1e9), p["key"]))
    return {"anchor": keys[anchor], "games": len(games), "players": players}


def history(games: list[dict[str, Any]], name: str, limit: int = 50) -> list[dict[str, Any]]:
    """A person's last ``limit`` rated games, newest first: ``{"id", "finished_at", "opponent", "result"
    ("win"/"draw"/"loss"), "elo"}``, where ``elo`` is the person's rating fitted on the games up to and including
    that one (a rating's path, not a second formula)."""
    key = player_key(name, "person")
    mine = [i for i, g in enumerate(games) if key in g["keys"]][-limit:]
    out = []
    for i in mine:
        g = games[i]
        seat = g["keys"].index(key)
        s = g["score"] if seat == 0 else 1 - g["score"]
        upto = ratings(games[: i + 1])
        me = next((p for p in upto["players"] if p["key"] == key), None)
        out.append({"id": g["id"], "finished_at": g["finished_at"], "opponent": g["names"][1 - seat],
                    "result": "win" if s == 1 else "draw" if s == 0.5 else "loss",
                    "elo": me["elo"] if me else None, "low": me["low"] if me else None,
                    "high": me["high"] if me else None})
    out.reverse()
    return out


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)
