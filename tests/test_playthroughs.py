"""The golden playthroughs (tests/playthroughs/*.jsonl), replayed on every backend and stepper.

The Python reference wrote them (tests/playthroughs/generate.py); here every engine backend
replays every game decision by decision (legal moves, state key, both seats'
observations), the agents' parts are recomputed at the recorded decisions (rollout values
under each playout policy and horizon, afterstate encodings, banked points and extra-input
blocks) by the compiled module and by the Python reference, and both steppers replay the
games against the in-stepper random opponent. A drift fails at the first decision that
differs, naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import mulle_env as me
from agents import rollout
from agents.native import NATIVE
from mulle_env import extras as extras_module
from mulle_env.afterstates import reference_afterstates
from mulle_env.native import NATIVE as ENV_NATIVE
from mulle_env.observation import OBS_SIZE, encode_state
from mulle_env.stepper import PyStepper

HERE = Path(__file__).parent / "playthroughs"
GAMES = sorted(p for p in HERE.glob("*.jsonl") if not p.name.startswith("stepper-"))
STEPPER_GAMES = sorted(HERE.glob("stepper-*.jsonl"))
BACKENDS = sorted(me.backends())


def _load(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0], lines[1:]


def _generate_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("playthrough_generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generate_module()


def _obs(st, seat: int, backend: str) -> np.ndarray:
    if backend == "c":  # the compiled writer
        out = np.empty(OBS_SIZE, np.float32)
        st.write_observation(seat, out)
        return out
    return encode_state(st, seat)


def _check(cond: bool, where: str, what: str, want, got) -> None:
    if not cond:
        pytest.fail(f"{where}: {what} differs from the golden playthrough:\n  expected {want!r}\n  got      {got!r}")


def _agents(st, rec: dict, backend: str, where: str) -> None:
    """The agents' parts at this decision, by the compiled module (C states) or the reference (Python states)."""
    p = st.to_move
    view = st.view(p)
    legal = st.legal_moves()
    root = type(st).from_view(view, rec["hand"], rec["deck"], seed=rec["root_seed"])
    compiled = backend == "c" and NATIVE is not None
    run = rollout.rollout_values if compiled else rollout.reference_rollout_values
    for r in rec["rollouts"]:
        plies = int(r["horizon"]) if r["horizon"].isdigit() else 10**6
        got = run(root, legal, p, r["policy"], plies, r["horizon"], view.set_no, view.deal_no, r["seed"])
        _check(got == r["values"], where, f"rollout values ({r['policy']}, horizon {r['horizon']})", r["values"], got)
    if "afterstates" not in rec:
        return
    want = rec["afterstates"]
    obs = np.empty((len(legal), OBS_SIZE), np.float32)
    banked = np.empty(len(legal))
    if compiled:
        assert ENV_NATIVE is not None  # the env layer's module is there whenever the agents' is
        ENV_NATIVE.write_afterstates(st, p, [m.id for m in legal], obs, banked)
        block = extras_module.afterstate_extras(obs, name="capture-v4")
    else:
        base = type(st).from_view(view, [0] * max(1, view.opponent_hand_size), [0] * view.deck_size)
        reference_afterstates(base, p, legal, obs, banked)
        block = extras_module.afterstate_extras_numpy(obs, name="capture-v4")
    got_obs = [GEN.digest(row) for row in obs]
    _check(got_obs == want["obs"], where, "afterstate encodings", want["obs"], got_obs)
    _check(banked.tolist() == want["banked"], where, "afterstate banked points", want["banked"], banked.tolist())
    got_extras = GEN.extras_checksum(block[:, : GEN.V3_SIZE])
    close = np.allclose(got_extras, want["extras"], rtol=0, atol=GEN.EXTRAS_TOLERANCE)
    _check(close, where, f"extra-input blocks (within {GEN.EXTRAS_TOLERANCE})", want["extras"], got_extras)
    got_v4 = GEN.extras_checksum(block[:, GEN.V3_SIZE :])
    close = np.allclose(got_v4, want["extras_v4"], rtol=0, atol=GEN.EXTRAS_TOLERANCE)
    _check(close, where, f"capture-v4's tail (within {GEN.EXTRAS_TOLERANCE})", want["extras_v4"], got_v4)


