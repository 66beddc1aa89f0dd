"""Casino's two steppers play the same games: the compiled one on Casino's core and the Python one on the reference.

On Casino's compiled core (``mulle_env.casino.BACKEND == "c"``) the envs step ``gather_all=True``
games on the compiled stepper (mulle_env/csrc/stepper.c) through Casino's game table
(``mulle_env.casino.cstate.GAME_OPS``); under ``gather_all=False`` and on the Python engine they
step them on :class:`~mulle_env.stepper.PyStepper`. Here the compiled stepper is driven side by side
with :class:`PyStepper` over the *pure-Python reference* (not the backend in use) through every
call of the stepper contract, under every ``gather_all=True`` flag and on one and two threads,
and every output must be equal: observations, masks, CSR legal ids, over, to_move, scores and the
positions themselves. Then the envs' episodes (``Casino-v0``, its vector env, the PettingZoo env)
are played on both steppers and must be equal, step for step. Mulle's steppers are compared by
tests/test_playthroughs.py's stepper playthroughs.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mulle_env  # noqa: F401  (registers the envs)
from mulle_env import casino
from mulle_env.games import EnvGame
from mulle_env.games import casino as ce
from mulle_env.stepper import PyStepper, make_stepper

HAVE_C = "c" in casino.backends() and casino.BACKEND == "c"
needs_c = pytest.mark.skipif(not HAVE_C, reason="Casino's compiled core is not what runs here (MULLE_ENGINE=python "
                                                "or no build)")
REFERENCE = casino.backends()["python"]
#: Every gather_all=True flag (the compiled stepper's rules); short games where the flag allows.
RULESETS = {
    "default": casino.Ruleset(),
    "rounds=1": casino.Ruleset(rounds=1),
    "court_capture=all": casino.Ruleset(court_capture="all", rounds=1),
    "sweeps=False": casino.Ruleset(sweeps=False, rounds=1),
    "trail_with_build": casino.Ruleset(trail_with_build=True, rounds=2),
    "app": casino.Ruleset.app(),
    "target=11": casino.Ruleset(target_score=11),
}
K = 5


class ReferenceCasino(ce.CasinoGame):
    """Casino's game object dealing the pure-Python reference's states, whatever backend is in use."""

    def new_game(self, seed: int, ruleset: casino.Ruleset, /) -> casino.GameState:
        st: casino.GameState = REFERENCE.new_game(seed, ruleset)
        return st


def both(ruleset: casino.Ruleset, threads: int, internal: bool = True) -> tuple[PyStepper, object]:
    ref = PyStepper(K, ruleset, internal, game=ReferenceCasino(gather_all=True))
    from mulle_env.casino import cstate

    return ref, make_stepper(K, ruleset, internal, threads, core=cstate)


def rows(k: int = K) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (np.zeros((k, ce.OBS_SIZE), np.float32), np.zeros((k, ce.MOVE_ACTIONS), np.int8),
            np.zeros(4 * 504, np.int32), np.zeros(k + 1, np.int32))


def same(a, b, where: str) -> None:
    """Every output of the two steppers equal."""
    assert bytes(np.asarray(a.over)) == bytes(np.asarray(b.over)), f"{where}: over"
    assert bytes(np.asarray(a.to_move)) == bytes(np.asarray(b.to_move)), f"{where}: to_move"
    for i in range(K):
        sa, sb = a.state(i), b.state(i)
        assert sa.key() == sb.key(), f"{where}: game {i}'s position"
        assert tuple(a.scores(i)) == tuple(b.scores(i)), f"{where}: game {i}'s scores"


@needs_c
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", list(RULESETS))
def test_the_compiled_stepper_plays_the_references_games(name, threads):
    rs = RULESETS[name]
    ref, comp = both(rs, threads)
    rng = np.random.default_rng(hash(name) % 1000 + threads)
    seats = [i % 2 for i in range(K)]
    for i in range(K):
        for s in (ref, comp):
            s.start(i, 100 + i, seats[i], 900 + i)
    same(ref, comp, "after start")
    out = {id(s): rows() for s in (ref, comp)}
    for s in (ref, comp):
        s.write(range(K), seats, out[id(s)][0], out[id(s)][1])
    np.testing.assert_array_equal(out[id(ref)][0], out[id(comp)][0])
    np.testing.assert_array_equal(out[id(ref)][1], out[id(comp)][1])
    finished = 0
    for step in range(400):
        where = f"{name}, {threads} thread(s), step {step}"
        o, m, ids, off = out[id(ref)]
        active = ~np.asarray(ref.over, bool)
        acts = np.zeros(K, np.int64)
        for i in np.flatnonzero(active):
            legal = np.flatnonzero(m[i])
            acts[i] = legal[rng.integers(len(legal))]
        if step % 7 == 3:  # the halves of the vector env's send/recv
            for s in (ref, comp):
                s.step_write_send(acts, active, seats, *out[id(s)])
            results = [s.step_write_recv() for s in (ref, comp)]
        else:
            results = [s.step_write(acts, active, seats, *out[id(s)]) for s in (ref, comp)]
        assert results[0] == results[1], f"{where}: (ended, total)"
        for a, b in zip(out[id(ref)], out[id(comp)]):
            if a.shape == (K + 1,):  # offsets, then the ids they cover
                np.testing.assert_array_equal(a, b, err_msg=where)
                np.testing.assert_array_equal(out[id(ref)][2][: a[-1]], out[id(comp)][2][: a[-1]], err_msg=where)
            elif a.ndim == 2:
                np.testing.assert_array_equal(a[active], b[active], err_msg=where)
        same(ref, comp, where)
        done = np.flatnonzero(np.asarray(ref.over, bool)).tolist()
        if done:  # finished games dealt anew in their own rows, as the vector env restarts them
            finished += len(done)
            seeds = [int(x) for x in rng.integers(0, 2**63, 2 * len(done))]
            for s in (ref, comp):
                s.restart_write(done, seeds[::2], [seats[i] for i in done], seeds[1::2], out[id(s)][0],
                                out[id(s)][1])
            np.testing.assert_array_equal(out[id(ref)][0][done], out[id(comp)][0][done], err_msg=where)
            np.testing.assert_array_equal(out[id(ref)][1][done], out[id(comp)][1][done], err_msg=where)
            same(ref, comp, f"{where}, restarted {done}")
        if finished >= 2 * K:
            break
    assert finished >= 2 * K, "both steppers played whole games, and dealt again"


@needs_c
def test_the_rest_of_the_contract_answers_alike():
    """play, play_batch, check, write (either seat, no mask) and legal_csr: without the internal opponent."""
    rs = RULESETS["rounds=1"]
    ref, comp = both(rs, 2, internal=False)
    for i in range(K):
        for s in (ref, comp):
            s.start(i, 40 + i, 0, 0)
    rng = np.random.default_rng(5)
    for step in range(120):
        where = f"step {step}"
        outs = []
        for s in (ref, comp):
            obs, mask, ids, off = rows()
            s.write(range(K), [step % 2] * K, obs, None if step % 3 == 0 else mask)
            total = s.legal_csr(range(K), [int(t) for t in s.to_move], ids, off)
            outs.append((obs, mask, ids[:total], off, total))
        for a, b in zip(*outs):
            np.testing.assert_array_equal(a, b, err_msg=where)
        ids, off = outs[0][2], outs[0][3]
        live = [i for i in range(K) if not ref.over[i]]
        if not live:
            break
        acts = np.zeros(K, np.int64)
        for i in live:
            row = ids[off[i]:off[i + 1]]
            acts[i] = row[rng.integers(len(row))]
        bad = acts.copy()
        bad[live[0]] = 503 if 503 not in ids[off[live[0]]:off[live[0] + 1]] else 0
        active = ~np.asarray(ref.over, bool)
        oks = []
        for s in (ref, comp):
            ok = np.zeros(K, bool)
            oks.append((s.check(bad, active, ok), ok.tolist()))
        assert oks[0] == oks[1] and oks[0][0] >= 1, where
        if step % 2:
            for s in (ref, comp):
                s.play_batch(live, acts[live])
        else:
            for s in (ref, comp):
                s.play(live[0], int(acts[live[0]]))
        same(ref, comp, where)


@needs_c
def test_both_steppers_refuse_the_same_actions_before_any_game_moves():
    ref, comp = both(RULESETS["rounds=1"], 1)
    for s in (ref, comp):
        for i in range(K):
            s.start(i, i, 0, i)
    obs, mask, _, _ = rows()
    ref.write(range(K), [0] * K, obs, mask)
    acts = np.array([int(np.flatnonzero(m)[0]) for m in mask])
    acts[3] = int(np.flatnonzero(mask[3] == 0)[0])  # one illegal action: nothing is played
    keys = [ref.state(i).key() for i in range(K)]
    for s in (ref, comp):
        with pytest.raises(ValueError, match="game 3: action .* is not legal there"):
            s.step(acts, np.ones(K, bool))
        assert [s.state(i).key() for i in range(K)] == keys


@needs_c
def test_the_game_objects_pick_the_compiled_stepper_where_moves_have_ids():
    from mulle_env import _native

    assert isinstance(ce.CASINO.make_stepper(2, casino.Ruleset(), True), _native.Stepper)
    assert isinstance(ce.CASINO_CHOICES.make_stepper(2, casino.Ruleset(gather_all=False), True), PyStepper)
    envs = gym.make_vec("Casino-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="random")
    assert envs.unwrapped.stepper_kind == "c"
    envs = gym.make_vec("Casino-v0", num_envs=2, vectorization_mode="vector_entry_point", opponent="random",
                        game="casino_choices")
    assert envs.unwrapped.stepper_kind == "python"


@needs_c
def test_the_compiled_stepper_refuses_what_it_cannot_step():
    from mulle_env import _native
    from mulle_env.casino import cstate
    from mulle_env.engine import cstate as mulle_cstate

    with pytest.raises(ValueError, match="gives its moves no ids.*PyStepper"):
        _native.Stepper(2, casino.Ruleset(gather_all=False), True, None, None, 1, cstate.GAME_OPS, cstate.new_game)
    with pytest.raises(ValueError, match="game_ops and new_game go together"):
        _native.Stepper(2, casino.Ruleset(), True, None, None, 1, cstate.GAME_OPS)
    with pytest.raises(TypeError, match="game_ops must be a game core's table"):
        _native.Stepper(2, casino.Ruleset(), True, None, None, 1, mulle_cstate.CORE_API, cstate.new_game)
    with pytest.raises(TypeError, match="a state of"):  # Mulle's table cannot read Casino's states
        _native.Stepper(2, casino.Ruleset(), True, None, None, 1, mulle_cstate.GAME_OPS, cstate.new_game)
    s = _native.Stepper(2, casino.Ruleset(), True, None, None, 1, cstate.GAME_OPS, cstate.new_game)
    with pytest.raises(ValueError, match="not legal"):
        s.play(1, 0)  # game 1 never started: over
    with pytest.raises(ValueError, match="obs must be"):
        s.write([0], [0], np.zeros((1, 10), np.float32), None)
    with pytest.raises(ValueError, match="mask must be"):
        s.write([0], [0], np.zeros((1, ce.OBS_SIZE), np.float32), np.zeros((1, 2812 - 2400), np.int8))


def _python_stepper(monkeypatch) -> None:
    """Casino's envs made from here on step on PyStepper (the generic one the game object falls back to)."""
    monkeypatch.setattr(ce.CasinoGame, "make_stepper", lambda self, *a: EnvGame.make_stepper(self, *a))


