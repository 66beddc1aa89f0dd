"""``mulle-arena``: tournaments between agent specs, resumable, parallel, with statistics.

Examples::

    mulle-arena random heuristic pimc --games 2000 --workers 2 --seed 1 --out results.jsonl
    mulle-arena heuristic greedy --games 20000 --sprt 0 20 0.05 0.05 --workers 2
    mulle-arena random heuristic --games 200 --backend ray --ray-address auto
    mulle-arena --agents --game casino       # the agents that play Casino (--game: a short name or a module)

Re-running the same command resumes: games already in ``--out`` are not played again.
See docs/arena.md for the results-file format and the statistics.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .runner import Backend
    from .shutdown import TerminateAsInterrupt

# Only the standard library at module level: the agents, the games and the statistics
# (numpy, scipy) are imported inside main(), so a Ctrl-C while they load (a second or more
# on a busy machine) is reported like any other instead of as an import traceback.

log = logging.getLogger("arena")

#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_INTERVAL = 30.0


def _derived(out: str, suffix: str) -> str:
    base = out[: -len(".jsonl")] if out.endswith(".jsonl") else out
    return f"{base}.report{suffix}"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (its flags are a public interface)."""
    p = argparse.ArgumentParser(
        prog="mulle-arena",
        description="Play a round-robin tournament (or a head-to-head with --sprt) between agent specs, "
        "write every game to a JSON Lines file at once, and report W/D/L, score differences, "
        "pentanomial Elo and Bradley-Terry ratings. Re-running the same command resumes.",
        epilog="Agent specs: 'name' or 'name:key=value,...', e.g. 'pimc:samples=30'. See docs/arena.md.",
    )
    # Optional for argparse so that --agents needs none; parse_args asks for 2 otherwise.
    p.add_argument("specs", nargs="*", metavar="SPEC", help="agent specs (at least 2)")
    p.add_argument("--agents", action="store_true",
                   help="list the agents that play the --game (default mulle) with their parameters, and exit")
    p.add_argument("--verify", metavar="FILE",
                   help="replay every game of a results file that carries its moves (--save-games), name each line "
                   "whose result differs from its replay, and exit (1 if any differs); plays nothing")
    p.add_argument("--games", type=int, default=100, metavar="N",
                   help="games per pairing (default 100); duplicate format pairs them 2 per deal")
    p.add_argument("--workers", type=int, default=1, metavar="W", help="worker processes (default 1)")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="tournament seed: fixes every deal (default 1)")
    p.add_argument("--out", default="results.jsonl", metavar="FILE",
                   help="results file, JSON Lines, appended to and resumed from (default results.jsonl)")
    p.add_argument("--report", metavar="FILE", help="JSON report (default: <out>.report.json)")
    p.add_argument("--markdown", metavar="FILE", help="Markdown report (default: <out>.report.md)")
    p.add_argument("--plot", metavar="FILE", help="PNG of the ratings (default: <out>.report.png; needs matplotlib)")
    p.add_argument("--save-games", action="store_true", help="store each game's move list (replayable)")
    p.add_argument("--sprt", nargs=4, type=float, metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                   help="head-to-head of exactly 2 specs with early stopping: SPRT of H0 elo=ELO0 "
                   "against H1 elo=ELO1 (logistic Elo of the first spec) on duplicate pairs; --games is the cap")
    p.add_argument("--single", action="store_true",
                   help="play each deal once (seats alternate by game) instead of the duplicate format")
    p.add_argument("--backend", choices=("process", "ray"), default="process",
                   help="where games run: local process pool (default) or a Ray cluster")
    p.add_argument("--ray-address", metavar="ADDR", help="Ray cluster address (default: start a local Ray)")
    p.add_argument("--move-timeout", type=float, default=10.0, metavar="SEC",
                   help="per-move time limit; an agent over it forfeits the game (default 10, 0 = none)")
    p.add_argument("--game-timeout", type=float, default=None, metavar="SEC",
                   help="abandon a game (and replace its worker) after this long (default: 600 or "
                   "60 x --move-timeout, whichever is larger)")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="ruleset flag, repeatable, e.g. --rule sets=1 --rule forced_capture=false "
                   "(parsed by the game's Ruleset.from_strings: booleans true/false, yes/no, on/off, 1/0)")
    p.add_argument("--game", default="mulle", metavar="GAME",
                   help="the game: a short name (mulle, casino) or the import path of a game module "
                   "(package.module or package.module:object; default mulle, the module mulle_env)")
    p.add_argument("--worker-init", metavar="MODULE:FUNC",
                   help="function run once in this process and in every worker before agents are built "
                   "(e.g. to register extra agents)")
    p.add_argument("--isolate", action="store_true",
                   help="play each agent in a process of its own that sees only its view and answers only a move "
                   "(untrusted agents: any way out of a turn, a hang, a crash, an exit, is that agent's forfeit; "
                   "needs a --move-timeout; see docs/arena.md for what it costs)")
    p.add_argument("--agent-memory", type=int, default=None, metavar="MB",
                   help="with --isolate: each agent process's memory limit in MiB (address space; default 2048)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar and no tables: only errors and what the results file needed (lines set "
                        "aside, games played again)")
    return p


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    """Parse and validate; bad arguments exit with code 2 and a message saying what is allowed."""
    import agents
    from mulle_env.engine.rng import seed_problem
    from mulle_env.files import PathError, check_output_path

    from .game import GameProtocolError, UnknownGameError, game_name, make_ruleset, resolve_game, seating_refusal
    from .worker import call_path, load_game

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verify is not None:
        if args.specs or args.agents:
            parser.error("--verify replays a results file and plays nothing; give it without agent specs or --agents")
        return args, parser
    if args.worker_init:
        try:
            call_path(args.worker_init)()
        except Exception as exc:
            parser.error(f"--worker-init {args.worker_init!r} failed: {type(exc).__name__}: {exc}")
    if (why := seed_problem(args.seed, "--seed")) is not None:  # the one seed domain (docs/engine.md)
        parser.error(why)
    if args.games < 1:
        parser.error(f"--games must be at least 1, not {args.games}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    for flag, value in (("--move-timeout", args.move_timeout), ("--game-timeout", args.game_timeout)):
        if value is not None and not math.isfinite(value):
            parser.error(f"{flag} must be a finite number of seconds, not {value}"
                         + (" (0 means no limit)" if flag == "--move-timeout" else ""))
    if args.move_timeout < 0:
        parser.error(f"--move-timeout must be 0 (none) or positive, not {args.move_timeout:g}")
    if args.game_timeout is not None and args.game_timeout <= 0:
        parser.error(f"--game-timeout must be positive, not {args.game_timeout:g}")
    if args.isolate and not args.move_timeout:
        parser.error("--isolate needs a move time limit (--move-timeout SEC, not 0): without one a hung agent "
                     "cannot be told from a thinking one")
    if args.agent_memory is not None and not args.isolate:
        parser.error("--agent-memory limits isolated agents only: give it with --isolate")
    if args.agent_memory is not None and args.agent_memory < 64:
        parser.error(f"--agent-memory must be at least 64 (MiB), not {args.agent_memory}")
    # The game first: which agents it seats, and the specs' messages name the agents that play it.
    try:
        game = load_game(args.game)
    except (GameProtocolError, UnknownGameError) as exc:
        parser.error(str(exc))
    except Exception as exc:
        parser.error(f"--game {args.game!r} cannot be imported: {exc}")
    args.game_name, args.game_given = game_name(game, args.game), args.game
    args.game = resolve_game(args.game)  # recorded as the module: casino and mulle_env.casino are one game
    if args.agents:
        if args.specs:
            parser.error(f"--agents lists the agents and plays nothing; give it without agent specs "
                         f"(not {' '.join(args.specs)})")
        return args, parser
    if len(args.specs) < 2:
        parser.error(f"give at least 2 agent specs, not {len(args.specs)}; agents that play "
                     f"{args.game_name or args.game}: " + ", ".join(agents.available(game=args.game_name)))
    # Before the specs are built: a name is built as the game's agent of that name, and the message
    # for a name that has none says which agents play the game.
    if (why := seating_refusal(args.specs, game, args.game_given)) is not None:
        parser.error(f"--game {args.game_given}: {why} (mulle-arena --agents --game {args.game_given} lists them)")
    canonical = []
    for spec in args.specs:
        try:
            canonical.append(agents.make(spec, game=args.game_name).spec)
        except ValueError as exc:
            parser.error(str(exc))  # AgentSpecError names the spec and what is wrong
    dupes = sorted({s for s in canonical if canonical.count(s) > 1})
    if dupes:
        parser.error(f"agent spec(s) given twice: {', '.join(dupes)}; each agent may play once (a game id names "
                     "the two specs, and in duplicate play an agent against itself scores 50% by construction; "
                     "to compare two settings or files of one agent, name them: learned:path=A.npz "
                     "learned:path=B.npz, pimc pimc:samples=40)")
    args.specs = canonical
    if args.sprt is not None:
        from .stats import SPRT

        elo0, elo1, alpha, beta = args.sprt
        if len(args.specs) != 2:
            parser.error(f"--sprt runs a head-to-head: give exactly 2 specs, not {len(args.specs)}")
        if args.single:
            parser.error("--sprt counts duplicate pairs; it cannot be combined with --single")
        try:
            args.sprt = SPRT(elo0, elo1, alpha, beta)
        except ValueError as exc:
            parser.error(f"--sprt {elo0:g} {elo1:g} {alpha:g} {beta:g}: {exc}")
        if args.games < 2:
            parser.error("--sprt needs --games of at least 2 (one duplicate pair)")
    # The game parses its own rules (types, names, messages): the arena only passes the texts on.
    from_strings: Any = getattr(getattr(game, "Ruleset", None), "from_strings", None)
    if args.rule and from_strings is None:
        parser.error(f"--rule needs a game whose Ruleset has from_strings(); --game {args.game!r} has none")
    try:
        ruleset = from_strings(args.rule) if args.rule else make_ruleset(game, {})
    except ValueError as exc:  # InvalidRulesetError says which flag and what it takes
        parser.error(f"--rule: {exc}")
    args.ruleset = ruleset.to_dict() if hasattr(ruleset, "to_dict") else dict(ruleset or {})
    if args.backend != "ray" and args.ray_address:
        parser.error("--ray-address needs --backend ray")
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            parser.error("--backend ray needs Ray: pip install 'mulle-env[ray]'")
        if args.ray_address:  # joined now, so an address where no cluster answers is said before any game
            from .ray_backend import RayBackend, RayUnavailableError

            try:
                RayBackend(address=args.ray_address, workers=args.workers).init()
            except RayUnavailableError as exc:
                parser.error(f"--ray-address: {exc}")
    _check_agents_can_play(parser, args.specs, args.game_name, ruleset)
    _check_workers(parser, args)
    args.report = args.report or _derived(args.out, ".json")
    args.markdown = args.markdown or _derived(args.out, ".md")
    args.plot = args.plot or _derived(args.out, ".png")
    # Outputs are checked before the tournament, not found missing after hours of play; each must
    # be a regular file (a device, FIFO or socket would take the games and keep none, or hang).
    paths = {"--out": args.out, "--report": args.report, "--markdown": args.markdown, "--plot": args.plot}
    seen: dict[str, str] = {}
    for flag, path in paths.items():
        try:
            check_output_path(path, flag)  # first: realpath raises on a NUL byte, the check says so
        except PathError as exc:
            parser.error(str(exc))
        real = os.path.realpath(path)
        if real in seen:
            parser.error(f"{flag} {path!r} is the same file as {seen[real]}; each output needs its own file")
        seen[real] = flag
    # Last, once every other argument is known to be good: a rejected command leaves no file behind.
    try:
        with open(args.out, "a"):
            pass
    except OSError as exc:
        parser.error(f"--out {args.out!r} is not writable: {exc.strerror or exc}")
    return args, parser


#: More worker processes than this many per core only add memory (each holds its agents) and contention.
MAX_WORKERS_PER_CORE = 4


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the system says, else all of them)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _check_workers(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse far more local workers than cores; say so when there are more than cores."""
    if args.backend != "process":
        return  # Ray workers live on the cluster, whose size this machine does not know
    cores = usable_cores()
    if args.workers > MAX_WORKERS_PER_CORE * cores:
        parser.error(f"--workers {args.workers} is far more than the {cores} core(s) of this machine; "
                     f"allowed: at most {MAX_WORKERS_PER_CORE * cores} ({MAX_WORKERS_PER_CORE} per core; "
                     f"more processes only add memory, each holds its own agents)")
    if args.workers > cores and not args.quiet:
        print(f"note: --workers {args.workers} is more than the {cores} core(s) of this machine; "
              "games will wait for each other (and tight --move-timeout limits may forfeit)", file=sys.stderr)


def _check_agents_can_play(parser: argparse.ArgumentParser, specs: list[str], game: str | None, ruleset: Any) -> None:
    """Exit 2 if an agent cannot play under the tournament's rules (it would forfeit every game).

    ``game`` is the game's short name: which agent each spec is (``None``: Mulle's). That
    every agent plays the game at all was asked before (:func:`arena.game.seating_refusal`),
    so an agent of another game never judges this game's ruleset.
    """
    import agents
    from mulle_env.engine.loop import ruleset_refusal

    for spec in specs:
        if (why := ruleset_refusal(agents.make(spec, game=game), ruleset)) is not None:
            parser.error(f"agent {spec!r} cannot play with these rules (--rule): {why}")


def verify_command(path: str) -> int:
    """``mulle-arena --verify FILE``: 0 when every replayed line agrees, 1 when one differs, 2 for a bad file."""
    from mulle_env.files import PathError

    from .verify import report, verify_file

    try:
        verdict = verify_file(path)
    except (PathError, OSError) as exc:
        print(f"mulle-arena: error: --verify {path!r}: {exc}", file=sys.stderr)
        return 2
    print(report(path, verdict))
    return 0 if verdict.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``mulle-arena``; returns the exit code.

    0 done, 1 error, 2 bad arguments, 130 interrupted by Ctrl-C, 143 by SIGTERM (handled
    like Ctrl-C: everything finished is saved and the report written; :mod:`arena.shutdown`),
    141 stopped because the program reading its output went away (``| head``; every finished
    game is saved: :mod:`mulle_env.util.pipes`).
    """
    from mulle_env.util.pipes import reader_gone

    from .shutdown import TerminateAsInterrupt

    with TerminateAsInterrupt() as stop:
        try:
            return _main(argv, stop)
        except BrokenPipeError:
            return reader_gone("mulle-arena", "every finished game is saved in the results file; the same "
                                              "command continues an unfinished run")
        except KeyboardInterrupt:
            # Interrupted before the first game (importing, building agents) or while the report
            # is written: every game that finished is already in the results file.
            print(f"\nmulle-arena: interrupted{' by SIGTERM' if stop.terminated else ''}; every finished game is "
                  "saved in the results file; run the same command again to continue (and to write the report)",
                  file=sys.stderr)
            return stop.exit_code


