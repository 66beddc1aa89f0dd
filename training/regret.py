"""Where a player loses points against a reference search, decision by decision (``mulle-expert regret``).

An arena match says *that* ``learned`` is behind ``pimc``; this says *where*. A driver
agent plays self-play games; at every ``every``-th decision with more than one legal
move, a reference search (``netsearch`` or ``pimc``: anything with
``move_values(view, legal_moves, rng)``) values every legal move, and each compared
player picks a move from the same view. A pick's **regret** is the reference's best
value minus the value of the pick (points, mover's seat): 0 when it agrees. The players
are charged on the same decisions, so their regrets compare pair by pair.

Every agent hears the game's public history (the searches deal their determinizations
by it). The reference and each player get their own random stream per decision, seeded
from the seed, the decision's number and the agent's spec; the driver's comes from the
seed, the game and the seat. So a run is the same in every process and on every machine.
The regret is also split by the *kind* of move the reference prefers (capture, build,
discard, trotta): the share of each kind in the mean regret.

The reference must value every legal move in points (``pimc``, or ``netsearch`` with
``width=0`` and no ``prior``): a search that screens candidates leaves the others
unvalued, and a move it never looked at has no regret to charge. It is a search too,
with its own sampling error and, for ``netsearch``, its own net: a second, cheaper copy
of it among the players (e.g. the teacher's own settings) shows how much of a player's
regret that error could explain, and the players' regrets are measured against the
reference's judgement, not against the truth.
"""

from __future__ import annotations

import random
import re
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.base import Agent
from agents.match import play_agents
from agents.rollout import best_index
from arena import stats
from training.teacher import check_data_dir, deal_seed, shard_path, values_moves

if TYPE_CHECKING:
    from mulle_env.engine import GameState, Move, PlayerView

__all__ = ["KINDS", "data_regret_table", "format_table", "paired_difference", "regret_table"]

#: Move kinds, in the order the breakdown lists them.
KINDS = ("capture", "build", "discard", "trotta")
#: A pick this close to the reference's best value agrees with it (the searches' own tie margin).
_TIE = 1e-9


class _Driver(Agent):
    """The driver's seat in every game: plays the driver's move; every listener hears each move.

    One object sits in both seats because the match tells each distinct agent every move
    once: two seat objects would make every listener hear each move twice.
    """

    def __init__(self, driver: Agent, listeners: Sequence[Agent]) -> None:
        self.driver, self.listeners = driver, listeners
        self.spec = getattr(driver, "spec", "driver")

    def reset(self) -> None:
        for a in self.listeners:
            a.reset()

    def observe(self, event: tuple[int, Move]) -> None:
        for a in self.listeners:
            a.observe(event)

    def act(self, view: PlayerView, legal_moves: Sequence[Move], rng: random.Random) -> Move:
        return self.driver.act(view, legal_moves, rng)


def _pick(agent: Agent, spec: str, view: PlayerView, legal: list[Move], rng: random.Random) -> int:
    move = agent.act(view, list(legal), rng)
    try:
        return legal.index(move)
    except ValueError:
        raise ValueError(f"player {spec!r} answered {move!r}, which is not one of the "
                         f"{len(legal)} legal moves") from None


