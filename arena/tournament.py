"""Running a tournament: resume from the results file, play what is missing, stop early.

:func:`run` is what ``mulle-arena`` calls; it returns a :class:`Outcome` holding the
result lines of the tournament's games (from earlier runs and this one) that the
report is built from.

Early stopping is deterministic: the SPRT is evaluated on the longest run of
*complete* duplicate pairs ``0, 1, ..., k-1`` (in schedule order), never on whatever
happens to finish first, so the stopping point and the report are the same for any
number of workers. Games that finished beyond the stopping point stay in the results
file but are not counted. A pair with a game this run had to abort (dead worker, game
time limit, engine error) is skipped by the SPRT instead of holding it up; the report
says on how many pairs the test ran (aborts depend on the machine, so a run with
aborts may stop at another pair than a clean one).
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from mulle_env.files import check_output_path

from . import results as results_mod
from .game import AgentGameError, game_name, result_check, seating_refusal
from .schedule import Plan
from .shutdown import deferred_interrupts
from .stats import SPRT
from .worker import agent_version, engine_backend, engine_version, line_versions, load_game

if TYPE_CHECKING:
    from .runner import Backend

log = logging.getLogger("arena")
#: What reading the results file found (lines set aside, games played again): said even under ``--quiet``.
results_log = logging.getLogger("arena.results")

FINISHED = ("ok", "forfeit")


def game_points(line: dict[str, Any], spec: str) -> float | None:
    """What ``spec`` scored in the game ``line``: 1, 0.5 or 0 (``None`` if aborted or not in it)."""
    if line.get("status") not in FINISHED:
        return None
    specs = line["specs"]
    if spec not in specs:
        return None
    seat = specs.index(spec)
    w = line.get("winner")
    return 0.5 if w is None else 1.0 if w == seat else 0.0


@dataclass
class Outcome:
    """What a run produced.

    Attributes:
        plan: The tournament.
        lines: Result lines of the plan's games that count (by ``game_id``).
        played: Games played (written) by this run.
        skipped: Games already in the results file when the run started.
        notes: Problems found in the results file (corrupt lines, other versions).
        sprt: The SPRT, when one ran.
        stopped_at: Number of duplicate pairs (in schedule order) the SPRT decided after.
        sprt_pairs: Pairs the SPRT scored (complete pairs in its prefix, skipped ones left out).
        sprt_skipped: Pairs in that prefix the SPRT skipped because a game was aborted.
        interrupted: True if the run was cut short (Ctrl-C).
        elapsed: Wall time of this run in seconds.
        aborted: ``"game_id: error"`` of games this run could not finish (played again on re-run).
    """

    plan: Plan
    lines: list[dict[str, Any]]
    played: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)
    sprt: SPRT | None = None
    stopped_at: int | None = None
    sprt_pairs: int = 0
    sprt_skipped: int = 0
    interrupted: bool = False
    elapsed: float = 0.0
    backend: str = "process"
    workers: int = 1
    aborted: list[str] = field(default_factory=list)


class _SprtTracker:
    """Feeds complete duplicate pairs, in order, to an SPRT (see the module docstring).

    Pair ``k`` is made from the plan when it is reached, so nothing here grows with ``games``.
    """

    def __init__(self, plan: Plan, sprt: SPRT, by_id: dict[str, dict[str, Any]], failed: set[str]) -> None:
        self.plan = plan
        self.sprt = sprt
        self.by_id = by_id  # finished games
        self.failed = failed  # ids of games this run aborted (they will not finish in it)
        self.spec = plan.specs[0]
        self.pairing = plan.pairings()[0]
        self.n_pairs = plan.games // 2
        self.k = 0
        self.scored = 0
        self.skipped = 0
        self.counts = [0, 0, 0, 0, 0]
        self.decided_at: int | None = None

    def _pair(self, k: int) -> list[dict[str, Any]]:
        return [self.plan.task(self.pairing, 2 * k), self.plan.task(self.pairing, 2 * k + 1)]

    def advance(self) -> bool:
        """Take in every newly complete pair; True once a bound is crossed."""
        while self.decided_at is None and self.k < self.n_pairs:
            pair = self._pair(self.k)
            if any(t["game_id"] in self.failed for t in pair):
                # Waiting for it would freeze the test for the rest of the run.
                self.k += 1
                self.skipped += 1
                continue
            lines = [self.by_id.get(t["game_id"]) for t in pair]
            if any(ln is None for ln in lines):
                break
            # Both games are finished (by_id holds only those) and both have this spec: both score.
            pts = cast("list[float]", [game_points(cast("dict[str, Any]", ln), self.spec) for ln in lines])
            self.k += 1
            self.scored += 1
            self.counts[int(round(2 * sum(pts)))] += 1
            if self.sprt.update(self.counts):
                self.decided_at = self.k
        return self.decided_at is not None


#: A forfeit for the move time limit names it in its error; these read the limit back.
_TIMEOUT_ERROR = re.compile(r"exceeded the (?:move )?time limit of ([0-9.eE+-]+) s")


def timed_out_under(line: dict[str, Any]) -> float | None:
    """The move time limit a forfeit ``line`` was lost on (``None`` if it was no time forfeit)."""
    if line.get("status") != "forfeit":
        return None
    m = _TIMEOUT_ERROR.search(line.get("error") or "")
    if m is None:
        return None
    recorded = line.get("move_timeout")
    try:
        return float(recorded) if recorded is not None else float(m.group(1))
    except (TypeError, ValueError):
        return None


def _ending(line: dict[str, Any]) -> tuple[Any, ...]:
    """How a results line says its game ended (what two lines of one game must agree on)."""
    return tuple(repr(line.get(k)) for k in ("status", "scores", "winner", "forfeit", "sheets"))


def line_numbers(nos: list[int]) -> str:
    """Line numbers as a note names them: every one, so each line set aside or played again can be found."""
    return ", ".join(map(str, nos))


def _replay_reason(plan: Plan, line: dict[str, Any]) -> str | None:
    """Why a finished line of ``plan`` is played again in this run (``None``: it stands)."""
    if plan.save_games and "move_list" not in line:
        return "moves"
    limit = timed_out_under(line)
    if limit is not None and (plan.move_timeout is None or plan.move_timeout > limit):
        return "timeout"
    return None


def current_versions(plan: Plan) -> dict[str, str | None]:
    """The version of every agent of ``plan`` as built in this process (``None``: it does not build here).

    An agent that cannot be built here forfeits its games in the workers; its old lines
    are then not judged by version (there is nothing to compare them with).
    """
    out: dict[str, str | None] = {}
    name = game_name(load_game(plan.game), plan.game)
    for spec in plan.specs:
        try:
            out[spec] = agent_version(spec, name)
        except Exception:  # noqa: BLE001 - reported by the workers, which forfeit its games
            out[spec] = None
    return out


def _version_changes(line: dict[str, Any], versions: dict[str, str | None]) -> list[tuple[str, str, str]]:
    """``(spec, version played, version now)`` for each seat of ``line`` whose agent changed since."""
    out: list[tuple[str, str, str]] = []
    for spec, played in zip(line["specs"], line_versions(line)):
        now = versions.get(spec)
        if now is not None and played != now:
            out.append((spec, played, now))
    return out


def run(
    plan: Plan,
    out: str,
    backend: Backend | None = None,
    sprt: SPRT | None = None,
    progress: bool | str = True,
    on_line: Callable[[dict[str, Any]], None] | None = None,
    progress_interval: float = 30.0,
) -> Outcome:
    """Play the games of ``plan`` that ``out`` does not hold yet; return the outcome.

    ``backend`` is a :class:`arena.runner.ProcessBackend` (default: one worker) or
    :class:`arena.ray_backend.RayBackend`. With ``sprt`` (head-to-head only) the
    run stops as soon as the test decides. ``progress``: ``True`` or ``"bar"`` for a
    progress bar, ``"lines"`` for a plain line on stderr every ``progress_interval``
    seconds (for logs and CI, where a bar shows nothing until the end), ``False`` for none.

    Raises :class:`arena.results.ResultsFileBusyError` if another run is writing ``out``,
    and :class:`mulle_env.files.PathError` (a ``ValueError``) if ``out`` is not a regular
    file in an existing directory (a device, a FIFO, a directory).
    A game already in ``out`` is played again (the new line supersedes the old one) when
    ``plan.save_games`` is set and the old line has no move list, or when it was forfeited
    on a move time limit shorter than ``plan.move_timeout``. A line played by another
    engine version, or by another version of one of its agents (:attr:`agents.Agent.version`;
    a line without ``agent_versions`` was played by version ``"1"`` of each), is not
    counted and its game is played again. A plan that seats an agent at a game it does not
    play (:attr:`agents.Agent.games`) raises :class:`arena.game.AgentGameError` before any game.
    """
    from .runner import ProcessBackend

    if sprt is not None and len(plan.specs) != 2:
        raise ValueError(f"an SPRT needs exactly 2 agent specs (a head-to-head), not {len(plan.specs)}")
    if sprt is not None and not plan.duplicate:
        raise ValueError("the SPRT counts duplicate pairs; it cannot run with duplicate=False")
    # An agent at a game it does not play would forfeit every game of it: refused before the first.
    if (why := seating_refusal(plan.specs, load_game(plan.game), plan.game)) is not None:
        raise AgentGameError(why)
    # A device or FIFO would hang the lock's open or take every line and keep none.
    check_output_path(out, "the results file", probe=False)
    backend = backend or ProcessBackend(1)
    with results_mod.lock(out):
        return _run_locked(plan, out, backend, sprt, progress, on_line, progress_interval)


def _run_locked(plan: Plan, out: str, backend: Backend, sprt: SPRT | None, progress: bool | str,
                on_line: Callable[[dict[str, Any]], None] | None, progress_interval: float) -> Outcome:
    t0 = time.monotonic()
    game = load_game(plan.game)
    version = engine_version(game)
    backend_here = engine_backend(game)
    versions = current_versions(plan)
    # A line whose result the game says cannot be is damaged like one that breaks the schema.
    loaded = results_mod.load(out, check=result_check(game, plan.game))
    notes = loaded.problems()
    by_id: dict[str, dict[str, Any]] = {}
    order: dict[str, tuple[int, int]] = {}  # game_id -> (game index, pairing index) of this plan's lines
    redo: dict[str, str] = {}  # game_id -> why a finished game is played again
    line_no: dict[str, int] = {}  # game_id -> line number of the line that stands (or is played again)
    other_version: list[int] = []  # line numbers
    aborted: dict[str, int] = {}  # game_id -> line number of an aborted game, played again
    foreign = 0
    repeats: list[tuple[int, int, bool]] = []  # (line, line it repeats, their results differ)
    # game_id -> (line number, _version_changes) of its line played by another agent version
    changed: dict[str, tuple[int, list[tuple[str, str, str]]]] = {}
    # Only older single-format lines (no "index") of this tournament's specs need the seed scan.
    pairs = {frozenset(p) for p in plan.pairings()}
    legacy = {ln["seed"] for ln in loaded.lines if "index" not in ln and frozenset(ln["specs"]) in pairs}
    finder = plan.deal_finder(legacy) if not plan.duplicate and legacy else None
    for no, line in zip(loaded.numbers or range(1, len(loaded.lines) + 1), loaded.lines):
        where = plan.locate(line, finder)
        if where is None:
            foreign += 1
        elif line.get("engine_version") != version:
            other_version.append(no)
        elif line.get("status") not in FINISHED:
            aborted[line["game_id"]] = no  # an aborted game is played again whoever played it
        elif changes := _version_changes(line, versions):
            changed[line["game_id"]] = (no, changes)
        else:
            gid = line["game_id"]
            if gid in by_id and gid not in redo:
                # A game that stood is recorded again: never written by a run (a replayed game's old line has a
                # reason to be played again), so it is named, and said when its result differs.
                repeats.append((no, line_no[gid], _ending(by_id[gid]) != _ending(line)))
            by_id[gid], order[gid], line_no[gid] = line, where, no
            why = _replay_reason(plan, line)
            if why:
                redo[gid] = why
            else:
                redo.pop(gid, None)  # a later line of the game stands
    if other_version:
        notes.append(
            f"{len(other_version)} line(s) were played by another engine version (not {version!r}): "
            f"line {line_numbers(other_version)}; they are not counted and those games are played again"
        )
    aborted_again = sorted(no for gid, no in aborted.items() if gid not in by_id)
    if aborted_again:
        notes.append(f"{len(aborted_again)} aborted game(s) are played again: line {line_numbers(aborted_again)}")
    # A game the current agents finished already (a replay of an earlier run) needs no note.
    changed_agents: dict[tuple[str, str, str], list[int]] = {}  # (spec, version played, version now) -> lines
    other_agent = 0
    for gid, (no, changes) in changed.items():
        if gid not in by_id:
            other_agent += 1
            for change in changes:
                changed_agents.setdefault(change, []).append(no)
    if other_agent:
        what = "; ".join(f"{spec!r} version {played!r}, now {now!r} ({len(nos)} game(s): line {line_numbers(nos)})"
                         for (spec, played, now), nos in sorted(changed_agents.items()))
        notes.append(f"{other_agent} game(s) were played by another version of an agent ({what}); "
                     "they are not counted and are played again")
    if foreign:
        notes.append(f"{foreign} line(s) belong to other tournaments (other specs, seeds, games or rules) "
                     "and are ignored")
    if repeats:
        said = ", ".join(f"{no} (of line {first}{', another result' if differs else ''})"
                         for no, first, differs in repeats)
        notes.append(f"{len(repeats)} line(s) record again a game already finished earlier in the file: line {said}; "
                     "the last line of a game counts. A run never writes that: if the file was edited, "
                     "mulle-arena --verify replays the games saved with their moves")
    n_moves = sorted(line_no[gid] for gid, why in redo.items() if why == "moves")
    n_timeout = sorted(line_no[gid] for gid, why in redo.items() if why != "moves")
    if n_moves:
        notes.append(f"{len(n_moves)} earlier game(s) were played without --save-games and have no move list "
                     f"(line {line_numbers(n_moves)}); they are played again to record their moves (the new line "
                     "supersedes the old one)")
    if n_timeout:
        limit = "no limit" if plan.move_timeout is None else f"{plan.move_timeout:g} s"
        notes.append(f"{len(n_timeout)} game(s) forfeited on a shorter move time limit than this run's ({limit}) "
                     f"are played again (line {line_numbers(n_timeout)}; the new line supersedes the old one)")
    for note in notes[len(loaded.problems()):]:
        results_log.warning("%s: %s", out, note)
    skipped = len(by_id) - len(redo)
    failed: set[str] = set()
    tracker = _SprtTracker(plan, sprt, by_id, failed) if sprt is not None else None
    # Games played again leave by_id so they are scheduled; their old lines count if the replay does not finish.
    fallback = {gid: by_id.pop(gid) for gid in redo}
    done_already = tracker.advance() if tracker else False
    todo_total = 0 if done_already else plan.total() - len(by_id)

    def todo() -> Iterator[dict[str, Any]]:
        if done_already:
            return
        for i in range(plan.games):
            for pi, pairing in enumerate(plan.pairings()):
                t = plan.task(pairing, i)
                if t["game_id"] in by_id:
                    continue
                t["engine_version"] = version
                t["engine_backend"] = backend_here
                seat_versions = [versions[s] for s in t["specs"]]
                t["agent_versions"] = None if None in seat_versions else seat_versions
                order[t["game_id"]] = (i, pi)
                yield t

    outcome = Outcome(plan, [], skipped=skipped, notes=notes, sprt=sprt, backend=getattr(backend, "name", "?"),
                      workers=getattr(backend, "workers", 1))
    show = _Progress(progress, todo_total, progress_interval)
    writer = results_mod.Writer(out)

    def on_result(line: dict[str, Any]) -> None:
        # Which limit a forfeit was played under, so a later run with a longer one can replay it;
        # and the game's place in the schedule, so a resume finds it without searching.
        line.setdefault("move_timeout", plan.move_timeout)
        where = order.get(line["game_id"])
        if where is not None:
            line.setdefault("index", where[0])
        with deferred_interrupts():  # a line on disk is a line counted: Ctrl-C/SIGTERM wait for both
            writer.write(line)
            outcome.played += 1
            if line.get("status") in FINISHED:
                by_id[line["game_id"]] = line
            else:
                failed.add(line["game_id"])
                outcome.aborted.append(f"{line['game_id']}: {line.get('error')}")
        if on_line is not None:
            on_line(line)
        show.update()

    def stop() -> bool:
        return tracker.advance() if tracker is not None else False

    try:
        backend.run(todo(), on_result, stop)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        writer.close()
        show.close()
    for gid, line in fallback.items():
        by_id.setdefault(gid, line)
    if tracker is not None:
        tracker.advance()
        outcome.stopped_at = tracker.decided_at
        outcome.sprt_pairs, outcome.sprt_skipped = tracker.scored, tracker.skipped
    cut = 2 * tracker.decided_at if tracker is not None and tracker.decided_at is not None else None
    counted = [gid for gid in by_id if cut is None or order[gid][0] < cut]
    counted.sort(key=order.__getitem__)
    outcome.lines = [by_id[gid] for gid in counted]
    outcome.elapsed = time.monotonic() - t0
    return outcome


class _Progress:
    """A tqdm bar (terminal), a plain progress line every few seconds (logs, CI) or nothing."""

    def __init__(self, mode: bool | str, total: int, interval: float) -> None:
        self.mode = "bar" if mode is True else mode or None
        self.total, self.interval, self.done, self.shown = total, interval, 0, 0
        self.t0 = self.last = time.monotonic()
        self.bar: Any = None
        if self.mode == "bar" and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="game", desc="arena", dynamic_ncols=True)

    def update(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.mode == "lines":
            now = time.monotonic()
            if now - self.last >= self.interval:
                self.last = now
                self._line(now)

    def _line(self, now: float) -> None:
        self.shown = self.done
        rate = self.done / max(now - self.t0, 1e-9)
        left = (self.total - self.done) / rate if rate > 0 and self.total >= self.done else None
        eta = f", about {_duration(left)} left" if left is not None else ""
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        print(f"arena: {self.done} of {self.total} games{pct}, {rate:.2f} games/s{eta}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.mode == "lines" and self.done != self.shown:
            self._line(time.monotonic())


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
