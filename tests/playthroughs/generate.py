"""Write the golden playthroughs from the Python reference (run it only when the rules change on purpose).

    MULLE_ENGINE=python python tests/playthroughs/generate.py

A playthrough is one game, one JSON line per decision, as OpenSpiel's
``integration_tests/playthroughs``: what the reference engine says at each decision (the
legal moves, the state's key, a digest of both seats' observations), which move was
played, and at every eighth decision what the agents' compiled parts must reproduce: a
determinization's rollout values under each playout policy and horizon, and each legal
move's afterstate (encoding digest, banked points, a checksum of its extra-input block).
``tests/test_playthroughs.py`` replays every file on every backend and stepper and fails at
the first decision that differs. The Python code is the reference: this script refuses to
run on the compiled core.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import mulle_env as me  # noqa: E402

HERE = Path(__file__).parent
FORMAT = 1
#: Every how many decisions the agents' parts are recorded.
AGENT_EVERY = 8
#: Extra-input blocks are float sums: a replay matches them within this.
EXTRAS_TOLERANCE = 2e-5
#: Floats of block capture-v3, whose checksum is "extras"; "extras_v4" is capture-v4's tail after it.
V3_SIZE = 289

#: (name, seed, ruleset flags): the games. One set keeps most of them short; every flag is on somewhere.
GAMES = [
    ("default-7", 7, {}),
    ("default-2024", 2024, {}),
    ("one-set-locked", 11, {"sets": 1, "lock_every_build": True}),
    ("one-set-hand-values", 12, {"sets": 1, "mulle_hand_values": True}),
    ("one-set-free-discard", 13, {"sets": 1, "discard_only_if_no_capture": False}),
    ("one-set-capture-choices", 14, {"sets": 1, "forced_capture": False}),
    ("three-sets", 15, {"sets": 3}),
]
#: (name, seed, learner seat, sets): games of the vector env's stepper against its in-stepper random opponent.
STEPPER_GAMES = [("stepper-random-0", 31, 0, 1), ("stepper-random-1", 32, 1, 2)]
ROLLOUTS = [("heuristic", "4"), ("random", "6"), ("heuristic", "deal"), ("random", "set")]


def digest(array: np.ndarray) -> str:
    """A short stable digest of a float32 array's bytes."""
    return hashlib.sha256(np.ascontiguousarray(array, dtype=np.float32).tobytes()).hexdigest()[:16]


def extras_checksum(block: np.ndarray) -> list[list[float]]:
    """Per row of an extra-input block: its sum and its dot with fixed weights (compared within a tolerance)."""
    weights = np.random.default_rng(0).random(block.shape[1])
    return [[round(float(row.sum()), 6), round(float(row @ weights), 6)] for row in block.astype(np.float64)]


def agent_parts(st, n: int) -> dict:
    """What the agents' compiled parts must reproduce at this decision (module docstring)."""
    from agents.pimc import determinize
    from agents.rollout import reference_rollout_values
    from mulle_env.afterstates import reference_afterstates
    from mulle_env.extras import afterstate_extras_numpy
    from mulle_env.observation import OBS_SIZE

    p = st.to_move
    view = st.view(p)
    legal = st.legal_moves()
    rng = random.Random(n)
    hand, deck = determinize(view, rng)
    root_seed = rng.getrandbits(31)
    root = type(st).from_view(view, hand, deck, seed=root_seed)
    rollouts = []
    for policy, horizon in ROLLOUTS:
        seed = rng.getrandbits(63)
        plies = int(horizon) if horizon.isdigit() else 10**6
        values = reference_rollout_values(root, legal, p, policy, plies, horizon, view.set_no, view.deal_no, seed)
        rollouts.append({"policy": policy, "horizon": horizon, "seed": seed, "values": values})
    out = {"hand": [int(f) for f in hand], "deck": [int(f) for f in deck], "root_seed": root_seed,
           "rollouts": rollouts}
    if st.ruleset.forced_capture:
        base = type(st).from_view(view, [0] * max(1, view.opponent_hand_size), [0] * view.deck_size)
        obs = np.empty((len(legal), OBS_SIZE), np.float32)
        banked = np.empty(len(legal))
        reference_afterstates(base, p, legal, obs, banked)
        # capture-v3's checksum, and capture-v4's tail beside it (added later: the older entries stay as written).
        tail = afterstate_extras_numpy(obs, name="capture-v4")[:, V3_SIZE:]
        out["afterstates"] = {"obs": [digest(row) for row in obs], "banked": banked.tolist(),
                              "extras": extras_checksum(afterstate_extras_numpy(obs, name="capture-v3")),
                              "extras_v4": extras_checksum(tail)}
    return out


