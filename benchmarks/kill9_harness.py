"""kill -9 at random moments, then resume: every long run of the project (issue 53, What to build 3).

    python benchmarks/kill9_harness.py                         # every target, 3 kills each (21 in all)
    python benchmarks/kill9_harness.py --kills 5 --only arena data --out benchmarks/results/kill9.json

Each target is a small run of a long command: PPO (``mulle-train ppo``), expert iteration
(``mulle-train expert``), DMC (``mulle-train dmc``), the exploiter (``mulle-train exploit``),
data labelling (``mulle-train data``), the arena (``mulle-arena``) and the live server
(``mulle-serve`` with its game store). The harness starts the command, kills it with SIGKILL
at a random moment (half the kills at a random time, half the instant a file in its output
changes, so files being written are hit), starts it again the way a user resumes it, and so
on; then lets it finish and checks that nothing was lost but the work since the last good
checkpoint, by the target's own measure:

* ``ppo``: each resume names the newest checkpoint that was whole when it was killed, and
  the run ends at its step count; once, after a kill, the harness cuts the newest
  checkpoint to 0 bytes (what an in-place save cut by kill -9 left, issue 53 item 2): the
  resume must name it, set it aside and take the one before;
* ``expert``, ``data``, ``dmc``, ``arena``: the finished run equals an uninterrupted one (the
  same shards byte for byte, the same weights, the same games), or, where a run is not
  deterministic, is whole;
* ``exploit`` (a wall-clock budget, so not repeatable): it ends with its report written;
* ``live``: the store passes SQLite's integrity check, every game a client was told had
  finished is stored and replays whole, and the games in progress at a kill are counted
  as found (restored or stored as abandoned) or lost.

Prints one line per kill and a verdict per target, and writes JSON (``--out``) with the
machine load. ``tests/test_kill9.py`` runs a short version under ``-m slow``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
# Unbuffered: a killed run's last lines (which checkpoint it resumed from) reach the harness.
ENV = {**os.environ, "PYTHONUNBUFFERED": "1",
       "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
VOLATILE = ("duration", "think", "worker", "finished_at", "attempts")


def _snapshot(where: Path) -> dict[str, tuple[int, int]]:
    out = {}
    if where.exists():
        for p in where.rglob("*"):
            try:
                if p.is_file():
                    st = p.stat()
                    out[str(p.relative_to(where))] = (st.st_size, st.st_mtime_ns)
            except OSError:
                pass  # gone while we looked: a temporary file
    return out


def run_killed(cmd: list[str], watch: Path, rng: random.Random, span: float, on_file: bool,
               timeout: float = 600, startup: float = 0.0) -> tuple[str, str, int | None, float]:
    """Start ``cmd``; SIGKILL it at a random moment within ``span`` s, or the instant a file under ``watch`` changes.

    Returns ``(stdout, stderr, returncode, seconds)``; ``returncode`` is ``None``-free: the
    process's own code when it finished before the kill.
    """
    proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    # At a random time within the run, or at the first to third change of a file under `watch` (a checkpoint, a
    # shard, a results line, a temporary file appearing: the moment files are being written).
    at = startup + rng.uniform(0.2, 0.9) * span
    changes, wanted = 0, rng.randint(1, 3)
    before = _snapshot(watch)
    while proc.poll() is None and time.monotonic() - t0 < timeout:
        if not on_file and time.monotonic() - t0 >= at:
            break
        if on_file and time.monotonic() - t0 >= startup:
            now = _snapshot(watch)
            if now != before:
                changes += 1
                before = now
                if changes >= wanted:
                    break
        time.sleep(0.002)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    return out, err, proc.returncode, time.monotonic() - t0


def run_whole(cmd: list[str], timeout: float = 1200) -> tuple[str, str, int]:
    proc = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout)
    return proc.stdout, proc.stderr, proc.returncode


class Target:
    """One long command: how to start and resume it, how long it runs, and how to judge the finished run."""

    name = "?"
    span = 10.0  # seconds a whole run takes, about (measured by the uninterrupted run where there is one)
    startup = 0.0  # share of an uninterrupted run spent starting (imports) before any work a kill could hit
    compare = False  # deterministic: judged against an uninterrupted run (made first, and timed)
    timed = False  # an uninterrupted run is made first only to time it (where kills should fall)

    def __init__(self, work: Path) -> None:
        self.work = work / self.name
        self.work.mkdir(parents=True, exist_ok=True)
        self.notes: list[str] = []

    def command(self, out: Path, first: bool) -> list[str]:
        raise NotImplementedError

    def output(self) -> Path:
        return self.work / "killed"

    def after_kill(self, k: int, out: str, err: str) -> None:
        """Look at the killed run's output and the files it left (before the next run starts)."""

    def after_resume(self, out: str, err: str) -> None:
        """Look at what the next run said when it started from what the kill left."""

    def judge(self) -> tuple[bool, str]:
        raise NotImplementedError