def _gym_episodes(env_kwargs: dict, seeds: range) -> list:
    env = gym.make("Casino-v0", **env_kwargs)
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        trace, done = [obs.tobytes(), info["action_mask"].tobytes()], False
        while not done:
            legal = np.flatnonzero(info["action_mask"])
            obs, r, done, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
            trace.append((obs.tobytes(), info["action_mask"].tobytes(), r, done, trunc))
        out.append((trace, info.get("final_scores")))
    return out


@needs_c
@pytest.mark.parametrize("kwargs", [{"opponent": "random"}, {"opponent": "random", "reward": "score", "seat": 1},
                                    {"opponent": "random", "ruleset": {"court_capture": "all", "rounds": 2}}])
def test_casino_v0_plays_the_same_episodes_on_both_steppers(kwargs, monkeypatch):
    from mulle_env import _native

    compiled = _gym_episodes(kwargs, range(3))
    assert isinstance(gym.make("Casino-v0", **kwargs).unwrapped._core.stepper.inner, _native.Stepper)
    _python_stepper(monkeypatch)
    assert isinstance(gym.make("Casino-v0", **kwargs).unwrapped._core.stepper.inner, PyStepper)
    assert _gym_episodes(kwargs, range(3)) == compiled


def _vector_run(threads: int, steps: int = 150) -> list:
    from mulle_env.codec import sample_csr

    envs = gym.make_vec("Casino-v0", num_envs=6, vectorization_mode="vector_entry_point", opponent="random",
                        dense_mask=False, num_threads=threads, ruleset={"rounds": 1})
    legal_ids = envs.unwrapped.legal_ids
    obs, info = envs.reset(seed=11)
    rng = np.random.default_rng(0)
    trace = [obs.tobytes()]
    for _ in range(steps):
        ids, offsets = legal_ids()
        trace.append((ids.tolist(), offsets.tolist()))
        obs, r, term, trunc, info = envs.step(sample_csr(ids, offsets, rng))
        trace.append((obs.tobytes(), r.tolist(), term.tolist(), trunc.tolist()))
    return trace


