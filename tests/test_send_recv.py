"""The vector env's asynchronous pair, ``send(actions, env_ids)`` / ``recv()`` (EnvPool's), and the steppers'
``step_write_send`` / ``step_write_recv`` under it.

A batch sent runs on the compiled stepper's threads while the caller goes on; whatever the
batches and the thread count, the games are the ones ``step`` plays with the same actions.
These run on whichever backend ``MULLE_ENGINE`` selects (the Python stepper steps a batch in
``send``).
"""

from __future__ import annotations

import gc
import os
import signal
import sys

import gymnasium as gym
import numpy as np
import pytest

import mulle_env as me
from mulle_env import codec

ONE_SET = me.Ruleset(sets=1)


def make_vec(num_envs, **kwargs):
    kwargs.setdefault("opponent", "random")
    return gym.make_vec("Mulle-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", ruleset=ONE_SET,
                        **kwargs)


def pick(u, rows, rngs):
    """One legal action per game of rows, each game drawing from its own stream (so batching changes nothing)."""
    ids, off = u.legal_ids()
    return np.array([ids[off[i] + rngs[i].integers(off[i + 1] - off[i])] if off[i + 1] > off[i] else 0
                     for i in rows], dtype=np.int64)


def by_step(k, steps, **kwargs):
    envs = make_vec(k, **kwargs)
    u = envs.unwrapped
    envs.reset(seed=5)
    rngs = [np.random.default_rng(i) for i in range(k)]
    out = []
    for _ in range(steps):
        obs, rew, term, _, info = envs.step(pick(u, range(k), rngs))
        out.append((obs.copy(), rew.copy(), term.copy(), np.asarray(info.get("_final_obs", np.zeros(k, bool)))))
    return out


def by_batches(k, steps, batches, **kwargs):
    """The same games through send/recv, one batch after another in a pipeline (a batch's actions are picked
    while the one before is in flight)."""
    envs = make_vec(k, **kwargs)
    u = envs.unwrapped
    envs.reset(seed=5)
    rngs = [np.random.default_rng(i) for i in range(k)]
    out = []
    pending = pick(u, batches[0], rngs)
    u.send(pending, batches[0])
    for step in range(steps):
        parts = {}
        for j, batch in enumerate(batches):
            nxt = batches[(j + 1) % len(batches)]
            last = step == steps - 1 and j == len(batches) - 1
            ahead = len(batches) > 1  # one batch alone: its next actions need its own results
            following = None if last or not ahead else pick(u, nxt, rngs)  # while `batch` is in flight
            obs, rew, term, _, info = u.recv()
            if not last and not ahead:
                following = pick(u, nxt, rngs)
            assert info["env_id"].tolist() == sorted(batch)
            final = np.asarray(info.get("_final_obs", np.zeros(k, bool)))
            parts[j] = (obs[batch].copy(), rew[batch].copy(), term[batch].copy(), final[batch].copy())
            if following is not None:
                u.send(following, nxt)
        order = np.concatenate(batches)
        rows = [np.concatenate([parts[j][f] for j in range(len(batches))]) for f in range(4)]
        back = np.argsort(order)
        out.append(tuple(r[back] for r in rows))
    return out


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kwargs", [{}, {"dense_mask": False}, {"autoreset_mode": "NextStep"},
                                    {"opponent": "heuristic"}], ids=["dense", "sparse", "next-step", "agent"])
def test_batches_sent_play_the_games_step_plays(threads, kwargs):
    k, steps = 6, 90  # one-set games end within 90 steps: restarts included
    expected = by_step(k, steps, num_threads=threads, **kwargs)
    assert sum(int(e[2].sum()) for e in expected) >= k
    for batches in ([np.arange(3), np.arange(3, 6)], [np.array([4, 0]), np.array([1, 5, 2]), np.array([3])],
                    [np.arange(6)]):
        got = by_batches(k, steps, batches, num_threads=threads, **kwargs)
        for e, g in zip(expected, got):
            for a, b in zip(e, g):
                np.testing.assert_array_equal(a, b)


def test_one_batch_at_a_time_and_nothing_else_meanwhile():
    envs = make_vec(4, num_threads=2, dense_mask=False)
    u = envs.unwrapped
    with pytest.raises(gym.error.ResetNeeded):
        u.send([0, 0], [0, 1])
    envs.reset(seed=1)
    with pytest.raises(RuntimeError, match="nothing is in flight"):
        u.recv()
    rngs = [np.random.default_rng(i) for i in range(4)]
    u.send(pick(u, [0, 1], rngs), [0, 1])
    with pytest.raises(RuntimeError, match="in flight: recv"):
        u.send(pick(u, [2, 3], rngs), [2, 3])
    with pytest.raises(RuntimeError, match="in flight: recv"):
        envs.step(np.zeros(4, np.int64))
    ids, off = u.legal_ids()  # the other games' rows are current
    assert off[4] > off[2]
    u.recv()
    envs.step(pick(u, range(4), rngs))  # usable again


