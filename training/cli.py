"""The one command line of the training package: ``mulle-train`` (and ``mulle-expert``).

``mulle-train <command> ...``:

* ``ppo``: masked PPO on the environments (:mod:`training.ppo`); ``mulle-train`` with
  flags and no command word runs it, as it always has;
* ``run``, ``data``, ``fit``, ``dmc``: expert iteration and its stages (:mod:`training.expert`);
* ``regret``: players' regret by a reference search (:mod:`training.regret`);
* ``plot``, ``speed``: Elo by generation, Elo against thinking time (:mod:`training.plots`).

``mulle-expert <command>`` is the same command line without ``ppo`` (its documented name
for the expert-iteration commands).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import expert
from .expert import MANIFEST, join_param, write_json

__all__ = ["EXPERT_COMMANDS", "build_parser", "expert_main", "main", "train_main"]



def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, not {v}")
    return v


def _unit_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, not {text!r}")
    return value


def _widths(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be comma-separated widths like 512,256, not {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"must list positive widths like 512,256, not {text!r}")
    return sizes


def _specs(text: str) -> list[str]:
    out = [s.strip() for s in text.split(";") if s.strip()] if ";" in text else \
        [s.strip() for s in text.split(" ") if s.strip()]
    if not out:
        raise argparse.ArgumentTypeError("must name at least one agent spec")
    return out


def build_parser(prog: str = "mulle-expert") -> argparse.ArgumentParser:
    """The expert-iteration commands of the training command line (their flags are a public interface)."""
    # Imported here, not at the top: numpy must load after main() limits the BLAS threads.
    from mulle_env.extras import EXTRAS

    ap = argparse.ArgumentParser(prog=prog, description="Expert iteration for Mulle: a search labels "
                                 "positions, a network learns them, the search uses the network; repeat.")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run (or resume) generations",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    r.add_argument("--out-dir", default="runs/expert", help="data, checkpoints, policies, results and manifest.json")
    r.add_argument("--generations", type=_positive, default=3, help="generations to complete (raise it to continue)")
    r.add_argument("--teacher", default="pimc", help="agent spec labelling generation 0 (needs move_values)")
    r.add_argument("--search", default="netsearch", help="search agent spec that takes policy=<file> (the expert)")
    r.add_argument("--reference", default="pimc",
                   help="a generation's search becomes the teacher once it beats this (95%% lower bound > 50%%)")
    r.add_argument("--opponents", type=_specs, default=["self"],
                   help="the teacher's opponents in data games, space-separated specs ('self' = both seats recorded)")
    r.add_argument("--games", type=_positive, default=400, help="teacher games per generation")
    r.add_argument("--shard-games", type=_positive, default=4, help="games per data shard (the unit of resuming)")
    r.add_argument("--seed", type=int, default=0, help="seeds data games (per generation), nets and fits")
    r.add_argument("--workers", type=_positive, default=1, help="processes for data games and arena games")
    r.add_argument("--data-window", type=_positive, default=2, help="fit on the data of this many latest generations")
    r.add_argument("--init-from", default="", help="policy file whose weights start generation 0 (shapes must fit)")
    r.add_argument("--net", choices=("logits", "afterstate"), default="logits",
                   help="logits: one logit per action plus a value head; afterstate: score the position each move "
                        "leaves (data made with afterstates, mulle-expert fit --net afterstate)")
    r.add_argument("--hidden", type=_widths, default=None,
                   help="hidden widths (default: 512,256 for logits nets, 256,256 for afterstate nets)")
    r.add_argument("--value-hidden", type=_widths, default=[256], help="value head hidden widths")
    r.add_argument("--activation", choices=("relu", "tanh"), default="relu")
    r.add_argument("--epochs", type=_positive, default=8)
    r.add_argument("--batch-size", type=_positive, default=512)
    r.add_argument("--lr", type=_positive_float, default=1e-3, help="Adam(W) learning rate, cosine decay")
    r.add_argument("--temperature", type=_positive_float, default=1.0,
                   help="soft-target temperature in points: softmax(move value / T)")
    r.add_argument("--vf-coef", type=_positive_float, default=0.5, help="weight of the value loss")
    r.add_argument("--eval-opponents", type=_specs, default=["pimc", "greedy"],
                   help="space-separated specs each generation's policy and search play")
    r.add_argument("--eval-games", type=_positive, default=400, help="games per evaluation match (duplicate pairs)")
    r.add_argument("--eval-seed", type=int, default=900_000, help="arena seed of the evaluation deals")
    r.add_argument("--checkpoint-minutes", type=_positive_float, default=5.0, help="fit checkpoint interval")
    r.add_argument("--threads", type=_positive, default=1, help="torch threads for the fit")
    r.add_argument("--no-progress", action="store_true", help="no progress bars")
    d = sub.add_parser("data", help="make (or complete) one teacher data set",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    d.add_argument("out", help="data directory (spec.json and shards; a rerun makes only the missing shards)")
    d.add_argument("--teacher", default="pimc:samples=40", help="agent spec labelling every legal move (move_values)")
    d.add_argument("--opponents", type=_specs, default=["self"],
                   help="the teacher's opponents, space-separated specs ('self' = both seats recorded)")
    d.add_argument("--games", type=_positive, default=400, help="games in the data set")
    d.add_argument("--shard-games", type=_positive, default=10, help="games per shard (the unit of resuming)")
    d.add_argument("--seed", type=int, default=0, help="fixes every deal and every agent's random stream")
    d.add_argument("--workers", type=_positive, default=1, help="processes (the data does not depend on it)")
    d.add_argument("--afterstates", action="store_true",
                   help="also store each labelled move's afterstate (what --net afterstate fits)")
    d.add_argument("--no-progress", action="store_true", help="no progress bar")
    f = sub.add_parser("fit", help="fit a policy file to teacher data sets",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    f.add_argument("data", nargs="+", help="teacher data directories (mulle-expert data)")
    f.add_argument("--out", required=True, help="policy .npz file to write")
    f.add_argument("--net", choices=("afterstate", "logits"), default="afterstate",
                   help="afterstate: score the position each move leaves (needs data made with --afterstates); "
                        "logits: one logit per action plus a value head (training.distill)")
    f.add_argument("--hidden", type=_widths, default=None,
                   help="hidden widths (default: 256,256 for afterstate, 512,256 for logits)")
    f.add_argument("--epochs", type=_positive, default=4)
    f.add_argument("--batch-size", type=_positive, default=1024)
    f.add_argument("--lr", type=_positive_float, default=1e-3, help="Adam(W) learning rate, cosine decay")
    f.add_argument("--seed", type=int, default=0, help="initial weights, batch order, held-out games")
    f.add_argument("--init-from", default="",
                   help="policy file whose weights start the fit (same shapes; or one with fewer extra inputs)")
    f.add_argument("--extras", choices=EXTRAS, default=None,
                   help="afterstate nets: also read this extra-input block, computed from each encoding "
                        "(mulle_env/extras.py); --init-from may then name a net without it")
    f.add_argument("--checkpoint", default="", help="checkpoint file (default: <out>.ckpt.pt); a rerun resumes")
    f.add_argument("--checkpoint-minutes", type=_positive_float, default=5.0, help="checkpoint interval")
    f.add_argument("--threads", type=_positive, default=1, help="torch threads")
    f.add_argument("--no-progress", action="store_true", help="no progress bar")
    m = sub.add_parser("dmc", help="fine-tune an afterstate policy by Deep Monte-Carlo self-play",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    m.add_argument("init_from", help="afterstate policy file to start from (e.g. a mulle-expert fit)")
    m.add_argument("--out", required=True, help="policy .npz file to write (rewritten after every round)")
    m.add_argument("--rounds", type=_positive, default=20, help="rounds to complete (raise it to continue)")
    m.add_argument("--games-per-round", type=_positive, default=1000, help="self-play games per round")
    m.add_argument("--epsilon", type=_unit_float, default=0.03, help="share of uniformly random moves")
    m.add_argument("--lr", type=_positive_float, default=1e-4, help="Adam(W) learning rate (constant)")
    m.add_argument("--batch-size", type=_positive, default=1024)
    m.add_argument("--opponents", type=_specs, default=["self"],
                   help="space-separated specs the net plays in turn ('self' = both seats recorded; "
                        "e.g. 'self greedy learned:path=runs/gen1.npz')")
    m.add_argument("--seed", type=int, default=0, help="fixes every deal and random draw of every round")
    m.add_argument("--checkpoint", default="", help="checkpoint file (default: <out>.ckpt.pt); a rerun resumes")
    m.add_argument("--workers", type=_positive, default=1, help="processes playing a round's games")
    m.add_argument("--threads", type=_positive, default=1, help="torch threads for the updates")
    m.add_argument("--no-progress", action="store_true", help="no progress bar")
    p = sub.add_parser("plot", help="PNG of Elo by generation from a run's manifest")
    p.add_argument("manifest", help="manifest.json of a mulle-expert run (or its --out-dir)")
    p.add_argument("--out", default="elo_by_generation.png", help="PNG to write")
    s = sub.add_parser("speed", help="PNG of Elo against milliseconds per decision from one arena results file")
    s.add_argument("results", help="results .jsonl of one mulle-arena run (a round-robin of the agents to compare)")
    s.add_argument("--out", default="elo_vs_ms.png", help="PNG to write")
    s.add_argument("--json", default="", help="also write the points (spec, Elo, interval, ms) here")
    g = sub.add_parser("regret", help="each player's regret by a reference search, on a driver's self-play decisions")
    g.add_argument("players", nargs="+", help="agent specs to charge (e.g. learned pimc greedy)")
    g.add_argument("--reference", required=True, help="the search that values every legal move (pimc or netsearch)")
    g.add_argument("--driver", default="learned", help="the agent whose self-play games give the positions")
    g.add_argument("--games", type=_positive, default=24, help="self-play games")
    g.add_argument("--every", type=_positive, default=4, help="value every N-th decision with a choice")
    g.add_argument("--seed", type=int, default=0, help="deals and every agent's random stream")
    g.add_argument("--json", default="", help="also write the table here")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def _check_specs(parser: argparse.ArgumentParser, args) -> None:
    import agents

    def check(flag: str, spec: str) -> str:
        try:
            return agents.canonical(spec)
        except agents.AgentSpecError as exc:
            parser.error(f"{flag} {spec!r}: {exc}")

    # Canonical texts, so that equal agents written differently compare equal on resume.
    args.teacher = check("--teacher", args.teacher)
    args.reference = check("--reference", args.reference)
    args.eval_opponents = [check("--eval-opponents", spec) for spec in args.eval_opponents]
    args.opponents = [spec if spec == "self" else check("--opponents", spec) for spec in args.opponents]
    try:
        name, params = agents.parse_spec(args.search)
        agents.canonical(args.search)
    except agents.AgentSpecError as exc:
        parser.error(f"--search {args.search!r}: {exc}")
    if "policy" in params:
        parser.error(f"--search {args.search!r}: leave policy= out, each generation fills in its own file")
    try:
        agents.canonical(join_param(args.search, "policy=x.npz"))
    except agents.AgentSpecError:
        parser.error(f"--search {args.search!r}: agent {name!r} takes no policy=<file> parameter; use netsearch")
    if args.init_from:
        from agents.learned import PolicyFileError, load_policy

        try:
            load_policy(args.init_from)
        except PolicyFileError as exc:
            parser.error(f"--init-from: {exc}")
    if args.games % args.shard_games:
        parser.error(f"--games {args.games} must be a multiple of --shard-games {args.shard_games}")


def _dmc_main(parser: argparse.ArgumentParser, args, out) -> int:
    import agents
    from agents.learned import PolicyFileError, load_policy

    if args.seed < 0:
        parser.error(f"--seed must be >= 0, not {args.seed}")
    try:
        args.opponents = [o if o == "self" else agents.canonical(o) for o in args.opponents]
        for spec in set(args.opponents) - {"self"}:
            agents.make(spec)  # a missing policy file is reported now, not in a worker after a round
    except (agents.AgentSpecError, ValueError) as exc:
        parser.error(f"--opponents: {exc}")
    try:
        head = load_policy(args.init_from).head
    except PolicyFileError as exc:
        parser.error(f"init_from: {exc}")
    if head != "afterstate":
        parser.error(f"init_from {args.init_from!r} holds a {head!r} net; dmc fine-tunes afterstate nets "
                     "(mulle-expert fit --net afterstate)")
    if _torch_missing("dmc"):
        return 2
    return _errors_exit_1((PolicyFileError, ValueError), expert.dmc, args, out)


def _torch_missing(command: str) -> bool:
    """True, after saying so, when torch (which ``command`` needs) is not installed."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print(f'mulle-expert: error: {command} needs torch (pip install "mulle-env[train]")', file=sys.stderr)
        return True
    return False


