"""The one command line of the training package: ``mulle-train <command>``.

* ``ppo``: masked PPO on the environments (:mod:`training.ppo`); ``mulle-train`` with
  flags and no command word runs it, as it always has;
* ``expert``: expert iteration from nothing, unattended, with budgets and the recipes
  ``--recipe quick|standard|long`` (:mod:`training.pipeline`, :mod:`training.recipes`);
* ``run``, ``data``, ``fit``, ``records``, ``dmc``: expert iteration and its stages (:mod:`training.expert`);
* ``exploit``: a best response trained against a frozen agent, and its score (:mod:`training.exploit`);
* ``finetune``: an sb3 checkpoint of a policy file for ``ppo --init-from`` (:mod:`training.finetune`);
* ``average``: one policy file that averages afterstate nets, and positions over face symmetries
  (:func:`agents.learned.policy.average_policies`);
* ``regret``: players' regret by a reference search (:mod:`training.regret`);
* ``plot``, ``speed``: Elo by generation, Elo against thinking time (:mod:`training.plots`).

One parser tree (:func:`build_parser`). ``mulle-expert <command>`` is the same tree under
its old name, kept working and deprecated (CHANGELOG, 0.3.0).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from . import expert
from .expert import MANIFEST, Out, join_param, write_json
from .flags import nonnegative_float, number_type, positive, positive_float, unit_float

__all__ = ["COMMANDS", "EXPERT_COMMANDS", "build_parser", "expert_main", "main", "train_main"]



# The checked number types live in training.flags (the exploit command's flags use them too).
_positive, _positive_float, _nonnegative_float, _unit_float = positive, positive_float, nonnegative_float, unit_float


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


def _backend_flags(p: argparse._ActionsContainer) -> None:
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local: --workers processes on this machine; ray: Ray tasks on a cluster (the ray extra)")
    p.add_argument("--ray-address", default="",
                   help="with --backend ray: the cluster to join (auto, host:6379, ray://host:10001); "
                        "empty starts a local Ray with --workers CPUs")


def _expert_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``expert``: the unattended pipeline (:mod:`training.pipeline`), its defaults the shipped net's recipe."""
    from .pipeline import __doc__ as about
    from .recipes import RECIPES

    e = sub.add_parser("expert", help="expert iteration from nothing, unattended (label, fit, screen, promote)",
                       description=about.split("\n\n")[0] + " See docs/learning.md.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    e.add_argument("--recipe", choices=list(RECIPES), default=None,
                   help="named presets of the flags below, sized by measurement on 2 cores (quick: a few minutes, "
                        "beats greedy; standard: one hour; long: 2.5 hours); flags given explicitly win")
    e.add_argument("--out-dir", default="runs/expert-auto", help="the run's directory (made with its parents)")
    e.add_argument("--game", choices=list(EXPERT_GAME_DEFAULTS), default="mulle",
                   help="the game: mulle (afterstate nets, netsearch teachers) or casino (afterstate or logits nets, "
                        "--net; its own defaults: --first-teacher pimc, --teacher pimc, --extras none, screens "
                        "against random and greedy; Mulle-only flags are refused)")
    g = e.add_argument_group("budgets (any may be raised to continue a stopped run)")
    g.add_argument("--generations", type=_positive, default=8, help="stop after this many generations")
    g.add_argument("--hours", type=_nonnegative_float, default=0.0,
                   help="stop once the run has spent this much wall-clock time, over all its invocations (0: none)")
    g.add_argument("--target", default="",
                   help="stop once the champion beats this agent (95%% lower bound above 50%%), e.g. pimc; "
                        "it is screened every generation")
    g = e.add_argument_group("teachers and data")
    g.add_argument("--first-teacher", default="pimc:samples=40", help="generation 0's teacher (needs no net)")
    g.add_argument("--teacher", default="netsearch:depth=5,samples=16,width=0",
                   help="later generations' teacher: a search given policy=<the champion> (Mulle); with --game "
                        "casino a search that values moves, without a net")
    g.add_argument("--first-games", type=_positive, default=8000, help="generation 0's self-play games")
    g.add_argument("--games", type=_positive, default=4000, help="self-play games of every later generation")
    g.add_argument("--on-policy", action="store_true",
                   help="later generations' games are played by the champion net itself in both seats while the "
                        "teacher values every move (DAgger's on-policy labels, as the shipped generation 7's); "
                        "default: the teacher plays its own self-play games")
    g.add_argument("--shard-games", type=_positive, default=10, help="games per data shard (the unit of resuming)")
    g.add_argument("--data-window", type=int, default=0,
                   help="fit on the data of this many latest generations (0: all of them)")
    g.add_argument("--records", action="append", default=[], metavar="FILE[=WEIGHT]",
                   help="game records (people's games: a record file, or the live server's SQLite store) cloned in "
                        "generation 0's fit, with a weight (default 1); repeatable")
    g.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="train for another ruleset (repeatable), e.g. --rule sets=1 --rule forced_capture=false")
    g.add_argument("--seed", type=int, default=0, help="fixes every game, net and fit")
    g = e.add_argument_group("the net and its fit")
    g.add_argument("--net", choices=("afterstate", "logits"), default=None,
                   help="the net fitted: afterstate (score the position each move leaves; Mulle's only kind) or, "
                        "with --game casino, logits (one logit per move id); default afterstate")
    g.add_argument("--hidden", type=_widths, default=[256, 256], help="hidden widths")
    g.add_argument("--extras", default="capture-v3", help="extra-input block the net reads ('none' for none)")
    g.add_argument("--first-epochs", type=_positive, default=4, help="generation 0's epochs")
    g.add_argument("--epochs", type=_positive, default=3, help="epochs of later generations (from the champion)")
    g.add_argument("--batch-size", type=_positive, default=1024, help="decisions per gradient step of a fit")
    g.add_argument("--lr", type=_positive_float, default=1e-3, help="AdamW learning rate, cosine decay")
    g.add_argument("--memory-gb", type=_positive_float, default=4.0, help="the fit's memory bound (data streamed)")
    g.add_argument("--threads", type=_positive, default=1, help="torch threads of the fit")
    g.add_argument("--checkpoint-minutes", type=_positive_float, default=5.0, help="fit checkpoint interval")
    g = e.add_argument_group("screens")
    g.add_argument("--screen-opponents", type=_specs, default=["greedy", "pimc"],
                   help="agents every new net plays (besides the champion), space-separated")
    g.add_argument("--screen-games", type=_positive, default=1000, help="duplicate games of each screen")
    g.add_argument("--screen-seed", type=int, default=700_000, help="the screens' deals (the same every generation)")
    g = e.add_argument_group("machines")
    g.add_argument("--workers", type=_positive, default=2, help="processes (or Ray CPUs) labelling and screening")
    _backend_flags(g)
    e.add_argument("--no-progress", action="store_true", help="no progress bars")