def test_legal_ids_read_first_during_a_flight_says_what_to_do():
    envs = make_vec(2)
    envs.reset(seed=0)
    u = envs.unwrapped
    legal = np.flatnonzero(envs.unwrapped.action_masks()[0])
    u.send([int(legal[0])], [0])
    with pytest.raises(RuntimeError, match="recv"):
        u.legal_ids()
    u.recv()
    assert len(u.legal_ids()[1]) == 3


@pytest.mark.parametrize("env_ids, message", [
    ([], "empty"), ([0, 0], "twice"), ([0, 4], "from 0 to 3"), ([-1], "from 0 to 3"), ([0.5], "game indices"),
    ([[0, 1]], "1-D"), ([True, False], "game indices")])
def test_bad_batches_are_refused_before_anything_moves(env_ids, message):
    envs = make_vec(4)
    envs.reset(seed=2)
    u = envs.unwrapped
    before = [u._core.stepper.state(i).to_dict() for i in range(4)]
    with pytest.raises(ValueError, match=message):
        u.send(np.zeros(max(len(env_ids), 1), np.int64), env_ids)
    assert [u._core.stepper.state(i).to_dict() for i in range(4)] == before
    with pytest.raises(codec.IllegalActionError, match=r"shape \(2,\) \(one per game of env_ids\)"):
        u.send([1, 2, 3], [0, 1])
    assert u._sent is None


def test_an_illegal_action_in_a_batch_is_judged_as_step_judges_it():
    envs = make_vec(4, num_threads=2)
    _, info = envs.reset(seed=3)
    u = envs.unwrapped
    mask = info["action_mask"]
    legal = [int(np.flatnonzero(mask[i])[0]) for i in range(4)]
    bad = int(np.flatnonzero(mask[3] == 0)[0])
    with pytest.raises(codec.IllegalActionError, match="env 3"):
        u.send([legal[2], bad], [2, 3])
    assert u._sent is None
    before = u._core.stepper.state(2).to_dict()
    u.send([legal[2], legal[3]], [2, 3])  # nothing moved: the same actions are legal still
    u.recv()
    assert u._core.stepper.state(2).to_dict() != before

    lose = make_vec(4, illegal_action="lose")
    _, info = lose.reset(seed=3)
    lu = lose.unwrapped
    lu.send([legal[2], bad], [2, 3])
    _, rew, term, _, info = lu.recv()
    assert term[3] and not term[2] and rew[3] == lu._core.illegal_reward()
    assert info["final_info"]["illegal_action"][3]


def test_reset_finishes_a_batch_in_flight_first_and_draws_nothing():
    envs = make_vec(4, num_threads=2)
    _, info = envs.reset(seed=4)
    u = envs.unwrapped
    u.send([int(np.flatnonzero(info["action_mask"][0])[0])], [0])
    obs, _ = envs.reset(seed=4)
    again, _ = make_vec(4).reset(seed=4)
    np.testing.assert_array_equal(obs, again)
    # Unseeded: the games' generators go on as if no batch had been sent (its results are dropped, unused).
    twin = make_vec(4, num_threads=2)
    twin.reset(seed=4)
    u.send([int(np.flatnonzero(info["action_mask"][0])[0])], [0])
    np.testing.assert_array_equal(envs.reset()[0], twin.reset()[0])


@pytest.mark.parametrize("threads", [1, 2])
def test_all_games_sent_at_once_restart_as_step_restarts_them(threads):
    """send(actions) without env_ids under next-step autoreset: the restarted games' rows are written."""
    k, steps = 4, 90
    expected = by_step(k, steps, num_threads=threads, autoreset_mode="NextStep")
    envs = make_vec(k, num_threads=threads, autoreset_mode="NextStep")
    u = envs.unwrapped
    envs.reset(seed=5)
    rngs = [np.random.default_rng(i) for i in range(k)]
    for e in expected:
        u.send(pick(u, range(k), rngs))
        obs, rew, term, _, info = u.recv()
        np.testing.assert_array_equal(obs, e[0])
        np.testing.assert_array_equal(rew, e[1])
        assert info["env_id"].tolist() == list(range(k))


