"""Post-game analysis, as lichess gives chess players: the person's decisions against a searching agent's.

:func:`analyse` replays a stored game and, at every decision a person made (with more than one
legal move), asks the analyser for the value of each legal move: ``pimc``'s
:meth:`~agents.pimc.PIMCAgent.move_values`, the mean points (from the mover's seat) of each move
over determinizations of the hidden cards, which hears the public history as the game went. The
analyser searches in batches of determinizations until ``seconds`` per decision have passed (at least
one batch), so a decision's cost is bounded whatever the machine. Per decision it reports the move
played, the analyser's choice, both moves' values and the points lost (best value minus the played
move's value, never below 0); every decision losing at least :data:`MISTAKE_POINTS` is flagged as a
mistake (all of them: issue 52 found at most five flagged). Per seat it gives the points lost and
the accuracy (the share of decisions within :data:`ACCURATE_POINTS` of the best), the game's result
(so a page's headline reads it right: "Anna lost 72.8 points" was the points lost, for a game she
won 75-57), and the evaluation over the game (the best move's value from seat 0's side at each
analysed decision) that the page draws as a graph. Both games: Casino's records are analysed with
Casino's ``pimc`` (:data:`ANALYSERS`).

``pimc`` rather than the stronger ``netsearch``: points lost needs a value for the move the person
played, and ``pimc`` (``width=0``) values every legal move, while ``netsearch`` searches only its
policy's best few.

:class:`Analyses` runs them one game at a time in a process of its own at a lower priority (``nice``
10), started for each analysis: the search is seconds of CPU in the compiled core, which holds
Python's GIL while it runs, so in a thread it would take turns with the event loop that serves every
table; in a process it does not, and the operating system gives the tables the CPU first. A thread
of the server waits for the process, passes its progress on, and keeps each finished analysis in
the game store (:meth:`GameStore.add_analysis <live.store.GameStore.add_analysis>`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import agents

from .games import live_game, record_from_dict

__all__ = ["ACCURATE_POINTS", "ANALYSER", "ANALYSERS", "MISTAKE_POINTS", "Analyses", "analyse"]

log = logging.getLogger("live")

#: Mulle's analyser: every legal move valued (``width=0``), in batches of this many determinizations.
ANALYSER = "pimc:samples=16,width=0"
#: The analyser of each game (Casino's ``pimc`` values every legal move as it is).
ANALYSERS = {"mulle": ANALYSER, "casino": "pimc:samples=16"}
#: A decision that loses at least this many points (of the set's score, by the analyser's estimate) is a mistake.
MISTAKE_POINTS = 3.0
#: A decision within this many points of the analyser's best counts as accurate (the accuracy's share).
ACCURATE_POINTS = 1.0


def _holder(players: list[list[dict]], seat: int, number: int) -> dict | None:
    held = None
    for h in players[seat]:
        if h["from_move"] > number:
            break
        held = h
    return held


def analyse(record: Any, players: list[list[dict]], seconds: float = 0.25, seed: int = 0,
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """The analysis of a game of either game (a GameRecord or :class:`~live.games.CasinoRecord`; see the module
    docstring) of the decisions made by people (``players``: who held each seat from which move on, as the store
    keeps it).

    Returns ``{"game", "analyser", "seconds_per_decision", "decisions": [{"number", "seat", "by", "played", "best",
    "value", "played_value", "points_lost", "mistake", "legal"}, ...], "total_lost": [seat 0, seat 1],
    "accuracy": [percent or None per seat], "decisions_by_seat": [n, n], "mistakes": [numbers],
    "mistake_points", "result": {"scores", "winner"} or None, "names": [seat 0, seat 1] (the last holder of each),
    "evaluation": [{"number", "value"}]}``
    (``evaluation``: the best move's value from seat 0's side at each analysed decision).
    ``progress(done, total)`` is called after each analysed decision.
    """
    game = live_game(getattr(record, "game", "mulle"))
    spec = ANALYSERS[game.name]
    analyser = agents.make(spec, game=game.name)
    rng = random.Random(seed)
    match = game.replay_match(record)
    reset = getattr(analyser, "reset", None)
    if reset is not None:
        reset()
    # First pass, without searching (cheap): which decisions were people's with a choice, for the progress total.
    probe = game.replay_match(record)
    wanted = set()
    for number, text in enumerate(record.moves, 1):
        holder = _holder(players, probe.to_move, number)
        if holder is not None and holder["kind"] == "person" and len(probe.legal_moves()) > 1:
            wanted.add(number)
        probe.play(text)
    total = len(wanted)
    decisions: list[dict[str, Any]] = []
    done = 0
    for number, text in enumerate(record.moves, 1):
        seat = match.to_move
        if number in wanted:
            view = match.view(seat)
            legal = match.legal_moves()
            values = _values(analyser, view, legal, rng, seconds)
            best_move, best_value = max(values.items(), key=lambda kv: kv[1])
            played_value = values.get(text, min(values.values()))
            holder = _holder(players, seat, number)
            decisions.append({"number": number, "seat": seat, "by": holder["name"] if holder else None,
                              "played": text, "best": best_move, "value": round(best_value, 2),
                              "played_value": round(played_value, 2),
                              "points_lost": round(max(0.0, best_value - played_value), 2),
                              "mistake": False, "legal": len(legal)})
            done += 1
            if progress is not None:
                progress(done, total)
        event = match.play(text)
        observe = getattr(analyser, "observe", None)
        if observe is not None:
            observe((event.player, event.move))
    lost = [0.0, 0.0]
    counts = [0, 0]
    accurate = [0, 0]
    for d in decisions:
        d["mistake"] = d["points_lost"] >= MISTAKE_POINTS  # every one above the threshold, however many
        lost[d["seat"]] += d["points_lost"]
        counts[d["seat"]] += 1
        accurate[d["seat"]] += d["points_lost"] < ACCURATE_POINTS
    result = match.result().to_dict() if match.over else None
    return {"game": game.name, "analyser": spec, "seconds_per_decision": seconds, "decisions": decisions,
            "total_lost": [round(x, 2) for x in lost], "decisions_by_seat": counts,
            "accuracy": [round(100 * a / n, 1) if n else None for a, n in zip(accurate, counts)],
            "mistakes": [d["number"] for d in decisions if d["mistake"]], "mistake_points": MISTAKE_POINTS,
            "result": {"scores": result["scores"], "winner": result["winner"]} if result else None,
            "names": [seat[-1]["name"] if seat else None for seat in players],
            "evaluation": [{"number": d["number"], "value": d["value"] if d["seat"] == 0 else -d["value"]}
                           for d in decisions]}


def _values(analyser: Any, view: Any, legal: list, rng: random.Random, seconds: float) -> dict[str, float]:
    """Each legal move's value, averaged over batches of determinizations until ``seconds`` have passed."""
    totals: dict[str, float] = {}
    batches = 0
    end = time.perf_counter() + seconds
    while True:
        for move, value in analyser.move_values(view, legal, rng):
            totals[str(move)] = totals.get(str(move), 0.0) + value
        batches += 1
        if time.perf_counter() >= end:
            break
    return {m: v / batches for m, v in totals.items()}