#: ``expert --game NAME``: the flags whose defaults differ from Mulle's for that game (flags given explicitly win).
#: Casino's: its determinized search (``pimc``, :mod:`agents.determinized`) labels every generation (Casino has no
#: netsearch; ``--on-policy`` lets the champion play the labelled games), logits nets without extra inputs,
#: screens against ``random`` and ``greedy``, and fewer games (a Casino game to 21 costs its default search about
#: 10 s of one core).
EXPERT_GAME_DEFAULTS: dict[str, dict[str, Any]] = {
    "mulle": {},
    "casino": {"first_teacher": "pimc", "teacher": "pimc", "extras": "none", "first_games": 1000, "games": 500,
               "generations": 3, "screen_opponents": ["random", "greedy"], "screen_games": 400},
}


def build_parser(prog: str = "mulle-train") -> argparse.ArgumentParser:
    """The one parser of the training command line: every command and its flags (a public interface)."""
    # Imported here, not at the top: a Ctrl-C while numpy loads is reported cleanly.
    from mulle_env.engine.cards import FACE_SYMMETRIES
    from mulle_env.extras import EXTRAS

    from . import exploit, finetune, ppo

    ap = argparse.ArgumentParser(prog=prog, description="Make policies for Mulle: masked PPO (ppo, the default "
                                 "command), expert iteration (expert: a search labels positions, a network learns "
                                 "them, the search uses the network; repeat) and its stages, best responses "
                                 "(exploit). 'mulle-train COMMAND --help' tells each command's flags; "
                                 "docs/learning.md is the guide.")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    pp = sub.add_parser("ppo", help="masked PPO against an opponent pool (the command run when none is named)",
                        description=ppo.DESCRIPTION, epilog=ppo.EPILOG,
                        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ppo.add_arguments(pp)
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
                        "leaves (data made with afterstates, mulle-train fit --net afterstate)")
    r.add_argument("--hidden", type=_widths, default=None,
                   help="hidden widths (default: 512,256 for logits nets, 256,256 for afterstate nets)")
    r.add_argument("--value-hidden", type=_widths, default=[256], help="value head hidden widths")
    r.add_argument("--activation", choices=("relu", "tanh"), default="relu", help="hidden layers' activation")
    r.add_argument("--epochs", type=_positive, default=8, help="passes over the data of each fit")
    r.add_argument("--batch-size", type=_positive, default=512, help="decisions per gradient step")
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
    _expert_parser(sub)
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
    d.add_argument("--replay-from", default="", metavar="DIR",
                   help="make OUT from the self-play data set DIR (made without --afterstates) by replaying its "
                        "games, adding every labelled move's afterstate without searching again (Casino's; the "
                        "other flags are DIR's)")
    d.add_argument("--driver", default="",
                   help="agent spec that plays the recorded seats' moves while the teacher only values them "
                        "(on-policy labels, DAgger's: e.g. learned); empty: the teacher plays its best move")
    d.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="play under another ruleset flag (repeatable), e.g. --rule sets=1")
    d.add_argument("--game", choices=list(EXPERT_GAME_DEFAULTS), default="mulle",
                   help="the game: mulle, or casino (its agents and afterstates; mulle-train fit reads the game "
                        "from the data)")
    _backend_flags(d)
    d.add_argument("--no-progress", action="store_true", help="no progress bar")
    f = sub.add_parser("fit", help="fit a policy file to teacher data sets",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    f.add_argument("data", nargs="+",
                   help="teacher data directories (mulle-train data or records), each DIR or "
                        "DIR=WEIGHT (the weight multiplies its decisions' losses; default 1)")
    f.add_argument("--out", required=True, help="policy .npz file to write (its directory must exist)")
    f.add_argument("--net", choices=("afterstate", "logits"), default="afterstate",
                   help="afterstate: score the position each move leaves (needs data made with --afterstates); "
                        "logits: one logit per action plus a value head (training.distill)")
    f.add_argument("--hidden", type=_widths, default=None,
                   help="hidden widths (default: 256,256 for afterstate, 512,256 for logits)")
    f.add_argument("--epochs", type=_positive, default=4, help="passes over the data")
    f.add_argument("--batch-size", type=_positive, default=1024, help="decisions per gradient step")
    f.add_argument("--lr", type=_positive_float, default=1e-3, help="Adam(W) learning rate, cosine decay")
    f.add_argument("--seed", type=int, default=0, help="initial weights, batch order, held-out games")
    f.add_argument("--init-from", default="",
                   help="policy file whose weights start the fit (same shapes; or one with fewer extra inputs)")
    f.add_argument("--extras", choices=EXTRAS, default=None,
                   help="afterstate nets: also read this extra-input block, computed from each encoding "
                        "(mulle_env/extras.py); --init-from may then name a net without it")
    f.add_argument("--rank-coef", type=_nonnegative_float, default=0.0,
                   help="afterstate nets: weight of a ranking term (KL divergence between the softmaxes of the "
                        "teacher's and the net's values over each decision's moves) beside the regression")
    f.add_argument("--rank-temperature", type=_positive_float, default=1.0,
                   help="the ranking term's softmax temperature, in points")
    n_sym = len(FACE_SYMMETRIES)
    f.add_argument("--augment-symmetries", default=2,
                   type=number_type(int, lambda v: 1 <= v <= n_sym, f"an integer from 1 to {n_sym}"),
                   help="afterstate nets: show each decision as one of the first this many face symmetries "
                        f"(mulle_env.engine.cards.FACE_SYMMETRIES, 1 to {n_sym}), drawn uniformly; 2: as is or "
                        "with clubs and hearts swapped")
    f.add_argument("--checkpoint", default="",
                   help="checkpoint file (default: <out>.ckpt.pt, beside the output); a rerun resumes from it, "
                        "and it is deleted when the fit completes")
    f.add_argument("--checkpoint-minutes", type=_positive_float, default=5.0, help="checkpoint interval")
    f.add_argument("--memory-gb", type=_positive_float, default=4.0,
                   help="afterstate fits stream their data from disk within about this much memory, "
                        "whatever the data's size (at least 1.5)")
    f.add_argument("--threads", type=_positive, default=1, help="torch threads")
    f.add_argument("--no-progress", action="store_true", help="no progress bar")
    c = sub.add_parser("records", help="turn game record files (people's games) into a behaviour-cloning data set",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    c.add_argument("files", nargs="+", help="game record files: a GameRecord JSON, JSON Lines of records or of "
                                           "arena results lines saved with --save-games, or the live "
                                           "server's game store (its SQLite file)")
    c.add_argument("--out", required=True, help="data directory to write (its parent must exist)")
    c.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="the ruleset to take games of (repeatable); games under other rules are left out")
    c.add_argument("--shard-games", type=_positive, default=50, help="games per shard")
    m = sub.add_parser("dmc", help="fine-tune an afterstate policy by Deep Monte-Carlo self-play",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    m.add_argument("init_from", help="afterstate policy file to start from (e.g. a mulle-train fit)")
    m.add_argument("--out", required=True, help="policy .npz file to write (rewritten after every round)")
    m.add_argument("--rounds", type=_positive, default=20, help="rounds to complete (raise it to continue)")
    m.add_argument("--games-per-round", type=_positive, default=1000, help="self-play games per round")
    m.add_argument("--epsilon", type=_unit_float, default=0.03, help="share of uniformly random moves")
    m.add_argument("--lr", type=_positive_float, default=1e-4, help="Adam(W) learning rate (constant)")
    m.add_argument("--batch-size", type=_positive, default=1024, help="afterstates per gradient step")
    m.add_argument("--opponents", type=_specs, default=["self"],
                   help="space-separated specs the net plays in turn ('self' = both seats recorded; "
                        "e.g. 'self greedy learned:path=runs/gen1.npz')")
    m.add_argument("--seed", type=int, default=0, help="fixes every deal and random draw of every round")
    m.add_argument("--checkpoint", default="",
                   help="checkpoint file (default: <out>.ckpt.pt, beside the output); a rerun resumes from it and "
                        "raising --rounds continues a finished run, so it is kept")
    m.add_argument("--workers", type=_positive, default=1, help="processes playing a round's games")
    m.add_argument("--threads", type=_positive, default=1, help="torch threads for the updates")
    m.add_argument("--no-progress", action="store_true", help="no progress bar")
    p = sub.add_parser("plot", help="PNG of Elo by generation from a run's manifest")
    p.add_argument("manifest", help="manifest.json of a mulle-train expert run (or its --out-dir)")
    p.add_argument("--out", default="elo_by_generation.png",
                   help="PNG to write (default: elo_by_generation.png in the current directory; the run itself "
                        "keeps its plots in its --out-dir)")
    s = sub.add_parser("speed", help="PNG of Elo against milliseconds per decision from one arena results file")
    s.add_argument("results", help="results .jsonl of one mulle-arena run (a round-robin of the agents to compare)")
    s.add_argument("--out", default="elo_vs_ms.png", help="PNG to write")
    s.add_argument("--json", default="", help="also write the points (spec, Elo, interval, ms) here")
    g = sub.add_parser("regret", help="each player's regret by a reference search, on a driver's self-play decisions",
                       description="Each player's agreement with a reference search and regret by it (points a "
                                   "decision, paired by decision): on a driver's self-play games valued by "
                                   "--reference as they are played, or, with --data, on a stored teacher data "
                                   "set valued by its teacher (afterstate learned players only; seconds).")
    g.add_argument("players", nargs="+", help="agent specs to charge (e.g. learned pimc greedy; with --data: "
                                              "learned, learned:path=FILE)")
    g.add_argument("--reference", default=None, help="the search that values every legal move (pimc or netsearch)")
    g.add_argument("--driver", default=None, help="the agent whose self-play games give the positions "
                                                  "(default learned)")
    g.add_argument("--games", type=_positive, default=None, help="self-play games (default 24)")
    g.add_argument("--every", type=_positive, default=None, help="value every N-th decision with a choice (default 4)")
    g.add_argument("--seed", type=int, default=None, help="deals and every agent's random stream (default 0)")
    g.add_argument("--data", default="", help="instead of playing: a teacher data directory made with mulle-train "
                                              "data --afterstates, its teacher the reference")
    g.add_argument("--shards", type=_shard_range, default=(0, None),
                   help="with --data: START:STOP, the shard numbers to judge on (games no judged net was fitted "
                        "on); default all")
    g.add_argument("--json", default="", help="also write the table here")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    x = sub.add_parser("exploit", help="train a best response against a frozen agent and report its score",
                       description=exploit.__doc__.split("\n\n")[0] if exploit.__doc__ else None,
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    exploit.add_arguments(x)
    f = sub.add_parser("finetune", help="write an sb3 checkpoint of a policy file, for ppo --init-from",
                       description=finetune.__doc__.split("\n\n")[0] if finetune.__doc__ else None)
    finetune.add_arguments(f)
    a = sub.add_parser("average", help="one policy file that averages afterstate nets (and face symmetries)",
                       description="Write one afterstate policy file whose value of a position is the mean of the "
                                   "given nets' values (their layers side by side: one forward pass), averaged "
                                   "over the first --symmetries face symmetries of the position.")
    a.add_argument("policies", nargs="+", help="afterstate policy files (.npz) of one depth, activation and ruleset")
    a.add_argument("--out", required=True, help="policy file to write")
    a.add_argument("--symmetries", type=_positive, default=1,
                   help="face symmetries to average each position over, 1 to 12, the first of "
                        "mulle_env.engine.cards.FACE_SYMMETRIES (default 1: none; 4: the suit swaps)")
    a.add_argument("--note", default="", help="free text kept in the file's metadata")
    return ap


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` in the tree of :func:`build_parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[command]
            return found
    raise KeyError(command)


def _canonical_spec(parser: argparse.ArgumentParser, flag: str, spec: str) -> str:
    """``spec`` in its canonical text, or exit 2 naming ``flag`` and what is wrong with it."""
    import agents

    try:
        return agents.canonical(spec)
    except agents.AgentSpecError as exc:
        parser.error(f"{flag} {spec!r}: {exc}")


def _policy_search_spec(parser: argparse.ArgumentParser, flag: str, spec: str, filled_with: str) -> str:
    """Check a search spec whose ``policy=`` each generation fills in (exit 2 naming ``flag``); its agent's name."""
    import agents

    try:
        name, params = agents.parse_spec(spec)
        agents.canonical(spec)
    except agents.AgentSpecError as exc:
        parser.error(f"{flag} {spec!r}: {exc}")
    if "policy" in params:
        parser.error(f"{flag} {spec!r}: leave policy= out, each generation fills in {filled_with}")
    try:
        agents.canonical(join_param(spec, "policy=x.npz"))
    except agents.AgentSpecError:
        parser.error(f"{flag} {spec!r}: agent {name!r} takes no policy=<file> parameter; use netsearch")
    return name


def _check_specs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    # Canonical texts, so that equal agents written differently compare equal on resume.
    args.teacher = _canonical_spec(parser, "--teacher", args.teacher)
    args.reference = _canonical_spec(parser, "--reference", args.reference)
    args.eval_opponents = [_canonical_spec(parser, "--eval-opponents", spec) for spec in args.eval_opponents]
    args.opponents = [spec if spec == "self" else _canonical_spec(parser, "--opponents", spec)
                      for spec in args.opponents]
    _policy_search_spec(parser, "--search", args.search, "its own file")
    if args.init_from:
        from agents.learned import PolicyFileError, load_policy

        try:
            load_policy(args.init_from)
        except PolicyFileError as exc:
            parser.error(f"--init-from: {exc}")
    if args.games % args.shard_games:
        parser.error(f"--games {args.games} must be a multiple of --shard-games {args.shard_games}")


def _dmc_main(parser: argparse.ArgumentParser, args: argparse.Namespace, out: Out) -> int:
    import agents
    from agents.learned import PolicyFileError

    if args.seed < 0:
        parser.error(f"--seed must be >= 0, not {args.seed}")
    try:
        args.opponents = [o if o == "self" else agents.canonical(o) for o in args.opponents]
        for spec in set(args.opponents) - {"self"}:
            agents.make(spec)  # a missing policy file is reported now, not in a worker after a round
    except (agents.AgentSpecError, ValueError) as exc:
        parser.error(f"--opponents: {exc}")
    _policy_heads(parser, "init_from", [args.init_from], "afterstate",
                  "dmc fine-tunes afterstate nets (mulle-train expert and fit make them)")
    if _torch_missing("dmc"):
        return 2
    return _errors_exit_1((PolicyFileError, ValueError), expert.dmc, args, out)


def _torch_missing(command: str) -> bool:
    """True, after saying so, when torch (which ``command`` needs) is not installed."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print(f'mulle-train: error: {command} needs torch (pip install "mulle-env[train]")', file=sys.stderr)
        return True
    return False


def _errors_exit_1(errors: tuple[type[Exception], ...], fn: Callable[[argparse.Namespace, Out], int],
                   args: argparse.Namespace, out: Out) -> int:
    """``fn(args, out)``; one of ``errors`` (bad data or files found while running) is reported and exits 1."""
    try:
        return fn(args, out)
    except errors as exc:
        print(f"mulle-train: error: {exc}", file=sys.stderr)
        return 1


def _shard_range(text: str) -> tuple[int, int | None]:
    """``START:STOP`` (either may be empty) as ``(start, stop)``: shard numbers ``start <= k < stop``."""
    start, sep, stop = text.partition(":")
    try:
        lo, hi = int(start or 0), (int(stop) if stop else None)
    except ValueError:
        lo, hi = -1, None
    if not sep or lo < 0 or (hi is not None and hi <= lo):
        raise argparse.ArgumentTypeError(f"{text!r} is not START:STOP with 0 <= START < STOP (e.g. 350:400, 350:)")
    return lo, hi


def _regret_main(parser: argparse.ArgumentParser, args: argparse.Namespace, out: Out) -> int:
    import agents

    from .regret import data_regret_table, format_table, regret_table

    online = {"--driver": args.driver, "--games": args.games, "--every": args.every, "--seed": args.seed}
    if args.data:
        if args.reference is not None:
            parser.error("--data and --reference exclude each other: the data's teacher is the reference")
        given = [flag for flag, v in online.items() if v is not None]
        if given:
            parser.error(f"{', '.join(given)} choose the games to play; with --data the games are the data's")
    elif args.reference is None:
        parser.error("say what judges the picks: --reference SEARCH (played games) or --data DIR (stored ones)")
    elif args.shards != (0, None):
        parser.error("--shards chooses the stored games of --data; with --reference the games are played")
    driver = "learned" if args.driver is None else args.driver
    if args.reference is not None:  # before any game: a reference that cannot value moves is bad usage
        try:
            ref = agents.make(args.reference)
        except (agents.AgentSpecError, ValueError) as exc:
            parser.error(f"--reference {args.reference!r}: {exc}")
        if not callable(getattr(ref, "move_values", None)):
            parser.error(f"--reference {args.reference!r} cannot value moves; use pimc or netsearch")
    checked = [("player", p) for p in args.players]
    if not args.data:
        checked += [("--reference", args.reference), ("--driver", driver)]
    for flag, spec in checked:
        try:
            agents.canonical(spec)
        except agents.AgentSpecError as exc:
            parser.error(f"{flag} {spec!r}: {exc}")
    if args.data:
        from mulle_env.files import PathError, as_path

        try:
            data = as_path(args.data, "--data", "a directory that `mulle-train data --afterstates` wrote")
        except PathError as exc:
            parser.error(str(exc))
        if not data.is_dir():
            parser.error(f"--data {args.data!r} is not a directory (give one that `mulle-train data --afterstates` "
                         "wrote)")
    games = 24 if args.games is None else args.games
    bar: Any = None
    args_checked = not args.data  # with --data: whether data_regret_table has passed its argument checks

    def start_bar(total: int | None) -> None:
        nonlocal bar
        if not args.no_progress:
            from tqdm import tqdm

            bar = tqdm(total=total, unit="shard" if args.data else "game", file=sys.stderr)

    def args_ok() -> None:  # with --data the bar starts here, so a refused argument prints no empty bar
        nonlocal args_checked
        args_checked = True
        start_bar(None)

    def tick(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.update(1)

    if not args.data:
        start_bar(games)
    try:
        if args.data:
            result = data_regret_table(args.players, args.data, args.shards, tick, args_ok)
        else:
            assert args.reference is not None  # refused above otherwise
            result = regret_table(args.players, args.reference, games, 4 if args.every is None else args.every,
                                  0 if args.seed is None else args.seed, driver, tick)
    except ValueError as exc:
        if not args_checked:  # a player, the data directory or the shard range: bad usage, named
            parser.error(str(exc))
        print(f"mulle-train: error: {exc}", file=sys.stderr)
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


#: The commands of expert iteration and its tools (everything but ``ppo``, ``exploit`` and ``finetune``).
EXPERT_COMMANDS = ("expert", "run", "data", "fit", "records", "dmc", "plot", "speed", "regret")
#: Every command of ``mulle-train``.
COMMANDS = ("ppo", *EXPERT_COMMANDS, "exploit", "finetune", "average")


def train_main(argv: list[str] | None = None, out: Out = print) -> int:
    """Entry point of ``mulle-train``: one command of :func:`build_parser`; flags with no command word run ``ppo``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["ppo", *argv]  # how mulle-train was first used: PPO's flags and no command word
    return main(argv, out, prog="mulle-train")


def expert_main(argv: list[str] | None = None, out: Out = print) -> int:
    """Entry point of ``mulle-expert`` (deprecated): the same command tree as ``mulle-train``."""
    print("mulle-expert is deprecated: 'mulle-train COMMAND' takes the same commands and flags", file=sys.stderr)
    return main(argv, out, prog="mulle-expert")


def main(argv: list[str] | None = None, out: Out = print, prog: str = "mulle-train") -> int:
    """Run one command (``ppo``, ``expert``, ``run``, ``data``, ...); returns the exit code.

    0 done, 1 an error of the run (a data directory made with other settings, an
    unusable policy file), 2 bad usage (a bad flag or path, named), 130 interrupted by
    Ctrl-C and 143 by SIGTERM (both shut down cleanly: finished work is kept, and the same
    command continues), 141 stopped because the program reading its output went away
    (``| head``: :mod:`mulle_env.util.pipes`; finished work is kept as on Ctrl-C, and PPO saves
    a checkpoint that ``--resume`` continues).
    """
    from mulle_env.util.pipes import reader_gone

    try:
        return _main(argv, out, prog)
    except BrokenPipeError:
        if list(sys.argv[1:] if argv is None else argv)[:1] == ["ppo"]:
            return reader_gone(prog, "a checkpoint is saved: continue with the same command and --resume")
        return reader_gone(prog, "finished shards, fit checkpoints, DMC rounds and arena games are saved: run the "
                                 "same command again to continue")


def _main(argv: list[str] | None, out: Out, prog: str) -> int:
    from arena.shutdown import TerminateAsInterrupt

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog)
    _apply_game(parser, argv)
    _apply_recipe(parser, argv)
    args = parser.parse_args(argv)
    args.argv = [prog, *argv]
    args.prog = prog
    if args.command == "ppo":
        from .ppo import run_command

        return run_command(_subparser(parser, "ppo"), args)  # PPO's own Ctrl-C handling saves a checkpoint
    with TerminateAsInterrupt() as stop:
        try:
            return _dispatch(_subparser(parser, args.command), args, out, prog)
        except KeyboardInterrupt:
            print(f"\n{prog}: interrupted; finished shards, fit checkpoints, DMC rounds and arena games are saved: "
                  "run the same command again to continue", file=sys.stderr)
            return stop.exit_code


def _apply_game(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """``ppo --game NAME`` and ``expert --game NAME``: that game's defaults become the command's (flags win)."""
    if not argv or argv[0] not in ("ppo", "expert"):
        return
    if argv[0] == "ppo":
        from .ppo import apply_game_defaults

        apply_game_defaults(_subparser(parser, "ppo"), argv[1:])
        return
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--game")  # no choices here: a bad name is the real parser's to refuse, naming the command
    known, _ = pre.parse_known_args(argv[1:])
    if known.game in EXPERT_GAME_DEFAULTS:
        _subparser(parser, "expert").set_defaults(**EXPERT_GAME_DEFAULTS[known.game])


def _apply_recipe(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """``expert --recipe NAME``: the recipe's values become the defaults, so flags given explicitly win."""
    if not argv or argv[0] != "expert":
        return
    from .recipes import RECIPES, recipe_defaults

    expert = _subparser(parser, "expert")
    pre = argparse.ArgumentParser(prog=expert.prog, add_help=False)  # its usage line
    pre.add_argument("--recipe", choices=list(RECIPES))
    pre.add_argument("--game")  # a bad name is the real parser's to refuse
    known, _ = pre.parse_known_args(argv[1:])
    if known.recipe:
        try:
            expert.set_defaults(**recipe_defaults(known.recipe, _recipe_game(known.game)))
        except ValueError as exc:
            expert.error(f"--recipe: {exc}")


def _recipe_game(game: str | None) -> str:
    """The game whose recipes ``--game`` picks (Mulle's for none or an unknown name, which the parser refuses)."""
    from .recipes import GAME_RECIPES

    return game if game in GAME_RECIPES else "mulle"


def _check_paths(parser: argparse.ArgumentParser, outputs: Iterable[tuple[str, str | Path]] = (),
                 inputs: Iterable[tuple[str, str | Path]] = (), dirs: Iterable[tuple[str, str | Path]] = (),
                 made: Iterable[tuple[str, str | Path]] = ()) -> None:
    """Exit 2 naming the flag for a path a command cannot use (:mod:`mulle_env.files`), before any work.

    ``outputs``/``inputs`` are ``(flag, path)`` of files written and read; ``dirs`` of
    directories written (an existing directory, or a new one in an existing parent);
    ``made`` of files written whose directory the command makes with its parents.
    """
    from mulle_env.files import PathError, as_path, check_input_path, check_output_dir, check_output_path

    def given(flag: str, path: str | Path) -> bool:
        # An empty option whose default is empty means "not given" (--json '', --checkpoint ''); any other empty
        # path (a positional argument, a required option, one whose default names a file) is refused below.
        return bool(str(path)) or not flag.startswith("-") or \
            parser.get_default(flag.lstrip("-").replace("-", "_")) != ""

    try:
        for flag, path in outputs:
            if given(flag, path):
                check_output_path(path, flag)
        for flag, path in made:
            parent = as_path(path, flag).parent
            if check_output_dir(parent, f"{flag} {str(path)!r}: its directory", parents=True).is_dir():
                check_output_path(path, flag)
        for flag, path in inputs:
            if given(flag, path):
                check_input_path(path, flag, limit=None)
        for flag, path in dirs:
            # A new directory is created, but only in a place that exists: a typo is not a tree of folders.
            check_output_dir(path, flag)
    except PathError as exc:
        parser.error(str(exc))


def _make_dir(parser: argparse.ArgumentParser, flag: str, path: str | Path) -> None:
    """Make the directory ``path`` with its parents (a run's home, named up front); exit 2 naming ``flag`` if not."""
    from mulle_env.files import PathError, make_output_dir

    try:
        make_output_dir(path, flag)
    except PathError as exc:
        parser.error(str(exc))


def _rules(parser: argparse.ArgumentParser, items: list[str]) -> dict[str, Any]:
    """``--rule key=value`` flags as the dict of the flags that differ from the default rules."""
    from mulle_env.engine import Ruleset

    try:
        return Ruleset.from_strings(items).changes()
    except ValueError as exc:
        parser.error(f"--rule: {exc}")


def _sources(parser: argparse.ArgumentParser, items: list[str]) -> list[tuple[str, float]]:
    from mulle_env.files import as_path

    from .stream import parse_source

    out = []
    for item in items:
        try:
            path, weight = parse_source(item)
            # PathError is a ValueError: an empty path or a NUL byte is refused here too.
            is_dir = as_path(path, "a data directory", "a directory that `mulle-train data` wrote").is_dir()
        except ValueError as exc:
            parser.error(str(exc))
        if not is_dir:
            parser.error(f"data directory {path!r} does not exist")
        out.append((path, weight))
    return out


def _expert_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check and canonicalise ``expert``'s flags (specs, paths, rules, records, backend)."""
    import agents
    from mulle_env.extras import EXTRAS

    if getattr(args, "game", "mulle") != "mulle":
        _expert_game_args(parser, args)
        return
    args.game = "mulle"
    args.first_teacher = _canonical_spec(parser, "--first-teacher", args.first_teacher)
    if not callable(getattr(agents.make(args.first_teacher), "move_values", None)):
        parser.error(f"--first-teacher {args.first_teacher!r} cannot value moves; use pimc or netsearch")
    name = _policy_search_spec(parser, "--teacher", args.teacher, "the champion")
    args.teacher = agents.canonical(args.teacher) if args.teacher != name else args.teacher
    args.screen_opponents = [_canonical_spec(parser, "--screen-opponents", o) for o in args.screen_opponents]
    if args.target:
        args.target = _canonical_spec(parser, "--target", args.target)
        if args.target not in args.screen_opponents:
            args.screen_opponents.append(args.target)
    args.extras = None if args.extras in ("", "none") else args.extras
    if args.extras is not None and args.extras not in EXTRAS:
        parser.error(f"--extras {args.extras!r}: this code computes {', '.join(EXTRAS)} (or none)")
    if args.first_games % args.shard_games or args.games % args.shard_games:
        parser.error(f"--first-games {args.first_games} and --games {args.games} must be multiples of "
                     f"--shard-games {args.shard_games}")
    if args.data_window < 0:
        parser.error(f"--data-window must be >= 0, not {args.data_window}")
    if args.memory_gb < 1.5:
        parser.error(f"--memory-gb must be at least 1.5 (a fit's own needs), not {args.memory_gb:g}")
    args.rules = _rules(parser, args.rule)
    records = []
    for item in args.records:
        from .stream import parse_source

        try:
            path, weight = parse_source(item)
        except ValueError as exc:
            parser.error(f"--records {exc}")
        records.append([str(Path(path).resolve()), weight])
        _check_paths(parser, inputs=[("--records", path)])
    args.records = records
    if args.backend == "ray":  # before the run's directory is made: a refused address leaves nothing behind
        _need_ray(parser, args)
    _make_dir(parser, "--out-dir", args.out_dir)


def _expert_game_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``expert --game casino``'s flags: the game's agents, logits nets, and the Mulle-only options refused by name."""
    import agents

    from .games import train_game

    tg = train_game(args.game)
    game = tg.name
    # What is Mulle's alone, each refused by its flag (--recipe picks the game's own recipes, training.recipes).
    mulle_only = [
        ("--extras", args.extras not in ("", "none", None),
         "extra-input blocks are Mulle's (mulle_env/extras.py, read by afterstate nets)"),
        ("--records", bool(args.records), "game records of people's games are Mulle's (mulle-play, the live server)"),
    ]
    for flag, given, why in mulle_only:
        if given:
            parser.error(f"{flag} is Mulle-only: {why}; {tg.title} nets are fitted to the search's values "
                         f"without them (leave {flag} out with --game {game})")
    args.extras = None

    def spec(flag: str, text: str) -> str:
        try:
            return agents.canonical(text, game=game)
        except agents.AgentSpecError as exc:
            parser.error(f"{flag} {text!r}: {exc}")

    for flag, dest in (("--first-teacher", "first_teacher"), ("--teacher", "teacher")):
        setattr(args, dest, spec(flag, getattr(args, dest)))
        try:
            teacher = agents.make(getattr(args, dest), game=game)
        except (agents.AgentSpecError, ValueError) as exc:
            parser.error(f"{flag} {getattr(args, dest)!r}: {exc}")
        if not callable(getattr(teacher, "move_values", None)):
            parser.error(f"{flag} {getattr(args, dest)!r} cannot value moves (it has no move_values); use pimc, "
                         f"{tg.title}'s determinized search")
    args.screen_opponents = [spec("--screen-opponents", o) for o in args.screen_opponents]
    if args.target:
        args.target = spec("--target", args.target)
        if args.target not in args.screen_opponents:
            args.screen_opponents.append(args.target)
    if args.first_games % args.shard_games or args.games % args.shard_games:
        parser.error(f"--first-games {args.first_games} and --games {args.games} must be multiples of "
                     f"--shard-games {args.shard_games}")
    if args.data_window < 0:
        parser.error(f"--data-window must be >= 0, not {args.data_window}")
    try:
        args.rules = tg.rules(args.rule)
    except ValueError as exc:
        parser.error(f"--rule: {exc}")
    args.records = []
    if args.backend == "ray":  # before the run's directory is made: a refused address leaves nothing behind
        _need_ray(parser, args)
    _make_dir(parser, "--out-dir", args.out_dir)


def _need_ray(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 unless Ray is installed and, with ``--ray-address``, a cluster answers there (joined now)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        parser.error('--backend ray needs Ray: pip install "mulle-env[ray]"')
    if args.ray_address:
        from arena.ray_backend import RayBackend, RayUnavailableError

        try:
            RayBackend(args.ray_address, args.workers).init()  # the labeller's and screens' later joins reuse it
        except RayUnavailableError as exc:
            parser.error(f"--ray-address: {exc}")


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace, out: Out, prog: str) -> int:
    from agents.learned import PolicyFileError
    from training.teacher import TeacherDataError

    if args.command == "expert":
        _expert_args(parser, args)
        if args.recipe:
            out(f"{prog}: recipe {args.recipe}: " + ", ".join(
                f"--{k.replace('_', '-')} {' '.join(v) if isinstance(v, list) else v}"
                for k, v in _recipe_in_effect(args).items()))
        if _torch_missing("expert"):
            return 2
        from .pipeline import run_expert

        return _errors_exit_1((PolicyFileError, TeacherDataError), run_expert, args, out)
    if args.command == "run":
        _check_specs(parser, args)
        _check_paths(parser, inputs=[("--init-from", args.init_from)], dirs=[("--out-dir", args.out_dir)])
        if args.hidden is None:
            args.hidden = [256, 256] if args.net == "afterstate" else [512, 256]
        if _torch_missing("run"):
            return 2
        return _errors_exit_1((PolicyFileError, TeacherDataError), expert.run, args, out)
    if args.command == "data" and args.replay_from:
        _check_paths(parser, dirs=[("out", args.out)])
        return _errors_exit_1((TeacherDataError, ValueError), expert.replay, args, out)
    if args.command == "data":
        import agents

        game = getattr(args, "game", "mulle")
        kw = {} if game == "mulle" else {"game": game}
        try:
            args.teacher = agents.canonical(args.teacher, **kw)
            args.opponents = [o if o == "self" else agents.canonical(o, **kw) for o in args.opponents]
            args.driver = agents.canonical(args.driver, **kw) if args.driver else ""
        except agents.AgentSpecError as exc:
            parser.error(str(exc))
        if args.games % args.shard_games:
            parser.error(f"--games {args.games} must be a multiple of --shard-games {args.shard_games}")
        if game == "mulle":
            args.rules = _rules(parser, args.rule)
        else:
            from .games import train_game

            try:
                args.rules = train_game(game).rules(args.rule)
            except ValueError as exc:
                parser.error(f"--rule: {exc}")
        _check_paths(parser, dirs=[("out", args.out)])
        if args.backend == "ray":
            _need_ray(parser, args)
        return _errors_exit_1((PolicyFileError, TeacherDataError, ValueError), expert.data, args, out)
    if args.command == "fit":
        if _torch_missing("fit"):
            return 2
        args.sources = _sources(parser, args.data)
        if args.extras and args.net != "afterstate":
            parser.error("--extras is for afterstate nets (--net afterstate)")
        if args.memory_gb < 1.5:
            parser.error(f"--memory-gb must be at least 1.5 (a fit's own needs), not {args.memory_gb:g}")
        args.checkpoint = args.checkpoint or args.out + ".ckpt.pt"
        _check_paths(parser, outputs=[("--out", args.out), ("--checkpoint", args.checkpoint)],
                     inputs=[("--init-from", args.init_from)])
        return _errors_exit_1((PolicyFileError, TeacherDataError, ValueError), expert.fit, args, out)
    if args.command == "records":
        args.rules = _rules(parser, args.rule)
        _check_paths(parser, inputs=[("records file", f) for f in args.files], dirs=[("--out", args.out)])
        return _errors_exit_1((TeacherDataError, ValueError), expert.records, args, out)
    if args.command == "dmc":
        _check_paths(parser, outputs=[("--out", args.out), ("--checkpoint", args.checkpoint)],
                     inputs=[("init_from", args.init_from)])
        return _dmc_main(parser, args, out)
    if args.command == "plot":
        from .plots import plot_generations

        mpath = Path(args.manifest)
        mpath = mpath / MANIFEST if mpath.is_dir() else mpath
        _check_paths(parser, outputs=[("--out", args.out)], inputs=[("manifest", mpath)])
        try:
            plotted = plot_generations(mpath, args.out)
        except ValueError as exc:  # no manifest (JSONInputError, PathError are ValueErrors too): said, exit 1
            print(f"{prog}: error: {exc}", file=sys.stderr)
            return 1
        if not plotted:
            print(f"{prog}: error: plotting needs matplotlib: pip install 'mulle-env[plot]'", file=sys.stderr)
            return 2
        out(f"wrote {args.out}")
        return 0
    if args.command == "regret":
        _check_paths(parser, outputs=[("--json", args.json)])
        return _regret_main(parser, args, out)
    if args.command == "exploit":
        from . import exploit

        exploit.check_args(parser, args)
        if _torch_missing("exploit"):
            return 2
        return _errors_exit_1((PolicyFileError, ValueError), exploit.run, args, out)
    if args.command == "finetune":
        from . import finetune

        _check_paths(parser, made=[("out", args.out)], inputs=[("policy", args.policy)])
        _policy_heads(parser, "policy", [args.policy], "logits",
                      "PPO fine-tunes logits nets (mulle-train ppo or fit --net logits make them); an afterstate "
                      "net (what mulle-train expert and fit make) is fine-tuned by mulle-train dmc")
        if _torch_missing("finetune"):
            return 2
        return _errors_exit_1((PolicyFileError, ValueError), finetune.run, args, out)
    if args.command == "average":
        _check_paths(parser, outputs=[("--out", args.out)], inputs=[("policy", f) for f in args.policies])
        _policy_heads(parser, "policy", args.policies, "afterstate",
                      "average takes afterstate nets (what mulle-train expert and fit make)")
        return _errors_exit_1((PolicyFileError, ValueError), _average, args, out)
    return _speed_main(parser, args, out, prog)


def _policy_heads(parser: argparse.ArgumentParser, what: str, files: list[str], head: str, why: str) -> None:
    """Exit 2 naming the file when one of ``files`` is unreadable or not a ``head`` net (``why`` says what is taken)."""
    from agents.learned import PolicyFileError, load_policy

    for f in files:
        try:
            got = load_policy(f).head
        except PolicyFileError as exc:
            parser.error(f"{what} {f!r}: {exc}")
        if got != head:
            parser.error(f"{what} {f!r} holds {'an' if got[0] in 'aeiou' else 'a'} {got} net; {why}")


def _average(args: argparse.Namespace, out: Out) -> int:
    from agents.learned.policy import average_policies, load_policy, save_policy

    nets = [load_policy(f) for f in args.policies]
    meta = {"command": list(args.argv or []), "averages": [
        {"file": Path(f).name, "fingerprint": n.fingerprint()} for f, n in zip(args.policies, nets)],
        "symmetries": args.symmetries, **({"note": args.note} if args.note else {})}
    pol = average_policies(nets, symmetries=args.symmetries, metadata=meta)
    save_policy(pol, args.out)
    out(f"wrote {args.out}: {len(nets)} nets averaged, {args.symmetries} symmetries, hidden {pol.hidden_sizes}, "
        f"fingerprint {pol.fingerprint()}")
    return 0


def _recipe_in_effect(args: argparse.Namespace) -> dict[str, Any]:
    """The recipe's flags as this run has them (explicit flags won), for the first line of the run."""
    from .recipes import recipe_defaults

    return {k: getattr(args, k) for k in recipe_defaults(args.recipe, _recipe_game(getattr(args, "game", None)))}


def _speed_main(parser: argparse.ArgumentParser, args: argparse.Namespace, out: Out, prog: str) -> int:
    from .plots import plot_speed

    _check_paths(parser, outputs=[("--out", args.out), ("--json", args.json)], inputs=[("results", args.results)])
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


if __name__ == "__main__":
    sys.exit(train_main())