def test_the_batch_handed_out_cannot_be_written_into():
    envs = make_vec(4)
    _, info = envs.reset(seed=6)
    u = envs.unwrapped
    for env_ids in (None, np.array([3, 1])):
        n = 4 if env_ids is None else 2
        rows = range(4) if env_ids is None else env_ids
        u.send([int(np.flatnonzero(info["action_mask"][i])[0]) for i in rows][:n], env_ids)
        _, _, _, _, info = u.recv()
        with pytest.raises(ValueError, match="read-only"):
            info["env_id"][0] = 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks")
def test_a_child_forked_with_a_step_in_flight_is_told_not_left_waiting():
    from mulle_env.native import NATIVE
    from mulle_env.stepper import make_stepper

    if NATIVE is None:
        pytest.skip("the Python stepper steps a batch in send: nothing is in flight when it forks")
    k = 512
    s = make_stepper(k, me.Ruleset(), True, 2)
    obs, mask = np.zeros((k, 524), np.float32), np.zeros((k, me.NUM_MOVE_IDS), np.int8)
    for i in range(k):
        s.start(i, i, 0, i)
    s.write(np.arange(k), [0] * k, obs, mask)
    s.step_write_send(mask.argmax(axis=1), np.ones(k, bool), [0] * k, obs, mask)
    pid = os.fork()
    if pid == 0:  # the child: recv must refuse at once (its parent's workers are not here)
        signal.alarm(10)
        try:
            s.step_write_recv()
            code = 1
        except RuntimeError as exc:
            code = 0 if "forked while a step was in flight" in str(exc) else 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert s.step_write_recv()[0] >= 0  # the parent's step is whole


@pytest.mark.parametrize("python", [False, True])
def test_the_steppers_send_and_recv_are_step_write(python):
    from mulle_env.stepper import PyStepper, make_stepper

    k = 5
    made = []
    for _ in range(2):
        s = PyStepper(k, ONE_SET, True) if python else make_stepper(k, ONE_SET, True, 2)
        for i in range(k):
            s.start(i, 30 + i, 0, 40 + i)
        made.append(s)
    fused, split = made
    bufs = [(np.zeros((k, 524), np.float32), np.zeros((k, me.NUM_MOVE_IDS), np.int8), np.zeros(k * 64, np.int32),
             np.zeros(k + 1, np.int32)) for _ in range(2)]
    for s, (obs, mask, _, _) in zip(made, bufs):
        s.write(np.arange(k), [0] * k, obs, mask)
    on = np.ones(k, bool)
    for _ in range(30):
        acts = bufs[0][1].argmax(axis=1)
        r1 = fused.step_write(acts, on, [0] * k, *bufs[0])
        split.step_write_send(acts, on, [0] * k, *bufs[1])
        with pytest.raises(RuntimeError, match="in flight"):
            split.write(np.arange(k), [0] * k, bufs[1][0], bufs[1][1])
        with pytest.raises(RuntimeError, match="in flight"):
            split.step_write_send(acts, on, [0] * k, *bufs[1])
        r2 = split.step_write_recv()
        assert r1 == r2
        for a, b in zip(bufs[0], bufs[1]):
            np.testing.assert_array_equal(a, b)
        if r1[0]:
            break
    with pytest.raises(RuntimeError, match="no step in flight"):
        split.step_write_recv()


def test_send_writes_only_the_rows_of_its_games():
    from mulle_env.stepper import make_stepper

    k = 4
    s = make_stepper(k, ONE_SET, True, 2)
    for i in range(k):
        s.start(i, 50 + i, 0, 60 + i)
    obs, mask = np.zeros((k, 524), np.float32), np.zeros((k, me.NUM_MOVE_IDS), np.int8)
    s.write(np.arange(k), [0] * k, obs, mask)
    obs[2:] = -7.0
    on = np.array([True, True, False, False])
    s.step_write_send(mask.argmax(axis=1), on, [0] * k, obs, mask)
    s.step_write_recv()
    assert (obs[2:] == -7.0).all() and (obs[:2] != -7.0).any()


def test_a_stepper_dropped_with_a_step_in_flight_ends_it_first():
    from mulle_env.stepper import make_stepper

    for _ in range(20):
        s = make_stepper(64, me.Ruleset(), True, 2)
        obs, mask = np.zeros((64, 524), np.float32), np.zeros((64, me.NUM_MOVE_IDS), np.int8)
        for i in range(64):
            s.start(i, i, 0, i)
        s.write(np.arange(64), [0] * 64, obs, mask)
        s.step_write_send(mask.argmax(axis=1), np.ones(64, bool), [0] * 64, obs, mask)
        del s
        gc.collect()
