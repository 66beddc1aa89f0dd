"""How many legal moves a Casino position has under ``gather_all=False``: the measurement behind the action bound.

Under ``gather_all=False`` every valid choice of cards is its own move, and Casino's env action
``k`` is the ``k``-th legal move (``mulle_env.games.casino``), so the action space needs a
fixed bound above the most legal moves a position reaches. This plays random games (uniform
legal moves, one round each) under ``gather_all=False`` with every combination of the other
flags that change the moves (``court_capture``, ``sweeps``, ``trail_with_build``, the app's
``sum_build_max_card=5, increase_max_cards=4``) and reports, as JSON, the quantiles of the
legal-move count per decision, the most seen (with the position, to replay it), how many
decisions exceed a few thresholds, and the bound in force.

    python benchmarks/bench_casino_choices.py --games 2000 --out benchmarks/results/casino_choices.json

``--gather-all`` measures the default rules instead (move ids: at most 504 by construction).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from typing import Any

from mulle_env import casino
from mulle_env.games import casino as cenv

THRESHOLDS = (100, 250, 504, 1000, 2048, 3000, 4096)
QUANTILES = (0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999)


def rulesets(gather_all: bool) -> list[casino.Ruleset]:
    """Every combination of the flags that change the legal moves, one round each."""
    out = []
    for court, sweeps, trail, app in itertools.product(("one", "all"), (True, False), (False, True), (False, True)):
        extra: dict[str, Any] = {"sum_build_max_card": 5, "increase_max_cards": 4} if app else {}
        out.append(casino.Ruleset(gather_all=gather_all, court_capture=court, sweeps=sweeps, trail_with_build=trail,
                                  rounds=1, **extra))
    return out


def measure(games: int, first_seed: int, gather_all: bool) -> dict[str, Any]:
    """Play ``games`` random games per ruleset of :func:`rulesets`; the counts' distribution as plain data."""
    hist: dict[int, int] = {}
    most: tuple[int, dict[str, Any], int, str] = (0, {}, 0, "")
    t0 = time.process_time()
    for rs in rulesets(gather_all):
        for seed in range(first_seed, first_seed + games):
            st = casino.new_game(seed, rs)
            rng = random.Random(seed)
            while not st.over:
                moves = st.legal_moves()
                n = len(moves)
                hist[n] = hist.get(n, 0) + 1
                if n > most[0]:
                    most = (n, rs.changes(), seed, st.to_json())
                st.play(moves[rng.randrange(n)])
    total = sum(hist.values())
    quantiles: dict[str, int] = {}
    for q in QUANTILES:
        seen = 0
        for n in sorted(hist):
            seen += hist[n]
            if seen >= q * total:
                quantiles[str(q)] = n
                break
    return {
        "gather_all": gather_all, "games_per_ruleset": games, "rulesets": len(rulesets(gather_all)),
        "first_seed": first_seed, "decisions": total, "cpu_seconds": round(time.process_time() - t0, 1),
        "quantiles": quantiles, "max": most[0],
        "above": {str(t): sum(c for n, c in hist.items() if n > t) for t in THRESHOLDS},
        "bound": cenv.CHOICE_ACTIONS if not gather_all else cenv.MOVE_ACTIONS,
        "max_position": {"ruleset": most[1], "seed": most[2], "position": json.loads(most[3]) if most[3] else None},
    }


def main(argv: list[str] | None = None) -> int:
    """The command line (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200, help="random games per ruleset (16 rulesets)")
    ap.add_argument("--seed", type=int, default=0, help="first game seed")
    ap.add_argument("--gather-all", action="store_true", help="measure the default rules instead")
    ap.add_argument("--out", default="-", help="JSON file to write ('-': stdout)")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error("--games must be at least 1")
    result = measure(args.games, args.seed, args.gather_all)
    text = json.dumps(result, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