def _write_reports(args: argparse.Namespace, rep: dict[str, Any]) -> bool:
    """Write the JSON and Markdown reports and the plot; True if the plot was drawn (matplotlib is there)."""
    from mulle_env.files import check_output_path

    from . import report as report_mod

    # Checked again: after hours of play a path may have become something that is not a file.
    for flag in ("--report", "--markdown", "--plot"):
        check_output_path(getattr(args, flag[2:]), flag, probe=False)
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump(rep, f, indent=2)
        f.write("\n")
    with open(args.markdown, "w", encoding="utf-8") as f:
        f.write(report_mod.markdown(rep))
    return report_mod.plot(rep, args.plot)


def list_agents(args: argparse.Namespace, out: Any = None) -> None:
    """``--agents``: print the agents that play ``args.game`` (all of them for a game without a short name)."""
    import agents

    out = sys.stdout if out is None else out
    name = args.game_name
    if name is None:
        print(f"--game {args.game_given} has no short name (GAME_NAME), so no agent declares it: every agent may be "
              "seated at it, and one that cannot play it forfeits its games. The agents:", file=out)
    else:
        print(f"agents that play {name} (mulle-arena --game {args.game_given} SPEC SPEC ...; "
              "a spec is name or name:key=value,...):", file=out)
    for agent, help in agents.available(game=name).items():
        print(f"  {agent}: {help}", file=out)


