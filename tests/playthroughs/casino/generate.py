"""Write Casino's golden playthroughs from the Python reference (run it only when the rules change on purpose).

    python tests/playthroughs/casino/generate.py

One game per file, one JSON line per decision, as Mulle's (tests/playthroughs/generate.py):
the legal moves, their ids (under ``gather_all=True``), the state's key and the move played.
``tests/test_casino_playthroughs.py`` replays every file and fails at the first decision
that differs; a compiled Casino core is held to them the way Mulle's is.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from mulle_env import casino  # noqa: E402

HERE = Path(__file__).parent
FORMAT = 1

#: (name, seed, ruleset flags): every flag is on somewhere; most games are one or two rounds.
GAMES = [
    ("default-7", 7, {}),
    ("default-2024", 2024, {}),
    ("app-one-round", 11, {"sum_build_max_card": 5, "increase_max_cards": 4, "rounds": 1}),
    ("free-choice-one-round", 12, {"gather_all": False, "rounds": 1}),
    ("court-all-trail-two-rounds", 13, {"court_capture": "all", "trail_with_build": True, "rounds": 2}),
    ("no-sweeps-to-11", 14, {"sweeps": False, "target_score": 11}),
]


def write_game(name: str, seed: int, flags: dict) -> Path:
    rules = casino.Ruleset(**flags)
    st = casino.new_game(seed, rules)
    choose = random.Random(seed * 7919)
    lines: list[dict] = [{"playthrough": FORMAT, "game": "casino", "name": name, "seed": seed,
                          "ruleset": rules.changes(),
                          "policy": f"uniform over legal moves, random.Random({seed * 7919})",
                          "generated_by": "the Python reference (tests/playthroughs/casino/generate.py)"}]
    n = 0
    while not st.over:
        legal = st.legal_moves()
        move = legal[choose.randrange(len(legal))]
        line: dict = {"n": n, "to_move": st.to_move, "key": st.key(), "legal": [str(m) for m in legal],
                      "move": str(move)}
        if rules.gather_all:
            line["ids"] = list(st.legal_ids())
        lines.append(line)
        st.play(move)
        n += 1
    lines.append({"end": True, "key": st.key(), "scores": list(st.scores()), "moves": n,
                  "result": st.result().to_dict()})
    path = HERE / f"{name}.jsonl"
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return path


def main() -> int:
    for name, seed, flags in GAMES:
        print(write_game(name, seed, flags))
    return 0


if __name__ == "__main__":
    sys.exit(main())