def write_game(name: str, seed: int, flags: dict) -> Path:
    from mulle_env.observation import encode_state

    rules = me.Ruleset(**flags)
    st = me.backends()["python"].new_game(seed, rules)
    choose = random.Random(seed * 7919)
    lines = [{"playthrough": FORMAT, "name": name, "seed": seed, "ruleset": rules.to_dict(),
              "policy": f"uniform over legal moves, random.Random({seed * 7919})",
              "generated_by": "the Python reference (tests/playthroughs/generate.py)"}]
    n = 0
    while not st.over:
        legal = st.legal_moves()
        move = legal[choose.randrange(len(legal))]
        line = {"n": n, "to_move": st.to_move, "key": st.key(), "ids": st.legal_move_ids(),
                "obs": [digest(encode_state(st, 0)), digest(encode_state(st, 1))], "move": str(move)}
        if not rules.forced_capture:
            line["legal"] = [str(m) for m in legal]
        if n % AGENT_EVERY == 0 and len(legal) > 1:
            line["agents"] = agent_parts(st, n)
        lines.append(line)
        st.play(move)
        n += 1
    lines.append({"end": True, "key": st.key(), "scores": list(st.scores()), "moves": n})
    return _write(name, lines)


def write_stepper_game(name: str, seed: int, seat: int, sets: int) -> Path:
    from mulle_env.stepper import PyStepper

    rules = me.Ruleset(sets=sets)
    stepper = PyStepper(1, rules, internal_random=True)
    game_seed, opp_seed = seed * 1_000_003, seed * 7_000_001
    stepper.start(0, game_seed, seat, opp_seed)
    choose = random.Random(seed)
    lines = [{"playthrough": FORMAT, "name": name, "stepper": True, "game_seed": game_seed, "opp_seed": opp_seed,
              "seat": seat, "ruleset": rules.to_dict(),
              "generated_by": "the Python reference stepper (tests/playthroughs/generate.py)"}]
    obs = np.empty((1, 524), np.float32)
    mask = np.empty((1, me.NUM_MOVE_IDS), np.int8)
    n = 0
    while not stepper.over[0]:
        st = stepper.state(0)
        stepper.write([0], [seat], obs, mask)
        ids = np.flatnonzero(mask[0]).tolist()
        action = ids[choose.randrange(len(ids))]
        lines.append({"n": n, "key": st.key(), "ids": ids, "obs": digest(obs[0]), "action": action})
        stepper.step(np.array([action]), np.array([True]))
        n += 1
    lines.append({"end": True, "key": stepper.state(0).key(), "scores": list(stepper.scores(0)), "decisions": n})
    return _write(name, lines)


def _write(name: str, lines: list[dict]) -> Path:
    path = HERE / f"{name}.jsonl"
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


def main() -> int:
    if me.BACKEND != "python":
        print("generate.py: run it on the reference: MULLE_ENGINE=python python tests/playthroughs/generate.py",
              file=sys.stderr)
        return 2
    for name, seed, flags in GAMES:
        print(write_game(name, seed, flags))
    for name, seed, seat, sets in STEPPER_GAMES:
        print(write_stepper_game(name, seed, seat, sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
