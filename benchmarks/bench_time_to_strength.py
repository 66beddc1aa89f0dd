"""Time to strength: ``mulle-train expert`` from nothing, and when its champion first beats each reference agent.

Runs the unattended pipeline (``python -m training.cli expert``) one generation at a
time on this machine, within a wall-clock budget of training time, and after each
generation plays duplicate matches (fresh deals for every generation and opponent, at
least 1,000 games) of the run's champion against ``heuristic``, ``greedy``,
``pimc:samples=40`` and ``pimc``. It reports the training wall-clock time (the run's
own, from its manifest: the evaluations here are not counted) at which the champion
first beats each agent (95% lower bound above 50%), and the peak memory of the run
(the largest sum of the resident memory of the command and all its worker processes,
sampled every half second from /proc).

Resumable: the pipeline resumes itself, every evaluation is a resumable arena results
file, and the figures so far are in the JSON; run the same command again to continue
(raise ``--hours`` to go further).

The issue's aims (2 cores, from nothing): beats ``greedy`` within 1 hour, ``pimc`` within
8 hours, peak memory under 4 GB. The full run (about 8 hours on 2 otherwise idle cores)::

    python benchmarks/bench_time_to_strength.py --hours 8 --out-dir runs/tts \\
        --json benchmarks/results/time_to_strength.json

A smoke run of the machinery (a minute; tiny games under ``sets=1``, meaningless figures)::

    python benchmarks/bench_time_to_strength.py --tiny --out-dir /tmp/tts-tiny --json /tmp/tts-tiny.json
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OPPONENTS = ["heuristic", "greedy", "pimc:samples=40", "pimc"]
TINY = ("--first-games 4 --games 4 --shard-games 2 --first-teacher pimc:samples=2,horizon=2 "
        "--teacher netsearch:samples=2,width=0,depth=2 --hidden 16 --first-epochs 1 --epochs 1 --batch-size 64 "
        "--screen-opponents random --screen-games 4 --rule sets=1")


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants (Linux /proc), in MB."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total / 1024


def run_generations(cmd: list[str], peak: list[float]) -> int:
    """Run the pipeline command, sampling its process tree's memory into ``peak[0]``; its exit code."""
    proc = subprocess.Popen(cmd, cwd=ROOT)
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_mb(proc.pid))
            done.wait(0.5)

    t = threading.Thread(target=sample, daemon=True)
    t.start()

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM too: the pipeline must not be left running without us

    before = signal.signal(signal.SIGTERM, stop)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()  # the pipeline shuts down cleanly on SIGTERM; the same command resumes
        proc.wait()
        raise
    finally:
        signal.signal(signal.SIGTERM, before)
        done.set()
        t.join()


def _load_during(load_log: Path | None, t_from: float, t_to: float) -> dict[str, float] | None:
    """Mean, lowest and highest 1-minute load in ``load_log`` (lines ``epoch load1 load5 ...``) between two times."""
    if load_log is None or not load_log.is_file():
        return None
    loads = []
    for line in load_log.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and t_from <= float(parts[0]) <= t_to:
            loads.append(float(parts[1]))
    if not loads:
        return None
    return {"mean": round(sum(loads) / len(loads), 2), "min": min(loads), "max": max(loads), "samples": len(loads)}


