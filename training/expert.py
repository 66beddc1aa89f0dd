"""Expert iteration: a search labels positions, a network learns them, the search uses the network.

The stages behind ``mulle-train``'s (and ``mulle-expert``'s) ``run``, ``data``, ``fit``
and ``dmc`` commands (:mod:`training.cli` parses their flags).

``run`` repeats, for generation ``g = 0, 1, ...``:

1. **data**: the current best search (``--teacher`` at first, later the ``--search``
   agent with the newest policy whose search beat ``--reference``) labels every legal
   move of its decisions in ``--games`` games (:mod:`training.teacher`; resumable
   shards, ``--workers`` processes);
2. **fit**: a policy and value head fitted to the data of the last ``--data-window``
   generations, starting from the previous generation's weights (or ``--init-from``)
   (:mod:`training.distill`; checkpointed every ``--checkpoint-minutes``);
3. **evaluate**: duplicate head-to-heads in the arena of ``learned:path=<policy>`` and
   of the search with it against each ``--eval-opponents`` (95% intervals, thinking
   time), each in its own resumable results file.

Everything lands in ``--out-dir``: ``gen_NNN/{data/, fit.pt, policy.npz, eval_*.jsonl}``
and ``manifest.json`` (settings, every invocation's command line, and per generation: teacher, decisions, fit figures,
the policy file and its measured strength), rewritten atomically after every stage.
Rerunning the same command resumes where it stopped (Ctrl-C any time); ``--generations``
may be raised to continue.

The stages also run one by one, which is how the shipped afterstate policy was made
(docs/learning.md has the exact commands): ``mulle-expert data`` makes (or completes) a
teacher data set, ``mulle-expert fit`` fits a policy file to one or more data sets
(``--net afterstate`` or ``logits``), both resumable. ``mulle-expert plot`` draws Elo by generation from the
manifest; ``mulle-expert speed`` draws Elo against milliseconds per decision for every
agent of one arena results file. ``mulle-expert dmc`` fine-tunes an afterstate policy by
Deep Monte-Carlo self-play (:mod:`training.dmc`; measured, and not used for the
shipped policy: docs/learning.md). ``mulle-expert regret`` charges players the points
their picks lose by a reference search's values, split by kind of move
(:mod:`training.regret`): where a net loses against its teacher.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from .cluster import RayLabeller
    from .stream import Source
    from .teacher import TeacherData

__all__ = ["FIXED", "MANIFEST", "Out", "data", "data_games", "data_rules", "dmc", "fit", "fit_net", "join_param",
           "learned_spec", "records", "replay", "run", "search_spec", "write_json"]

MANIFEST = "manifest.json"
#: Settings that fix what a run computes; a rerun with others is refused (``--generations``, ``--workers`` may change).
FIXED = ("teacher", "search", "reference", "opponents", "games", "shard_games", "seed", "data_window", "init_from",
         "hidden", "value_hidden", "activation", "epochs", "batch_size", "lr", "temperature", "vf_coef",
         "eval_opponents", "eval_games", "eval_seed", "net")
#: Where a command writes its report lines (``print`` unless a caller, such as a test, collects them).
Out = Callable[[str], None]



def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    return {k: getattr(args, k) for k in FIXED}


def write_json(path: Path, obj: dict[str, Any]) -> None:
    """Write ``obj`` as JSON to ``path`` whole or not at all (the manifest and the runs' state)."""
    from mulle_env.util.files import replacing

    with replacing(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")


def join_param(template: str, param: str) -> str:
    return template + ("," if ":" in template else ":") + param


def search_spec(template: str, policy: str) -> str:
    import agents

    return agents.canonical(join_param(template, f"policy={policy}"))


def teacher_for(manifest: dict[str, Any], args: argparse.Namespace) -> str:
    """The newest generation's search that beat the reference, else ``--teacher``."""
    for gen in reversed(manifest["generations"]):
        match = (gen.get("eval") or {}).get(f"search|{args.reference}")
        if match and match.get("score_low") is not None and match["score_low"] > 0.5:
            return cast(str, gen["search"])  # the manifest stores agent specs
    return cast(str, args.teacher)


def run(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-expert run``: complete ``args.generations`` generations (resuming); 0 when done."""
    from training import teacher

    from .evaluate import head_to_head

    root = Path(args.out_dir)
    root.mkdir(parents=True, exist_ok=True)
    path = root / MANIFEST
    settings = settings_of(args)
    if path.is_file():
        manifest = json.loads(path.read_text())
        # Runs made before --net existed fitted logits nets.
        manifest["settings"].setdefault("net", "logits")
        diff = {k: (manifest["settings"].get(k), v) for k, v in settings.items() if manifest["settings"].get(k) != v}
        if diff:
            what = "; ".join(f"--{k.replace('_', '-')}: {a!r} there, {b!r} now" for k, (a, b) in diff.items())
            prog = getattr(args, "prog", "mulle-expert")
            print(f"{prog}: error: --out-dir {str(root)!r} holds a run with other settings ({what}); "
                  "use the same settings to resume or another --out-dir", file=sys.stderr)
            return 2
    else:
        manifest = {"format": "mulle-expert-manifest-1", "settings": settings, "generations": []}
        write_json(path, manifest)
    # Every invocation is kept, so the manifest says exactly how its files were made.
    manifest.setdefault("commands", []).append(
        {"argv": list(args.argv or []), "time": time.strftime("%Y-%m-%d %H:%M:%S")})
    write_json(path, manifest)
    progress = not args.no_progress
    settings = {"hidden": args.hidden, "activation": args.activation, "epochs": args.epochs,
                "batch_size": args.batch_size, "lr": args.lr, "seed": args.seed}
    if args.net == "logits":
        settings.update(value_hidden=args.value_hidden, temperature=args.temperature, vf_coef=args.vf_coef)
    for g in range(args.generations):
        gens = manifest["generations"]
        if g < len(gens) and gens[g].get("done"):
            continue
        if g == len(gens):
            gens.append({"generation": g, "teacher": teacher_for(manifest, args), "started": time.time()})
            write_json(path, manifest)
        gen = gens[g]
        gdir = root / f"gen_{g:03d}"
        t0 = time.monotonic()
        # 1. Data (each generation deals new games: seed and generation fix them).
        out(f"generation {g}: data from {gen['teacher']} ({args.games} games)")
        summary = teacher.generate(gdir / "data", gen["teacher"], args.games, seed=args.seed * 1000 + g,
                                   opponents=args.opponents, shard_games=args.shard_games, workers=args.workers,
                                   progress=progress, afterstates=args.net == "afterstate")
        gen["data"] = str(gdir / "data")
        gen["data_seconds"] = gen.get("data_seconds", 0) + round(time.monotonic() - t0, 1)
        write_json(path, manifest)
        # 2. Fit on the latest generations' data, from the previous weights.
        policy = gdir / "policy.npz"
        if not gen.get("fit"):
            dirs = [x["data"] for x in gens[max(0, g - args.data_window + 1): g + 1]]
            data = teacher.load(dirs, **fit_arrays(args.net))
            init = gens[g - 1]["policy"] if g else (args.init_from or None)
            out(f"generation {g}: fit on {len(data['action'])} decisions from {len(dirs)} generation(s)")
            meta = {"generation": g, "teacher": gen["teacher"], "data": dirs, "data_summary": summary}
            figures = fit_net(args.net, data, policy, settings, init_from=init, checkpoint=gdir / "fit.pt",
                               checkpoint_minutes=args.checkpoint_minutes, progress=progress,
                               threads=args.threads, metadata=meta)
            gen.update(policy=str(policy), fit=figures, decisions=len(data["action"]))
            write_json(path, manifest)
        # 3. Evaluate the policy and the search with it.
        gen["learned"] = learned_spec(str(policy))
        gen["search"] = search_spec(args.search, str(policy))
        evals = gen.setdefault("eval", {})
        for kind, spec in (("learned", gen["learned"]), ("search", gen["search"])):
            for opp in args.eval_opponents:
                key = f"{kind}|{opp}"
                if key in evals:
                    continue
                out(f"generation {g}: {spec} vs {opp} ({args.eval_games} games)")
                fname = f"eval_{kind}_{''.join(c if c.isalnum() else '_' for c in opp)}.jsonl"
                evals[key] = head_to_head(spec, opp, args.eval_games, args.eval_seed, gdir / fname,
                                          workers=args.workers, progress=progress)
                write_json(path, manifest)
                m = evals[key]
                ms = ", ".join(f"{k} {_num(v, '.2f')}" for k, v in m["ms_per_decision"].items())
                out(f"  score {_num(m['score'], '.1%')} "
                    f"[{_num(m['score_low'], '.1%')}, {_num(m['score_high'], '.1%')}] over {m['games']} games; "
                    f"ms per decision: {ms}")
        gen["done"] = True
        gen["seconds"] = gen.get("seconds", 0) + round(time.monotonic() - t0, 1)
        write_json(path, manifest)
    out(f"done: {args.generations} generation(s) in {root} (manifest {path})")
    return 0


class LoadKeywords(TypedDict):
    """The keywords of :func:`training.teacher.load` that :func:`fit_arrays` chooses."""

    large: tuple[str, ...]
    compact: bool


def fit_arrays(net: str) -> LoadKeywords:
    """What a fit of ``net`` reads of teacher data: its own encodings only, a byte per entry (exact)."""
    return {"large": ("after_obs",) if net == "afterstate" else ("obs",), "compact": True}


def fit_net(net: str, data: TeacherData | Source, out: str | Path, settings: dict[str, Any], **kw: Any
            ) -> dict[str, Any]:
    """Fit a ``net`` ("afterstate" or "logits") with these config ``settings``; the fit's own keywords pass on."""
    if net == "afterstate":
        from training.afterfit import AfterstateConfig, fit_afterstate

        return fit_afterstate(data, out, AfterstateConfig(**settings), **kw)
    if not isinstance(data, dict):
        raise ValueError(f"logits nets are fitted to the dict of arrays training.teacher.load returns, not to a "
                         f"{type(data).__name__}; the data sources (streamed or in memory) are for afterstate nets "
                         "(--net afterstate)")
    from training import distill

    return distill.fit(data, out, distill.FitConfig(**settings), **kw)


def data(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-expert data``: make the missing shards of one teacher data set."""
    from training import teacher

    backend: RayLabeller | None = None
    if getattr(args, "backend", "local") == "ray":
        from .cluster import RayLabeller

        backend = RayLabeller(args.ray_address or None, args.workers)
    game = getattr(args, "game", "mulle")
    summary = teacher.generate(args.out, args.teacher, args.games, seed=args.seed, opponents=args.opponents,
                               shard_games=args.shard_games, workers=args.workers, progress=not args.no_progress,
                               afterstates=args.afterstates, rules=getattr(args, "rules", None) or None,
                               backend=backend, driver=getattr(args, "driver", "") or None, game=game)
    out(f"{args.out}: {summary['games']} games in {summary['shards']} shards "
        f"({summary['made']} made now, {summary['new_decisions']} new decisions)")
    return 0


def replay(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-train data OUT --replay-from DIR``: OUT is DIR with its afterstates
    (:func:`training.teacher.replay_afterstates`)."""
    from training import teacher

    summary = teacher.replay_afterstates(args.replay_from, args.out, progress=not args.no_progress)
    out(f"{args.out}: {summary['made']} of {summary['shards']} shards replayed now "
        f"({summary['new_decisions']} decisions with their afterstates)")
    return 0


def data_rules(dirs: Iterable[str | Path]) -> dict[str, Any]:
    """The ruleset (its changed flags) the data sets ``dirs`` were played under; a ``ValueError`` if they differ."""
    from training.teacher import check_data_dir

    rules = {str(d): check_data_dir(d).get("rules") or {} for d in dirs}
    if len({json.dumps(r, sort_keys=True) for r in rules.values()}) > 1:
        what = "; ".join(f"{d}: {r or 'default rules'}" for d, r in rules.items())
        raise ValueError(f"the data sets were played under different rules ({what}); a net is fitted for one ruleset")
    return next(iter(rules.values()))


def data_games(dirs: Iterable[str | Path]) -> str:
    """The game the data sets ``dirs`` hold (``"mulle"`` for those without a ``game`` entry); a ``ValueError`` if
    they differ."""
    from training.teacher import check_data_dir, data_game

    games = {str(d): data_game(check_data_dir(d)) for d in dirs}
    if len(set(games.values())) > 1:
        what = "; ".join(f"{d}: {g}" for d, g in games.items())
        raise ValueError(f"the data sets are of different games ({what}); a net is fitted for one game")
    return next(iter(games.values()))


def _fit_game(args: argparse.Namespace, sources: list[tuple[str, float]], rules: dict[str, Any], game: str,
              out: Out) -> int:
    """``fit`` of another game's data than Mulle's: an afterstate net (data made with afterstates) or a logits net
    of that game, fitted in memory."""
    from training import distill, teacher

    afterstate = args.net == "afterstate"
    refused = [("DIR=WEIGHT", any(w != 1 for _, w in sources)), ("--extras", bool(args.extras)),
               ("--augment-symmetries", getattr(args, "augment_symmetries", 2) != 2)]
    if not afterstate:
        refused.append(("--rank-coef", bool(getattr(args, "rank_coef", 0.0))))
    for what, given in refused:
        if given:
            raise ValueError(f"{what} is for Mulle's afterstate fits; {game} data fit afterstate nets "
                             "(mulle-train fit DIR, on data made with --afterstates) or logits nets (--net logits) "
                             "without it")
    ckpt = args.checkpoint or args.out + ".ckpt.pt"
    meta = {"data": [str(d) for d, _ in sources], "command": list(args.argv or []), "game": game}
    if afterstate:
        from training.afterfit import AfterstateConfig, fit_afterstate

        settings: dict[str, Any] = {"hidden": args.hidden or [256, 256], "epochs": args.epochs,
                                    "batch_size": args.batch_size, "lr": args.lr, "seed": args.seed}
        if getattr(args, "rank_temperature", 1.0) != 1.0 and not getattr(args, "rank_coef", 0.0):
            raise ValueError("--rank-temperature sets the ranking term's temperature: give --rank-coef above 0 too")
        if getattr(args, "rank_coef", 0.0):
            settings.update(rank_coef=args.rank_coef, rank_temperature=args.rank_temperature)
        after = teacher.load([d for d, _ in sources], **fit_arrays("afterstate"))
        out(f"checkpoints go to {ckpt} (a rerun resumes from it; deleted when the fit completes)")
        figures = fit_afterstate(after, args.out, AfterstateConfig(**settings), init_from=args.init_from or None,
                                 checkpoint=ckpt, checkpoint_minutes=args.checkpoint_minutes, metadata=meta,
                                 progress=not args.no_progress, log=lambda f: out(json.dumps(f)),
                                 threads=args.threads, ruleset=rules or None, game=game)
        Path(ckpt).unlink(missing_ok=True)
        out(f"wrote {args.out}: {json.dumps(figures)}")
        return 0
    cfg = distill.FitConfig(hidden=args.hidden or [512, 256], epochs=args.epochs, batch_size=args.batch_size,
                            lr=args.lr, seed=args.seed, augment=True)
    data = teacher.load([d for d, _ in sources], **fit_arrays("logits"))
    out(f"checkpoints go to {ckpt} (a rerun resumes from it; deleted when the fit completes)")
    figures = distill.fit(data, args.out, cfg, init_from=args.init_from or None, checkpoint=ckpt,
                          checkpoint_minutes=args.checkpoint_minutes, progress=not args.no_progress,
                          log=lambda f: out(json.dumps(f)), threads=args.threads, game=game, ruleset=rules or None,
                          metadata=meta)
    Path(ckpt).unlink(missing_ok=True)
    out(f"wrote {args.out}: {json.dumps(figures)}")
    return 0


def fit(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-expert fit``: fit a policy file to teacher data (resuming from its checkpoint, deleted when done)."""
    from training import teacher

    sources = getattr(args, "sources", None) or [(d, 1.0) for d in args.data]
    rules = data_rules([d for d, _ in sources])
    game = data_games([d for d, _ in sources])
    if game != "mulle":
        return _fit_game(args, sources, rules, game, out)
    ckpt = args.checkpoint or args.out + ".ckpt.pt"
    meta = {"data": [str(d) for d, _ in sources], "command": list(args.argv or [])}
    settings = {"hidden": args.hidden or ([256, 256] if args.net == "afterstate" else [512, 256]),
                "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "seed": args.seed}
    if args.net == "afterstate":
        from .stream import ShardSource, chunk_rows_for

        data: TeacherData | Source = ShardSource(sources, chunk_rows_for(getattr(args, "memory_gb", 4.0)))
        if args.extras:
            settings["extras"] = args.extras
        if getattr(args, "rank_temperature", 1.0) != 1.0 and not getattr(args, "rank_coef", 0.0):
            raise ValueError("--rank-temperature sets the ranking term's temperature: give --rank-coef above 0 too")
        if getattr(args, "rank_coef", 0.0):
            settings.update(rank_coef=args.rank_coef, rank_temperature=args.rank_temperature)
        if getattr(args, "augment_symmetries", 2) != 2:
            settings["augment_symmetries"] = args.augment_symmetries
        extra: dict[str, Any] = {"ruleset": rules or None}
    else:
        if any(w != 1 for _, w in sources):
            raise ValueError("weighted data sets (DIR=WEIGHT) are for afterstate fits (--net afterstate)")
        if getattr(args, "augment_symmetries", 2) != 2:
            raise ValueError("--augment-symmetries is for afterstate fits (--net afterstate)")
        if getattr(args, "rank_coef", 0.0) or getattr(args, "rank_temperature", 1.0) != 1.0:
            raise ValueError("--rank-coef is for afterstate fits (--net afterstate); logits nets learn a softmax "
                             "of the teacher's values already (mulle-train run --net logits --temperature)")
        if rules.get("forced_capture") is False:
            raise ValueError("logits nets need the fixed action space: data played with forced_capture=false "
                             "fits afterstate nets only (--net afterstate)")
        data = teacher.load([d for d, _ in sources], **fit_arrays(args.net))
        extra = {}
    out(f"checkpoints go to {ckpt} (a rerun resumes from it; deleted when the fit completes)")
    figures = fit_net(args.net, data, args.out, settings, init_from=args.init_from or None, checkpoint=ckpt,
                      checkpoint_minutes=args.checkpoint_minutes, metadata=meta, progress=not args.no_progress,
                      log=lambda f: out(json.dumps(f)), threads=args.threads, **extra)
    Path(ckpt).unlink(missing_ok=True)
    out(f"wrote {args.out}: {json.dumps(figures)}")
    return 0


def records(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-train records``: game record files into a behaviour-cloning data set."""
    from .records import records_to_data

    summary = records_to_data(args.files, args.out, rules=args.rules or None, shard_games=args.shard_games)
    out(f"{args.out}: {summary['games']} games, {summary['decisions']} new decisions with a choice"
        + (f" ({summary['other_rules']} games under other rules left out)" if summary["other_rules"] else ""))
    return 0


def dmc(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-expert dmc``: fine-tune an afterstate policy by DMC self-play (resuming from its checkpoint)."""
    from training.dmc import DMCConfig, finetune_dmc

    cfg = DMCConfig(rounds=args.rounds, games_per_round=args.games_per_round, epsilon=args.epsilon, lr=args.lr,
                    batch_size=args.batch_size, opponents=args.opponents, seed=args.seed)
    from training.dmc import round_line, rounds_log_path

    # One progress bar (it shows each round's loss and points); without it, a line a round. The figures as
    # JSON go to <out>.rounds.jsonl either way.
    figures = finetune_dmc(args.init_from, args.out, cfg, checkpoint=args.checkpoint or None, workers=args.workers,
                           threads=args.threads, progress=not args.no_progress,
                           log=(lambda f: out(round_line(f))) if args.no_progress else None,
                           metadata={"command": list(args.argv or [])})
    last = f"; the last {round_line(figures)}" if "round" in figures else ""
    out(f"wrote {args.out} after {figures.get('dmc_seconds', 0.0) / 60:.1f} min of DMC{last}; every round's figures "
        f"in {rounds_log_path(args.out)}")
    return 0


def _num(x: float | None, fmt: str) -> str:
    return "n/a" if x is None else format(x, fmt)


def learned_spec(policy: str) -> str:
    import agents

    return agents.canonical(f"learned:path={policy}")
