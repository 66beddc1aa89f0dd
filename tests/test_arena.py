"""Arena: determinism across worker counts, resume, damaged results files, misbehaving agents, SPRT."""

import json
import os
import signal
import time

import pytest

import mulle_env as me
from arena import SPRT, Plan, ProcessBackend, report, run
from arena.results import comparable, load
from arena.schedule import deal_seed

RULES = {"sets": 1}  # one set per game: half the time, same code paths
INIT = "arena_agents:register"


def lines_of(path):
    with open(path) as f:
        return [json.loads(x) for x in f]


def play(tmp_path, specs, games, workers=1, name="r.jsonl", **kw):
    backend = kw.pop("backend", None) or ProcessBackend(workers)
    sprt = kw.pop("sprt", None)
    plan = Plan(tuple(specs), games, ruleset=RULES, worker_init=INIT, **kw)
    out = str(tmp_path / name)
    return run(plan, out, backend, sprt=sprt, progress=False), out


def test_schedule_duplicate_pairs_share_deals_and_swap_seats():
    plan = Plan(("random", "heuristic"), 5, seed=3)
    tasks = plan.tasks()
    ab, ba = ["random", "heuristic"], ["heuristic", "random"]
    assert [t["specs"] for t in tasks] == [ab, ba] * 2 + [ab]
    assert tasks[0]["seed"] == tasks[1]["seed"] == deal_seed(3, 0) != tasks[2]["seed"]
    assert len({t["game_id"] for t in tasks}) == 5
    assert tasks[0]["ruleset"]["sets"] == 2  # every flag is recorded, not only changes
    # The same games whatever order the specs are named in.
    other = Plan(("heuristic", "random"), 4, seed=3).tasks()
    assert {t["game_id"] for t in other} == {t["game_id"] for t in tasks[:4]}


def test_deal_seeds_are_the_arenas_own_and_below_2_53():
    import ast
    import hashlib
    from pathlib import Path

    digest = hashlib.sha256("\x1f".join(["deal", "3", "0"]).encode()).digest()
    assert deal_seed(3, 0) == int.from_bytes(digest[:8], "little") >> 11
    seeds = [deal_seed(s, d) for s in (0, 1, 2**40) for d in range(200)]
    assert len(set(seeds)) == len(seeds) and all(0 <= x < 2**53 for x in seeds)
    # The arena knows a game only through its play interface, never the engine's internals: of
    # mulle_env it uses only the game-agnostic parts every tool shares (the one game loop and its
    # errors, the seed domain, the path checks, the workers' BLAS setting, the closed-pipe stop).
    shared = {"mulle_env.engine.loop", "mulle_env.engine.errors", "mulle_env.engine.rng", "mulle_env.util.files",
              "mulle_env.util.threads", "mulle_env.util.pipes",
              "mulle_env.files", "mulle_env.threads"}  # the last two: the old homes
    for path in Path(__file__).resolve().parents[1].joinpath("arena").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.startswith("mulle_env") and n not in shared for n in names), (path.name, names)


def test_plan_validation():
    with pytest.raises(ValueError, match="at least 2"):
        Plan(("random",), 2)
    with pytest.raises(ValueError, match="twice"):
        Plan(("random", "random"), 2)
    with pytest.raises(ValueError, match="at least 1"):
        Plan(("random", "heuristic"), 0)


def test_same_results_for_one_and_two_workers(tmp_path):
    o1, out1 = play(tmp_path, ["random", "heuristic", "greedy"], 4, workers=1, name="w1.jsonl")
    o2, out2 = play(tmp_path, ["random", "heuristic", "greedy"], 4, workers=2, name="w2.jsonl")
    assert o1.played == o2.played == 12
    a = sorted((comparable(x) for x in lines_of(out1)), key=lambda x: x["game_id"])
    b = sorted((comparable(x) for x in lines_of(out2)), key=lambda x: x["game_id"])
    assert a == b
    line = a[0]
    for key in ("specs", "seed", "scores", "sheets", "winner", "moves", "error", "engine_version", "ruleset"):
        assert key in line
    assert all(x["status"] == "ok" and x["error"] is None for x in a)
    assert report.build(o1)["leaderboard"] == report.build(o2)["leaderboard"]