def regret_table(players: Sequence[str], reference: str, games: int, every: int = 4, seed: int = 0,
                 driver: str = "learned", progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Each player's agreement with ``reference`` and regret by it, on the driver's self-play decisions.

    Returns a JSON-ready dict: the settings, ``decisions`` (how many were valued), and per
    player (in the order given) ``agreement`` (share of decisions where it picked the
    reference's best move), ``regret`` (mean points a decision, with its 95% interval:
    ``value``, ``low``, ``high``) and ``by_kind`` (the reference's preferred kind -> the
    number of such decisions and their share of the mean regret), plus ``random``: the
    mean regret of a uniformly random legal move. Each player's ``per_decision`` regrets
    and the top-level ``kinds`` (the reference's preferred kind, per decision) let
    :func:`paired_difference` compare two players on the same decisions. A reference
    that leaves a legal move unvalued is a ``ValueError``. ``progress(game, games)`` is
    called after each game.
    """
    import agents

    if games < 1 or every < 1:
        raise ValueError(f"games and every must be positive, not {games} and {every}")
    ref = agents.make(reference)
    if not values_moves(ref):
        raise ValueError(f"reference {reference!r} cannot value moves (no move_values); use pimc or netsearch")
    if getattr(ref, "prior", 0):
        raise ValueError(f"reference {reference!r} adds prior x log-probability to its values, which are then "
                         "not points; give it prior=0")
    specs = [agents.canonical(s) for s in players]
    bots = [agents.make(s) for s in specs]
    drive = agents.make(driver)
    seat = _Driver(drive, [drive, ref, *bots])
    rows: list[tuple[list[float], list[int], str]] = []
    counter = [0]

    def on_move(state: GameState, player: int, legal: list[Move], move: Move) -> None:
        if len(legal) < 2:
            return
        counter[0] += 1
        k = counter[0]
        if k % every:
            return
        view = state.view(player)
        valued = ref.move_values(view, list(legal), random.Random(f"regret|{seed}|{k}|reference"))
        value_of = {m: v for m, v in valued}
        if any(m not in value_of for m in legal):
            raise ValueError(f"reference {reference!r} valued {len(value_of)} of {len(legal)} legal moves: it "
                             "screens candidates, so a pick it never looked at could not be charged; give it "
                             "width=0 (every move valued)")
        values = [float(value_of[m]) for m in legal]
        picks = [_pick(b, s, view, legal, random.Random(f"regret|{seed}|{k}|{s}")) for b, s in zip(bots, specs)]
        rows.append((values, picks, legal[best_index(values)].kind))

    for g in range(games):
        play_agents([seat, seat], deal_seed(seed, g), [random.Random(f"regret|{seed}|{g}|{p}") for p in (0, 1)],
                    on_move=on_move, specs=[driver, driver])
        if progress is not None:
            progress(g + 1, games)
    return _summary(rows, specs, {"reference": ref.spec, "driver": drive.spec, "games": games, "every": every,
                                  "seed": seed})


def _summary(rows: list[tuple[list[float], list[int], str]], specs: Sequence[str], head: dict[str, Any]
             ) -> dict[str, Any]:
    """The result of :func:`regret_table` from its rows (the reference's values, each player's pick, the
    reference's preferred kind, per decision)."""
    n = len(rows)
    out: dict[str, Any] = {**head, "decisions": n, "kinds": [k for _, _, k in rows], "players": []}
    for i, spec in enumerate(specs):
        regrets = [max(v) - v[p[i]] for v, p, _ in rows]
        iv = stats.mean_interval(regrets)
        by_kind: dict[str, dict[str, float]] = {}
        for kind in KINDS:
            of_kind = [r for r, (_, _, k) in zip(regrets, rows) if k == kind]
            if of_kind:
                by_kind[kind] = {"decisions": len(of_kind), "share": sum(of_kind) / n}
        out["players"].append({"spec": spec, "agreement": sum(r <= _TIE for r in regrets) / n if n else None,
                               "regret": iv.to_dict() if iv else None, "by_kind": by_kind,
                               "per_decision": regrets})
    out["random"] = sum(max(v) - sum(v) / len(v) for v, _, _ in rows) / n if n else None
    return out


def data_regret_table(players: Sequence[str], data_dir: str | Path, shards: tuple[int, int | None] = (0, None),
                      progress: Callable[[int, int], None] | None = None,
                      checked: Callable[[], None] | None = None) -> dict[str, Any]:
    """:func:`regret_table` on a stored teacher data set: its teacher's values judge afterstate nets' picks.

    The data (``mulle-train data --afterstates``) holds every decision's legal moves, the
    teacher's value of each and the position each move leaves, so a net's pick is one
    batched forward pass per shard: seconds for what a match against a search takes
    minutes for. ``players`` are specs of afterstate ``learned`` agents (``learned``,
    ``learned:path=FILE``) trained for the data's rules; each picks as it plays (banked
    points plus the net's points to come, first best move on a tie; a whole shard is one
    product over the stored float16 encodings, so equal to its play up to rounding).
    ``shards`` is ``(start, stop)`` over the directory's shard numbers: name games no
    judged net was fitted on (a fit holds out its own 5% at random). Decisions with one
    legal move are skipped. Refused with a ``ValueError`` naming what is wrong: game
    records (no values), a teacher that left a legal move unvalued, a gap in the shard
    range, a damaged shard, a player that samples or is not an afterstate net. Under
    ``forced_capture=False`` the data numbers moves by their place, so ``by_kind`` is
    empty. The result has :func:`regret_table`'s form (``reference`` is the data's
    teacher, ``driver`` the agent that played its games, ``every`` 1, plus ``data`` and
    ``shards``) and prints with :func:`format_table`; ``progress(shard, shards)`` is
    called after each shard, ``checked()`` once every argument has passed its checks (before
    the first shard is read), so a caller can tell a bad argument from bad data.
    """
    import agents
    from mulle_env.codec import action_to_move
    from mulle_env.engine import Ruleset

    from .afterfit import move_rows

    spec = check_data_dir(data_dir)
    if spec.get("label") == "choice" or not spec.get("teacher"):
        raise ValueError(f"{data_dir} holds game records (the moves played, no teacher's values): nothing to "
                         "judge a pick by; give a data set of mulle-train data")
    if not spec.get("afterstates"):
        raise ValueError(f"{data_dir} holds no afterstates: make it with mulle-train data --afterstates")
    start, stop = shards
    found = sorted(int(m.group(1)) for p in Path(data_dir).glob("shard_*.npz")
                   if (m := re.fullmatch(r"shard_(\d+)\.npz", p.name)))
    chosen = [k for k in found if k >= start and (stop is None or k < stop)]
    if not chosen:
        raise ValueError(f"{data_dir} has no shard in {start}:{'' if stop is None else stop} "
                         f"(it has {len(found)}, numbered {found[0]} to {found[-1]})" if found else
                         f"{data_dir} has no shards yet")
    missing = sorted(set(range(start, chosen[-1] + 1 if stop is None else stop)) - set(chosen))
    if missing:
        raise ValueError(f"{data_dir} lacks shard(s) {', '.join(map(str, missing[:10]))}"
                         f"{' ...' if len(missing) > 10 else ''} of {start}:{'' if stop is None else stop}: "
                         "complete it (rerun its mulle-train data) or name a range it holds")
    specs = [agents.canonical(p) for p in players]
    ruleset = Ruleset.from_dict(spec.get("rules") or {})
    # Under forced_capture=False a decision's moves are stored by their place in the list, not by action id.
    by_id = ruleset.forced_capture
    policies = []
    for s in specs:
        bot = agents.make(s)
        policy = getattr(bot, "policy", None)
        if policy is None or getattr(policy, "head", None) != "afterstate":
            raise ValueError(f"player {s!r} is not an afterstate net: on stored data only learned agents whose "
                             "file scores afterstates can be charged (learned, learned:path=FILE)")
        if getattr(bot, "sample", False):
            raise ValueError(f"player {s!r} samples its moves: on stored data only the argmax pick is charged "
                             "(drop sample=true)")
        bot.check_ruleset(ruleset)  # a net never judged on rules it was not trained for
        policies.append(policy)
    if checked is not None:
        checked()
    rows: list[tuple[list[float], list[int], str]] = []
    for n, k in enumerate(chosen):
        try:
            with np.load(shard_path(data_dir, k), allow_pickle=False) as z:
                legal, values = z["legal"], z["values"].astype(np.float64)
                after = z["after_obs"].astype(np.float32)
                banked = z["after_banked"].astype(np.float64)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            raise ValueError(f"{shard_path(data_dir, k)} is not a readable teacher data shard ({exc}); "
                             "delete it and rerun mulle-train data to make it again") from None
        try:  # the fit's own mapping of afterstate rows to decisions, and its consistency check
            _, value, begins = move_rows({"legal": legal, "values": values, "after_obs": after})
        except ValueError as exc:
            raise ValueError(f"{shard_path(data_dir, k)}: {exc}") from None
        ids = legal[legal >= 0]  # row r is the move ids[r]
        scores = [banked + p.points_to_come(after) for p in policies]
        for lo, hi in zip(begins.tolist(), [*begins[1:].tolist(), len(value)]):
            c = hi - lo
            if c < 2:
                continue
            vals = value[lo:hi]
            if not np.isfinite(vals).all():
                raise ValueError(f"{shard_path(data_dir, k)}: the teacher {spec['teacher']!r} valued "
                                 f"{int(np.isfinite(vals).sum())} of {c} legal moves of a decision, so a pick "
                                 "it never looked at could not be charged; use data of a teacher that values "
                                 "every move (width=0)")
            picks = [int(np.argmax(z[lo:hi])) for z in scores]
            listed = vals.tolist()
            kind = action_to_move(int(ids[lo + best_index(listed)])).kind if by_id else "unknown"
            rows.append((listed, picks, kind))
        if progress is not None:
            progress(n + 1, len(chosen))
    return _summary(rows, specs, {"reference": spec["teacher"], "driver": spec.get("driver") or spec["teacher"],
                                  "games": len(chosen) * int(spec["shard_games"]), "every": 1,
                                  "seed": spec["seed"], "data": str(data_dir), "shards": [chosen[0], chosen[-1] + 1]})


def paired_difference(result: dict[str, Any], a: str, b: str, kind: str | None = None) -> dict[str, Any] | None:
    """Mean regret of player ``a`` minus player ``b`` on the same decisions, with its 95% interval.

    ``kind`` restricts it to the decisions where the reference prefers that kind of move;
    the result is then per such decision (not a share of the overall mean). ``None`` when
    no decision qualifies.
    """
    by_spec = {p["spec"]: p["per_decision"] for p in result["players"]}
    for s in (a, b):
        if s not in by_spec:
            raise ValueError(f"no player {s!r} in this table; players: {', '.join(by_spec)}")
    keep = [kind is None or k == kind for k in result["kinds"]]
    diffs = [x - y for x, y, ok in zip(by_spec[a], by_spec[b], keep) if ok]
    iv = stats.mean_interval(diffs)
    return None if iv is None else {**iv.to_dict(), "decisions": len(diffs)}


def format_table(result: dict[str, Any]) -> list[str]:
    """The lines ``mulle-expert regret`` prints for a :func:`regret_table` result."""
    if "data" in result:
        first, stop = result["shards"]
        source = (f"{result['decisions']} decisions with a choice of {result['games']} games of {result['driver']} "
                  f"in {result['data']} (shards {first} to {stop - 1}), valued by its teacher {result['reference']}")
    else:
        source = (f"{result['decisions']} decisions from {result['games']} games of {result['driver']} "
                  f"(every {result['every']}th with a choice), valued by {result['reference']}")
    lines = [source,
             f"{'player':52s} {'agrees':>7s} {'regret (pts/decision, 95%)':>28s}   share of the regret by the "
             "reference's move kind"]
    for p in result["players"]:
        r = p["regret"]
        reg = "n/a" if r is None else f"{r['value']:.3f}" + (
            "" if r["low"] is None else f" [{r['low']:.3f}, {r['high']:.3f}]")
        agree = "n/a" if p["agreement"] is None else f"{100 * p['agreement']:.1f}%"
        kinds = ", ".join(f"{k} {v['share']:.3f} ({v['decisions']})" for k, v in p["by_kind"].items())
        lines.append(f"{p['spec']:52s} {agree:>7s} {reg:>28s}   {kinds}")
    if result["random"] is not None:
        lines.append(f"{'a random legal move':52s} {'':>7s} {result['random']:>28.3f}")
    first = result["players"][0]["spec"] if result["players"] else None
    for p in result["players"][1:]:
        assert first is not None  # a second player comes after a first
        parts = []
        for kind in (None, *KINDS):
            d = paired_difference(result, first, p["spec"], kind)
            if d is not None and d["low"] is not None:
                parts.append(f"{kind or 'all'} {d['value']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]")
        if parts:
            lines.append(f"{first} minus {p['spec']}, points a decision (of that kind): " + ", ".join(parts))
    return lines
