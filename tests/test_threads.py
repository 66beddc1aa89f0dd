"""The vector env on threads, sparse legal ids, the CSR sampler and the env layer's compiled module.

``num_threads=N`` steps the K games on N threads with the GIL released (the compiled stepper,
mulle_env/csrc): every N gives the same games and outputs as one thread, for the in-stepper
``random`` opponent and for self-play's batched policy path. ``legal_ids()`` gives the dense
mask's legal actions in CSR form, with or without the dense mask, and ``codec.sample_csr``
draws from them uniformly. These run on whichever backend ``MULLE_ENGINE`` selects (the Python
stepper takes ``num_threads`` and runs on one thread).
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import mulle_env as me
from mulle_env import codec
from mulle_env.stepper import random_playout, resolve_threads
from mulle_env.vector_env import MulleVectorEnv

ONE_SET = {"sets": 1}


def make_vec(num_envs, **kwargs):
    return gym.make_vec("Mulle-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)


def run(envs, steps, seed, sparse=False):
    """Every output of `steps` steps with actions drawn from the masks (or the sparse ids)."""
    u = envs.unwrapped
    obs, info = envs.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = [obs.copy()]
    for _ in range(steps):
        ids, offsets = u.legal_ids()
        out.append(ids.copy())
        out.append(offsets.copy())
        if not sparse:
            out.append(np.asarray(info["action_mask"]).copy())
        obs, rew, term, trunc, info = envs.step(codec.sample_csr(ids, offsets, rng))
        out += [obs.copy(), rew.copy(), term.copy()]
        if "final_info" in info:
            out.append(info["final_info"]["final_scores"].copy())
    return out


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("threads", [2, 3, "auto"])
def test_every_thread_count_plays_the_same_games_against_the_random_opponent(threads):
    ref = run(make_vec(7, opponent="random", ruleset=ONE_SET), 120, 11)
    envs = make_vec(7, opponent="random", ruleset=ONE_SET, num_threads=threads)
    assert envs.unwrapped.num_threads == (1 if me.BACKEND == "python" else resolve_threads(threads))
    same(run(envs, 120, 11), ref)


def test_every_thread_count_plays_the_same_self_play_games():
    def first_legal(obs, mask):
        return np.asarray(mask).argmax(axis=1)

    def games(threads):
        envs = MulleVectorEnv(6, opponent="self", seat="alternate", ruleset=ONE_SET, opponent_policy=first_legal,
                              num_threads=threads)
        return run(envs, 80, 4)

    same(games(4), games(1))


def _dealt(makers, k=5):
    """Steppers (one per maker) dealt the same k games against the in-stepper random opponent."""
    out = []
    for make in makers:
        s = make(k)
        for i in range(k):
            s.start(i, 100 + i, i % 2, 200 + i)
        out.append(s)
    return out


@pytest.mark.parametrize("threads", [1, 2])
def test_step_write_is_step_then_write_on_either_stepper(threads):
    """The fused call (the vector env's usual step) plays and writes exactly what step + write do."""
    from mulle_env.stepper import PyStepper, make_stepper

    k, rs = 5, me.Ruleset(sets=1)
    fused, apart, ref = _dealt([lambda k: make_stepper(k, rs, True, threads),
                                       lambda k: make_stepper(k, rs, True, threads),
                                       lambda k: PyStepper(k, rs, True)], k)
    seats = np.array([i % 2 for i in range(k)], np.int8)
    buffers = [(np.zeros((k, 524), np.float32), np.zeros((k, me.NUM_MOVE_IDS), np.int8)) for _ in range(3)]
    for s, (obs, mask) in zip((fused, apart, ref), buffers):
        s.write(np.arange(k), seats, obs, mask)
    rng = np.random.default_rng(0)
    for step in range(60):
        mask = buffers[0][1]
        active = mask.any(axis=1)
        if not active.any():
            break
        acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        csr = [(np.full(4 * k, -1, np.int32), np.zeros(k + 1, np.int32)) for _ in range(3)]
        got = fused.step_write(acts, active, seats, *buffers[0], *csr[0])
        apart.step(acts, active)
        apart.write(np.arange(k), seats, *buffers[1])
        total = apart.legal_csr(np.arange(k), seats, *csr[1])
        assert got == ref.step_write(acts, active, seats, *buffers[2], *csr[2])
        assert got == (int(np.count_nonzero(np.asarray(apart.over, bool) & active)), total)
        for (o, m) in buffers[1:]:
            np.testing.assert_array_equal(buffers[0][0], o, err_msg=f"step {step}")
            np.testing.assert_array_equal(buffers[0][1], m, err_msg=f"step {step}")
        for ids, offsets in csr[1:]:  # the CSR the step wrote is legal_csr's (ids only when they fit)
            np.testing.assert_array_equal(csr[0][1], offsets, err_msg=f"step {step}")
            np.testing.assert_array_equal(csr[0][0], ids, err_msg=f"step {step}")
        for s in (apart, ref):
            np.testing.assert_array_equal(np.asarray(fused.over, bool), np.asarray(s.over, bool))
            np.testing.assert_array_equal(np.asarray(fused.to_move), np.asarray(s.to_move))
    assert step > 10


def _three_games(python):
    """A stepper (the Python one, or the compiled one on 2 threads) with 3 games dealt, and its row buffers."""
    from mulle_env.stepper import PyStepper, make_stepper

    k, rs = 3, me.Ruleset(sets=1)
    s = PyStepper(k, rs, True) if python else make_stepper(k, rs, True, 2)
    for i in range(k):
        s.start(i, 7 + i, 0, 9 + i)
    return s, k, np.zeros((k, 524), np.float32), np.zeros((k, me.NUM_MOVE_IDS), np.int8)


@pytest.mark.parametrize("python", [False, True])
def test_step_write_refuses_before_any_game_moves(python):
    s, k, obs, mask = _three_games(python)
    s.write(np.arange(k), [0] * k, obs, mask)
    before = [s.state(i).to_dict() for i in range(k)]
    legal = mask.argmax(axis=1)
    bad = legal.copy()
    bad[2] = np.flatnonzero(mask[2] == 0)[0]
    with pytest.raises(ValueError, match="game 2"):
        s.step_write(bad, np.ones(k, bool), [0] * k, obs, mask)
    with pytest.raises(ValueError, match="seats"):
        s.step_write(legal, np.ones(k, bool), [0, 2, 0], obs, mask)
    with pytest.raises(ValueError):
        s.step_write(legal, np.ones(k, bool), [0] * k, obs[:1], mask)
    assert [s.state(i).to_dict() for i in range(k)] == before


def test_the_sparse_ids_are_the_dense_masks_legal_actions_and_need_no_dense_mask():
    dense = make_vec(5, opponent="random", ruleset=ONE_SET)
    sparse = make_vec(5, opponent="random", ruleset=ONE_SET, dense_mask=False, num_threads=2)
    obs_d, info_d = dense.reset(seed=3)
    obs_s, info_s = sparse.reset(seed=3)
    assert "action_mask" not in info_s
    rng = np.random.default_rng(0)
    for _ in range(100):
        ids, offsets = dense.unwrapped.legal_ids()
        assert ids.dtype == np.int32 and offsets.dtype == np.int32 and offsets.shape == (6,)
        assert not ids.flags.writeable and not offsets.flags.writeable
        for i, m in enumerate(info_d["action_mask"]):
            assert ids[offsets[i]:offsets[i + 1]].tolist() == np.flatnonzero(m).tolist()
        s_ids, s_off = sparse.unwrapped.legal_ids()
        np.testing.assert_array_equal(s_ids, ids)
        np.testing.assert_array_equal(s_off, offsets)
        np.testing.assert_array_equal(sparse.unwrapped.action_masks(), dense.unwrapped.action_masks())
        acts = codec.sample_csr(ids, offsets, rng)
        obs_d, *_, info_d = dense.step(acts)
        obs_s, *_, info_s = sparse.step(acts)
        np.testing.assert_array_equal(obs_s, obs_d)


def test_a_game_waiting_for_its_next_step_reset_has_no_sparse_ids():
    envs = make_vec(3, opponent="random", ruleset=ONE_SET, autoreset_mode=AutoresetMode.NEXT_STEP,
                    illegal_action="lose")
    obs, info = envs.reset(seed=0)
    ids, offsets = envs.unwrapped.legal_ids()
    bad = next(a for a in range(codec.NUM_ACTIONS) if a not in ids[offsets[0]:offsets[1]])
    acts = codec.sample_csr(ids, offsets, 0)
    acts[0] = bad
    obs, rew, term, trunc, info = envs.step(acts)
    assert term[0] and not info["action_mask"][0].any()
    ids, offsets = envs.unwrapped.legal_ids()
    assert offsets[1] == offsets[0]


def test_sample_csr_is_uniform_and_refuses_an_empty_row():
    ids = np.array([5, 9, 7, 1, 2, 3], np.int32)
    offsets = np.array([0, 2, 3, 6], np.int32)
    counts = Counter()
    rng = np.random.default_rng(1)
    for _ in range(3000):
        a = codec.sample_csr(ids, offsets, rng)
        assert a[1] == 7 and a[0] in (5, 9) and a[2] in (1, 2, 3)
        counts.update(a[2:].tolist())
    assert all(900 < counts[x] < 1100 for x in (1, 2, 3)), counts
    assert codec.sample_csr(ids, offsets, random.Random(0)).tolist()[1] == 7
    with pytest.raises(ValueError, match="row 1 has no legal action"):
        codec.sample_csr(ids, np.array([0, 2, 2, 6]), 0)
    with pytest.raises(ValueError, match="outside"):
        codec.sample_csr(ids, np.array([0, 2, 9]), 0)


def test_sample_csr_compiled_pick_is_the_numpy_reference_pick():
    """The vector env's int32 arrays take the compiled one-pass pick; other arrays the numpy code: same actions."""
    rng = np.random.default_rng(5)
    counts = rng.integers(1, 60, 500)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    ids = rng.integers(0, me.NUM_MOVE_IDS, int(offsets[-1])).astype(np.int32)
    fast = codec.sample_csr(ids, offsets, np.random.default_rng(9))
    reference = codec.sample_csr(ids.astype(np.int64), offsets.astype(np.int64), np.random.default_rng(9))
    np.testing.assert_array_equal(fast, reference)
    assert fast.dtype == reference.dtype == np.int64
    for bad_offsets, words in (([0, 2, 2, 6], "row 1 has no legal action"), ([0, 2, 9], "outside")):
        for dtype in (np.int32, np.int64):  # the same refusal either way
            with pytest.raises(ValueError, match=words):
                codec.sample_csr(ids[:6], np.array(bad_offsets, dtype), 0)


def test_num_threads_is_checked():
    with pytest.raises(ValueError, match="num_threads must be"):
        make_vec(2, opponent="random", num_threads=0)
    with pytest.raises(ValueError, match="num_threads must be"):
        make_vec(2, opponent="random", num_threads="many")
    with pytest.raises(ValueError, match="dense_mask must be"):
        make_vec(2, opponent="random", dense_mask="no")
    assert resolve_threads("auto") >= 1


def test_random_playout_plays_the_same_moves_compiled_and_in_python(monkeypatch):
    """The compiled playout (mulle_env._native) and its Python twin draw the same SplitMix64 stream."""
    from mulle_env import stepper as stepper_mod

    st = me.new_game(7)
    assert random_playout(st, 99, 40) == 40
    played = random_playout(st, 99, 10**6)
    assert st.over and 0 < played < 10**6
    twin = me.new_game(7)
    monkeypatch.setattr(stepper_mod, "NATIVE", None)  # the Python loop, on this backend's state
    assert random_playout(twin, 99, 40) + random_playout(twin, 99, 10**6) == 40 + played
    assert twin.to_dict() == st.to_dict()


def test_an_error_of_the_self_play_policy_surfaces_once_and_the_step_is_not_retried():
    """The vector env's one-call step must not take the policy's own errors (ValueErrors too) for an illegal
    learner action and step the games again."""
    calls = []

    def policy(obs, mask):
        calls.append(len(obs))
        if len(calls) == 3:
            return np.zeros(len(obs) + 1, dtype=np.int64)  # one action too many: a ValueError
        return np.asarray(mask).argmax(axis=1)

    envs = MulleVectorEnv(4, opponent="self", seat=0, ruleset=ONE_SET, opponent_policy=policy)
    obs, info = envs.reset(seed=2)
    with pytest.raises(ValueError, match="opponent_policy returned"):
        for _ in range(10):
            envs.step(codec.sample_csr(*envs.unwrapped.legal_ids(), 0))
    assert len(calls) == 3


_EXIT_SCRIPT = r'''
import gc, os, signal, time
import numpy as np
import gymnasium as gym
import mulle_env as me
from mulle_env import codec, _native
from mulle_env.stepper import make_stepper

def tasks():
    return len(os.listdir("/proc/self/task"))

def play(envs, steps, rng, out, obs=None):
    if obs is None:
        obs, _ = envs.reset(seed=5)
        out.append(obs.copy())
    u = envs.unwrapped
    for _ in range(steps):
        ids, offsets = u.legal_ids()
        obs, rew, term, trunc, info = envs.step(codec.sample_csr(ids, offsets, rng))
        out += [obs.copy(), rew.copy()]
    return obs

def make(threads):
    return gym.make_vec("Mulle-v0", num_envs=8, vectorization_mode="vector_entry_point",
                        opponent="random", ruleset={"sets": 1}, num_threads=threads)

ref, got = [], []
play(make(1), 80, np.random.default_rng(1), ref)
envs = make(3)
rng = np.random.default_rng(1)
obs = play(envs, 40, rng, got)
# A forked child that frees its copy of a threaded stepper ends: it must not wait for the parent's workers.
s = make_stepper(4, me.Ruleset(sets=1), True, 2)
time.sleep(0.05)  # past the workers' spin: asleep on their condition variable
pid = os.fork()
if pid == 0:
    signal.alarm(20)
    del s
    gc.collect()
    os._exit(0)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, f"the forked child ended with {os.waitstatus_to_exitcode(status)}"
running = tasks()
_native._stop_workers()
# The env's two workers and s's one. A joined thread can still be listed in /proc for a moment (the kernel
# wakes the joiner before it reaps the task), so the count is read until it settles.
deadline = time.monotonic() + 5
while tasks() != running - 3 and time.monotonic() < deadline:
    time.sleep(0.01)
assert tasks() == running - 3, (tasks(), running)
play(envs, 40, rng, got, obs)  # the stopped pool plays on, on the caller's thread: the same games
assert len(ref) == len(got) and all(np.array_equal(a, b) for a, b in zip(ref, got))
# Threaded steppers still referenced at exit (in a cycle): atexit joins their workers.
keep = [make(2), make_stepper(4, me.Ruleset(sets=1), True, 2)]
keep.append(keep)
print("ok", flush=True)
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc and forks")
def test_workers_end_before_the_interpreter_and_a_forked_copy_frees_without_waiting():
    """A threaded stepper's workers are joined at exit (referenced or not) and a stopped pool plays the
    same games on its caller's thread; a forked child frees its copy of a pool without touching the
    parent's condition variable (glibc's destroy of it waited forever for the parent's sleepers)."""
    from mulle_env.stepper import NATIVE

    if NATIVE is None:
        pytest.skip("the Python engine has no worker threads")
    proc = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("ruleset", [{"sets": 1}, {"sets": 3, "forced_capture": False}])
def test_restart_write_is_start_then_write_in_the_games_own_objects(threads, ruleset):
    """restart_write (the vector env's restart of finished games) deals what start deals, into the same objects
    on the compiled stepper, and writes rows idx[j]; the Python stepper is its reference."""
    from mulle_env.stepper import PyStepper, make_stepper

    k, rs = 4, me.Ruleset.from_dict(ruleset)
    for internal in (True, False):
        fast, apart, ref = _dealt([lambda k: make_stepper(k, rs, internal, threads),
                                   lambda k: make_stepper(k, rs, internal, threads),
                                   lambda k: PyStepper(k, rs, internal)], k)
        objects = [fast.state(i) for i in range(k)]
        idx, seeds, seats, opp = [3, 0, 2], [2**64 - 1, 5, 2**63], [1, 0, 1], [0, 2**64 - 1, 11]
        buffers = [(np.zeros((k, 524), np.float32), np.zeros((k, me.NUM_MOVE_IDS), np.int8)) for _ in range(3)]
        fast.restart_write(idx, seeds, seats, opp, *buffers[0])
        ref.restart_write(idx, seeds, seats, opp, *buffers[2])
        for i, seed, seat, o in zip(idx, seeds, seats, opp):
            apart.start(i, seed, seat, o)
            apart.write([i], [seat], buffers[1][0][i:i + 1], buffers[1][1][i:i + 1])
        for i in range(k):
            if not isinstance(fast, PyStepper):  # the compiled one deals anew in place: no Python object
                assert fast.state(i) is objects[i]
            assert fast.state(i).to_dict() == apart.state(i).to_dict() == ref.state(i).to_dict()
        for o, m in buffers[1:]:
            np.testing.assert_array_equal(buffers[0][0], o)
            np.testing.assert_array_equal(buffers[0][1], m)
        for s in (apart, ref):
            np.testing.assert_array_equal(np.asarray(fast.over, bool), np.asarray(s.over, bool))
            np.testing.assert_array_equal(np.asarray(fast.to_move), np.asarray(s.to_move))
        if not internal:  # nobody moved: the deal itself is new_game's
            assert fast.state(3).to_dict() == me.new_game(2**64 - 1, rs).to_dict()
            assert fast.state(3).seed == 2**64 - 1


@pytest.mark.parametrize("python", [False, True])
def test_restart_write_refuses_before_any_game_changes(python):
    s, k, obs, mask = _three_games(python)
    before = [s.state(i).to_dict() for i in range(k)]
    for args, words in ((([0, 0], [1, 2], [0, 0], [1, 2]), "at most once"),
                        (([0, 1], [1, 2], [0, 2], [1, 2]), "0 or 1"),
                        (([0, 1], [1, -2], [0, 1], [1, 2]), "game_seeds\\[1\\] must be a whole number"),
                        (([0, 1], [1, 2], [0, 1], [1, 2**64]), "opp_seeds\\[1\\] must be a whole number"),
                        (([0, 1], [1], [0, 1], [1, 2]), "differ in length")):
        with pytest.raises(ValueError, match=words):
            s.restart_write(*args, obs, mask)
    with pytest.raises(IndexError, match="outside 0\\.\\.2"):  # as every stepper method names a bad index
        s.restart_write([0, 5], [1, 2], [0, 1], [1, 2], obs, mask)
    with pytest.raises(TypeError):
        s.restart_write([0.0], [1], [0], [1], obs, mask)
    with pytest.raises(ValueError):
        s.restart_write([0], [1], [0], [1], obs[:1], mask)
    assert [s.state(i).to_dict() for i in range(k)] == before


@pytest.mark.parametrize("kind", ["int8", "uint8", "bool", "twos"])
def test_sample_masks_compiled_pick_is_the_numpy_reference_pick_and_sample_csrs(kind):
    """codec.sample_masks (dense masks) picks what sample_csr picks from the same legal actions and draws,
    compiled or in numpy; any non-zero byte is legal."""
    rng = np.random.default_rng(3)
    masks = (rng.random((300, codec.NUM_ACTIONS)) < rng.random((300, 1)) * 0.02).astype(np.int8)
    masks[np.arange(300), rng.integers(0, codec.NUM_ACTIONS, 300)] = 1  # every row has a legal action
    masks[7, :] = 0
    masks[7, -1] = 1  # the last column, past the last whole 8-byte word of a row
    masks[8, :] = 1  # every action
    csr = [np.flatnonzero(m) for m in masks]
    ids = np.concatenate(csr).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in csr])]).astype(np.int32)
    if kind == "twos":
        masks *= 2
    m = masks.view(bool) if kind == "bool" else masks.view(np.uint8) if kind == "uint8" else masks
    fast = codec.sample_masks(m, np.random.default_rng(9))
    np.testing.assert_array_equal(fast, codec.sample_csr(ids, offsets, np.random.default_rng(9)))
    assert fast[7] == codec.NUM_ACTIONS - 1
    from mulle_env import codec as codec_mod

    native = codec_mod._NATIVE
    try:
        codec_mod._NATIVE = None  # the numpy reference
        np.testing.assert_array_equal(codec.sample_masks(m, np.random.default_rng(9)), fast)
        slow = codec.sample_masks(m, random.Random(4))
    finally:
        codec_mod._NATIVE = native
    np.testing.assert_array_equal(codec.sample_masks(m, random.Random(4)), slow)
    assert fast.dtype == np.int64
    assert all(masks[i, a] for i, a in enumerate(fast))
    np.testing.assert_array_equal(codec.sample_masks(masks[:, ::1].T.copy().T, 9),
                                  codec.sample_masks(masks, 9))  # not C-contiguous: the numpy path


def test_sample_masks_is_uniform_and_refuses_what_it_cannot_sample():
    masks = np.zeros((2, codec.NUM_ACTIONS), np.int8)
    masks[0, [3, 900, 2811]] = 1
    masks[1, 17] = 1
    rng = np.random.default_rng(1)
    counts = Counter(int(codec.sample_masks(masks, rng)[0]) for _ in range(3000))
    assert set(counts) == {3, 900, 2811} and all(900 < c < 1100 for c in counts.values()), counts
    masks[1, 17] = 0
    with pytest.raises(ValueError, match="row 1 has no legal action"):
        codec.sample_masks(masks, 0)
    with pytest.raises(ValueError, match="shape"):
        codec.sample_masks(masks[0], 0)  # one row, not a batch
    # Any game's masks: the width is the env's action count (504 for Casino-v0).
    casino_masks = np.zeros((2, 504), np.int8)
    casino_masks[:, 503] = 1
    assert codec.sample_masks(casino_masks, 0).tolist() == [503, 503]
    with pytest.raises(ValueError, match="int8/uint8/bool"):
        codec.sample_masks(masks.astype(np.float32), 0)


def test_the_compiled_pickers_refuse_draws_outside_the_unit_interval_and_other_outputs():
    """mulle_env._native's sample_csr and sample_mask are public: a draw outside [0, 1) (NaN included) or an
    output array of another type is refused, never read past a row."""
    from mulle_env.stepper import NATIVE

    if NATIVE is None:
        pytest.skip("the Python engine has no compiled module")
    ids, offsets = np.array([5, 9, 7], np.int32), np.array([0, 2, 3], np.int32)
    masks = np.zeros((2, codec.NUM_ACTIONS), np.int8)
    masks[:, [4, 8]] = 1
    out = np.empty(2, np.int64)
    for u in ([0.5, -0.1], [0.5, 1.0], [np.nan, 0.5]):
        with pytest.raises(ValueError, match=r"u\[\d\] must be in \[0, 1\)"):
            NATIVE.sample_csr(ids, offsets, np.array(u), out)
        with pytest.raises(ValueError, match=r"u\[\d\] must be in \[0, 1\)"):
            NATIVE.sample_mask(masks, np.array(u), out)
    with pytest.raises(ValueError):
        NATIVE.sample_csr(ids, offsets, np.array([0.5, 0.5]), np.empty(2, np.float64))
    with pytest.raises(ValueError):
        NATIVE.sample_mask(masks, np.array([0.5, 0.5]), np.empty(2, np.float64))
    NATIVE.sample_mask(masks, np.array([0.0, 0.999]), out)
    assert out.tolist() == [4, 8]


def test_more_threads_than_cores_give_the_same_games_through_restarts():
    """Jobs of changing sizes (the step's K games, the restart of a few) handed to more threads than the machine
    has cores, so that workers are preempted between claims: the games and outputs are one thread's."""
    def play(threads):
        envs = make_vec(12, opponent="random", ruleset=ONE_SET, dense_mask=False, num_threads=threads,
                        illegal_action="lose")
        u = envs.unwrapped
        out = [envs.reset(seed=4)[0].copy()]
        rng = np.random.default_rng(4)
        for step in range(250):
            ids, offsets = u.legal_ids()
            acts = codec.sample_csr(ids, offsets, rng)
            if step % 7 == 3:  # two games end now (an illegal action): restarts of 2 games between steps of 12
                acts[[step % 5, step % 5 + 6]] = -1
            obs, rew, term, trunc, info = envs.step(acts)
            out += [ids.copy(), offsets.copy(), obs.copy(), rew.copy(), term.copy()]
        return out

    same(play(1), play(6))


def _hammer(envs, threads, steps, seed):
    """``threads`` Python threads step one vector env at once, each drawing its actions from ``legal_ids()``."""
    import threading

    u = envs.unwrapped
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def worker(k):
        rng = np.random.default_rng(seed + k)
        start.wait()
        for _ in range(steps):
            try:
                ids, offsets = u.legal_ids()
                envs.step(codec.sample_csr(ids.copy(), offsets.copy(), rng))
            except Exception as exc:  # noqa: BLE001 - collected and judged below
                errors.append(exc)

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return errors


@pytest.mark.parametrize("opponent", ["random", "heuristic"])
def test_one_vector_env_stepped_from_several_threads_refuses_the_overlap_and_stays_whole(opponent):
    # Issue 53, item 9: the compiled stepper refused overlapping calls, but the Python bookkeeping around it did
    # not, and legal_ids() gave empty rows for live games, sometimes still after the threads stopped.
    envs = make_vec(16, opponent=opponent, ruleset=ONE_SET, num_threads=2)
    u = envs.unwrapped
    envs.reset(seed=5)
    u.legal_ids()
    errors = _hammer(envs, 4, 150, seed=11)
    for exc in errors:
        if type(exc).__name__ == "IllegalActionError":
            continue  # actions drawn from ids another thread's step made stale: refused by the games themselves
        # Each overlap is refused in words, before anything changed; never an empty row of a live game.
        assert type(exc).__name__ == "ConcurrentCallError" and "another thread" in str(exc), repr(exc)
    # Afterwards the env is whole: every live game's legal ids are its mask's, none empty, and it steps on.
    for _ in range(20):
        ids, offsets = u.legal_ids()
        mask = u.action_masks()
        for i in range(16):
            row = ids[offsets[i]:offsets[i + 1]]
            assert len(row) > 0
            np.testing.assert_array_equal(row, np.flatnonzero(mask[i]))
        envs.step(codec.sample_csr(ids.copy(), offsets.copy(), np.random.default_rng(0)))
    envs.close()


def test_a_concurrent_call_error_names_the_object_and_the_rule():
    from mulle_env.vector_env import ConcurrentCallError

    envs = make_vec(2, opponent="random")
    u = envs.unwrapped
    envs.reset(seed=1)
    assert u._busy.acquire(blocking=False)  # as if another thread were inside step()
    try:
        import threading

        caught: list[BaseException] = []

        def other():
            try:
                u.legal_ids()
            except ConcurrentCallError as exc:
                caught.append(exc)

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(caught) == 1 and "one thread at a time" in str(caught[0]) and "docs/threads.md" in str(caught[0])
    finally:
        u._busy.release()
    envs.step(np.asarray([int(np.flatnonzero(m)[0]) for m in u.action_masks()]))  # free again
    envs.close()
