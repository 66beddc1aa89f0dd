"""``mulle-train expert``: expert iteration from nothing to a strong net, unattended.

The recipe that made the shipped net (docs/generations.md), as one resumable command.
For generation ``g = 0, 1, ...``:

1. **label**: a teacher search plays self-play games and values every legal move of
   every decision, storing each move's afterstate (:mod:`training.teacher`). Generation
   0's teacher is ``--first-teacher`` (``pimc:samples=40``, no net needed); every later
   one is ``--teacher`` (``netsearch:depth=5,samples=16,width=0``) searching with the
   *champion*, the best net so far. With ``--on-policy`` the champion itself plays later
   generations' games (one pass, both seats) while the teacher values every move: the net
   then learns the positions it reaches (DAgger), which moved the shipped net where more
   of the teacher's own games had not (docs/generations.md, generation 7);
2. **fit**: an afterstate net reading the ``--extras`` inputs (``capture-v3``) is fitted to
   the values of every generation's data (``--data-window`` limits it), streamed from
   disk in chunks within ``--memory-gb`` (:mod:`training.stream`), starting from the
   champion's weights; game records given with ``--records`` join generation 0's fit as
   behaviour-cloning data (:mod:`training.records`);
3. **screen**: the arena plays the new net (``learned:path=...``) against the champion and
   against each ``--screen-opponents`` agent (duplicate games, the same deals every
   generation);
4. **promote**: the new net becomes the champion if it scores above 50% against the
   champion (generation 0's always does); the next teacher searches with the champion.

It stops when ``--generations`` generations are done, when ``--hours`` of wall-clock time
(summed over every invocation) are spent, or when the champion reaches ``--target``
(its screen against that agent has a 95% lower bound above 50%). Ctrl-C, SIGTERM or
``kill -9`` at any moment lose no finished work: shards, fit checkpoints and arena games
are on disk and the manifest is rewritten atomically after every step, so the same
command continues where it stopped (any budget may be raised; the settings that decide
what a generation computes may not change).

``--game casino`` runs the same loop for Casino (:mod:`training.games`): the teacher is
Casino's determinized search (``pimc``, :mod:`agents.determinized`) in every generation (with
``--on-policy`` the champion plays the labelled games), the net an afterstate net of Casino's
afterstates (``--net afterstate``, the default: :func:`agents.learned.casino.encode_casino_afterstates`,
fitted in memory by :mod:`training.afterfit` without extra inputs) or a logits net (``--net
logits``: one logit per move id, with a value head, :mod:`training.distill`, fitted to the
softmax of the search's values; its runs may take ``--teacher netsearch...``, Casino's
``netsearch`` searching with the champion from generation 1 on), started from the champion's
weights, and the screens are Casino's arena games (``learned:path=...`` at ``--game casino``).
The extra inputs and people's game records are Mulle's, and refused there.

``--out-dir`` holds ``manifest.json`` (settings, every invocation, and per generation:
teacher and its version, data, fit settings and figures, the net, its agent version,
every screen, promotion, seconds per stage, cumulative wall-clock, peak memory),
``gen_NNN/{data/, policy.npz, screen_*.jsonl}``, ``champion.npz`` (a copy of the best
net) and the plots ``elo_by_generation.png`` and ``elo_by_time.png``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .expert import Out, join_param, learned_spec, write_json
from .interrupts import announcing_interrupts

if TYPE_CHECKING:
    from arena.ray_backend import RayBackend

    from .cluster import RayLabeller

__all__ = ["FIXED", "FORMAT", "Pipeline", "run_expert"]

FORMAT = "mulle-train-expert-1"
#: Settings that fix what a generation computes: a rerun with others is refused. Budgets, the target,
#: workers, the backend, memory and threads may change between invocations.
FIXED = ("first_teacher", "teacher", "first_games", "games", "shard_games", "seed", "data_window", "hidden",
         "extras", "first_epochs", "epochs", "batch_size", "lr", "screen_opponents", "screen_games",
         "screen_seed", "rules", "records", "on_policy", "game", "net")
#: Settings added to FIXED after runs were made, with the value a run's manifest without them had (``net``:
#: see :meth:`Pipeline.open`, it depends on the game).
_ADDED = {"on_policy": False, "game": "mulle"}


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _peak_rss_mb() -> float:
    """The largest resident memory of this process and of its finished children, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