def _errors_exit_1(errors: tuple, fn, *args) -> int:
    """``fn(*args)``; one of ``errors`` (bad data or files found while running) is reported and exits 1."""
    try:
        return fn(*args)
    except errors as exc:
        print(f"mulle-expert: error: {exc}", file=sys.stderr)
        return 1


def _regret_main(parser: argparse.ArgumentParser, args, out) -> int:
    import agents

    from .regret import format_table, regret_table

    for flag, spec in [*(("player", p) for p in args.players), ("--reference", args.reference),
                       ("--driver", args.driver)]:
        try:
            agents.canonical(spec)
        except agents.AgentSpecError as exc:
            parser.error(f"{flag} {spec!r}: {exc}")
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=args.games, unit="game", file=sys.stderr)

    def tick(done: int, total: int) -> None:
        if bar is not None:
            bar.update(1)

    try:
        result = regret_table(args.players, args.reference, args.games, args.every, args.seed, args.driver, tick)
    except ValueError as exc:
        print(f"mulle-expert: error: {exc}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    for line in format_table(result):
        out(line)
    if args.json:
        write_json(Path(args.json), result)
        out(f"wrote {args.json}")
    return 0


#: The commands of ``mulle-expert`` (all of ``mulle-train``'s but ``ppo``).
EXPERT_COMMANDS = ("run", "data", "fit", "dmc", "plot", "speed", "regret")


def train_main(argv: list[str] | None = None, out=print) -> int:
    """Entry point of ``mulle-train``: ``ppo`` (also when no command word is given) or an expert command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in EXPERT_COMMANDS:
        return main(argv, out, prog="mulle-train")
    if argv and argv[0] == "ppo":
        argv = argv[1:]
    elif argv and argv[0] in ("-h", "--help"):
        out("mulle-train: make policies for Mulle. Commands: ppo (the default: masked PPO, flags below), "
            f"{', '.join(EXPERT_COMMANDS)} (expert iteration: mulle-train run --help, ...).\n")
    from .ppo import main as ppo_main

    return ppo_main(argv)


def expert_main(argv: list[str] | None = None, out=print) -> int:
    """Entry point of ``mulle-expert``: the expert-iteration commands of :func:`train_main` under their old name."""
    return main(argv, out, prog="mulle-expert")


def main(argv: list[str] | None = None, out=print, prog: str = "mulle-expert") -> int:
    """Run one expert command (``run``, ``data``, ...); returns the exit code (0 done, 1 error, 2 bad usage, 130).

    Errors of the run (a data directory made with other settings, an unusable policy
    file) exit 1 with the message; bad flags exit 2 naming the flag.
    """
    # Small batched matrix products are far slower with a multithreaded BLAS on shared cores; worker
    # processes started from here read these when they import numpy.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    args.prog = prog
    try:
        if args.command == "run":
            _check_specs(parser, args)
            if args.hidden is None:
                args.hidden = [256, 256] if args.net == "afterstate" else [512, 256]
            if _torch_missing("run"):
                return 2
            from agents.learned import PolicyFileError
            from training.teacher import TeacherDataError

            return _errors_exit_1((PolicyFileError, TeacherDataError), expert.run, args, out)
        if args.command in ("data", "fit"):
            from agents.learned import PolicyFileError
            from training.teacher import TeacherDataError

            if args.command == "data":
                import agents

                try:
                    args.teacher = agents.canonical(args.teacher)
                    args.opponents = [o if o == "self" else agents.canonical(o) for o in args.opponents]
                except agents.AgentSpecError as exc:
                    parser.error(str(exc))
                if args.games % args.shard_games:
                    parser.error(f"--games {args.games} must be a multiple of --shard-games {args.shard_games}")
            else:
                if _torch_missing("fit"):
                    return 2
                missing = [d for d in args.data if not Path(d).is_dir()]
                if missing:
                    parser.error(f"data directory {missing[0]!r} does not exist")
                if args.extras and args.net != "afterstate":
                    parser.error("--extras is for afterstate nets (--net afterstate)")
            return _errors_exit_1((PolicyFileError, TeacherDataError, ValueError),
                                  expert.data if args.command == "data" else expert.fit, args, out)
        if args.command == "dmc":
            return _dmc_main(parser, args, out)
        if args.command == "plot":
            from .plots import plot_generations

            mpath = Path(args.manifest)
            mpath = mpath / MANIFEST if mpath.is_dir() else mpath
            if not mpath.is_file():
                parser.error(f"manifest {args.manifest!r} does not exist")
            if not plot_generations(mpath, args.out):
                print(f"{prog}: error: plotting needs matplotlib: pip install 'mulle-env[plot]'", file=sys.stderr)
                return 2
            out(f"wrote {args.out}")
            return 0
        if args.command == "regret":
            return _regret_main(parser, args, out)
        from .plots import plot_speed

        if not Path(args.results).is_file():
            parser.error(f"results {args.results!r} does not exist")
        try:
            points = plot_speed(args.results, args.out)
        except (ValueError, RuntimeError) as exc:
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 2
        if args.json:
            write_json(Path(args.json), {"results": args.results, "points": points})
        for p in sorted(points, key=lambda p: -p["elo"]):
            ms = f"{p['ms']:.3f}" if p["ms"] is not None else "n/a"
            out(f"{p['spec']:50s} Elo {p['elo']:+7.1f} [{p['low']:+.1f}, {p['high']:+.1f}]  {ms} ms/decision")
        out(f"wrote {args.out}")
        return 0
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted; finished shards, fit checkpoints, DMC rounds and arena games are saved: "
              "run the same command again to continue", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(train_main())