def _train(*args: str) -> list[str]:
    return [PY, "-m", "training.cli", *args]


class PPO(Target):
    name = "ppo"
    timed = True
    startup = 0.3  # torch, stable-baselines3 and the envs load first
    span = 40.0
    STEPS = 3072

    def command(self, out: Path, first: bool) -> list[str]:
        return _train("ppo", "--out-dir", str(out), "--steps", str(self.STEPS), "--opponents", "random=1",
                      "--envs", "2", "--n-steps", "64", "--batch-size", "64", "--epochs", "1", "--net", "16,16",
                      "--eval-games", "2", "--eval-every", "1024", "--checkpoint-every", "256", "--threads", "1",
                      "--no-progress", *(["--resume"] if any(out.rglob("step_*.zip")) else []))

    def __init__(self, work: Path) -> None:
        super().__init__(work)
        self.pending: str | None = None  # the newest whole checkpoint when the last kill came
        self.pairs: list[tuple[str | None, str]] = []
        self.damaged_named = 0
        self.damaged: str | None = None  # the checkpoint the harness damaged on purpose

    def _newest_whole(self) -> str | None:
        best = None
        for p in sorted(self.output().rglob("step_*.zip")):
            try:
                with zipfile.ZipFile(p) as z:
                    if z.testzip() is None:
                        best = p.name
            except (zipfile.BadZipFile, OSError, EOFError):
                continue
        return best

    def after_kill(self, k: int, out: str, err: str) -> None:
        self.pending = self._newest_whole()
        ckpts = sorted(self.output().rglob("step_*.zip"))
        if not self.damaged and len(ckpts) >= 2:
            # A damaged checkpoint as an in-place save cut by kill -9 left one (issue 53, item 2): the newest, cut
            # to 0 bytes. The resume must name it, set it aside and take the one before.
            ckpts[-1].write_bytes(b"")
            self.damaged = ckpts[-1].name
            self.pending = self._newest_whole()

    def after_resume(self, out: str, err: str) -> None:
        text = out + err
        found = re.findall(r"resumed from (\S+?) at step", text)
        if found:
            self.pairs.append((self.pending, Path(found[-1]).name))
        self.damaged_named += len(re.findall(r" is damaged \(", text))

    def judge(self) -> tuple[bool, str]:
        summary = self.output() / "summary.json"
        if not summary.is_file():
            return False, "no summary.json at the end"
        steps = json.loads(summary.read_text()).get("timesteps")
        pairs = self.pairs
        wrong = [(e, s) for e, s in pairs if e is not None and e != s]
        named = self.damaged is None or self.damaged_named >= 1
        ok = steps == self.STEPS and not wrong and named
        return ok, (f"ended at {steps} of {self.STEPS} steps; {len(pairs)} resumes, each from the newest whole "
                    f"checkpoint" + (f" except {wrong}" if wrong else "") + f"; {self.damaged_named} damaged "
                    f"checkpoint(s) named and set aside (the harness cut {self.damaged or 'none'} to 0 bytes)")


EXPERT_TINY = ["--first-games", "2", "--games", "2", "--shard-games", "1", "--first-teacher",
               "pimc:samples=2,horizon=2", "--teacher", "netsearch:samples=2,width=0,depth=2", "--hidden", "16",
               "--first-epochs", "1", "--epochs", "1", "--batch-size", "64", "--screen-opponents", "random",
               "--screen-games", "2", "--workers", "1", "--rule", "sets=1", "--no-progress",
               "--checkpoint-minutes", "0.0001", "--generations", "1"]