@needs_c
def test_the_vector_env_plays_the_same_steps_on_both_steppers_and_every_thread_count(monkeypatch):
    compiled = _vector_run(1)
    assert _vector_run(2) == compiled
    _python_stepper(monkeypatch)
    assert _vector_run(1) == compiled


@needs_c
def test_the_pettingzoo_env_plays_the_same_games_on_both_steppers(monkeypatch):
    pytest.importorskip("pettingzoo")

    def games() -> list:
        e = casino.env(ruleset={"rounds": 1}, reward="score")
        out = []
        for seed in range(2):
            e.reset(seed=seed)
            rng = np.random.default_rng(seed)
            for agent in e.agent_iter():
                obs, reward, term, trunc, info = e.last()
                out.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term))
                if term or trunc:
                    e.step(None)
                    continue
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return out

    compiled = games()
    _python_stepper(monkeypatch)
    assert games() == compiled


def test_on_the_python_engine_casino_steps_on_the_python_stepper():
    """Under MULLE_ENGINE=python (in a process of its own, so that it runs whichever engine this one has)."""
    import os
    import subprocess
    import sys

    code = ("from mulle_env import casino; from mulle_env.games import casino as ce; "
            "from mulle_env.stepper import PyStepper; "
            "print(casino.BACKEND, isinstance(ce.CASINO.make_stepper(2, casino.Ruleset(), True), PyStepper))")
    env = dict(os.environ, MULLE_ENGINE="python")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["python", "True"], out