def _child(record: dict, players: list[list[dict]], seconds: float, seed: int, conn: Any) -> None:
    """The analysis process: analyse, sending ``("progress", done, total)`` messages, then ``("done", result)`` or
    ``("error", text)``."""
    try:
        os.nice(10)  # the tables first
    except OSError:
        pass
    try:
        result = analyse(record_from_dict(record), players, seconds, seed,
                         progress=lambda done, total: conn.send(("progress", done, total)))
        conn.send(("done", result))
    except Exception as exc:  # noqa: BLE001 - reported to the server, which reports it to whoever asks
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


class Analyses:
    """Analyses in one background thread, their progress, and the finished ones in ``store``.

    Args:
        store: The :class:`~live.store.GameStore`.
        seconds: The analyser's time per decision.
        max_queued: Analyses waiting or running at once (more: :meth:`start` refuses).
    """

    def __init__(self, store: Any, seconds: float = 0.25, max_queued: int = 8) -> None:
        self.store = store
        self.seconds = seconds
        self.max_queued = max_queued
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="live-analysis")
        self._process: Any = None
        self._lock = threading.Lock()
        #: game id -> {"status": "queued"/"running"/"failed", "done", "total", "error"?}; bounded.
        self._jobs: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def status(self, game_id: int) -> dict[str, Any] | None:
        """``{"status": "queued" | "running" | "failed", "done", "total"}`` for a job of this server, else ``None``."""
        with self._lock:
            job = self._jobs.get(game_id)
            return dict(job) if job is not None else None

    def start(self, game_id: int) -> dict[str, Any]:
        """Queue the analysis of ``game_id`` (nothing new when it is queued or running); its status. Raises
        ``OverflowError`` when :attr:`max_queued` are waiting."""
        with self._lock:
            job = self._jobs.get(game_id)
            if job is not None and job["status"] in ("queued", "running"):
                return dict(job)
            busy = sum(1 for j in self._jobs.values() if j["status"] in ("queued", "running"))
            if busy >= self.max_queued:
                raise OverflowError(f"{busy} analyses are waiting already; try again in a minute")
            self._jobs[game_id] = {"status": "queued", "done": 0, "total": None}
            self._jobs.move_to_end(game_id)
            while len(self._jobs) > 1000:
                self._jobs.popitem(last=False)
            job = dict(self._jobs[game_id])
        self._pool.submit(self._run, game_id)
        return job

    def _run(self, game_id: int) -> None:
        def progress(done: int, total: int) -> None:
            with self._lock:
                self._jobs[game_id].update(done=done, total=total)

        with self._lock:
            self._jobs[game_id]["status"] = "running"
        try:
            game = self.store.game(game_id)
            result = self._in_process(game["record"], game["players"], game_id, progress)
            self.store.add_analysis(game_id, result)
        except Exception as exc:  # noqa: BLE001 - reported to whoever asks, logged here
            log.exception("analysis of game %d failed", game_id)
            with self._lock:
                self._jobs[game_id].update(status="failed", error=f"{type(exc).__name__}: {exc}")
            return
        with self._lock:
            self._jobs.pop(game_id, None)  # the store has it now

    def _in_process(self, record: dict, players: list[list[dict]], seed: int,
                    progress: Callable[[int, int], None]) -> dict[str, Any]:
        # spawn, not fork: the server has threads (a fork would copy their locks mid-use).
        ctx = multiprocessing.get_context("spawn")
        receive, send = ctx.Pipe(duplex=False)
        process = ctx.Process(target=_child, args=(record, players, self.seconds, seed, send),
                              name=f"live-analysis-{seed}", daemon=True)
        process.start()
        send.close()
        self._process = process
        try:
            while True:
                try:
                    message = receive.recv()
                except EOFError:
                    process.join(5)
                    raise RuntimeError(f"the analysis process ended without an answer (exit code {process.exitcode})")
                if message[0] == "progress":
                    progress(message[1], message[2])
                elif message[0] == "done":
                    return message[1]
                else:
                    raise RuntimeError(message[1])
        finally:
            receive.close()
            process.join(5)
            if process.is_alive():
                process.terminate()
            self._process = None

    def shutdown(self) -> None:
        """Stop: the running analysis's process is ended, queued ones are dropped."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        process = self._process
        if process is not None and process.is_alive():
            process.terminate()