class Expert(Target):
    name = "expert"
    compare = True
    span = 60.0

    def command(self, out: Path, first: bool) -> list[str]:
        return _train("expert", "--out-dir", str(out), *EXPERT_TINY)

    def judge(self) -> tuple[bool, str]:
        import numpy as np

        clean = self.work / "clean"
        a, b = (json.loads((r / "manifest.json").read_text())["generations"][0] for r in (clean, self.output()))
        shards = sorted((clean / "gen_000" / "data").glob("shard_*.npz"))
        same = all((self.output() / "gen_000" / "data" / s.name).read_bytes() == s.read_bytes() for s in shards)
        from agents.learned.policy import load_policy

        wa, wb = load_policy(a["policy"]).weights, load_policy(b["policy"]).weights
        weights = all(np.array_equal(x, y) for x, y in zip(wa, wb))
        ok = bool(b.get("done")) and same and weights
        return ok, (f"generation done: {b.get('done')}; {len(shards)} shards byte-identical to an uninterrupted "
                    f"run: {same}; the same net: {weights}")


class Data(Target):
    name = "data"
    compare = True
    span = 30.0

    def command(self, out: Path, first: bool) -> list[str]:
        return _train("data", str(out), "--teacher", "pimc:samples=6,horizon=6", "--games", "24", "--shard-games",
                      "1", "--workers", "1", "--rule", "sets=1", "--no-progress")

    def judge(self) -> tuple[bool, str]:
        clean = self.work / "clean"
        shards = sorted(clean.glob("shard_*.npz"))
        mine = sorted(self.output().glob("shard_*.npz"))
        same = [s.name for s in shards] == [m.name for m in mine] and all(
            (self.output() / s.name).read_bytes() == s.read_bytes() for s in shards)
        left = [p.name for p in self.output().iterdir() if p.name not in {s.name for s in shards} | {"spec.json"}]
        return same, (f"{len(mine)} of {len(shards)} shards, byte-identical to an uninterrupted run: {same}"
                      + (f"; also left: {left}" if left else ""))


class DMC(Target):
    name = "dmc"
    compare = True
    span = 30.0

    def command(self, out: Path, first: bool) -> list[str]:
        out.mkdir(parents=True, exist_ok=True)
        return _train("dmc", str(self._start()), "--out", str(out / "dmc.npz"), "--rounds", "4",
                      "--games-per-round", "2", "--batch-size", "64", "--workers", "1", "--no-progress")

    def _start(self) -> Path:
        from agents.learned.agent import DEFAULT_POLICY_PATH  # the shipped afterstate net

        return Path(DEFAULT_POLICY_PATH)

    def judge(self) -> tuple[bool, str]:
        import numpy as np

        from agents.learned.policy import load_policy

        clean = self.work / "clean"
        a, b = load_policy(clean / "dmc.npz"), load_policy(self.output() / "dmc.npz")
        same = all(np.array_equal(x, y) for x, y in zip(a.weights, b.weights))
        rounds = b.metadata.get("rounds_done")
        return bool(same and rounds == 4), (f"rounds done: {rounds} of 4; the same weights as an uninterrupted "
                                            f"run: {same}")


class Exploit(Target):
    name = "exploit"
    span = 40.0

    def command(self, out: Path, first: bool) -> list[str]:
        return _train("exploit", "random", "--hours", "0.012", "--out-dir", str(out), "--games-per-round", "2",
                      "--eval-games", "4", "--workers", "1", "--no-progress")

    def judge(self) -> tuple[bool, str]:
        report = self.output() / "exploit.json"
        if not report.is_file():
            return False, "no exploit.json at the end"
        data = json.loads(report.read_text())
        return True, f"report written (keys: {', '.join(sorted(data)[:6])})"