def curve_from_manifest(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Per finished generation: the run's minutes so far and the champion's screen against each opponent.

    The recipe screens every new net against its ``--screen-opponents`` on the same deals (a seed used for
    nothing else), so the champion's screens are the curve; a generation that was not promoted leaves the
    champion, and its figures, as they were.
    """
    by_policy = {g.get("policy"): g for g in manifest["generations"] if g.get("done")}
    rows = []
    for gen in manifest["generations"]:
        if not gen.get("done"):
            continue
        champ = by_policy.get(gen["champion"], gen)
        scores = {}
        for key, m in (champ.get("eval") or {}).items():
            _, opp = key.split("|", 1)
            if key.startswith("learned|") and not opp.startswith("learned:"):
                scores[opp] = {k: m.get(k) for k in ("games", "score", "score_low", "score_high", "seed")}
                scores[opp]["points_per_game"] = (m.get("points_per_game") or {}).get("value")
        rows.append({"minutes": round(gen["elapsed"] / 60, 1), "generation": gen["generation"],
                     "teacher": gen["teacher"], "games": gen.get("games"), "decisions": gen.get("decisions"),
                     "promoted": gen["promoted"], "champion_generation": champ["generation"],
                     "seconds": gen.get("seconds"), "peak_rss_mb": gen.get("peak_rss_mb"), "vs": scores})
    return rows


def recipe_main(args: argparse.Namespace) -> int:
    """``--recipe NAME``: run (or resume, or with ``--collect-only`` only read) the recipe; write its curve."""
    import shutil
    import time

    out = Path(args.out_dir).resolve()
    manifest_path = out / "manifest.json"
    peak = [0.0]
    if not args.collect_only:
        cmd = [sys.executable, "-m", "training.cli", "expert", "--recipe", args.recipe, "--out-dir", str(out),
               "--workers", str(args.workers), "--no-progress", *shlex.split(args.expert_args)]
        code = run_generations(cmd, peak)
        if code != 0:
            print(f"the pipeline exited with {code}", file=sys.stderr)
            return code
    manifest = json.loads(manifest_path.read_text())
    rows = curve_from_manifest(manifest)
    started = manifest["commands"][0]["time"]
    t0 = time.mktime(time.strptime(started, "%Y-%m-%d %H:%M:%S"))
    first: dict[str, float | None] = {}
    for row in rows:
        for opp, m in row["vs"].items():
            if opp not in first and m.get("score_low") is not None and m["score_low"] > 0.5:
                first[opp] = row["minutes"]
    state = {
        "recipe": args.recipe, "settings": manifest["settings"], "out_dir": str(out),
        "stopped": manifest.get("stopped"), "elapsed_minutes": round(manifest.get("elapsed", 0) / 60, 1),
        "curve": rows, "first_beats_minutes": first,
        "peak_memory_mb": round(peak[0], 1) if peak[0] else max(((r["peak_rss_mb"] or 0) for r in rows), default=None),
        "load_average_1min": _load_during(Path(args.load_log) if args.load_log else None, t0,
                                          t0 + manifest.get("elapsed", 0)),
        "machine": args.machine,
        "command": f"python benchmarks/bench_time_to_strength.py --recipe {args.recipe} --out-dir {args.out_dir}",
    }
    json_path = Path(args.json)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(state, indent=1) + "\n")
    plot = out / "elo_by_time.png"
    if args.plot and plot.is_file():
        shutil.copyfile(plot, args.plot)
    for row in rows:
        vs = ", ".join(f"{o} {m['score']:.1%} [{m['score_low']:.1%}, {m['score_high']:.1%}]"
                       for o, m in row["vs"].items() if m.get("score") is not None)
        print(f"{row['minutes']:6.1f} min  generation {row['generation']} "
              f"(champion: {row['champion_generation']}): {vs}")
    print(f"wrote {json_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recipe", choices=("quick", "standard", "long"), default=None,
                    help="run mulle-train expert --recipe NAME and write the curve of its own screens (the mode the "
                         "committed figures come from); without it, the older per-generation evaluation below")
    ap.add_argument("--collect-only", action="store_true", help="with --recipe: only read the run's manifest")
    ap.add_argument("--load-log", default="", help="with --recipe: a file of 'epoch load1 ...' lines sampled "
                                                   "during the run (e.g. from /proc/loadavg), summarised in the JSON")
    ap.add_argument("--machine", default="", help="with --recipe: what the machine was (cores, what else ran)")
    ap.add_argument("--plot", default="", help="with --recipe: copy the run's Elo-by-wall-clock plot here")
    ap.add_argument("--out-dir", default="runs/time-to-strength", help="the pipeline's run and the evaluations")
    ap.add_argument("--hours", type=float, default=8.0, help="training wall-clock budget")
    ap.add_argument("--generations", type=int, default=30, help="at most this many generations")
    ap.add_argument("--games", type=int, default=1000, help="duplicate games of each evaluation (>= 1000)")
    ap.add_argument("--opponents", nargs="+", default=OPPONENTS, help="reference agents")
    ap.add_argument("--workers", type=int, default=2, help="processes of the pipeline and the evaluations")
    ap.add_argument("--expert-args", default="", help="more flags for mulle-train expert (quoted)")
    ap.add_argument("--tiny", action="store_true",
                    help="a smoke run: tiny games, 20 evaluation games, 2 generations unless --generations says")
    ap.add_argument("--json", default="benchmarks/results/time_to_strength.json", help="figures written here")
    args = ap.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    if args.tiny and not any(a == "--generations" or a.startswith("--generations=") for a in given):
        args.generations = 2  # a smoke run ends by itself (30 tiny generations took minutes)
    if args.recipe:
        return recipe_main(args)
    if args.games < 1000 and not args.tiny:
        ap.error("--games must be at least 1000 (the issue's measure); --tiny for a smoke run")
    from training.evaluate import head_to_head

    out = Path(args.out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    json_path = Path(args.json)
    state = json.loads(json_path.read_text()) if json_path.is_file() else {}
    if state.get("out_dir") not in (None, str(out)):
        ap.error(f"{json_path} holds figures of the run in {state['out_dir']}; use another --json")
    state.update(out_dir=str(out), budget_hours=args.hours, opponents=args.opponents, games=args.games)
    state.setdefault("generations", [])
    state.setdefault("peak_memory_mb", 0.0)
    extra = shlex.split(args.expert_args) + (shlex.split(TINY) if args.tiny else [])
    games = 20 if args.tiny else args.games
    manifest_path = out / "run" / "manifest.json"
    for g in range(args.generations):
        cmd = [sys.executable, "-m", "training.cli", "expert", "--out-dir", str(out / "run"),
               "--generations", str(g + 1), "--hours", str(args.hours), "--workers", str(args.workers),
               "--no-progress", *extra]
        peak = [0.0]
        code = run_generations(cmd, peak)
        state["peak_memory_mb"] = round(max(state["peak_memory_mb"], peak[0]), 1)
        if code != 0:
            print(f"the pipeline exited with {code}", file=sys.stderr)
            return code
        manifest = json.loads(manifest_path.read_text())
        gens = [x for x in manifest["generations"] if x.get("done")]
        if len(gens) <= g:
            print(f"stopped: {manifest.get('stopped', {}).get('reason')}")
            break
        gen = gens[g]
        done = {e["generation"]: e for e in state["generations"]}
        if g not in done:
            champion = gen["champion"]
            row = {"generation": g, "hours": round(gen["elapsed"] / 3600, 3), "champion": champion,
                   "promoted": gen["promoted"], "peak_rss_mb": gen.get("peak_rss_mb"), "eval": {}}
            prev = state["generations"][-1] if state["generations"] else None
            for k, opp in enumerate(args.opponents):
                if prev is not None and prev["champion"] == champion:
                    row["eval"][opp] = prev["eval"][opp]  # the same net: its measurement stands
                    continue
                seed = 9_000_000 + 1000 * g + k  # fresh deals for every generation and opponent
                fname = out / f"eval_gen{g:03d}_{''.join(c if c.isalnum() else '_' for c in opp)}.jsonl"
                m = head_to_head(f"learned:path={champion}", opp, games, seed, fname, workers=args.workers,
                                 progress=False, ruleset=manifest["settings"]["rules"] or None)
                row["eval"][opp] = {key: m[key] for key in ("games", "score", "score_low", "score_high", "seed")}
                print(f"generation {g} ({row['hours']:.2f} h): {m['score']:.1%} [{m['score_low']:.1%}, "
                      f"{m['score_high']:.1%}] against {opp}", flush=True)
            state["generations"].append(row)
        first = {}
        for row in state["generations"]:
            for opp, m in row["eval"].items():
                if opp not in first and m.get("score_low") is not None and m["score_low"] > 0.5:
                    first[opp] = row["hours"]
        state["first_beats_hours"] = {opp: first.get(opp) for opp in args.opponents}
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(state, indent=1) + "\n")
        if len(first) == len(args.opponents):
            break
    print(json.dumps({"first_beats_hours": state.get("first_beats_hours"),
                      "peak_memory_mb": state["peak_memory_mb"]}, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("stopped (the pipeline and the figures so far are saved): run the same command again to go on",
              file=sys.stderr)
        sys.exit(130)