def test_the_playthroughs_are_there_and_cover_every_ruleset_flag():
    assert len(GAMES) >= 6 and len(STEPPER_GAMES) >= 2
    flags = {k for path in GAMES for k, v in _load(path)[0]["ruleset"].items() if v != me.Ruleset().to_dict()[k]}
    assert flags == set(me.Ruleset().to_dict())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", GAMES, ids=lambda p: p.stem)
def test_every_backend_replays_the_playthrough(path, backend):
    head, lines = _load(path)
    st = me.backends()[backend].new_game(head["seed"], me.Ruleset(**head["ruleset"]))
    for line in lines:
        where = f"{path.name} on the {backend} backend, decision {line.get('n', 'end')}"
        _check(st.key() == line["key"], where, "the state key", line["key"], st.to_dict())
        if "end" in line:
            _check(st.over and list(st.scores()) == line["scores"], where, "the end", line["scores"], st.scores())
            return
        _check(st.to_move == line["to_move"], where, "the seat to move", line["to_move"], st.to_move)
        _check(st.legal_move_ids() == line["ids"], where, "the legal ids", line["ids"], st.legal_move_ids())
        if "legal" in line:
            got = [str(m) for m in st.legal_moves()]
            _check(got == line["legal"], where, "the legal moves", line["legal"], got)
        obs = [GEN.digest(_obs(st, seat, backend)) for seat in (0, 1)]
        _check(obs == line["obs"], where, "the observations", line["obs"], obs)
        if "agents" in line:
            _agents(st, line["agents"], backend, where)
        st.play(line["move"])
    pytest.fail(f"{path.name}: no end line")


def _steppers() -> list:
    out = [("python", PyStepper)]
    if "c" in me.backends():
        from mulle_env import _native

        out.append(("c", _native.Stepper))
    return out


@pytest.mark.parametrize("name,stepper", _steppers(), ids=[n for n, _ in _steppers()])
@pytest.mark.parametrize("path", STEPPER_GAMES, ids=lambda p: p.stem)
def test_every_stepper_replays_the_random_opponent_playthrough(path, name, stepper):
    head, lines = _load(path)
    s = stepper(1, me.Ruleset(**head["ruleset"]), True, np.ones(1, bool), np.zeros(1, np.int8))
    s.start(0, head["game_seed"], head["seat"], head["opp_seed"])
    obs = np.empty((1, OBS_SIZE), np.float32)
    mask = np.empty((1, me.NUM_MOVE_IDS), np.int8)
    for line in lines:
        where = f"{path.name} on the {name} stepper, decision {line.get('n', 'end')}"
        st = s.state(0)
        _check(st.key() == line["key"], where, "the state key", line["key"], st.to_dict())
        if "end" in line:
            _check(bool(s.over[0]) and list(s.scores(0)) == line["scores"], where, "the end", line["scores"],
                   s.scores(0))
            return
        s.write([0], [head["seat"]], obs, mask)
        ids = np.flatnonzero(mask[0]).tolist()
        _check(ids == line["ids"], where, "the learner's legal ids", line["ids"], ids)
        _check(GEN.digest(obs[0]) == line["obs"], where, "the learner's observation", line["obs"], GEN.digest(obs[0]))
        s.step(np.array([line["action"]]), np.array([True]))
    pytest.fail(f"{path.name}: no end line")


def test_a_drift_fails_at_the_first_differing_decision(tmp_path):
    head, lines = _load(GAMES[0])
    lines[5]["ids"] = lines[5]["ids"][1:]  # one legal id forgotten at decision 5
    bad = tmp_path / GAMES[0].name
    bad.write_text("\n".join(json.dumps(x) for x in [head, *lines]) + "\n")
    with pytest.raises(pytest.fail.Exception, match=r"decision 5: the legal ids differs"):
        test_every_backend_replays_the_playthrough(bad, BACKENDS[0])