class Arena(Target):
    name = "arena"
    compare = True
    span = 12.0

    def command(self, out: Path, first: bool) -> list[str]:
        out.mkdir(parents=True, exist_ok=True)
        return [PY, str(ROOT / "scripts" / "mulle-arena"), "random", "heuristic", "greedy", "--games", "30",
                "--rule", "sets=1", "--out", str(out / "r.jsonl"), "--quiet", "--workers", "2"]

    def judge(self) -> tuple[bool, str]:
        clean = self.work / "clean"

        def lines(p: Path) -> dict[str, dict[str, Any]]:
            out: dict[str, dict[str, Any]] = {}
            dupes = 0
            for text in p.read_text().splitlines():
                try:
                    line = json.loads(text)
                except ValueError:
                    continue
                if line.get("status") != "ok":
                    continue
                dupes += line["game_id"] in out
                out[line["game_id"]] = {k: v for k, v in line.items() if k not in VOLATILE}
            self.notes.append(f"{p.parent.name}: {dupes} duplicate line(s)")
            return out

        a, b = lines(clean / "r.jsonl"), lines(self.output() / "r.jsonl")
        ok = a == b and len(a) == 90
        return ok, f"{len(b)} of {len(a)} games, the same as an uninterrupted run: {a == b}"


class Live(Target):
    name = "live"
    span = 6.0

    def __init__(self, work: Path) -> None:
        super().__init__(work)
        self.told: set[int] = set()
        self.in_progress = 0
        self.found_after = 0

    def output(self) -> Path:
        return self.work / "store"

    def command(self, out: Path, first: bool) -> list[str]:
        out.mkdir(parents=True, exist_ok=True)
        return [PY, str(ROOT / "scripts" / "mulle-serve"), "--port", "0", "--db", str(out / "g.db"), "--opponent",
                "random", "--agent-delay", "0.01", "--trust-loopback"]

    def play_and_kill(self, rng: random.Random) -> str:
        """Start the server, let 4 clients play, kill it mid-play; return what happened."""
        sys.path.insert(0, str(ROOT / "tests"))
        from live_helpers import Client, play_to_end

        proc = subprocess.Popen(self.command(self.output(), True), cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"open (http://[\d.]+:\d+)/", line)
        if not found:
            proc.kill()
            return f"the server did not start: {line!r} {proc.stderr.read()[-300:] if proc.stderr else ''}"
        url = found.group(1)
        busy = [0]

        async def player(i: int, stop: asyncio.Event) -> None:
            c = await Client.open(url)
            try:
                await c.join(f"k9-{rng.random():.6f}-{i}", f"P{i}", sets=1)
                while not stop.is_set():
                    await c.send("lobby_action", {"action": "start_game"})
                    busy[0] += 1
                    over = await play_to_end(c, timeout=20)
                    busy[0] -= 1
                    self.told.add(over["payload"]["data"]["game_id"])
            except (ConnectionError, asyncio.TimeoutError, TimeoutError, OSError, AssertionError):
                pass
            finally:
                await c.session.close()

        async def go() -> None:
            stop = asyncio.Event()
            tasks = [asyncio.create_task(player(i, stop)) for i in range(4)]
            await asyncio.sleep(rng.uniform(0.5, self.span))
            os.kill(proc.pid, signal.SIGKILL)
            stop.set()
            await asyncio.gather(*tasks)

        asyncio.run(go())
        proc.wait()
        self.in_progress += busy[0]
        return f"killed with {busy[0]} game(s) in progress, {len(self.told)} told finished so far"

    def judge(self) -> tuple[bool, str]:
        db = self.output() / "g.db"
        con = sqlite3.connect(db)
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        con.close()
        # A server started on the store, as after the crash: it recovers what it can, then is stopped cleanly.
        proc = subprocess.Popen(self.command(self.output(), False), cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        from live.store import GameStore
        from mulle_env.engine import GameRecord

        store = GameStore(db)
        games = store.games(limit=100_000)
        stored = {g["id"] for g in games}
        abandoned = sum(1 for g in games if g.get("status") == "abandoned")
        whole = all(GameRecord.from_dict(store.game(g["id"])["record"]).replay().over
                    for g in games if g.get("status") == "finished")
        store.close()
        lost = self.told - stored
        ok = integrity == "ok" and not lost and whole
        return ok, (f"integrity {integrity}; {len(self.told)} games told finished, {len(lost)} lost; finished "
                    f"games replay whole: {whole}; {self.in_progress} in progress at the kills as the clients saw "
                    f"them (a start asked for, no end heard), {abandoned} stored as abandoned")


TARGETS: dict[str, Callable[[Path], Target]] = {t.name: t for t in (PPO, Expert, DMC, Exploit, Data, Arena, Live)}


def run_target(target: Target, kills: int, rng: random.Random, log: Callable[[str], None]) -> dict[str, Any]:
    t0 = time.monotonic()
    events = []
    if isinstance(target, Live):
        for k in range(kills):
            what = target.play_and_kill(rng)
            events.append(what)
            log(f"  {target.name} kill {k + 1}: {what}")
    else:
        if target.compare or target.timed:
            t1 = time.monotonic()
            _, err, code = run_whole(target.command(target.work / "clean", True))
            if code != 0:
                return {"target": target.name, "ok": False, "kills": [],
                        "verdict": f"the uninterrupted run failed (exit {code}): {err[-800:]}"}
            target.span = time.monotonic() - t1
            log(f"  {target.name}: an uninterrupted run takes {target.span:.1f} s")
        k = retries = 0
        while k < kills:
            on_file = k % 2 == 1
            # Within what is left, roughly: each run resumes with less to do.
            start = target.startup * target.span
            out, err, code, secs = run_killed(target.command(target.output(), k == 0), target.output(), rng,
                                              (target.span - start) * 0.75 ** k, on_file, startup=start)
            if k == 0 and code == 0 and retries < 3:
                # The first run beat its kill (a quieter moment than the timed run had): start again from nothing,
                # with the kill drawn within the time this run took.
                log(f"  {target.name}: the first run finished in {secs:.1f} s before its kill; again from nothing")
                shutil.rmtree(target.output(), ignore_errors=True)
                target.span, retries = secs, retries + 1
                continue
            if k:
                target.after_resume(out, err)  # what a resumed run said before it was killed in turn
            killed = code == -signal.SIGKILL
            what = (f"killed after {secs:.1f} s ({'at a file change' if on_file else 'at a random time'})"
                    if killed else f"finished first (exit {code}) after {secs:.1f} s")
            if not killed and code != 0:
                what += f": {err.strip().splitlines()[-1] if err.strip() else ''}"
            events.append(what)
            log(f"  {target.name} kill {k + 1}: {what}")
            if killed:
                target.after_kill(k, out, err)
            elif code == 0:
                break
            k += 1
        out, err, code = run_whole(target.command(target.output(), False))
        target.after_resume(out, err)
        if code != 0:
            return {"target": target.name, "ok": False, "kills": events,
                    "verdict": f"the resumed run failed (exit {code}): {(err or out)[-800:]}",
                    "seconds": round(time.monotonic() - t0, 1)}
    ok, verdict = target.judge()
    return {"target": target.name, "ok": ok, "kills": events, "verdict": verdict, "notes": target.notes,
            "seconds": round(time.monotonic() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=3, help="kills per target (default 3)")
    parser.add_argument("--only", nargs="*", choices=sorted(TARGETS), help="these targets only")
    parser.add_argument("--seed", type=int, default=0, help="fixes the kill moments' draws (default 0)")
    parser.add_argument("--work", help="directory for the runs (default: a temporary one, removed)")
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        for name in args.only or list(TARGETS):
            print(f"{name}:", flush=True)
            try:
                res = run_target(TARGETS[name](work), args.kills, rng, lambda s: print(s, flush=True))
            except Exception as exc:  # noqa: BLE001 - one target's harness failure is that target's verdict
                res = {"target": name, "ok": False, "kills": [], "verdict": f"harness error: {type(exc).__name__}: "
                       f"{exc}"}
            results.append(res)
            print(f"  {'OK' if res['ok'] else 'FAILED'}: {res['verdict']}", flush=True)
    kills = sum(sum(1 for e in r["kills"] if e.startswith("killed")) for r in results)
    load = os.getloadavg()
    print(f"{kills} kills in all; {sum(r['ok'] for r in results)} of {len(results)} targets whole; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"benchmark": "kill9", "kills": kills, "results": results, "load_average": load,
                       "cpus": os.cpu_count(), "seed": args.seed,
                       "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, f, indent=1)
        print(f"wrote {args.out}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
