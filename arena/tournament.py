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
import time
from dataclasses import dataclass, field
from typing import Callable

from . import results as results_mod
from .schedule import Plan
from .stats import SPRT
from .worker import engine_version, load_game

log = logging.getLogger("arena")

FINISHED = ("ok", "forfeit")


def game_points(line: dict, spec: str) -> float | None:
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
    lines: list[dict]
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
    """Feeds complete duplicate pairs, in order, to an SPRT (see the module docstring)."""

    def __init__(self, plan: Plan, sprt: SPRT, by_id: dict, failed: set) -> None:
        self.sprt = sprt
        self.by_id = by_id  # finished games
        self.failed = failed  # ids of games this run aborted (they will not finish in it)
        self.spec = plan.specs[0]
        tasks = plan.tasks()
        self.pairs = [tasks[i : i + 2] for i in range(0, len(tasks) - 1, 2) if len(tasks[i : i + 2]) == 2]
        self.k = 0
        self.scored = 0
        self.skipped = 0
        self.counts = [0, 0, 0, 0, 0]
        self.decided_at: int | None = None

    def advance(self) -> bool:
        """Take in every newly complete pair; True once a bound is crossed."""
        while self.decided_at is None and self.k < len(self.pairs):
            pair = self.pairs[self.k]
            if any(t["game_id"] in self.failed for t in pair):
                # Waiting for it would freeze the test for the rest of the run.
                self.k += 1
                self.skipped += 1
                continue
            lines = [self.by_id.get(t["game_id"]) for t in pair]
            if any(ln is None for ln in lines):
                break
            pts = [game_points(ln, self.spec) for ln in lines]
            self.k += 1
            self.scored += 1
            self.counts[int(round(2 * sum(pts)))] += 1
            if self.sprt.update(self.counts):
                self.decided_at = self.k
        return self.decided_at is not None

    def counted_ids(self) -> set[str]:
        """Games the report counts: pairs up to the stopping point."""
        return {t["game_id"] for pair in self.pairs[: self.decided_at] for t in pair}


def run(
    plan: Plan,
    out: str,
    backend=None,
    sprt: SPRT | None = None,
    progress: bool = True,
    on_line: Callable[[dict], None] | None = None,
) -> Outcome:
    """Play the games of ``plan`` that ``out`` does not hold yet; return the outcome.

    ``backend`` is a :class:`arena.runner.ProcessBackend` (default: one worker) or
    :class:`arena.ray_backend.RayBackend`. With ``sprt`` (head-to-head only) the
    run stops as soon as the test decides.
    """
    from .runner import ProcessBackend

    if sprt is not None and len(plan.specs) != 2:
        raise ValueError(f"an SPRT needs exactly 2 agent specs (a head-to-head), not {len(plan.specs)}")
    if sprt is not None and not plan.duplicate:
        raise ValueError("the SPRT counts duplicate pairs; it cannot run with duplicate=False")
    backend = backend or ProcessBackend(1)
    t0 = time.monotonic()
    version = engine_version(load_game(plan.game))
    tasks = plan.tasks()
    wanted = {t["game_id"] for t in tasks}
    loaded = results_mod.load(out)
    notes = loaded.problems()
    by_id: dict[str, dict] = {}
    other_version = foreign = 0
    for line in loaded.lines:
        if line.get("game_id") not in wanted:
            foreign += 1
        elif line.get("engine_version") != version:
            other_version += 1
        elif line.get("status") in FINISHED:
            by_id[line["game_id"]] = line
    if other_version:
        notes.append(
            f"{other_version} line(s) were played by another engine version (not {version!r}); "
            "they are not counted and those games are played again"
        )
    if foreign:
        notes.append(f"{foreign} line(s) belong to other tournaments (other specs, seeds, games or rules) and are ignored")
    for note in notes[len(loaded.problems()):]:
        log.warning("%s: %s", out, note)
    skipped = len(by_id)
    failed: set[str] = set()
    tracker = _SprtTracker(plan, sprt, by_id, failed) if sprt is not None else None
    done_already = tracker.advance() if tracker else False
    todo = [] if done_already else [t for t in tasks if t["game_id"] not in by_id]
    for t in todo:
        t["engine_version"] = version
    outcome = Outcome(plan, [], skipped=skipped, notes=notes, sprt=sprt, backend=getattr(backend, "name", "?"),
                      workers=getattr(backend, "workers", 1))
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), unit="game", desc="arena", dynamic_ncols=True)
    writer = results_mod.Writer(out)

    def on_result(line: dict) -> None:
        writer.write(line)
        outcome.played += 1
        if line.get("status") in FINISHED:
            by_id[line["game_id"]] = line
        else:
            failed.add(line["game_id"])
            outcome.aborted.append(f"{line['game_id']}: {line.get('error')}")
        if on_line is not None:
            on_line(line)
        if bar is not None:
            bar.update(1)

    def stop() -> bool:
        return tracker.advance() if tracker is not None else False

    try:
        backend.run(todo, on_result, stop)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        writer.close()
        if bar is not None:
            bar.close()
    if tracker is not None:
        tracker.advance()
        outcome.stopped_at = tracker.decided_at
        outcome.sprt_pairs, outcome.sprt_skipped = tracker.scored, tracker.skipped
        counted = tracker.counted_ids() if tracker.decided_at is not None else wanted
    else:
        counted = wanted
    outcome.lines = [by_id[t["game_id"]] for t in tasks if t["game_id"] in by_id and t["game_id"] in counted]
    outcome.elapsed = time.monotonic() - t0
    return outcome