def test_resume_skips_finished_games(tmp_path):
    first, out = play(tmp_path, ["random", "heuristic"], 4)
    assert first.played == 4
    again, _ = play(tmp_path, ["random", "heuristic"], 4)
    assert again.played == 0 and again.skipped == 4 and len(again.lines) == 4
    more, _ = play(tmp_path, ["random", "heuristic"], 6)
    assert more.played == 2 and len(more.lines) == 6
    assert len(lines_of(out)) == 6


def test_corrupt_and_torn_lines_are_reported_and_skipped(tmp_path):
    done, out = play(tmp_path, ["random", "heuristic"], 4)
    good = open(out).read().splitlines()
    with open(out, "w") as f:
        f.write(good[0] + "\n" + "{not json\n" + good[1] + "\n" + good[2] + "\n" + good[3][: len(good[3]) // 2])
    loaded = load(out, repair=False)
    assert loaded.corrupt == [2] and loaded.torn and len(loaded.lines) == 3
    again, _ = play(tmp_path, ["random", "heuristic"], 4)
    assert again.played == 1 and len(again.lines) == 4
    assert any("corrupt" in n for n in again.notes) and any("truncated" in n for n in again.notes)
    backups = [p for p in os.listdir(tmp_path) if ".torn-" in p]
    assert len(backups) == 1
    # The file is valid JSON Lines again, apart from the corrupt line it reports.
    text = open(out).read()
    assert text.endswith("\n")
    assert [comparable(x) for x in again.lines] == [comparable(x) for x in done.lines]


def test_writer_completes_short_writes(tmp_path):
    from arena.results import Writer

    class Trickle:
        """A raw file whose write() takes at most 7 bytes, as write(2) may."""

        def __init__(self, f):
            self.f = f

        def write(self, data):
            return self.f.write(bytes(data[:7]))

        def __getattr__(self, name):
            return getattr(self.f, name)

    path = tmp_path / "w.jsonl"
    w = Writer(str(path))
    w._f = Trickle(w._f)
    rows = [{"game_id": f"g{i}", "text": "x" * (50 + i)} for i in range(3)]
    for r in rows:
        w.write(r)
    w.close()
    assert lines_of(path) == rows


def test_other_engine_version_is_not_mixed_in(tmp_path):
    done, out = play(tmp_path, ["random", "heuristic"], 2)
    rows = lines_of(out)
    rows[0]["engine_version"] = "0.9"
    with open(out, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    again, _ = play(tmp_path, ["random", "heuristic"], 2)
    assert again.played == 1
    assert any("another engine version" in n for n in again.notes)


def test_crashing_agent_forfeits_and_the_tournament_goes_on(tmp_path):
    o, out = play(tmp_path, ["crasher:at=3", "random"], 4)
    rows = lines_of(out)
    assert len(rows) == 4
    for r in rows:
        seat = r["specs"].index("crasher:at=3")
        assert r["status"] == "forfeit" and r["forfeit"] == seat and r["winner"] == 1 - seat
        assert r["error"] == f"agent 'crasher:at=3' (seat {seat}) raised ValueError: boom at move {r['moves'] + 1}"
        assert r["scores"] is None
    rep = report.build(o)
    p = rep["pairings"][0]
    assert (p["wins"], p["losses"], p["forfeits"]["crasher:at=3"]) == (0, 4, 4)


@pytest.mark.parametrize("workers", [1, 2])
def test_engine_error_aborts_the_game_and_blames_no_agent(tmp_path, workers):
    o, out = play(tmp_path, ["random", "heuristic"], 2, workers=workers, game="arena_agents:BrokenGame")
    rows = lines_of(out)
    assert len(rows) == 2 and o.lines == []
    for r in rows:
        assert r["status"] == "aborted" and r["forfeit"] is None and r["winner"] is None
        assert r["error"] == "game engine raised RuntimeError: engine bug at move 5", r["error"]
        assert "agent" not in r["error"]


def test_illegal_move_forfeits(tmp_path):
    o, out = play(tmp_path, ["illegal", "random"], 2)
    assert all("played an illegal move" in r["error"] for r in lines_of(out))


@pytest.mark.parametrize("spec", ["hanger:at=2", "swallower:at=2"])
def test_hanging_agent_forfeits_on_the_move_time_limit(tmp_path, spec):
    o, out = play(tmp_path, [spec, "random"], 2, workers=2, move_timeout=0.3)
    rows = lines_of(out)
    assert len(rows) == 2
    for r in rows:
        assert r["status"] == "forfeit" and "exceeded the move time limit of 0.3 s" in r["error"]
        assert r["winner"] == 1 - r["specs"].index(spec)


def test_dead_worker_is_replaced_and_its_game_replayed(tmp_path):
    marker = tmp_path / "died"
    spec = f"dier:marker={marker}"
    backend = ProcessBackend(2)
    o, out = play(tmp_path, [spec, "random"], 4, backend=backend)
    rows = lines_of(out)
    assert marker.exists() and backend.replaced == 1
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    # The replayed game equals what an undisturbed run gives.
    calm, _ = play(tmp_path, [spec, "random"], 4, name="calm.jsonl")
    assert sorted(map(json.dumps, map(comparable, rows))) == sorted(map(json.dumps, map(comparable, calm.lines)))


def _kill_and_wait(pid):
    """SIGKILL worker ``pid`` and wait until it is a zombie or gone.

    Workers are the forkserver's children, so it may reap one at any moment, even
    between opening and reading its /proc entry.
    """
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    return
        except (FileNotFoundError, ProcessLookupError):
            return
        time.sleep(0.005)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to see the worker die")
@pytest.mark.parametrize("workers", [1, 2])
def test_idle_worker_that_died_between_games_is_replaced(tmp_path, workers):
    # Kill the worker that just reported: it is idle when the next game is dispatched to it.
    killed = []

    def kill_reporter(line):
        if line.get("worker"):
            _kill_and_wait(line["worker"])
            killed.append(line["worker"])

    backend = ProcessBackend(workers)
    plan = Plan(("random", "heuristic"), 6, ruleset=RULES)
    o = run(plan, str(tmp_path / "k.jsonl"), backend, progress=False, on_line=kill_reporter)
    rows = lines_of(tmp_path / "k.jsonl")
    ids = [r["game_id"] for r in rows]
    assert len(ids) == len(set(ids)) == 6 and o.played == 6 and len(o.lines) == 6
    assert all(r["status"] == "ok" for r in rows)
    assert len(killed) == 6
    # Every killed worker that is asked again is replaced; the last ones never are. With two
    # workers a game can also reach a worker that died a moment earlier yet still looked
    # alive: its death is then seen mid-game and the game replayed on one more replacement.
    if workers == 1:
        assert backend.replaced == 6 - workers
    else:
        assert 6 - workers <= backend.replaced <= 6


def test_game_deadline_kills_a_stuck_worker(tmp_path):
    # No per-move limit: only the parent's watchdog can end this game.
    backend = ProcessBackend(1, game_timeout=0.5)
    o, out = play(tmp_path, ["hanger:at=2", "random"], 2, backend=backend, move_timeout=None)
    rows = lines_of(out)
    assert len(rows) == 2 and all(r["status"] == "aborted" and "game time limit" in r["error"] for r in rows)
    assert {r["engine_backend"] for r in rows} == {me.BACKEND}  # the parent's, as its worker is gone
    assert backend.replaced == 2 and o.lines == []  # aborted games count for nobody...
    again, _ = play(tmp_path, ["hanger:at=2", "random"], 2, move_timeout=0.2)
    assert again.played == 2  # ...and are played again on the next run


def test_a_slow_starting_worker_costs_no_game_its_time(tmp_path, monkeypatch):
    # Workers that take 1.5 s to start (imports on a loaded machine) against a 0.5 s game limit:
    # the clock runs from when the worker takes the game, so every game finishes.
    import arena.runner as runner

    real = runner._worker_main

    def slow_start(*args):
        time.sleep(1.5)
        real(*args)

    monkeypatch.setattr(runner, "_worker_main", slow_start)  # fork: the child runs the patched one
    backend = ProcessBackend(1, start_method="fork", game_timeout=0.5)
    o, out = play(tmp_path, ["random", "heuristic"], 2, backend=backend)
    assert [r["status"] for r in lines_of(out)] == ["ok", "ok"] and backend.replaced == 0


def test_workers_run_one_blas_thread(tmp_path):
    # The parent keeps the user's setting (two threads on these cores); every worker runs one.
    pytest.importorskip("threadpoolctl")
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: a BLAS runs one thread anyway")
    o, out = play(tmp_path, ["blasprobe", "random"], 4, workers=2)
    assert [r["status"] for r in lines_of(out)] == ["ok"] * 4, [r["error"] for r in lines_of(out)]


def test_sprt_stops_on_a_clear_difference(tmp_path):
    sprt = SPRT(0, 100, 0.05, 0.05)
    o, out = play(tmp_path, ["heuristic", "random"], 200, workers=2, sprt=sprt)
    assert sprt.state == "H1" and o.stopped_at is not None and o.stopped_at < 40
    assert len(o.lines) == 2 * o.stopped_at
    assert len(lines_of(out)) < 200  # the rest was cancelled
    rep = report.build(o)
    assert rep["sprt"]["bound"] == "upper" and rep["sprt"]["state"] == "H1"
    # Deterministic stopping point: a 1-worker run stops after the same pair.
    sprt1 = SPRT(0, 100, 0.05, 0.05)
    o1, _ = play(tmp_path, ["heuristic", "random"], 200, workers=1, sprt=sprt1, name="one.jsonl")
    assert o1.stopped_at == o.stopped_at and sprt1.llr == pytest.approx(sprt.llr)
    # Resuming a decided test plays nothing.
    sprt2 = SPRT(0, 100, 0.05, 0.05)
    o2, _ = play(tmp_path, ["heuristic", "random"], 200, workers=2, sprt=sprt2)
    assert o2.played == 0 and o2.stopped_at == o.stopped_at


def test_sprt_skips_a_pair_with_an_aborted_game_and_still_stops(tmp_path):
    # Game 2 (pair 1, the hanger in seat 0) hangs until the watchdog aborts it; its twin finishes.
    spec = f"dealhanger:seed={deal_seed(1, 1)},seat=0"
    sprt = SPRT(0, 100, 0.05, 0.05)
    # One worker: games end in schedule order, so the run stops right after the deciding pair
    # (with more, the others may play everything while the hung game waits for its deadline).
    backend = ProcessBackend(1, game_timeout=0.5)
    o, out = play(tmp_path, [spec, "random"], 200, backend=backend, sprt=sprt, move_timeout=None)
    rows = lines_of(out)
    bad = [r for r in rows if r["status"] == "aborted"]
    assert len(bad) == 1 and bad[0]["pair"] == 1 and len(o.aborted) == 1
    # The SPRT went on past the aborted pair and decided; it scored every pair but that one.
    assert sprt.state == "H1" and o.stopped_at is not None and len(rows) == 2 * o.stopped_at
    assert o.sprt_pairs == sprt.units == o.stopped_at - 1 and o.sprt_skipped == 1
    assert sum(sprt.counts) == o.sprt_pairs
    # The report counts the pairs the SPRT saw (plus the lone twin of the aborted game).
    assert len(o.lines) == 2 * o.stopped_at - 1
    rep = report.build(o)
    assert rep["sprt"]["pairs"] == o.sprt_pairs and rep["sprt"]["skipped_pairs"] == 1
    assert rep["pairings"][0]["pairs"] == o.sprt_pairs
    assert f"on {o.sprt_pairs} pairs" in report.text(rep)


def test_odd_game_count_and_report_outputs(tmp_path):
    o, out = play(tmp_path, ["random", "heuristic"], 3, save_games=True)
    rows = lines_of(out)
    assert len(rows) == 3 and all(r["move_list"] for r in rows)
    import mulle_env as me

    r = rows[0]
    replayed = me.replay(r["seed"], r["move_list"], me.Ruleset.from_dict(r["ruleset"]))
    assert list(replayed.result().scores) == r["scores"]
    rep = report.build(o)
    p = rep["pairings"][0]
    assert p["games"] == 3 and p["pairs"] == 1  # the unpaired third game is not in the pentanomial
    assert rep["leaderboard"][-1]["spec"] == "random" or rep["anchor"] == "random"
    json.dumps(rep)  # JSON-able
    assert "| # | agent" in report.markdown(rep)
    assert "random vs heuristic" in report.text(rep)
    pytest.importorskip("matplotlib")
    png = tmp_path / "p.png"
    assert report.plot(rep, str(png)) and png.stat().st_size > 1000


# ----- bounded resources, one writer, checked lines (issue 11) ------------------------------
class _StopAfter:
    """An ``on_line`` that presses Ctrl-C after ``n`` games."""

    def __init__(self, n):
        self.n = n

    def __call__(self, line):
        self.n -= 1
        if self.n <= 0:
            raise KeyboardInterrupt


@pytest.mark.parametrize("bystander", [False, True])
def test_a_signal_right_after_a_line_is_written_still_counts_that_game(tmp_path, monkeypatch, bystander):
    """A sanitizer run stopped an arena by SIGTERM just after it wrote its 8th line: the report counted 7
    games while the file held 8. Writing a line and counting it must not be cut apart by Ctrl-C/SIGTERM,
    also when another thread of the process (a BLAS or stepper worker) could take the signal: a later
    sanitizer run counted 2 lines of 3 while the signals were only masked in the main thread."""
    import threading

    from arena import results as results_mod

    idle = threading.Event()
    if bystander:  # a thread that does not block the signals: the kernel may hand it a process-directed one
        threading.Thread(target=idle.wait, daemon=True).start()

    write = results_mod.Writer.write
    written = []

    def write_then_signal(self, line):
        write(self, line)
        written.append(line["game_id"])
        if len(written) == 3:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, delivered right after the line is on disk

    monkeypatch.setattr(results_mod.Writer, "write", write_then_signal)
    out = tmp_path / "r.jsonl"
    # Ctrl-C's own handler, also where this process started with SIGINT ignored (nohup, background CI jobs).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        outcome = run(Plan(("random", "heuristic"), 8, ruleset=RULES), str(out), ProcessBackend(1), progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
        idle.set()
    on_disk = [json.loads(x)["game_id"] for x in out.read_text().splitlines()]
    assert outcome.interrupted and on_disk == written and len(on_disk) >= 3
    assert outcome.played == len(on_disk) and sorted(x["game_id"] for x in outcome.lines) == sorted(on_disk)


def test_schedule_is_lazy_memory_does_not_grow_with_games(tmp_path):
    import tracemalloc

    plan = Plan(("random", "heuristic"), 200_000, ruleset=RULES)
    tracemalloc.start()
    try:
        outcome = run(plan, str(tmp_path / "big.jsonl"), ProcessBackend(1), progress=False, on_line=_StopAfter(2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome.interrupted and outcome.played == 2
    assert peak < 5_000_000, f"{peak} bytes: the schedule was built eagerly"
    it = plan.iter_tasks()
    small = Plan(("random", "heuristic"), 4, ruleset=RULES).tasks()
    assert [next(it)["game_id"] for _ in range(4)] == [t["game_id"] for t in small]


def test_a_second_writer_of_the_same_file_is_refused(tmp_path):
    from arena.results import ResultsFileBusyError, lock

    out = str(tmp_path / "busy.jsonl")
    with lock(out):
        with pytest.raises(ResultsFileBusyError, match="another run"):
            run(Plan(("random", "heuristic"), 2, ruleset=RULES), out, progress=False)
    assert os.path.getsize(out) == 0  # the refused run wrote nothing
    o = run(Plan(("random", "heuristic"), 2, ruleset=RULES), out, progress=False)  # free again
    assert o.played == 2


@pytest.mark.parametrize("change, why", [
    (lambda ln: ln.update(scores="abc"), "'scores' must be a list of two numbers"),
    (lambda ln: ln.pop("specs"), "'specs' must be a list"),
    (lambda ln: ln.update(winner=5), "'winner' must be 0, 1 or null"),
    (lambda ln: ln.pop("scores"), "'scores' and 'winner' are required"),
    (lambda ln: ln.update(winner=1, scores=[90, 10]), "contradicts the scores"),
    (lambda ln: ln.update(seed="7"), "'seed' must be a whole number from 0 to 2**64 - 1, not '7'"),
    (lambda ln: ln.update(status="won"), "'status' must be one of"),
    (lambda ln: ln.update(scores=[float("nan"), 3]), "'scores' must be a list of two numbers"),
])
def test_lines_breaking_the_schema_are_reported_skipped_and_replayed(tmp_path, change, why):
    done, out = play(tmp_path, ["random", "heuristic"], 2)
    rows = lines_of(out)
    change(rows[0])
    with open(out, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    loaded = load(out, repair=False)
    assert len(loaded.lines) == 1 and loaded.invalid[0][0] == 1 and why in loaded.invalid[0][1]
    again, _ = play(tmp_path, ["random", "heuristic"], 2)
    assert again.played == 1 and len(again.lines) == 2
    assert any("break the results schema" in n and why in n for n in again.notes)
    report.text(report.build(again))  # no traceback on the way


def _cheat(line):
    # Consistent within the line (sheet, total, score, winner), but more mulle points than a set holds.
    line["sheets"][0][0]["mulle"] += 500
    line["sheets"][0][0]["total"] += 500
    line["scores"][0] += 500
    line["winner"] = 0


@pytest.mark.parametrize("change, why", [
    (lambda ln: ln.update(scores=[1000000, -5], winner=0),
     "scores [1000000, -5] are not the sums of the set totals in sheets"),
    (lambda ln: ln.update(scores=[1e308, 1e308], winner=None), "scores[0] must be a whole number, not 1e+308"),
    (lambda ln: ln["sheets"][1][0].update(total=ln["sheets"][1][0]["total"] + 7), "sheets[1][0].total"),
    (lambda ln: ln["sheets"][0][0].update(bonus=ln["sheets"][0][0]["bonus"] + 2), "sheets[0][0].bonus"),
    (lambda ln: ln.update(sheets=None), "sheets must hold the score sheets of the two seats"),
    (_cheat, "set 1: the seats' mulle points add up to"),
])
def test_a_line_whose_result_cannot_be_is_reported_and_replayed(tmp_path, change, why):
    done, out = play(tmp_path, ["random", "heuristic"], 2)
    rows = lines_of(out)
    first = rows[0]["game_id"]
    change(rows[0])
    with open(out, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    again, _ = play(tmp_path, ["random", "heuristic"], 2)
    assert again.played == 1 and len(again.lines) == 2
    assert any(f"line 1: its result is not one the game can end with: {why}" in n for n in again.notes), again.notes
    replayed = next(ln for ln in again.lines if ln["game_id"] == first)
    assert comparable(replayed) == comparable(done.lines[0])  # the true result, not the edited one
    diff = report.build(again)["pairings"][0]["score_diff"]["value"]
    assert abs(diff) < 200


def test_a_game_without_a_result_check_keeps_the_schema_check(tmp_path):
    # take-away has no check_result: its lines are judged by the schema alone (and still resume).
    first, _ = play(tmp_path, ["random", "heuristic"], 2, game="arena_agents:TakeAway")
    again, _ = play(tmp_path, ["random", "heuristic"], 2, game="arena_agents:TakeAway")
    assert first.played == 2 and again.played == 0 and not again.notes


def test_every_line_the_arena_writes_passes_the_schema(tmp_path):
    import mulle_env as me
    from arena.results import check_line

    _, out = play(tmp_path, ["crasher:at=2", "random", "heuristic"], 2)
    assert all(check_line(r) is None for r in lines_of(out))
    for r in lines_of(out):
        if r["status"] == "ok":
            me.check_result(r, r["ruleset"])


@pytest.mark.parametrize("legacy", [False, True])
def test_single_format_resume_finds_its_games(tmp_path, legacy):
    first, out = play(tmp_path, ["random", "heuristic"], 3, duplicate=False)
    assert [ln["index"] for ln in lines_of(out)] == [0, 1, 2]
    if legacy:  # lines written before results lines carried their index
        rows = lines_of(out)
        with open(out, "w") as f:
            f.writelines(json.dumps({k: v for k, v in r.items() if k != "index"}) + "\n" for r in rows)
    again, _ = play(tmp_path, ["random", "heuristic"], 5, duplicate=False)
    assert first.played == 3 and again.played == 2 and again.skipped == 3 and len(again.lines) == 5
    assert [ln["game_id"] for ln in again.lines[:3]] == [ln["game_id"] for ln in first.lines]


def test_save_games_added_on_resume_records_the_earlier_games_moves(tmp_path):
    first, out = play(tmp_path, ["random", "heuristic"], 2)
    assert all("move_list" not in ln for ln in first.lines)
    again, _ = play(tmp_path, ["random", "heuristic"], 2, save_games=True)
    assert again.played == 2 and all(ln.get("move_list") for ln in again.lines)
    assert any("no move list" in n for n in again.notes)
    assert [comparable(ln) | {"move_list": None} for ln in again.lines] == [
        comparable(ln) | {"move_list": None} for ln in first.lines]
    third, _ = play(tmp_path, ["random", "heuristic"], 2, save_games=True)
    assert third.played == 0 and len(third.lines) == 2


def test_time_forfeits_are_replayed_once_the_limit_is_relaxed(tmp_path):
    tight, out = play(tmp_path, ["dawdler:at=2,seconds=0.4", "random"], 2, move_timeout=0.1)
    assert all(ln["status"] == "forfeit" and ln["move_timeout"] == 0.1 for ln in tight.lines)
    same, _ = play(tmp_path, ["dawdler:at=2,seconds=0.4", "random"], 2, move_timeout=0.1)
    assert same.played == 0
    relaxed, _ = play(tmp_path, ["dawdler:at=2,seconds=0.4", "random"], 2, move_timeout=5.0)
    assert relaxed.played == 2 and all(ln["status"] == "ok" for ln in relaxed.lines)
    assert any("shorter move time limit" in n for n in relaxed.notes)


def test_a_workers_log_record_reaches_the_parent(tmp_path, caplog):
    import logging

    caplog.set_level(logging.WARNING)
    play(tmp_path, ["crasher:at=2", "random"], 1, workers=1)
    from_worker = [r for r in caplog.records if r.name == "arena.worker" and "boom" in r.getMessage()]
    assert from_worker and all(r.process != os.getpid() for r in from_worker)


def test_ray_backend_reads_its_tasks_lazily(monkeypatch):
    """RayBackend with a stand-in ``ray`` (runs tasks inline): it reads the schedule as it dispatches."""
    import sys
    import types

    from arena.ray_backend import RayBackend

    class Ref:
        def __init__(self, value):
            self.value = value

    fake = types.SimpleNamespace(
        is_initialized=lambda: True,
        remote=lambda fn: types.SimpleNamespace(options=lambda **kw: types.SimpleNamespace(
            remote=lambda task: Ref(fn(task)))),
        wait=lambda refs, num_returns, timeout: (refs[:num_returns], refs[num_returns:]),
        get=lambda ref: ref.value,
        cancel=lambda ref, force: None,
    )
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr("arena.ray_backend.play_task", lambda task: {"game_id": task["game_id"]})
    taken = []

    def tasks():
        for i in range(10**9):
            taken.append(i)
            yield {"game_id": str(i)}

    seen = []
    RayBackend(workers=2).run(tasks(), lambda line: seen.append(line["game_id"]), stop=lambda: len(seen) >= 5)
    assert seen[:5] == ["0", "1", "2", "3", "4"] and len(taken) <= 5 + 2 * 2 + 1


def test_plan_refuses_specs_that_name_no_agent_and_bad_time_limits():
    from agents import AgentSpecError

    with pytest.raises(AgentSpecError, match="unknown agent 'nosuch'"):
        Plan(("random", "nosuch"), 2)
    with pytest.raises(AgentSpecError, match="samples='x' must be an int"):
        Plan(("random", "pimc:samples=x"), 2)
    for bad in (0, -1, float("nan"), float("inf"), "10"):
        with pytest.raises(ValueError, match="move_timeout"):
            Plan(("random", "heuristic"), 2, move_timeout=bad)
    assert Plan(("crasher:at=2", "random"), 2, worker_init=INIT).specs[0] == "crasher:at=2"


def test_every_line_set_aside_or_played_again_is_named_with_its_number_and_reason(tmp_path):
    # A hand-edited line with all-zero sheets counted as a draw, and lines played again were not named (issue 31).
    done, out = play(tmp_path, ["random", "heuristic"], 3)
    rows = lines_of(out)
    zero = {"mulle": 0, "tabbe": 0, "intake": 0, "bonus": 0, "total": 0}
    rows[0].update(scores=[0, 0], winner=None, sheets=[[zero], [zero]])
    rows[2].update(status="aborted", winner=None, forfeit=None, scores=None, sheets=None, error="cut off")
    with open(out, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    again, _ = play(tmp_path, ["random", "heuristic"], 3)
    assert again.played == 2 and len(again.lines) == 3
    notes = " | ".join(again.notes)
    assert "line 1: its result is not one the game can end with: set 1: the seats' intake points add up to 0" in notes
    assert "1 aborted game(s) are played again: line 3" in notes
    draws = [ln for ln in again.lines if ln["winner"] is None and ln["scores"] == [0, 0]]
    assert not draws


def test_deferred_interrupts_hold_the_signal_until_the_block_ends_whichever_thread_takes_it():
    """Ctrl-C or SIGTERM inside the block is handled as the block ends, by the handler it would have met
    (TerminateAsInterrupt's for SIGTERM), also with a thread about that does not block the signals; an
    ignored signal stays ignored."""
    import threading

    from arena.shutdown import TerminateAsInterrupt, deferred_interrupts

    idle = threading.Event()
    threading.Thread(target=idle.wait, daemon=True).start()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):
            done = []
            with TerminateAsInterrupt() as stop, pytest.raises(KeyboardInterrupt):
                with deferred_interrupts():
                    os.kill(os.getpid(), signum)
                    time.sleep(0.05)  # the handler would have run by now
                    done.append(signum)
            assert done == [signum] and stop.signum == signum
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with deferred_interrupts():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
        idle.set()


def test_a_forfeit_keeps_a_capped_error_and_its_line_resumes(tmp_path):
    # An agent's exception text is its own to choose: 5 MB of it once made a line the next resume set aside as too
    # long and played again, appending another each run (issue 53, item 3).
    o, out = play(tmp_path, ["shouter", "random"], 2)
    lines = [json.loads(x) for x in open(out).read().splitlines()]
    assert all(r["status"] == "forfeit" for r in lines)
    assert all(len(r["error"]) < 2100 and "(cut: 5,000,0" in r["error"] for r in lines)
    again, _ = play(tmp_path, ["shouter", "random"], 2)
    assert len(open(out).read().splitlines()) == 2  # resumed: nothing played again


def test_a_torn_tail_on_a_full_disk_changes_nothing_and_says_so(tmp_path, monkeypatch):
    # Issue 53, item 7: a resume on a still-full disk ended in a raw OSError from load() and left an empty
    # .torn-* file on each attempt. Now nothing changes, no partial copy stays, and the error says what to do.
    import errno
    import shutil as shutil_module

    from arena.results import ResultsWriteError

    _, out = play(tmp_path, ["random", "heuristic"], 2)
    torn = open(out, "rb").read() + b'{"game_id": "half a li'
    open(out, "wb").write(torn)

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil_module, "copyfileobj", full)
    for _ in range(2):
        with pytest.raises(ResultsWriteError, match="No space left on device; nothing was changed"):
            load(out)
    assert open(out, "rb").read() == torn
    assert not [p for p in os.listdir(tmp_path) if ".torn-" in p]
    monkeypatch.undo()
    load(out)  # space again: set aside and cut off
    assert [p for p in os.listdir(tmp_path) if ".torn-" in p] and open(out, "rb").read().endswith(b"\n")