@needs_c
@pytest.mark.parametrize("threads", [1, 2])
def test_every_allocation_of_a_casino_stepper_can_fail(threads):
    """Every counted allocation of the stepper and of Casino's core under it (one hook, the Mulle core's counter)
    fails in turn into a MemoryError, and the stepper and its games stay usable (test_alloc_failures' walk)."""
    from test_alloc_failures import walk

    from mulle_env.casino import cstate

    def run() -> None:
        s = make_stepper(3, casino.Ruleset(rounds=1), True, threads, core=cstate)
        obs, mask, ids, offsets = rows(3)
        for i in range(3):
            s.start(i, 10 + i, i % 2, 20 + i)
        s.write(np.arange(3), [0, 1, 0], obs, mask)
        for r in range(8):
            s.legal_csr(np.arange(3), [0, 1, 0], ids, offsets)
            acts = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in mask])
            if r % 2:  # the vector env's fused step, with its sparse ids
                s.step_write(acts, mask.any(axis=1), [0, 1, 0], obs, mask, ids, offsets)
            elif r == 4:  # the vector env's restart (dealt in place)
                s.restart_write([2, 0], [60, 61], [0, 0], [70, 71], obs, mask)
            else:
                s.step(acts, mask.any(axis=1))
                s.write(np.arange(3), [0, 1, 0], obs, mask)
            assert s.is_legal(0, int(acts[0])) in (True, False)
        s2 = make_stepper(2, casino.Ruleset(rounds=1), False, threads, core=cstate)  # self-play: play_batch
        for i in range(2):
            s2.start(i, 30 + i, 0, 0)
        for _ in range(6):
            movers = [int(t) for t in s2.to_move]
            s2.write(np.arange(2), movers, obs[:2], None)
            assert s2.legal_csr(np.arange(2), movers, ids, offsets) > 0
            s2.play_batch([0, 1], [ids[offsets[0]], ids[offsets[1]]])

    walk(run, after=lambda n: run())