def _main(argv: list[str] | None, stop: TerminateAsInterrupt) -> int:
    args, parser = parse_args(argv)
    if args.verify is not None:
        return verify_command(args.verify)
    if args.agents:
        list_agents(args)
        return 0
    from mulle_env.files import PathError

    from . import report as report_mod
    from . import tournament
    from .results import ResultsFileBusyError
    from .schedule import Plan
    from .worker import load_game

    logging.basicConfig(level=logging.ERROR if args.quiet else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    # What the results file needed (a torn line saved aside, lines of other tournaments, games played again) is
    # said even with --quiet: it is about the user's data, not the run's progress.
    logging.getLogger("arena.results").setLevel(logging.WARNING)
    # A game may say it runs on a slow fallback (Mulle: the Python engine because the C core did
    # not build). Said even with --quiet: it changes how long the run takes tenfold.
    notice = getattr(load_game(args.game), "fallback_notice", None)
    text = notice() if callable(notice) else None
    if text:
        print(f"mulle-arena: {text}", file=sys.stderr)
    move_timeout = args.move_timeout or None
    game_timeout = args.game_timeout or max(600.0, 60 * (move_timeout or 0))
    plan = Plan(
        specs=tuple(args.specs), games=args.games, seed=args.seed, ruleset=args.ruleset,
        duplicate=not args.single, game=args.game, move_timeout=move_timeout,
        save_games=args.save_games, worker_init=args.worker_init, isolate=args.isolate,
        agent_memory_mb=args.agent_memory,
    )
    backend: Backend
    if args.backend == "ray":
        from .ray_backend import RayBackend

        backend = RayBackend(address=args.ray_address, workers=args.workers, game_timeout=game_timeout)
    else:
        from .runner import ProcessBackend

        backend = ProcessBackend(args.workers, game_timeout=game_timeout)
    if args.games % 2 and plan.duplicate and not args.quiet:
        print(f"note: --games {args.games} is odd: the last deal of each pairing is played once, "
              "without its seat-swapped twin (it is left out of pentanomial statistics)", file=sys.stderr)
    try:
        if args.quiet:
            outcome = tournament.run(plan, args.out, backend, sprt=args.sprt, progress=False)
        elif sys.stderr.isatty():
            from tqdm.contrib.logging import logging_redirect_tqdm

            with logging_redirect_tqdm():
                outcome = tournament.run(plan, args.out, backend, sprt=args.sprt, progress="bar")
        else:  # a log or CI: a bar would show nothing until the end
            outcome = tournament.run(plan, args.out, backend, sprt=args.sprt, progress="lines",
                                     progress_interval=PROGRESS_INTERVAL)
    except ResultsFileBusyError as exc:
        parser.error(f"--out {args.out!r}: {exc}")
    except RuntimeError as exc:
        print(f"mulle-arena: error: {exc}", file=sys.stderr)
        return 1
    rep = report_mod.build(outcome)
    try:
        plotted = _write_reports(args, rep)
    except (OSError, PathError) as exc:
        print(f"mulle-arena: error: the report could not be written: {exc}; every game is saved in {args.out}, "
              "run the same command again to write the report", file=sys.stderr)
        return 1
    if not args.quiet:
        # The notes were logged as warnings when the run started; the files keep them.
        print(report_mod.text(rep, notes=False))
        print(f"\nresults: {args.out} ({outcome.played} games played now, {outcome.skipped} resumed); "
              f"report: {args.report}, {args.markdown}"
              + (f", {args.plot}" if plotted else " (no plot: matplotlib is not installed)"))
    if outcome.interrupted:
        print(f"interrupted{' by SIGTERM' if stop.terminated else ''}: {outcome.played} games of this run are "
              f"saved in {args.out}; run the same command again to continue", file=sys.stderr)
        return stop.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