def _file_name(spec: str) -> str:
    """A file name for ``spec`` (a spec or a path): its letters and digits, and a digest when it is cut short."""
    name = "".join(c if c.isalnum() else "_" for c in spec)
    if len(name) <= 80:
        return name
    import hashlib

    return name[-60:] + "_" + hashlib.sha256(spec.encode()).hexdigest()[:12]


class Pipeline:
    """One run of ``mulle-train expert`` in ``args.out_dir`` (see the module docstring).

    ``args`` carries the flags of :func:`training.cli.build_parser`'s ``expert`` command.
    """

    def __init__(self, args: argparse.Namespace, out: Out = print) -> None:
        self.args = args
        self.say_ = out
        self.root = Path(args.out_dir).resolve()
        self.path = self.root / "manifest.json"
        self.t0 = time.monotonic()
        self.base = 0.0
        self.manifest: dict[str, Any] = {}
        self._saved = self.t0
        #: What a Ctrl-C now waits for before the run stops (said at once, :meth:`announcing_interrupts`).
        self.waiting_for = "the manifest to be written"

    # ----- bookkeeping -------------------------------------------------------------------
    def elapsed(self) -> float:
        """Wall-clock seconds of the run, over every invocation."""
        return self.base + time.monotonic() - self.t0

    def say(self, text: str) -> None:
        """A progress line, stamped with the run's wall-clock time."""
        self.say_(f"[{_clock(self.elapsed())}] {text}")

    def save(self) -> None:
        """Rewrite the manifest atomically, with the wall-clock time so far."""
        self.manifest["elapsed"] = round(self.elapsed(), 1)
        write_json(self.path, self.manifest)
        self._saved = time.monotonic()

    @property
    def game(self) -> str:
        """The game the run trains a net for (``--game``; Mulle for a namespace made before the flag)."""
        return str(getattr(self.args, "game", "mulle"))

    @property
    def net(self) -> str:
        """The kind of net the run fits (``--net``): afterstate nets unless a Casino run asks for logits nets."""
        return str(getattr(self.args, "net", None) or "afterstate")

    def spec(self, text: str) -> str:
        """``text`` as the canonical spec of the run's game's agent."""
        import agents

        return agents.canonical(text) if self.game == "mulle" else agents.canonical(text, game=self.game)

    def agent_version(self, spec: str) -> str:
        """The version of the run's game's agent ``spec``."""
        import agents

        agent = agents.make(spec) if self.game == "mulle" else agents.make(spec, game=self.game)
        return str(agent.version)

    def learned(self, policy: str) -> str:
        """The spec of the learned agent playing ``policy`` at the run's game."""
        return learned_spec(policy) if self.game == "mulle" else self.spec(f"learned:path={policy}")

    def settings(self) -> dict[str, Any]:
        """The settings that fix what the run computes."""
        return {**{k: getattr(self.args, k, _ADDED.get(k)) for k in FIXED}, "net": self.net}

    def open(self) -> str | None:
        """Load or start the manifest; an error message if the directory holds a run with other settings."""
        self.root.mkdir(parents=True, exist_ok=True)
        settings = json.loads(json.dumps(self.settings()))
        if self.path.is_file():
            self.manifest = json.loads(self.path.read_text())
            if self.manifest.get("format") != FORMAT:
                return (f"--out-dir {str(self.root)!r} holds a {self.manifest.get('format')!r} manifest, not a "
                        "mulle-train expert run; use another --out-dir")
            old = {**_ADDED, **self.manifest["settings"]}
            # Runs made before --net: Mulle's fitted afterstate nets, Casino's logits nets.
            old.setdefault("net", "afterstate" if old["game"] == "mulle" else "logits")
            diff = {k: (old.get(k), v) for k, v in settings.items() if old.get(k) != v}
            if diff:
                what = "; ".join(f"--{k.replace('_', '-')}: {a!r} there, {b!r} now" for k, (a, b) in diff.items())
                return (f"--out-dir {str(self.root)!r} holds a run with other settings ({what}); use the same "
                        "settings to resume or another --out-dir")
            self.base = float(self.manifest.get("elapsed", 0.0))
        else:
            self.manifest = {"format": FORMAT, "settings": settings, "generations": [], "champion": None,
                             "elapsed": 0.0}
        self.manifest.setdefault("commands", []).append({"argv": list(self.args.argv or []), "time": _now()})
        self.save()
        return None

    # ----- the loop ----------------------------------------------------------------------
    def over_budget(self) -> bool:
        """True once the ``--hours`` budget is spent."""
        return bool(self.args.hours) and self.elapsed() >= 3600 * self.args.hours

    def tick(self) -> bool:
        """:meth:`over_budget`, called between shards; also saves the clock every minute, so that a
        ``kill -9`` in a long stage costs the budget's accounting at most a minute."""
        if time.monotonic() - self._saved > 60:
            self.save()
        return self.over_budget()

    def target_reached(self) -> bool:
        """True once the champion's screen against ``--target`` has a lower bound above 50%."""
        target = self.args.target
        champ = self.champion_generation()
        if not target or champ is None:
            return False
        match = (champ.get("eval") or {}).get(f"learned|{target}")
        return bool(match and match.get("score_low") is not None and match["score_low"] > 0.5)

    def champion_generation(self) -> dict[str, Any] | None:
        """The generation whose net is the champion (None before generation 0 is screened)."""
        name = self.manifest.get("champion")
        gen: dict[str, Any]
        for gen in self.manifest["generations"]:
            if gen.get("policy") == name and gen.get("done"):
                return gen
        return None

    _WAITING = {
        "data": "the labelling workers to stop: generation {g}'s finished shards are on disk, the shards in progress "
                "are labelled again on resume",
        "fit": "the fit to stop: it resumes from its last checkpoint (written every {minutes:g} min and at each "
               "epoch's end)",
        "screen": "the screen's games in progress to stop: its finished games are in gen_{g:03d}/screen_*.jsonl",
    }

    def announcing_interrupts(self) -> contextlib.AbstractContextManager[None]:
        """Ctrl-C or SIGTERM say at once what the run waits for before it stops, then interrupt as before."""
        return announcing_interrupts(self.args.prog, lambda: self.waiting_for)

    def run(self) -> int:
        """Complete generations until a budget or the target stops the run; 0 when it stopped as asked."""
        with self.announcing_interrupts():
            return self._run()

    def _run(self) -> int:
        error = self.open()
        if not error and self.game == "mulle" and self.net != "afterstate":
            error = "Mulle's pipeline fits afterstate nets (--net afterstate); mulle-train run fits logits nets"
        if not error and self.game != "mulle" and self.net == "afterstate" and _searches_with_net(self.args.teacher):
            error = (f"{self.args.teacher}: {self.game}'s netsearch searches with a logits net; with --net afterstate "
                     "the teacher is a search without a net (pimc), or fit logits nets (--net logits)")
        if error:
            print(f"{self.args.prog}: error: {error}", file=sys.stderr)
            return 2
        records = self.records_dir()
        reason = None
        g = 0
        while True:
            gens = self.manifest["generations"]
            if g < len(gens) and gens[g].get("done"):
                g += 1
                continue
            if self.target_reached():
                reason = f"the champion beats {self.args.target} (target reached)"
                break
            if g >= self.args.generations:
                reason = f"{self.args.generations} generation(s) done"
                break
            if self.over_budget():
                reason = f"the budget of {self.args.hours:g} hour(s) is spent"
                break
            if not self.generation(g, records):
                reason = f"the budget of {self.args.hours:g} hour(s) is spent (in generation {g})"
                break
            g += 1
        self.manifest["stopped"] = {"reason": reason, "time": _now()}
        self.save()
        champ = self.champion_generation()
        self.say(f"stopped: {reason}. Champion: {self.manifest['champion'] or 'none yet'}"
                 + (f" (generation {champ['generation']})" if champ else "")
                 + f"; manifest {self.path}")
        return 0

    def generation(self, g: int, records: Path | None) -> bool:
        """Label, fit, screen and promote generation ``g``; False if the budget ran out within it."""
        args = self.args
        gens = self.manifest["generations"]
        if g == len(gens):
            champion = self.manifest.get("champion")
            if champion is None:
                teacher = args.first_teacher
            elif self.game == "mulle" or _searches_with_net(args.teacher):
                teacher = join_param(args.teacher, f"policy={champion}")
            else:  # a search without a net (Casino's pimc) labels every generation (the champion drives --on-policy)
                teacher = args.teacher
            teacher = self.spec(teacher)
            # --on-policy: the champion, one pass, plays the games the teacher labels (not generation 0's: no net yet).
            driver = self.learned(champion) if args.on_policy and champion is not None else None
            gens.append({"generation": g, "teacher": teacher, "teacher_version": self.agent_version(teacher),
                         "driver": driver, "started": _now(), "seconds": {}})
            self.save()
        gen = gens[g]
        gdir = self.root / f"gen_{g:03d}"
        if not gen.get("data_done"):
            if not self.label(g, gen, gdir):
                return False
        if self.over_budget():
            return False
        if not gen.get("fit"):
            self.fit(g, gen, gdir, records)
        if self.over_budget():
            return False
        self.screen(g, gen, gdir)
        self.promote(g, gen)
        gen["done"] = True
        gen["elapsed"] = round(self.elapsed(), 1)
        gen["peak_rss_mb"] = _peak_rss_mb()
        self.save()
        self.plot()
        return True

    # ----- the stages --------------------------------------------------------------------
    def label(self, g: int, gen: dict[str, Any], gdir: Path) -> bool:
        """Stage 1: the teacher labels this generation's games (resuming its shards)."""
        from . import teacher

        args = self.args
        games = args.first_games if g == 0 else args.games
        driver = gen.get("driver")
        self.say(f"generation {g}: {gen['teacher']} labels {games} "
                 + (f"games {driver} plays" if driver else "self-play games"))
        with self.timed(gen, "data"):
            summary = teacher.generate(gdir / "data", gen["teacher"], games, seed=args.seed * 1000 + g,
                                       shard_games=args.shard_games, workers=args.workers,
                                       progress=not args.no_progress, rules=args.rules or None,
                                       afterstates=self.net == "afterstate", backend=self.labeller(), stop=self.tick,
                                       driver=driver, **({} if self.game == "mulle" else {"game": self.game}))
        gen["data"] = str(gdir / "data")
        gen["games"] = games
        if summary["complete"]:
            gen["data_done"] = True
        self.save()
        return bool(summary["complete"])

    def fit(self, g: int, gen: dict[str, Any], gdir: Path, records: Path | None) -> None:
        """Stage 2: fit this generation's net on the window's data (and the records), from the champion."""
        if self.game != "mulle":
            self.fit_in_memory(g, gen, gdir)
            return
        from .afterfit import AfterstateConfig, fit_afterstate
        from .stream import ShardSource, chunk_rows_for

        args = self.args
        gens = self.manifest["generations"]
        first = 0 if not args.data_window else max(0, g - args.data_window + 1)
        sources: list[tuple[str, float]] = [(x["data"], 1.0) for x in gens[first: g + 1]]
        if records is not None and g == 0:
            sources += [(str(records / _file_name(path)), weight) for path, weight in args.records]
        source = ShardSource(sources, chunk_rows_for(args.memory_gb))
        init = self.manifest.get("champion")
        cfg = AfterstateConfig(hidden=args.hidden, extras=args.extras, batch_size=args.batch_size, lr=args.lr,
                               epochs=args.first_epochs if g == 0 else args.epochs, seed=args.seed)
        self.say(f"generation {g}: fit on {source.decisions} decisions of {len(sources)} data set(s)"
                 + (f", from {init}" if init else ""))
        policy = gdir / "policy.npz"
        ckpt = gdir / "fit.ckpt.pt"
        with self.timed(gen, "fit"):
            figures = fit_afterstate(source, policy, cfg, init_from=init, checkpoint=ckpt,
                                     checkpoint_minutes=args.checkpoint_minutes, progress=not args.no_progress,
                                     threads=args.threads, ruleset=args.rules or None,
                                     metadata={"generation": g, "teacher": gen["teacher"],
                                               "data": [s for s, _ in sources], "command": list(args.argv or [])})
        gen.update(fit={**figures, "config": dict(cfg), "sources": sources}, decisions=source.decisions,
                   policy=str(policy), agent=learned_spec(str(policy)))
        import agents

        gen["agent_version"] = agents.make(gen["agent"]).version
        self.fitted(g, figures, ckpt)

    def fit_in_memory(self, g: int, gen: dict[str, Any], gdir: Path) -> None:
        """Stage 2 for another game than Mulle, its data in memory: an afterstate net of that game (no extras), or
        with ``--net logits`` a logits net with a value head (:mod:`training.distill`)."""
        from . import distill, teacher
        from .afterfit import AfterstateConfig, fit_afterstate
        from .expert import fit_arrays

        args = self.args
        gens = self.manifest["generations"]
        first = 0 if not args.data_window else max(0, g - args.data_window + 1)
        sources: list[tuple[str, float]] = [(x["data"], 1.0) for x in gens[first: g + 1]]
        data = teacher.load([s for s, _ in sources], **fit_arrays(self.net))
        init = self.manifest.get("champion")
        epochs = args.first_epochs if g == 0 else args.epochs
        decisions = len(data["action"])
        self.say(f"generation {g}: fit a{'n' if self.net == 'afterstate' else ''} {self.net} net on {decisions} "
                 f"decisions of {len(sources)} data set(s)" + (f", from {init}" if init else ""))
        policy = gdir / "policy.npz"
        ckpt = gdir / "fit.ckpt.pt"
        how: dict[str, Any] = {
            "init_from": init, "checkpoint": ckpt, "checkpoint_minutes": args.checkpoint_minutes,
            "progress": not args.no_progress, "threads": args.threads, "ruleset": args.rules or None, "game": self.game,
            "metadata": {"generation": g, "teacher": gen["teacher"], "game": self.game,
                         "data": [s for s, _ in sources], "command": list(args.argv or [])}}
        cfg: distill.FitConfig | AfterstateConfig
        with self.timed(gen, "fit"):
            if self.net == "logits":
                cfg = distill.FitConfig(hidden=args.hidden, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                                        epochs=epochs, augment=True)
                figures = distill.fit(data, policy, cfg, **how)
            else:
                cfg = AfterstateConfig(hidden=args.hidden, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                                       epochs=epochs)
                figures = fit_afterstate(data, policy, cfg, **how)
        gen.update(fit={**figures, "config": dict(cfg), "sources": sources, "net": self.net}, decisions=decisions,
                   policy=str(policy), agent=self.learned(str(policy)))
        gen["agent_version"] = self.agent_version(gen["agent"])
        self.fitted(g, figures, ckpt)

    def fitted(self, g: int, figures: dict[str, Any], ckpt: Path) -> None:
        """After a fit: the manifest saved, the spent checkpoint gone, a line with the held-out figures."""
        self.save()
        ckpt.unlink(missing_ok=True)  # the fit is in the manifest and the policy file: its checkpoint is spent
        self.say(f"generation {g}: held-out regret {figures.get('heldout_regret_points', float('nan')):.3f} points, "
                 f"agreement {figures.get('heldout_agreement', float('nan')):.1%} ({figures['fit_seconds']:.0f} s)")

    def screen(self, g: int, gen: dict[str, Any], gdir: Path) -> None:
        """Stage 3: the new net against the champion and the reference agents (resumable arena files)."""
        args = self.args
        gen.setdefault("eval", {})
        champion = self.manifest.get("champion")
        opponents = list(args.screen_opponents)
        if champion is not None and champion != gen["policy"]:
            opponents.insert(0, self.learned(champion))
        with self.timed(gen, "screen"):
            self._screens(g, gen, gdir, opponents)

    def _screens(self, g: int, gen: dict[str, Any], gdir: Path, opponents: list[str]) -> None:
        from .evaluate import head_to_head

        args = self.args
        evals = gen["eval"]
        for opp in opponents:
            key = f"learned|{opp}"
            if key in evals:
                continue
            name = "champion" if opp.startswith("learned:path=") else _file_name(opp)
            self.say(f"generation {g}: screen against {opp} ({args.screen_games} games)")
            evals[key] = head_to_head(gen["agent"], opp, args.screen_games, args.screen_seed,
                                      gdir / f"screen_{name}.jsonl", workers=args.workers,
                                      progress=not args.no_progress, ruleset=args.rules or None,
                                      backend=self.arena_backend(),
                                      **({} if self.game == "mulle" else {"game": self.game}))
            m = evals[key]
            if name == "champion":
                m["label"] = "the champion before it"  # one series in the plots, whichever net it was
            self.say(f"generation {g}:   {_score(m)} against {opp}")
            self.save()

    def promote(self, g: int, gen: dict[str, Any]) -> None:
        """Stage 4: the new net becomes the champion if it beat the champion (generation 0's always)."""
        champion = self.manifest.get("champion")
        if champion is None:
            promoted, why = True, "the first net"
        else:
            match = gen["eval"].get(f"learned|{self.learned(champion)}") or {}
            score = match.get("score")
            promoted = score is not None and score > 0.5
            why = f"{_score(match)} against the champion"
        gen["promoted"] = promoted
        if promoted:
            self.manifest["champion"] = gen["policy"]
            shutil.copyfile(gen["policy"], self.root / "champion.npz")
        gen["champion"] = self.manifest["champion"]
        self.say(f"generation {g} {'promoted' if promoted else 'not promoted'} ({why}); "
                 f"its wall-clock so far {_clock(self.elapsed())}")

    # ----- helpers -----------------------------------------------------------------------
    @contextlib.contextmanager
    def timed(self, gen: dict[str, Any], stage: str) -> Iterator[None]:
        """Add the block's seconds to ``gen["seconds"][stage]``, also when it is interrupted (then saved)."""
        t = time.monotonic()
        self.waiting_for = self._WAITING[stage].format(g=gen["generation"], minutes=self.args.checkpoint_minutes)
        try:
            yield
        finally:
            gen["seconds"][stage] = round(gen["seconds"].get(stage, 0) + time.monotonic() - t, 1)
            self.waiting_for = "the manifest to be written"
            self.save()

    def records_dir(self) -> Path | None:
        """Convert the ``--records`` files into data sets under ``records/`` (once); None without records."""
        if not self.args.records:
            return None
        from .records import records_to_data

        root = self.root / "records"
        for path, _weight in self.args.records:
            out = root / _file_name(path)
            if not (out / "done").is_file():
                summary = records_to_data([path], out, rules=self.args.rules or None)
                self.say(f"records {path}: {summary['decisions']} decisions of {summary['games']} games")
                (out / "done").write_text(json.dumps(summary) + "\n")
        return root

    def labeller(self) -> RayLabeller | None:
        """The Ray labeller with ``--backend ray``, else None (local processes)."""
        if self.args.backend != "ray":
            return None
        from .cluster import RayLabeller

        return RayLabeller(self.args.ray_address or None, self.args.workers)

    def arena_backend(self) -> RayBackend | None:
        """The arena's backend for the screens: its Ray backend with ``--backend ray``, else None (processes)."""
        if self.args.backend != "ray":
            return None
        from arena.ray_backend import RayBackend

        return RayBackend(self.args.ray_address or None, self.args.workers)

    def plot(self) -> None:
        """Redraw the Elo-by-generation and Elo-by-wall-clock plots (nothing without matplotlib)."""
        from .plots import plot_generations

        plot_generations(self.manifest, self.root / "elo_by_generation.png")
        plot_generations(self.manifest, self.root / "elo_by_time.png", x="hours")


def _searches_with_net(teacher: str) -> bool:
    """Whether the teacher ``teacher`` (a spec) is ``netsearch``, which later generations give the champion's net."""
    import agents

    return agents.parse_spec(teacher)[0] == "netsearch"


def _score(m: dict[str, Any]) -> str:
    if m.get("score") is None:
        return "no score"
    low = "n/a" if m.get("score_low") is None else f"{m['score_low']:.1%}"
    high = "n/a" if m.get("score_high") is None else f"{m['score_high']:.1%}"
    return f"{m['score']:.1%} [{low}, {high}] over {m['games']} games"


def run_expert(args: argparse.Namespace, out: Out = print) -> int:
    """``mulle-train expert``: run (or resume) the pipeline; the exit code."""
    return Pipeline(args, out).run()
